"""A pool's Karpenter NodePools and how its GPU budget is split among them.

Pure: a pool spec (read by attribute) and its GPU budget in, plain data out; no Pulumi.

Karpenter limits are per NodePool: no NodePool borrows another's budget
(kubernetes-sigs/karpenter v1.15.0 ``pkg/controllers/provisioning/scheduling/scheduler.go``
``filterByRemainingResources`` L1097-1114; the launch gate ``provisioner.go`` L485
``ExceededBy``). So a pool renders as few NodePools as it can:

- a GPU pool: one NodePool (``<pool>``) with the whole budget;
- an EFA pool: one NodePool + EC2NodeClass per *EFA layout*, the ``networkInterfaces`` its
  EC2NodeClass renders (``catalog.efa_network_interfaces``: network cards, the EFA per card,
  interface types). Types with the same layout (p5.48xlarge and p5e.48xlarge: ENA 0/0 plus
  ``efa-only`` on cards 0-31) share one NodePool and one limit, named ``<pool>`` when the pool
  has one layout, else ``<pool>-<first type of the layout>`` (``p5-48xlarge``).

Where layouts differ, the budget is filled greedily in the configured order (``instanceTypes``
order, then catalog order): the first layout gets all of it, up to its share when
``typeShares`` gives one (the sum of its types' shares), in whole nodes of its smallest type;
the next layout gets what is left, and so on. A gang never spans instance types (the gang
template's pod affinity includes ``node.kubernetes.io/instance-type``), so the largest gang a
NodePool can hold is its budget in whole nodes of one of its types (``largest_gang``).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import catalog


def type_slug(instance_type: str) -> str:
    """``p5.48xlarge`` -> ``p5-48xlarge``: the suffix of a per-layout NodePool's name."""
    return instance_type.replace(".", "-")


