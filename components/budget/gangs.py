"""Where a queue's gangs run: one pool, one instance type, one zone, and why (issue 30, points 3
and 4). One rule, used by the configuration's checks (``gangZone``/``gangInstanceType``), the
gang training template (``offline.examples``), the capacity plan's ``largestGang`` and
``capacity.json``'s ``gangs``.

Pure: pool specs (read by attribute), their NodePools (``nodepools.nodepool_groups``) and the
pool's zones in, plain data out.

- **The pool** (``gang_pool``): of a queue's routed GPU pools, the EFA pool whose NodePools hold
  the largest gang of the type it would pin (the first in routing order on a tie), else the
  queue's first GPU pool. The queue's overrides do not move it: they are checked against it.
- **The type** (``gang_type``), the first that the pool can buy a whole node of (its NodePool's
  budget holds one node of the type, or has no budget), in this order:

  1. ``gangInstanceType`` when set (refused when the pool cannot launch it, ``override_problems``);
  2. *reserved capacity*: the ``instanceType`` of the pool's ``capacityReservations`` (a pool with
     ``reserved`` in ``capacityTypes``). Karpenter v1.15.0 prefers reserved offerings: the
     AWS provider offers a reservation only for its type and zone and prices it at the
     on-demand price / 10,000,000 (karpenter-provider-aws v1.15.0
     ``pkg/providers/instancetype/offering/reserved_capacity_resolver.go`` L71, L76-82,
     L92-106), launches a NodeClaim as ``reserved`` whenever one of its types has a launchable
     reserved offering, one with room left (``pkg/providers/instance/instance.go`` L810-828
     ``getCapacityType``: reserved, then spot, then on-demand); the core scheduler narrows a
     NodeClaim that holds a reserved offering to ``karpenter.sh/capacity-type: reserved`` and
     its reservation ids (kubernetes-sigs/karpenter v1.15.0
     ``pkg/controllers/provisioning/scheduling/nodeclaim.go`` L447-459) and ranks launch prices
     reserved, then spot, then on-demand (``pkg/cloudprovider/types.go`` L675-689). So a gang
     pinned to the reservation's type takes it while it has room, while a gang pinned to another
     type can only buy that type (spot or on-demand) and leaves the reservation idle. A full
     reservation stays offered (available, with capacity 0: the resolver's L100-106) but is not
     launchable (core ``types.go`` L618-633): the gang's NodeClaims are not narrowed to it and
     launch spot or on-demand when the pool lists either (core ``nodeclaim.go`` L349-362,
     ``instance.go`` L819-824); a pool listing only ``reserved`` keeps the pods pending until a
     slot frees, and does not let them fall through to a lower-weight NodePool (provisioning is
     strict: core ``provisioner.go`` L406-407, ``nodeclaim.go`` L373-396, ``scheduler.go``
     L762-780);
  3. ``instanceTypes`` in the order written (the docs say: the reservation's type first);
  4. the pool's other types (selected by ``gpus`` or ``instanceFamilies``): the fewest GPUs,
     then the smallest size, then by name.

  When no type has a node's worth of budget the first of that order is kept (the budget's own
  checks refuse such a pool).
- **The zone**: ``gangZone`` when set; else the EFA pool's zone; else, for a reserved type whose
  reservation names its ``zone``, that zone (an ODCR or Capacity Block serves one zone); else the
  first of the pool's zones (the VPC's, in subnet order; none known for an existing VPC).

Karpenter needs the pin: a self-affine gang of whole-node pods may otherwise bootstrap a zone or
type per NodeClaim (see ``scheduler.training.gang_placement``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import catalog
from ..spec import show
from .nodepools import NodePoolGroup

BY_OVERRIDE = "gangInstanceType"
BY_RESERVATION = "reserved capacity"
BY_ORDER = "first in instanceTypes with budget"
BY_SIZE = "fewest GPUs with budget"
ZONE_BY_OVERRIDE = "gangZone"
ZONE_OF_POOL = "the efa pool's zone"
ZONE_OF_RESERVATION = "the reservation's zone"
ZONE_FIRST = "the VPC's first zone"
ZONE_UNKNOWN = "not known before deployment (existing VPC)"


@dataclass(frozen=True)
class GangChoice:
    """Where one queue's gangs run."""

    pool: str
    nodepool: str
    instance_type: str
    reason: str
    """Why the type: ``BY_OVERRIDE``, ``BY_RESERVATION``, ``BY_ORDER`` or ``BY_SIZE``."""
    zone: str | None
    zone_reason: str
    gpus: int | None
    """The pinned type's NodePool budget in whole nodes of that type (None: no budget)."""
    pinned: bool
    """Whether the template pins zone and type (a pool with several of either, or an override:
    ``scheduler.training.gang_placement``)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "nodePool": self.nodepool,
            "instanceType": self.instance_type,
            "reason": self.reason,
            "zone": self.zone,
            "zoneReason": self.zone_reason,
            "nodePoolGpus": self.gpus,
            "pinned": self.pinned,
        }


def _size_rank(size: str) -> int:
    """``xlarge`` -> 1, ``48xlarge`` -> 48; any other size (``metal``, ``metal-48xl``) after."""
    match = re.fullmatch(r"(\d*)xlarge", size)
    return int(match.group(1) or 1) if match else 1_000_000


def reservations(pool: Any) -> dict[str, tuple[str, ...]]:
    """The types of the pool's capacity reservations that name one, with their zones (empty
    when none is named), in the order configured; none unless ``reserved`` is a capacity
    type."""
    out: dict[str, list[str]] = {}
    if "reserved" not in pool.capacity_types:
        return {}
    for c in pool.capacity_reservations:
        if c.instance_type is not None:
            zones = out.setdefault(c.instance_type, [])
            if c.zone is not None and c.zone not in zones:
                zones.append(c.zone)
    return {t: tuple(z) for t, z in out.items()}


def type_order(pool: Any) -> list[tuple[catalog.InstanceType, str]]:
    """The pool's GPU types in the order a gang prefers them, each with its reason."""
    types = [t for t in pool.catalog_types if t.gpu_count > 0] or list(pool.catalog_types)
    by_name = {t.name: t for t in types}
    out: list[tuple[catalog.InstanceType, str]] = []
    seen: set[str] = set()
    listed = [(n, BY_RESERVATION) for n in reservations(pool)]
    listed += [(n, BY_ORDER) for n in pool.instance_types]
    for name, why in listed:
        if name in by_name and name not in seen:
            out.append((by_name[name], why))
            seen.add(name)
    rest = sorted(
        (t for t in types if t.name not in seen),
        key=lambda t: (t.gpu_count, _size_rank(t.size), t.name),
    )
    return out + [(t, BY_SIZE) for t in rest]


