"""Queue -> node pool routing: each GPU pool's ``nvidia.com/gpu`` limit and routing mistakes.

Friction point 1 (over-quota pods trigger scale-up): pure functions, no Pulumi; queue specs
are read by attribute.

Ancestors. KAI admits a job only within the ``gpu.limit`` of its queue and of every ancestor
(kai-scheduler v0.16.8 ``pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go``
L16-49, the loop over the queue's parents at L19); it marks the pods it refuses
``PodScheduled=False/Unschedulable`` (``pkg/scheduler/cache/status_updater/
default_status_updater.go`` L240-256), and Karpenter provisions for any such pod, whatever its
scheduler (kubernetes-sigs/karpenter v1.15.0 ``pkg/utils/pod/scheduling.go`` L97-133). So the
leaves' shares under an ancestor with a finite ``gpu.limit`` L are cut to L together
(``capped_shares``, ``_cut_to_limit``), deepest ancestor first (after its quota rule, below):

- each (leaf, pool) share splits into its in-quota part (the leaf's ``gpu.quota`` spread over
  its pools in proportion to their shares) and the rest, its over-quota part;
- when the in-quota parts under the ancestor sum to L or more, every part is scaled by
  L / (their sum) and the over-quota parts are dropped;
- otherwise the over-quota parts are scaled by (L - in-quota sum) / (their sum), an unlimited
  one counting as L (an unlimited share is always cut, even when it alone fits in L);
- then the pools' budgets are the sums of the cut shares in whole nodes, so the physical GPUs
  under the ancestor exceed L by at most the rounding of its pools to whole nodes.

A queue's in-quota work is what KAI guarantees (``quota_check.go`` L26-59), so it is kept
before any over-quota work is bought.

The quota rule, applied at each ancestor before its limit rule. KAI admits a non-preemptible job
only while, for its queue and every ancestor, the non-preemptible GPUs already allocated plus
the job's request stay within ``Deserved`` (``quota_check.go`` L35-56, the check at L73), which
is the queue's ``gpu.quota`` (``proportion.go`` L344-347) and counts every descendant's
non-preemptible allocations (``proportion.go`` L386-399, L455-470). So the shares of the
non-preemptible pools under an ancestor with a finite ``gpu.quota`` Q are cut to Q together
(``_cut_to_quota``): when they sum to more than Q, each is scaled by Q / (their sum), an
unlimited one counting as Q (and always cut); preemptible pools are untouched. Their pools'
budgets exceed Q by at most the same whole-node rounding (Q = -1, KAI's unlimited: no cut,
``quota_check.go`` L66-68). The limit rule then sees the smaller in-quota parts, so what the
quota cut frees goes to over-quota work. ``AncestorCap.cut_by`` names each key that would cut
on its own (``"quota"``, ``"limit"``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..spec import Problem, did_you_mean, show
from .units import EPSILON, UNLIMITED, _num, ancestors, leaf_queue_names

if TYPE_CHECKING:  # read by attribute: the budget imports no capability package
    from ..scheduler.spec import QueueSpec


@dataclass(frozen=True)
class PoolRouting:
    """What the queue routing needs to know about one node pool.

    ``preemptible``: sized by the queues' ``gpu.limit`` (over-quota work may run there), else
    by their ``gpu.quota`` (non-preemptible work runs in quota only). ``gpu_cap``: the pool's
    own GPU limit (physical GPUs), if configured. ``gpu``: false for CPU pools, which queues
    may route to but which have no GPU limit. ``slices_per_gpu``: the KAI queue units one
    physical GPU surely offers (time-slicing replicas, MIG devices under strategy ``single``,
    under ``mixed`` the fewest g-units any one profile of the layout offers); queues count
    those. ``node_gpus``: GPUs of the pool's smallest node; budgets are whole nodes of it.
    ``max_units_per_gpu``: KAI units one GPU offers in all (default ``slices_per_gpu``; more
    under a mixed MIG layout).
    """

    preemptible: bool
    gpu_cap: int | None
    gpu: bool = True
    slices_per_gpu: int = 1
    node_gpus: int = 1
    max_units_per_gpu: int | None = None

    @property
    def units_per_gpu(self) -> int:
        return self.max_units_per_gpu or self.slices_per_gpu


def queue_shares(queue: QueueSpec, pools: Mapping[str, PoolRouting]) -> dict[str, float | None]:
    """The GPU budget (KAI units; None: unlimited) the queue gives each GPU pool it routes to.

    One GPU pool: ``gpu.limit`` if it is preemptible, else ``gpu.quota``. Several: the shares
    of ``poolShares`` when set; otherwise an even split of the queue's budget (``gpu.limit``
    when one of the pools is preemptible, else ``gpu.quota``), a non-preemptible pool's share
    being at most ``gpu.quota`` / n (work there runs in quota only). The shares never sum to
    more than the budget, so the pools a queue routes to share one budget instead of each
    getting all of it.
    """
    routed = [p for p in queue.node_pools if p in pools and pools[p].gpu]
    if len(routed) == 1:
        value = queue.gpu.limit if pools[routed[0]].preemptible else queue.gpu.quota
        return {routed[0]: None if value == UNLIMITED else float(value)}
    if queue.pool_shares:
        return {p: float(queue.pool_shares.get(p, 0)) for p in routed}
    budget = queue.gpu.limit if any(pools[p].preemptible for p in routed) else queue.gpu.quota
    out: dict[str, float | None] = {}
    for p in routed:
        if budget == UNLIMITED:
            out[p] = None
        elif pools[p].preemptible or queue.gpu.quota == UNLIMITED:
            out[p] = budget / len(routed)
        else:
            out[p] = min(budget, queue.gpu.quota) / len(routed)
    return out


Shares = dict[str, dict[str, float | None]]
"""Leaf queue name -> pool -> KAI units (None: unlimited)."""


@dataclass(frozen=True)
class AncestorCap:
    """An ancestor queue, its ``gpu.limit`` and ``gpu.quota`` (-1: none), and ``cut_by``: which
    of them cut its leaves' shares (``"quota"``, ``"limit"``), each one that would cut them on
    its own (so a quota and a limit that both bind are both named)."""

    name: str
    limit: float
    quota: float = UNLIMITED
    cut_by: tuple[str, ...] = ()

    @property
    def cut(self) -> bool:
        """Whether it cut the shares below it (by its quota, its limit or both)."""
        return bool(self.cut_by)

    def value(self, key: str) -> float:
        """Its ``gpu.quota`` (``key`` "quota") or ``gpu.limit`` ("limit")."""
        return self.quota if key == "quota" else self.limit


def cut_phrase(caps: Iterable[AncestorCap], whose: str = "its ancestors") -> str:
    """Which keys of which ancestors cut a queue's shares, for a message: "the gpu.limit of its
    ancestors 'research' (12)", "the gpu.quota of its ancestors 'p' (4) and the gpu.limit of
    its ancestors 'p' (4)"; "" if none."""
    caps = list(dict.fromkeys(caps))
    parts = []
    for key in ("quota", "limit"):
        named = [a for a in caps if key in a.cut_by]
        if named:
            parts.append(
                f"the gpu.{key} of {whose} "
                + ", ".join(f"{show(a.name)} ({_num(a.value(key))})" for a in named)
            )
    return " and ".join(parts)


