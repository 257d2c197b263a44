"""The cost estimate of a check that launches nodes, from the project's dated price table
(``eks_gpu_platform.prices``: its source, date and caveats are described there).

A type without a price in the stack's region makes the estimate ``None`` ("no price" in the
dry run), which the phases treat as a refusal to launch (the cost cap cannot be checked),
unless the user supplies its price (``--price INSTANCE_TYPE=USD_PER_HOUR``,
``Options.prices``): used only where the table has none, and named "user-supplied" wherever an
estimate is shown. Another region's price (``prices.stand_in``) is shown beside such an
estimate, never used for the cap.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..prices import (
    HOURLY_USD,
    NOT_IN_SOURCE_REGION,
    NOT_IN_SOURCE_TYPE,
    REGIONS,
    RETRIEVED,
    SOURCE,
    UNPRICED,
)
from .core import Planned

__all__ = [
    "HOURLY_USD",
    "NOT_IN_SOURCE_REGION",
    "NOT_IN_SOURCE_TYPE",
    "REGIONS",
    "RETRIEVED",
    "SOURCE",
    "UNPRICED",
    "USER_SUPPLIED",
    "describe",
    "estimate_usd",
    "hourly_usd",
    "unpriced_reason",
    "user_supplied",
]


USER_SUPPLIED = "user-supplied (--price)"


def hourly_usd(
    region: str, instance_type: str, user: Mapping[str, float] | None = None
) -> float | None:
    """The on-demand Linux hourly price of ``instance_type`` in ``region``: the table's, else the
    user-supplied one (``--price``, ``Options.prices``) when the table has none; None when
    neither has one."""
    table = HOURLY_USD.get(region, {}).get(instance_type)
    if table is not None:
        return table
    return (user or {}).get(instance_type)


def user_supplied(region: str, instance_type: str, user: Mapping[str, float] | None) -> bool:
    """Whether the price ``hourly_usd`` gives for the type comes from ``--price``."""
    return hourly_usd(region, instance_type) is None and instance_type in (user or {})


def unpriced_reason(region: str, instance_type: str) -> str | None:
    """Why a type has no price in a region (None when it has one, or is not in the table)."""
    return UNPRICED.get((region, instance_type)) or UNPRICED.get((region, "*"))


def estimate_usd(
    planned: Planned, region: str, user: Mapping[str, float] | None = None
) -> float | None:
    """``planned.nodes`` x the highest hourly price among ``planned.instance_types`` x
    ``planned.max_minutes / 60``; None when any of the types has no price (0.0 when the check
    launches nothing)."""
    if planned.nodes == 0 or not planned.instance_types:
        return 0.0
    hourly = [hourly_usd(region, t, user) for t in planned.instance_types]
    if any(price is None for price in hourly):
        return None
    return planned.nodes * max(hourly) * planned.max_minutes / 60.0


def describe(planned: Planned, region: str, user: Mapping[str, float] | None = None) -> str:
    """The estimate as a report line: figures and where the price comes from (the table and its
    date, or ``--price``), or "no price" naming the unpriced types."""
    estimate = estimate_usd(planned, region, user)
    if estimate is None:
        missing = [t for t in planned.instance_types if hourly_usd(region, t, user) is None]
        return (
            f"no price for {', '.join(missing)} in {region} (table of {RETRIEVED}, {SOURCE}; "
            "--price INSTANCE_TYPE=USD_PER_HOUR supplies one)"
        )
    if planned.nodes == 0:
        return "launches no node: $0.00"
    top = max(planned.instance_types, key=lambda t: hourly_usd(region, t, user) or 0.0)
    where = USER_SUPPLIED if user_supplied(region, top, user) else f"on-demand, {RETRIEVED}"
    return (
        f"${estimate:.2f} = {planned.nodes} node(s) x ${hourly_usd(region, top, user):.4f}/h "
        f"({top}, {region}, {where}) x {planned.max_minutes:g} min"
    )
