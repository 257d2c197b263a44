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
  kubernetes-sigs/karpenter v1.14.1 ``scheduler.go`` L1068-1085).
- ``purchasableMin`` = sum over P of max(0, G_p x units surely offered - the other queues'
  shares of p): what is left for it when every other queue uses its full share.
- ``quotaReachable``: ``purchasableMin`` >= ``gpu.quota`` (a configuration error otherwise).
- ``limitReachable``: the pools' budgets, counted in the units any one profile surely offers,
  hold ``gpu.limit`` (-1: never).
- The invariant's second half: ``purchasableMax`` exceeds ``gpu.limit`` by at most the rounding
  of its pools to whole nodes; more (a pool shared with other queues, a mixed MIG layout whose
  other profiles come with every node) is a warning that names the numbers.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..spec import Problem, show
from .constants import UNLIMITED, _num
from .routing import PoolRouting, pool_gpu_limits, queue_shares
from .spec import QueueSpec, leaf_queue_names

EPSILON = 1e-9


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

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "quota": _num(self.quota),
            "limit": _num(self.limit),
            "pools": list(self.pools),
            "purchasableMin": _num(round(self.purchasable_min, 6)),
            "purchasableMax": _num(round(self.purchasable_max, 6)),
            "quotaReachable": self.quota_reachable,
            "limitReachable": self.limit_reachable,
        }


def queue_plans(queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]) -> list[QueuePlan]:
    """The plan of every leaf queue routed to a GPU pool (call once routing has no problems)."""
    leaves = leaf_queue_names(queues)
    limits = pool_gpu_limits(queues, pools)
    shares = {q.name: queue_shares(q, pools) for q in queues if q.name in leaves}
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
        for pool, _share in mine.items():
            routing, gpus = pools[pool], limits[pool]
            surely = gpus * routing.slices_per_gpu
            pmax += gpus * routing.units_per_gpu
            sure += surely
            others = [s for n, s in feeding[pool].items() if n != queue.name]
            others_names |= {n for n in feeding[pool] if n != queue.name}
            if any(s is None for s in others):
                continue
            pmin += max(0.0, surely - sum(s for s in others if s is not None))
            known = [s for s in feeding[pool].values() if s is not None]
            if len(known) == len(feeding[pool]):
                rounding += max(0.0, surely - sum(known))
        quota, limit = queue.gpu.quota, queue.gpu.limit
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
            )
        )
    return out


def plan_problems(plans: Sequence[QueuePlan]) -> list[Problem]:
    """Queues whose quota Karpenter could not buy (paths relative to ``scheduler``)."""
    out: list[Problem] = []
    for plan in plans:
        if plan.quota_reachable:
            continue
        pools = ", ".join(map(show, plan.pools))
        if plan.quota == UNLIMITED:
            why = "an unlimited guarantee (-1) can never be bought; set a finite gpu.quota"
        else:
            why = (
                f"its pools ({pools}) can buy only {_num(round(plan.purchasable_min, 6))} GPUs for "
                "it when the queues sharing them use their shares; raise the pools' caps or "
                "their shares"
            )
        out.append(
            (
                ("queues", plan.index, "gpu", "quota"),
                f"{_num(plan.quota)} of queue {show(plan.name)} is not reachable: {why}",
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
