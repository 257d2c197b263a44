"""The capacity plan of the queues: what Karpenter can buy for each leaf queue, and whether its
quota and limit are reachable (friction point 1). Pure: queue specs and pool routing in.

Units are KAI's GPU units, the units a queue's pods request: one per ``nvidia.com/gpu`` (a
whole GPU, a time slice or a MIG device under strategy ``single``), the profile's g-count per
``nvidia.com/mig-<g>g.<mem>gb`` (kai-scheduler v0.16.8
``pkg/scheduler/api/common_info/resources/mig.go`` L13-15).

For a leaf queue routed to pools P, each pool p with a budget of G_p physical GPUs (whole
nodes, ``pool_gpu_limits``):

- ``purchasableMax`` = sum over P of G_p x units per GPU: what Karpenter may buy when only this
  queue has pending pods (over-quota pods stay pending and still trigger scale-up; Karpenter
  launches while usage plus the candidate's capacity stays within the NodePool's limits,
  kubernetes-sigs/karpenter v1.15.0 ``scheduler.go`` L1097-1114).
- ``purchasableMin`` = sum over P of max(0, G_p x units surely offered - the other queues'
  shares of p): what is left for it when every other queue uses its full share.
- ``quotaReachable``: ``purchasableMin`` >= ``gpu.quota`` (a configuration error otherwise).
- ``limitReachable``: the pools' budgets, counted in the units any one profile surely offers,
  hold ``gpu.limit`` (-1: never).
- ``ancestors``: the queue's ancestors with their ``gpu.limit`` and ``gpu.quota``, nearest
  first; the shares above are already cut to the finite ones (``queues.capped_shares``: the
  quota bounds the non-preemptible pools, the limit all of them), ``cutBy`` names the keys that
  cut, and ``effectiveLimit`` is the smallest of ``gpu.limit`` and the ancestors' limits.
- ``reachablePerPool`` (item 8): KAI quota is not per pool, but pods pinned to one pool (node
  affinity on its label) only ever see that pool's part of ``purchasableMin``.
- ``largestGang`` (queues routed to an EFA pool): the GPUs one gang can get where its gangs
  run (``gangs``: the gang pool and the type it pins), the budget of that type's NodePool in
  whole nodes of it, at most ``effectiveLimit``. A queue routed to a non-preemptible EFA pool
  runs there in quota only, so a quota above the largest gang of its non-preemptible EFA pools
  (each at the type a gang pins there) is a configuration error (``plan_problems``; review L1:
  preemptible pools do not count).
- The invariant's second half: ``purchasableMax`` exceeds ``gpu.limit`` by at most the rounding
  of its pools to whole nodes; more (a pool shared with other queues, a mixed MIG layout whose
  other profiles come with every node) is a warning that names the numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..spec import Problem, show
from .queues import AncestorCap, PoolRouting, capped_shares, cut_phrase, pool_gpu_limits
from .units import EPSILON, UNLIMITED, _num

if TYPE_CHECKING:  # read by attribute: the budget imports no capability package
    from ..scheduler.spec import QueueSpec


@dataclass(frozen=True)
class QueuePlan:
    """One leaf queue's entry of the capacity plan."""

    index: int
    name: str
    quota: float
    limit: float
    pools: tuple[str, ...]
    shares: Mapping[str, float | None]
    purchasable_min: float
    purchasable_max: float
    quota_reachable: bool
    limit_reachable: bool
    rounding: float
    """What whole-node rounding of its pools adds beyond their shares (KAI units)."""
    shared_with: tuple[str, ...]
    """Other leaf queues routed to one of its GPU pools."""
    ancestors: tuple[AncestorCap, ...] = ()
    """Its ancestors, nearest first."""
    reachable_per_pool: Mapping[str, float] = field(default_factory=dict)
    """Per pool, the part of ``purchasable_min`` it holds (pods pinned to that pool)."""
    largest_gang: float | None = None
    """KAI units one gang can get (queues routed to an EFA pool; None otherwise)."""
    efa_in_quota: tuple[str, ...] = ()
    """Its non-preemptible EFA pools (work there runs in quota only)."""
    quota_gang: float | None = None
    """KAI units one gang can get on its non-preemptible EFA pools (None: it has none)."""

    @property
    def effective_limit(self) -> float:
        """The smallest of ``gpu.limit`` and its ancestors' (-1: none is finite)."""
        finite = [a.limit for a in self.ancestors if a.limit != UNLIMITED]
        if self.limit != UNLIMITED:
            finite.append(self.limit)
        return min(finite) if finite else UNLIMITED

    def as_json(self) -> dict:
        out = {
            "name": self.name,
            "quota": _num(self.quota),
            "limit": _num(self.limit),
            "pools": list(self.pools),
            "purchasableMin": _num(round(self.purchasable_min, 6)),
            "purchasableMax": _num(round(self.purchasable_max, 6)),
            "quotaReachable": self.quota_reachable,
            "limitReachable": self.limit_reachable,
            "ancestors": [
                {
                    "name": a.name,
                    "gpuLimit": _num(a.limit),
                    "gpuQuota": _num(a.quota),
                    "capsShares": a.cut,
                    "cutBy": list(a.cut_by),
                }
                for a in self.ancestors
            ],
            "effectiveLimit": _num(self.effective_limit),
            "reachablePerPool": {p: _num(round(v, 6)) for p, v in self.reachable_per_pool.items()},
        }
        if self.largest_gang is not None:
            out["largestGang"] = _num(round(self.largest_gang, 6))
        return out