def _leaf_shares(queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]) -> Shares:
    leaves = leaf_queue_names(queues)
    return {q.name: queue_shares(q, pools) for q in queues if q.name in leaves}


def capped_shares(
    queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]
) -> tuple[Shares, dict[str, tuple[AncestorCap, ...]]]:
    """Every leaf's shares (``queue_shares``) cut to its ancestors' ``gpu.quota`` (the shares of
    non-preemptible pools) and ``gpu.limit`` (the rules in the module docstring), and per leaf
    its ancestors, nearest first."""
    shares = _leaf_shares(queues, pools)
    by_name = {q.name: q for q in queues}
    parts: Parts = {}
    for leaf, per_pool in shares.items():
        quota = by_name[leaf].gpu.quota
        finite = [s for s in per_pool.values() if s is not None]
        total = sum(finite)
        unlimited = len(per_pool) - len(finite)
        for pool, share in per_pool.items():
            if quota == UNLIMITED:
                part = share
            elif share is None:
                part = max(0.0, quota - total) / unlimited
            else:
                part = share * min(1.0, quota / total) if total > EPSILON else 0.0
            parts[(leaf, pool)] = [part, share]
    lineage = {leaf: ancestors(by_name[leaf], queues) for leaf in shares}
    depth = {q.name: len(ancestors(q, queues)) for q in queues}
    capped = {
        q.name
        for q in queues
        if q.name not in shares and (q.gpu.limit != UNLIMITED or q.gpu.quota != UNLIMITED)
    }
    cut_by: dict[str, list[str]] = {}
    for name in sorted(capped, key=lambda n: (-depth[n], n)):
        mine = [k for k in parts if any(a.name == name for a in lineage[k[0]])]
        if not mine:
            continue
        gpu = by_name[name].gpu
        limit_cuts = gpu.limit != UNLIMITED and _limit_cuts(parts, mine, float(gpu.limit))
        if gpu.quota != UNLIMITED:
            stable = [k for k in mine if not pools[k[1]].preemptible]
            if _cut_to_quota(parts, stable, float(gpu.quota)):
                cut_by.setdefault(name, []).append("quota")
        if limit_cuts:
            cut_by.setdefault(name, []).append("limit")
            if _limit_cuts(parts, mine, float(gpu.limit)):
                _cut_to_limit(parts, mine, float(gpu.limit))
    out: Shares = {
        leaf: {pool: parts[(leaf, pool)][1] for pool in per_pool}
        for leaf, per_pool in shares.items()
    }
    caps = {
        leaf: tuple(
            AncestorCap(
                a.name, float(a.gpu.limit), float(a.gpu.quota), tuple(cut_by.get(a.name, ()))
            )
            for a in lineage[leaf]
        )
        for leaf in shares
    }
    return out, caps


