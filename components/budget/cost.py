"""The capacity plan's cost at full budget: the most each GPU pool can cost per hour with its
whole GPU budget running, the system node group at its largest, and the stack's total.

Pure: the pools, the GPU Operator's and the scheduler's specs, the region and the system node
group in (read by attribute), plain data out (``capacity.json``'s ``cost``, which
summary.md, plan.md and the validation's dry run show). One price table: ``prices``
(Karpenter v1.15.0's generated us-east-1 on-demand Linux prices, dated).

- **A pool at full budget**: per Karpenter NodePool of the pool, the most its GPU budget can buy
  per hour: the best sum of node prices whose GPUs stay within the budget (a node that would
  exceed the remaining limit is not launched: kubernetes-sigs/karpenter v1.15.0
  ``pkg/controllers/provisioning/scheduling/scheduler.go`` ``filterByRemainingResources``), so
  a 12-GPU budget of 8-GPU nodes buys one node. Physical GPUs: under time-slicing or MIG the
  limit and the nodes' capacity scale together (uneven densities are refused). A type whose
  GPU is a fraction (``gpu_count`` 0) counts as one. A NodePool without a budget is unbounded.
- **Spot and reserved capacity are priced at on-demand**, their upper bound: a Spot price is
  never above the On-Demand price (the On-Demand price is the default and the most a Spot
  request pays, EC2 User Guide, "Spot Instance pricing"), and a capacity reservation is billed
  at the On-Demand rate.
- **Another region's price**: where the table has no price for the stack's region, us-east-1's
  stands in (``prices.stand_in``), and the figures say so (``priceRegion``).
- **Not counted**: CPU pools (their instance types are open-ended, bounded by ``limits.cpu``),
  the EKS control plane, NAT gateways, EBS volumes and data transfer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import prices
from .stack import gpu_pools, pool_nodepools

if TYPE_CHECKING:
    from ..cluster.spec import SystemNodeGroupSpec
    from ..gpu_operator.spec import GpuOperatorSpec
    from ..nodepool.spec import NodePoolSpec
    from ..scheduler.spec import SchedulerSpec

# A type's on-demand hourly price in a region and the region it is from (None: no price):
# the table's ``prices.stand_in`` offline, the AWS Price List API's at preview (``price_list``).
Price = Callable[[str, str], "tuple[float, str] | None"]

NOT_COUNTED = "CPU pools, the EKS control plane, NAT gateways, EBS volumes and data transfer"


def most_per_hour(budget: int, nodes: Sequence[tuple[int, float]]) -> float:
    """The most ``budget`` GPUs can cost per hour as whole nodes of ``nodes`` (each ``(gpus,
    hourly USD)``, any number of each): an unbounded knapsack over the budget."""
    dearest: dict[int, float] = {}  # only the dearest node of each size can be in the best
    for gpus, usd in nodes:
        dearest[gpus] = max(usd, dearest.get(gpus, 0.0))
    sizes = sorted(dearest.items())
    best = [0.0] * (budget + 1)
    for used in range(1, budget + 1):
        top = best[used - 1]
        for gpus, usd in sizes:
            if gpus <= used and best[used - gpus] + usd > top:
                top = best[used - gpus] + usd
        best[used] = top
    return best[budget]


def _rounded(usd: float) -> float:
    return round(usd, 4)


def pool_cost(
    region: str,
    groups: Sequence[Any],
    capacity_types: Sequence[str],
    price: Price = prices.stand_in,
) -> dict[str, Any]:
    """One GPU pool at full budget: ``hourlyUsd`` (None: a NodePool without a budget, or no
    priced type), ``unpriced`` (types without a price: not in ``hourlyUsd``), ``unbounded``,
    ``priceRegions`` and ``spotAsOnDemand``. ``price``: where the prices come from."""
    total = 0.0
    unpriced: list[str] = []
    regions: set[str] = set()
    unbounded = False
    for group in groups:
        nodes = []
        for t in group.types:
            found = price(region, t.name)
            if found is None:
                unpriced.append(t.name)
                continue
            nodes.append((max(t.gpu_count, 1), found[0]))
            regions.add(found[1])
        if group.gpus is None:
            unbounded = True
        elif nodes:
            total += most_per_hour(group.gpus, nodes)
    priced = not unbounded and len(unpriced) < sum(len(g.types) for g in groups)
    return {
        "hourlyUsd": _rounded(total) if priced else None,
        "unpriced": sorted(set(unpriced)),
        "unbounded": unbounded,
        "priceRegions": sorted(regions),
        "spotAsOnDemand": any(c in ("spot", "reserved") for c in capacity_types),
    }


def system_cost(
    region: str, instance_types: Sequence[str], max_size: int, price: Price = prices.stand_in
) -> dict[str, Any]:
    """The system node group at ``max_size`` nodes of its dearest type."""
    found = {t: price(region, t) for t in instance_types}
    priced = {t: f for t, f in found.items() if f is not None}
    if len(priced) < len(found) or not priced:
        return {"hourlyUsd": None, "unpriced": sorted(t for t, f in found.items() if f is None)}
    top = max(priced, key=lambda t: priced[t][0])
    return {
        "hourlyUsd": _rounded(max_size * priced[top][0]),
        "nodes": max_size,
        "instanceType": top,
        "priceRegions": [priced[top][1]],
        "unpriced": [],
    }


def cost_document(
    pools: Sequence[NodePoolSpec],
    operator: GpuOperatorSpec,
    scheduler: SchedulerSpec,
    *,
    region: str,
    system_node_group: SystemNodeGroupSpec,
    cpu_pools: Sequence[str],
    price: Price = prices.stand_in,
) -> dict[str, Any]:
    """``capacity.json``'s ``cost``: the pools, the system node group and the total (None when
    a part has no figure; ``complete`` is false when a priced part leaves types out).
    ``pools``, ``operator``, ``scheduler``: as in ``stack``; ``cpu_pools``: the names of the
    configured cpu pools (not counted); ``price``: the table's by default (``source`` and
    ``retrieved`` name the table)."""
    groups_of = pool_nodepools(pools, operator, scheduler)
    costs = {
        pool.name: pool_cost(region, groups_of[pool.name], pool.capacity_types, price)
        for pool in gpu_pools(pools)
    }
    group = system_node_group
    system = system_cost(region, group.instance_types, group.max_size, price)
    parts = [*costs.values(), system]
    figures = [p["hourlyUsd"] for p in parts]
    return {
        "region": region,
        "source": prices.SOURCE,
        "retrieved": prices.RETRIEVED,
        "pools": costs,
        "systemNodeGroup": system,
        "totalHourlyUsd": None if None in figures else _rounded(sum(figures)),
        "complete": not any(p["unpriced"] for p in parts),
        "priceRegions": sorted({r for p in parts for r in p.get("priceRegions", [])}),
        "cpuPools": list(cpu_pools),
        "notCounted": NOT_COUNTED,
    }


def cost_lines(cost: dict[str, Any]) -> list[str]:
    """``cost_document`` as report lines (summary.md, the validation's dry run)."""
    region = cost["region"]
    stand_in = [r for r in cost["priceRegions"] if r != region]
    where = (
        f"; {region} has no price in the table: {', '.join(stand_in)}'s prices stand in"
        if stand_in
        else ""
    )
    lines = [
        f"Hourly cost at full budget (on-demand Linux prices of {cost['retrieved']}, "
        f"{cost['source']}{where}):"
    ]
    for name, pool in cost["pools"].items():
        lines.append(f"- pool {name}: {part_figure(pool)}")
    system = cost["systemNodeGroup"]
    nodes = (
        f"{system['nodes']} x {system['instanceType']}: " if system["hourlyUsd"] is not None else ""
    )
    lines.append(f"- system node group: {nodes}{part_figure(system)}")
    total = cost["totalHourlyUsd"]
    cpu = f" (CPU pools here: {', '.join(cost['cpuPools'])})" if cost["cpuPools"] else ""
    total_text = "unknown" if total is None else f"at most ${total:,.4f}/h"
    if total is not None and not cost["complete"]:
        total_text += " plus the types without a price"
    lines.append(f"- stack: {total_text}; not counted: {cost['notCounted']}{cpu}")
    return lines


def part_figure(part: dict[str, Any]) -> str:
    if part.get("unbounded"):
        return "unbounded (a NodePool without a GPU budget)"
    usd = part["hourlyUsd"]
    if usd is None:
        return "no price (" + ", ".join(part["unpriced"]) + " not in the table)"
    text = f"at most ${usd:,.4f}/h"
    if part.get("spotAsOnDemand"):
        text += " (spot and reserved capacity priced at on-demand, their upper bound)"
    if part["unpriced"]:
        text += " plus " + ", ".join(part["unpriced"]) + " (no price in the table)"
    return text
