"""An EFA pool's zone against the region's zones and the VPC's (issue 19 item 6). Pure.

An EFA pool names its one zone (``zone``). Configuration checks its form and its region
(``PlatformConfig``); which zones exist is known only from the lookups: the region's zones
(``aws.getAvailabilityZones``, no opt-in: ``Network.region_zones``) and the zones of the VPC's
private subnets (``Network.zones``: a new VPC's from ``network.layout.vpc_zone_names``, an
existing VPC's from its subnets). A zone outside either yields a pool that can never launch a
node, so it is a configuration error, raised in the lookup's result as ``vpc.azCount`` is
(``network/layout.py`` ``zone_at``), before the pool's resources are registered.
"""

from collections.abc import Sequence

from ..errors import Item, Problem, SpecError
from .spec import NodePoolSpec


def efa_zone_problems(
    pools: Sequence[tuple[int, NodePoolSpec]],
    region_zones: Sequence[str],
    vpc_zones: Sequence[str | None],
) -> list[Problem]:
    """The problems of each ``(index in nodePools, pool)`` with a zone; ``vpc_zones`` holding a
    ``None`` (a zone not known, e.g. offline for an existing VPC) skips the VPC check."""
    out: list[Problem] = []
    region = region_zones[0][:-1] if region_zones else "the region"
    known = all(z is not None for z in vpc_zones)
    for i, pool in pools:
        zone = pool.zone
        if zone is None:
            continue
        path = ("node_pools", Item(i, pool.name), "zone")
        if zone not in region_zones:
            out.append(
                (
                    path,
                    f"{zone!r} is not an availability zone of {region} that needs no opt-in; "
                    f"expected one of {', '.join(region_zones)}",
                )
            )
        elif known and zone not in vpc_zones:
            vpc = ", ".join(sorted(str(z) for z in set(vpc_zones)))
            out.append(
                (
                    path,
                    f"{zone!r} has no private subnet of the VPC, so the pool could never launch "
                    f"a node; expected one of {vpc}",
                )
            )
    return out


def checked_vpc_zones(
    lookups: Sequence[Sequence[str | None]], pools: Sequence[tuple[int, NodePoolSpec]]
) -> list[str | None]:
    """``[region_zones, vpc_zones]`` -> ``vpc_zones``, or a ``SpecError`` listing every pool's
    zone problem (configuration paths, ``nodePools[i](name).zone``)."""
    region_zones, vpc_zones = lookups
    problems = efa_zone_problems(pools, [z for z in region_zones if z], vpc_zones)
    if problems:
        raise SpecError("", problems, config=True)
    return list(vpc_zones)