def queue_plans(
    queues: Sequence[QueueSpec],
    pools: Mapping[str, PoolRouting],
    gangs: Mapping[str, Mapping[str, int]] | None = None,
) -> list[QueuePlan]:
    """The plan of every leaf queue routed to a GPU pool (call once routing has no problems).

    ``gangs``: per queue, per EFA pool it routes to, the physical GPUs one of its gangs gets
    there on the type it pins (``gangs.queue_gang_gpus``), its gang pool first, given the
    budgets ``pool_gpu_limits`` computes.
    """
    gangs = gangs or {}
    limits = pool_gpu_limits(queues, pools)
    shares, caps = capped_shares(queues, pools)
    feeding: dict[str, dict[str, float | None]] = {}
    for qname, per_pool in shares.items():
        for pool, share in per_pool.items():
            feeding.setdefault(pool, {})[qname] = share
    out: list[QueuePlan] = []
    for i, queue in enumerate(queues):
        mine = shares.get(queue.name)
        if not mine:
            continue
        pmin = pmax = sure = rounding = 0.0
        others_names: set[str] = set()
        per_pool: dict[str, float] = {}
        for pool, _share in mine.items():
            routing, gpus = pools[pool], limits[pool]
            surely = gpus * routing.slices_per_gpu
            pmax += gpus * routing.units_per_gpu
            sure += surely
            others = [s for n, s in feeding[pool].items() if n != queue.name]
            others_names |= {n for n in feeding[pool] if n != queue.name}
            if any(s is None for s in others):
                per_pool[pool] = 0.0
                continue
            per_pool[pool] = max(0.0, surely - sum(s for s in others if s is not None))
            pmin += per_pool[pool]
            known = [s for s in feeding[pool].values() if s is not None]
            if len(known) == len(feeding[pool]):
                rounding += max(0.0, surely - sum(known))
        quota, limit = queue.gpu.quota, queue.gpu.limit
        # Per EFA pool, the GPUs one gang gets on the type it pins there; the gang pool first
        # (issue 30 point 3: the pinned type's, not the best NodePool's).
        own = gangs.get(queue.name, {})
        efa = [p for p in own if p in mine]
        largest = quota_gang = None
        if efa:
            finite = [a.limit for a in caps[queue.name] if a.limit != UNLIMITED]
            finite += [limit] if limit != UNLIMITED else []
            largest = min([own[efa[0]] * pools[efa[0]].slices_per_gpu, *finite])
            # Review L1: the in-quota check is about the non-preemptible EFA pools only.
            if stable := [p for p in efa if not pools[p].preemptible]:
                best = max(own[p] * pools[p].slices_per_gpu for p in stable)
                quota_gang = min([best, *finite])
        out.append(
            QueuePlan(
                index=i,
                name=queue.name,
                quota=quota,
                limit=limit,
                pools=tuple(mine),
                shares=dict(mine),
                purchasable_min=pmin,
                purchasable_max=pmax,
                quota_reachable=quota != UNLIMITED and pmin + EPSILON >= quota,
                limit_reachable=limit != UNLIMITED and sure + EPSILON >= limit,
                rounding=rounding,
                shared_with=tuple(sorted(others_names)),
                ancestors=caps[queue.name],
                reachable_per_pool=per_pool,
                largest_gang=largest,
                efa_in_quota=tuple(p for p in mine if p in own and not pools[p].preemptible),
                quota_gang=quota_gang,
            )
        )
    return out