Parts = dict[tuple[str, str], list[float | None]]
"""(leaf, pool) -> [in-quota part, share]; None: unlimited."""


def _value(v: float | None, cap: float) -> float:
    return cap if v is None else v


def _cut_to_quota(parts: Parts, stable: Sequence[tuple[str, str]], quota: float) -> bool:
    """The quota rule: scale the shares of non-preemptible pools (``stable``) under an ancestor
    to its ``gpu.quota`` Q in sum, an unlimited one counting as Q; whether it cut them."""
    if not stable:
        return False
    total = sum(_value(parts[k][1], quota) for k in stable)
    unbounded = any(parts[k][1] is None for k in stable)
    if total <= quota + EPSILON and not unbounded:
        return False
    scale = quota / total if total > EPSILON else 0.0
    for k in stable:
        part, share = _value(parts[k][0], quota), _value(parts[k][1], quota)
        parts[k] = [min(part, share) * scale, share * scale]
    return True


def _limit_cuts(parts: Parts, mine: Sequence[tuple[str, str]], limit: float) -> bool:
    """Whether the shares under an ancestor exceed its ``gpu.limit`` L (or one is unlimited)."""
    in_quota = sum(_value(parts[k][0], limit) for k in mine)
    over = sum(max(0.0, _value(parts[k][1], limit) - _value(parts[k][0], limit)) for k in mine)
    # An unlimited share is always cut: counted as L it may fit, but left None the pool would
    # be bounded only by its own cap (or reported as unbounded).
    unbounded = any(parts[k][1] is None for k in mine)
    return in_quota + over > limit + EPSILON or unbounded