def group_of(groups: Sequence[NodePoolGroup], name: str) -> NodePoolGroup | None:
    return next((g for g in groups if name in g.instance_types), None)


def whole_nodes(group: NodePoolGroup | None, t: catalog.InstanceType) -> int | None:
    """The GPUs of ``group``'s budget in whole nodes of ``t`` (None: no budget; 0: no group)."""
    if group is None:
        return 0
    if group.gpus is None:
        return None
    return (group.gpus // t.gpu_count) * t.gpu_count if t.gpu_count > 0 else 0


def buyable(groups: Sequence[NodePoolGroup], t: catalog.InstanceType) -> bool:
    """Whether a NodePool of the pool can launch a whole node of ``t`` within its budget."""
    gpus = whole_nodes(group_of(groups, t.name), t)
    return gpus is None or gpus > 0


def gang_type(
    pool: Any, groups: Sequence[NodePoolGroup], override: str | None = None
) -> tuple[catalog.InstanceType, str]:
    """The type a gang of the pool pins and why (see the module docstring)."""
    order = type_order(pool)
    if override is not None:
        chosen = next((t for t, _ in order if t.name == override), None)
        if chosen is not None:
            return chosen, BY_OVERRIDE
    return next(((t, why) for t, why in order if buyable(groups, t)), order[0])


def gang_gpus(pool: Any, groups: Sequence[NodePoolGroup], override: str | None = None) -> int:
    """GPUs one gang gets on the pool, on the type it pins (0 without a budget)."""
    t, _ = gang_type(pool, groups, override)
    return whole_nodes(group_of(groups, t.name), t) or 0


def gang_pool(routed: Sequence[Any], nodepools: Mapping[str, Sequence[NodePoolGroup]]) -> Any:
    """The pool a queue's gangs run on: of ``routed`` (its GPU pools, in routing order), the EFA
    pool holding the largest gang of its default type, else the first."""
    efa = [p for p in routed if p.kind == "efa"]
    if not efa:
        return routed[0]
    return max(efa, key=lambda p: gang_gpus(p, nodepools[p.name]))


def gang_choice(
    pool: Any,
    groups: Sequence[NodePoolGroup],
    zones: Sequence[str],
    *,
    instance_type: str | None = None,
    zone: str | None = None,
) -> GangChoice:
    """Where a gang on ``pool`` runs; ``zones``: the pool's zones when it is not an EFA pool
    (the VPC's, in subnet order; empty when unknown)."""
    t, why = gang_type(pool, groups, instance_type)
    group = group_of(groups, t.name)
    reserved = reservations(pool).get(t.name, ())
    if zone is not None:
        pick, zone_why = zone, ZONE_BY_OVERRIDE
    elif pool.zone is not None:
        pick, zone_why = pool.zone, ZONE_OF_POOL
    elif reserved:
        pick, zone_why = reserved[0], ZONE_OF_RESERVATION
    elif zones:
        pick, zone_why = zones[0], ZONE_FIRST
    else:
        pick, zone_why = None, ZONE_UNKNOWN
    pool_zones = {pool.zone} if pool.zone is not None else set(zones)
    types = [x for x, _ in type_order(pool)]
    pinned = len(pool_zones) > 1 or len(types) > 1 or zone is not None or instance_type is not None
    return GangChoice(
        pool=pool.name,
        nodepool=group.name if group is not None else pool.name,
        instance_type=t.name,
        reason=why,
        zone=pick,
        zone_reason=zone_why,
        gpus=whole_nodes(group, t) if group is not None else None,
        pinned=pinned,
    )


def override_problems(
    queue: Any,
    pool: Any,
    groups: Sequence[NodePoolGroup],
    zones: Sequence[str],
    region: str,
) -> list[tuple[str, str]]:
    """``gangInstanceType`` and ``gangZone`` of ``queue`` against ``pool``, where its gangs run:
    (key, message) pairs, the key a ``QueueSpec`` field name."""
    out: list[tuple[str, str]] = []
    order = type_order(pool)
    can_buy = [t.name for t, _ in order if buyable(groups, t)]
    itype = queue.gang_instance_type
    where = f"pool {show(pool.name)}, where the queue's gangs run"
    if itype is not None:
        known = {t.name: t for t, _ in order}
        if itype not in known:
            out.append(
                (
                    "gang_instance_type",
                    f"{show(itype)} is not an instance type of {where}; expected one of "
                    + ", ".join(can_buy or list(known)),
                )
            )
        elif itype not in can_buy:
            group = group_of(groups, itype)
            name = group.name if group is not None else pool.name
            budget = group.gpus if group is not None else 0
            out.append(
                (
                    "gang_instance_type",
                    f"{show(itype)} cannot be launched in {where}: its NodePool {show(name)} "
                    f"has a budget of {budget} GPUs, less than one {known[itype].gpu_count}-GPU "
                    "node, so the gang would never start; expected one of "
                    + (", ".join(can_buy) or "(none: raise the pool's budget)"),
                )
            )
    zone = queue.gang_zone
    if zone is None:
        return out
    if pool.zone is not None and zone != pool.zone:
        out.append(
            (
                "gang_zone",
                f"{show(zone)} is not the zone of efa pool {show(pool.name)} ({pool.zone}), "
                "where the queue's gangs run",
            )
        )
        return out
    if not zone.startswith(region):
        out.append(("gang_zone", f"{show(zone)} is not in region {region}"))
        return out
    if pool.zone is None and zones and zone not in zones:
        out.append(
            (
                "gang_zone",
                f"{show(zone)} is not one of the VPC's zones ({', '.join(zones)}), where the "
                f"nodes of {where} launch",
            )
        )
        return out
    t, why = gang_type(pool, groups, itype if itype in can_buy else None)
    reserved = reservations(pool).get(t.name, ())
    if why in (BY_RESERVATION, BY_OVERRIDE) and reserved and zone not in reserved:
        out.append(
            (
                "gang_zone",
                f"{show(zone)} is not the zone of the {t.name} capacity reservation of "
                f"{where} ({', '.join(reserved)}); the gang pins {t.name} for its reserved "
                f"capacity; expected {' or '.join(reserved)}, or remove gangZone",
            )
        )
    return out


def queue_gangs(
    queues: Sequence[Any],
    pools: Sequence[Any],
    nodepools: Mapping[str, Sequence[NodePoolGroup]],
    zones: Sequence[str] = (),
) -> dict[str, GangChoice]:
    """Per queue routed to a GPU pool (of ``pools``), where its gangs run; ``zones``: the VPC's
    (empty when unknown: the type, pool and budget do not depend on them)."""
    by_name = {p.name: p for p in pools}
    out: dict[str, GangChoice] = {}
    for queue in queues:
        routed = [by_name[n] for n in queue.node_pools if n in by_name]
        if not routed:
            continue
        pool = gang_pool(routed, nodepools)
        out[queue.name] = gang_choice(
            pool,
            nodepools[pool.name],
            zones,
            instance_type=queue.gang_instance_type,
            zone=queue.gang_zone,
        )
    return out


def queue_gang_gpus(
    queues: Sequence[Any],
    pools: Sequence[Any],
    nodepools: Mapping[str, Sequence[NodePoolGroup]],
) -> dict[str, dict[str, int]]:
    """Per queue, per EFA pool it routes to: the GPUs one of its gangs gets there, on the type
    a gang pins there (``gangInstanceType`` on the queue's gang pool), in routing order with
    the gang pool first."""
    by_name = {p.name: p for p in pools}
    out: dict[str, dict[str, int]] = {}
    for queue in queues:
        routed = [by_name[n] for n in queue.node_pools if n in by_name]
        efa = [p for p in routed if p.kind == "efa"]
        if not efa:
            continue
        home = gang_pool(routed, nodepools)
        mine = {home.name: gang_gpus(home, nodepools[home.name], queue.gang_instance_type)}
        for p in efa:
            mine.setdefault(p.name, gang_gpus(p, nodepools[p.name]))
        out[queue.name] = mine
    return out