def plan_problems(plans: Sequence[QueuePlan]) -> list[Problem]:
    """Queues whose quota Karpenter could not buy, and non-preemptible EFA queues whose quota
    one gang cannot get (paths relative to ``scheduler``)."""
    out: list[Problem] = []
    for plan in plans:
        path = ("queues", plan.index, "gpu", "quota")
        if not plan.quota_reachable:
            pools = ", ".join(map(show, plan.pools))
            if plan.quota == UNLIMITED:
                why = "an unlimited guarantee (-1) can never be bought; set a finite gpu.quota"
            else:
                phrase = cut_phrase(plan.ancestors)
                verb = "cap" if " and the gpu." in phrase else "caps"
                by = f" ({phrase} {verb} their shares)" if phrase else ""
                why = (
                    f"its pools ({pools}) can buy only {_num(round(plan.purchasable_min, 6))} GPUs "
                    f"for it when the queues sharing them use their shares{by}; raise the pools' "
                    "caps or their shares"
                )
            out.append(
                (path, f"{_num(plan.quota)} of queue {show(plan.name)} is not reachable: {why}")
            )
        if (
            plan.efa_in_quota
            and plan.quota_gang is not None
            and plan.quota != UNLIMITED
            and plan.quota > plan.quota_gang + EPSILON
        ):
            pools = ", ".join(map(show, plan.efa_in_quota))
            out.append(
                (
                    path,
                    f"{_num(plan.quota)} of queue {show(plan.name)} is more than one gang can "
                    f"get ({_num(round(plan.quota_gang, 6))} GPUs): it runs in quota only on "
                    f"its non-preemptible EFA pool(s) {pools}, and a gang runs on one instance "
                    "type of one NodePool, whose budget holds at most that many; give the "
                    "pool's types one EFA layout, raise its budget, or set its typeShares so "
                    "one NodePool holds the quota",
                )
            )
    return out


def plan_warnings(plans: Sequence[QueuePlan]) -> list[str]:
    """Queues for which Karpenter can buy more than their limit plus whole-node rounding."""
    out: list[str] = []
    for plan in plans:
        if plan.limit == UNLIMITED:
            continue
        excess = plan.purchasable_max - plan.limit
        if excess <= plan.rounding + EPSILON:
            continue
        why = (
            f"its pools are shared with {', '.join(map(show, plan.shared_with))}"
            if plan.shared_with
            else "the pools' other MIG profiles come with every node"
        )
        out.append(
            f"warning: Karpenter can buy up to {_num(round(plan.purchasable_max, 6))} GPUs for "
            f"queue {show(plan.name)} across {', '.join(map(show, plan.pools))}, "
            f"{_num(round(excess, 6))} above its gpu.limit {_num(plan.limit)}, of which "
            f"whole-node rounding accounts for {_num(round(plan.rounding, 6))} ({why})"
        )
    return out