def _cut_to_limit(parts: Parts, mine: Sequence[tuple[str, str]], limit: float) -> None:
    """The limit rule (module docstring): in-quota parts kept, over-quota parts share the rest."""
    in_quota = sum(_value(parts[k][0], limit) for k in mine)
    over = sum(max(0.0, _value(parts[k][1], limit) - _value(parts[k][0], limit)) for k in mine)
    for k in mine:
        part, share = _value(parts[k][0], limit), _value(parts[k][1], limit)
        if in_quota >= limit - EPSILON:
            part = part * limit / in_quota if in_quota > EPSILON else 0.0
            parts[k] = [part, part]
        else:
            extra = max(0.0, share - part) * (limit - in_quota) / over
            parts[k] = [part, part + extra]


def _pool_demand(shares: Shares, pool: str) -> tuple[float | None, list[str]]:
    """KAI units the leaf queues routed to ``pool`` give it (None: unlimited), and those queues."""
    total = 0.0
    unlimited = False
    feeders = []
    for leaf, per_pool in shares.items():
        if pool not in per_pool:
            continue
        feeders.append(leaf)
        value = per_pool[pool]
        if value is None:
            unlimited = True
        else:
            total += value
    return (None if unlimited else total), feeders


def _pool_limit(demand: float | None, routing: PoolRouting) -> int | None:
    """Physical GPUs, in whole nodes of the smallest type, for ``demand`` KAI units, within
    the cap."""
    cap = routing.gpu_cap
    if demand is None:
        return cap
    gpus = math.ceil(round(demand / routing.slices_per_gpu, 6))
    node = max(routing.node_gpus, 1)
    whole = -(-gpus // node) * node
    return whole if cap is None else min(whole, cap)


def pool_gpu_limits(
    queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]
) -> dict[str, int]:
    """Each GPU pool's budget in physical GPUs, from the queues routed to it.

    The sum of the shares (``queue_shares``, cut to the ancestors' ``gpu.limit``:
    ``capped_shares``) of the leaf queues routed to the pool, divided by
    the KAI units a GPU offers (``slices_per_gpu``), rounded up to whole nodes of the pool's
    smallest type; with the pool's own cap the result is at most the cap; an unlimited queue
    (-1) leaves only the cap. A pool no queue routes to gets 0. The NodePool's limits carry it
    in the units its nodes advertise (``PoolCapacity.limits``). Raises ``ValueError`` for a
    pool fed by an unlimited queue without a cap (``routing_problems`` reports it first).
    """
    shares, _ = capped_shares(queues, pools)
    out: dict[str, int] = {}
    for name, routing in pools.items():
        if not routing.gpu:
            continue
        demand, _ = _pool_demand(shares, name)
        limit = _pool_limit(demand, routing)
        if limit is None:
            raise ValueError(
                f"pool_gpu_limits: node pool {name!r} is fed by a queue with unlimited GPUs and "
                "has no GPU cap; see routing_problems"
            )
        out[name] = limit
    return out


def _share_problems(i: int, queue: QueueSpec, pools: Mapping[str, PoolRouting]) -> list[Problem]:
    """``poolShares`` against the pools: GPU pools only, all of them, within the budget."""
    out: list[Problem] = []
    if not queue.pool_shares:
        return out
    path = ("queues", i, "pool_shares")
    routed = [p for p in queue.node_pools if p in pools and pools[p].gpu]
    for pool in queue.pool_shares:
        if pool in pools and not pools[pool].gpu:
            out.append((path, f"{show(pool)} is a cpu pool; shares split GPU budgets"))
    missing = [p for p in routed if p not in queue.pool_shares]
    if missing:
        out.append(
            (
                path,
                f"has no share for {', '.join(map(show, missing))}; give every GPU pool of the "
                "queue a share, or set none for an even split",
            )
        )
        return out
    total = sum(queue.pool_shares.get(p, 0) for p in routed)
    if queue.gpu.limit != UNLIMITED and total > queue.gpu.limit + 1e-9:
        out.append(
            (
                path,
                f"sum to {_num(total)}, more than gpu.limit {_num(queue.gpu.limit)}: Karpenter "
                "would buy GPUs the queue can never use",
            )
        )
    stable = [p for p in routed if not pools[p].preemptible]
    in_quota = sum(queue.pool_shares.get(p, 0) for p in stable)
    if stable and queue.gpu.quota != UNLIMITED and in_quota > queue.gpu.quota + 1e-9:
        out.append(
            (
                path,
                f"give the non-preemptible pool(s) {', '.join(map(show, stable))} "
                f"{_num(in_quota)}, more than gpu.quota {_num(queue.gpu.quota)}: work there runs "
                "in quota only",
            )
        )
    return out


