"""The dry run's output (``--dry-run``): per phase what its ``planned(ctx)`` would create and
the nodes it may launch, each priced (the price table, ``--price`` where the table has none), and
the total against the cost cap. It reads the render only: nothing is created, no API call made.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import TextIO

from .. import prices as table_prices
from ..budget.cost import cost_lines
from . import prices as prices_mod
from . import runner
from .core import Context


def _money(value: float) -> str:
    return f"${value:,.2f}"


def print_plan(ctx: Context, phases: Sequence[ModuleType], out: TextIO) -> float | None:
    """The dry run: per phase what ``planned(ctx)`` would create and the nodes it may launch,
    with the price estimate of each (``prices.estimate_usd``, with the ``--price`` prices where
    the table has none, marked user-supplied) and the total against the cost cap. Returns the
    total (None when a price is unknown)."""
    region = ctx.render.region or "unknown"
    user = ctx.options.prices
    print(f"Dry run of {ctx.options.stack} (run {ctx.run_id}): nothing is created.", file=out)
    print(
        f"Prices: {prices_mod.SOURCE} (retrieved {prices_mod.RETRIEVED}), region {region}.",
        file=out,
    )
    if user:
        listed = ", ".join(f"{t} ${usd:g}/h" for t, usd in user.items())
        print(f"User-supplied prices (--price), where the table has none: {listed}.", file=out)
    if cost := (ctx.render.capacity or {}).get("cost"):
        # The stack at full budget, from the render's capacity.json (budget.cost).
        print("", file=out)
        for line in cost_lines(cost):
            print(line, file=out)
    total: float | None = 0.0
    for module in phases:
        print("", file=out)
        ctx.phase = module.NAME
        planned = [
            p for p in module.planned(ctx) if runner.selected(ctx.options.checks, p.phase, p.check)
        ]
        if not planned:
            print(f"{module.NAME}: reads only, creates nothing", file=out)
            continue
        print(f"{module.NAME}:", file=out)
        for p in planned:
            pool = f" (pool {p.pool})" if p.pool else ""
            if not p.objects and not p.nodes:
                print(f"  {p.check}{pool}: reads only", file=out)
                continue
            print(f"  {p.check}{pool}:", file=out)
            for obj in p.objects:
                print(f"    creates {obj}", file=out)
            if not p.nodes:
                continue
            types = ", ".join(p.instance_types) or "any type"
            line = (
                f"    launches up to {p.nodes} node(s) of {types} for up to {p.max_minutes:g} min"
            )
            cost = prices_mod.estimate_usd(p, region, user)
            if cost is None:
                reasons = [
                    prices_mod.unpriced_reason(region, t)
                    for t in p.instance_types
                    if prices_mod.hourly_usd(region, t, user) is None
                ]
                reason = next((r for r in reasons if r), None)
                line += f": no price ({reason})" if reason else ": no price"
                total = None
            else:
                line += f": at most {_money(cost)}"
                if any(prices_mod.user_supplied(region, t, user) for t in p.instance_types):
                    line += " (user-supplied price)"
                total = None if total is None else total + cost
            print(line, file=out)
    cap = ctx.options.cost_cap_usd
    print("", file=out)
    if total is None:
        # Another region's price beside it (issue 28, point 12), never for the cap: the run
        # still refuses to launch what it cannot price in the stack's region.
        other = stand_in_total(ctx, phases, region)
        beside = f"; at us-east-1's prices at most {_money(other)}" if other is not None else ""
        print(
            f"Total: unknown (a type has no price in {region}{beside}); cost cap {_money(cap)}",
            file=out,
        )
    elif total > cap:
        print(f"Total: at most {_money(total)}, over the cost cap of {_money(cap)}", file=out)
    else:
        print(f"Total: at most {_money(total)}, within the cost cap of {_money(cap)}", file=out)
    return total


def stand_in_total(ctx: Context, phases: Sequence[ModuleType], region: str) -> float | None:
    """The checks' cost with us-east-1's prices standing in where the stack's region has none
    (``prices.stand_in``; None when a type has neither)."""
    total = 0.0
    for module in phases:
        ctx.phase = module.NAME
        for p in module.planned(ctx):
            if not runner.selected(ctx.options.checks, p.phase, p.check) or not p.nodes:
                continue
            found = [table_prices.stand_in(region, t) for t in p.instance_types]
            if not found or None in found:
                return None
            total += p.nodes * max(f[0] for f in found if f) * p.max_minutes / 60.0
    return total