@dataclass(frozen=True)
class NodePoolGroup:
    """One Karpenter NodePool (and EC2NodeClass of the same name) of a pool."""

    name: str
    types: tuple[catalog.InstanceType, ...]
    """The catalogued types it launches (an EFA NodePool lists them in its requirements)."""
    gpus: int | None
    """Its GPU budget in physical GPUs (None: unbounded, no budget given)."""
    efa: bool = False

    @property
    def instance_types(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.types)

    @property
    def node_gpus(self) -> int:
        """GPUs of its smallest node."""
        return min((t.gpu_count for t in self.types if t.gpu_count > 0), default=1)

    @property
    def largest_gang(self) -> int:
        """Physical GPUs one gang (pods on one instance type) can get from this NodePool: its
        budget in whole nodes of one of its types, the best type."""
        if self.gpus is None:
            return 0
        return max(
            ((self.gpus // t.gpu_count) * t.gpu_count for t in self.types if t.gpu_count > 0),
            default=0,
        )


def efa_layout(instance_type: str) -> tuple[tuple[int, int, str], ...]:
    """The ``networkInterfaces`` the EC2NodeClass renders for the type, as a hashable key."""
    return tuple(
        (i["networkCardIndex"], i["deviceIndex"], i["interfaceType"])
        for i in catalog.efa_network_interfaces(instance_type)
    )


def ordered_types(pool: Any) -> tuple[catalog.InstanceType, ...]:
    """The pool's GPU types in the configured order: as ``instanceTypes`` lists them, then the
    others in catalog order."""
    listed = {name: i for i, name in enumerate(pool.instance_types)}
    types = [t for t in pool.catalog_types if t.gpu_count > 0]
    return tuple(sorted(types, key=lambda t: listed.get(t.name, len(listed))))


def layout_groups(pool: Any) -> list[tuple[catalog.InstanceType, ...]]:
    """An EFA pool's types grouped by EFA layout, groups in the order of their first type."""
    groups: dict[tuple, list[catalog.InstanceType]] = {}
    for t in ordered_types(pool):
        groups.setdefault(efa_layout(t.name), []).append(t)
    return [tuple(g) for g in groups.values()]


def split_gpu_limit(
    total: int | None,
    groups: Sequence[Sequence[catalog.InstanceType]],
    shares: Mapping[str, int] | None = None,
) -> list[int | None]:
    """``total`` GPUs over the NodePools of ``groups``, greedily in order, in whole nodes.

    Each group takes what is left, at most its share (the sum of ``shares`` of its types; no
    cap when none of its types has one), rounded down to whole nodes of its smallest type.
    None (no budget) leaves every group unbounded.
    """
    if total is None:
        return [None] * len(groups)
    shares = shares or {}
    out: list[int | None] = []
    left = total
    for group in groups:
        own = [shares[t.name] for t in group if t.name in shares]
        take = min(left, sum(own)) if own else left
        size = min((t.gpu_count for t in group if t.gpu_count > 0), default=1)
        take = (take // size) * size
        out.append(take)
        left -= take
    return out


def nodepool_groups(pool: Any, gpus: int | None) -> list[NodePoolGroup]:
    """The pool's NodePools with their GPU budgets (``gpus``: the pool's, physical GPUs)."""
    if pool.kind != "efa":
        return [NodePoolGroup(pool.name, ordered_types(pool), gpus)]
    groups = layout_groups(pool)
    budgets = split_gpu_limit(gpus, groups, pool.type_shares)
    single = len(groups) == 1
    return [
        NodePoolGroup(
            pool.name if single else f"{pool.name}-{type_slug(group[0].name)}",
            group,
            budget,
            efa=True,
        )
        for group, budget in zip(groups, budgets, strict=True)
    ]


def nodepool_names(pool: Any) -> list[str]:
    """The names of the pool's NodePools (and EC2NodeClasses)."""
    return [g.name for g in nodepool_groups(pool, None)]


def gpu_limit_shortfall(pool: Any, limit: int) -> str | None:
    """Why ``limit`` GPUs could never launch a node of the pool (None when they can)."""
    types = [t for t in pool.catalog_types if t.gpu_count > 0]
    if not types:
        return None
    if pool.kind == "efa":
        groups = nodepool_groups(pool, limit)
        if all(not g.gpus for g in groups):
            first = groups[0]
            smallest = min(first.types, key=lambda t: (t.gpu_count, t.name))
            where = (
                f"its first NodePool {first.name!r} (instanceTypes order)"
                if len(groups) > 1
                else "the pool"
            )
            own = [pool.type_shares[t] for t in first.instance_types if t in pool.type_shares]
            capped = f" (typeShares give it {sum(own)})" if own else ""
            return (
                f"holds no whole node of {where}{capped}: its smallest type is "
                f"{smallest.name}, {smallest.gpu_count} GPUs"
            )
        return None
    smallest = min(types, key=lambda t: (t.gpu_count, t.name))
    if limit < smallest.gpu_count:
        return (
            f"is less than one node of the smallest type ({smallest.name}, "
            f"{smallest.gpu_count} GPUs)"
        )
    return None


def type_share_problems(pool: Any) -> list[tuple[tuple, str]]:
    """``typeShares`` against the pool: an EFA pool's own types, whole nodes, within its cap."""
    out: list[tuple[tuple, str]] = []
    if not pool.type_shares:
        return out
    path = ("type_shares",)
    if pool.kind != "efa":
        return [
            (
                path,
                f"only applies to efa pools (one NodePool per EFA layout); {pool.name!r} "
                f"is a {pool.kind} pool",
            )
        ]
    by_name = {t.name: t for t in pool.catalog_types}
    for name, share in pool.type_shares.items():
        t = by_name.get(name)
        if t is None:
            out.append(
                (
                    path,
                    f"{name!r} is not an instance type of efa pool {pool.name!r}; expected one "
                    f"of {', '.join(by_name)}",
                )
            )
        elif isinstance(share, bool) or not isinstance(share, int) or share < 0:
            out.append((path, f"the share of {name!r} is {share!r}; expected whole GPUs, 0 up"))
        elif share % t.gpu_count:
            out.append(
                (
                    path,
                    f"the share of {name!r} is {share} GPUs, not whole {t.gpu_count}-GPU nodes; "
                    f"use a multiple of {t.gpu_count}",
                )
            )
    if out:
        return out
    total = sum(pool.type_shares.values())
    if pool.limits.gpus is not None and total > pool.limits.gpus:
        out.append(
            (
                path,
                f"sum to {total} GPUs, more than limits.gpus of efa pool {pool.name!r} "
                f"({pool.limits.gpus})",
            )
        )
    return out