def unknown_pool_problems(i: int, queue: QueueSpec, pools: Iterable[str]) -> list[Problem]:
    """The pools queue ``i`` routes to that do not exist (paths relative to ``scheduler``)."""
    names = sorted(pools)
    return [
        (
            ("queues", i, "node_pools", j),
            f"{show(pool)} is not a node pool; expected one of "
            + ", ".join(names)
            + did_you_mean(pool, names),
        )
        for j, pool in enumerate(queue.node_pools)
        if pool not in names
    ]


def routing_problems(
    queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]
) -> list[Problem]:
    """Routing mistakes, with paths relative to the ``scheduler`` configuration key.

    A queue routed to an unknown pool; a GPU pool no leaf queue routes to; a pool fed by an
    unlimited queue without a GPU cap of its own; a pool whose computed GPU limit is 0.
    """
    out: list[Problem] = []
    leaves = leaf_queue_names(queues)
    for i, queue in enumerate(queues):
        if queue.name in leaves:
            out += _share_problems(i, queue, pools)
        out += unknown_pool_problems(i, queue, pools)
    shares, caps = capped_shares(queues, pools)
    uncut = _leaf_shares(queues, pools)
    index = {q.name: i for i, q in enumerate(queues)}
    for name, routing in pools.items():
        if not routing.gpu:
            continue
        demand, feeders = _pool_demand(shares, name)
        field = "limit" if routing.preemptible else "quota"
        if not feeders:
            out.append(
                (
                    ("queues",),
                    f"no leaf queue routes to GPU node pool {show(name)}; its GPU limit would be "
                    "0, so Karpenter would never provision it; add it to a leaf queue's nodePools",
                )
            )
            continue
        if demand is None and routing.gpu_cap is None:
            for i in (index[n] for n in feeders):
                if getattr(queues[i].gpu, field) == UNLIMITED:
                    out.append(
                        (
                            ("queues", i, "gpu", field),
                            f"is -1 (unlimited) and the queue routes to node pool {show(name)}, "
                            "which has no GPU cap, so nothing bounds its scale-up; set a finite "
                            f"gpu.{field} or cap the pool's GPUs",
                        )
                    )
            continue
        if _pool_limit(demand, routing) == 0:
            if routing.gpu_cap == 0:
                reason = "its GPU cap is 0"
            elif _pool_demand(uncut, name)[0] != 0:
                names = ", ".join(feeders)
                phrase = cut_phrase((a for n in feeders for a in caps[n]), "the ancestors")
                verb = "leave" if " and the gpu." in phrase else "leaves"
                reason = f"{phrase} of its queues ({names}) {verb} it none"
            else:
                names = ", ".join(feeders)
                kind = "preemptible" if routing.preemptible else "non-preemptible"
                reason = f"it is {kind}, and gpu.{field} of its queues ({names}) sums to 0"
            out.append(
                (
                    ("queues",),
                    f"the GPU limit of node pool {show(name)} comes to 0 ({reason}), so "
                    "Karpenter would never provision it",
                )
            )
    return out
