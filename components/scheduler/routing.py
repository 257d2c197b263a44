"""Queue -> node pool routing: each GPU pool's ``nvidia.com/gpu`` limit and routing mistakes.

Friction point 1 (over-quota pods trigger scale-up): pure functions, no Pulumi.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..spec import Problem, did_you_mean, show
from .constants import UNLIMITED
from .spec import QueueSpec, leaf_queue_names


@dataclass(frozen=True)
class PoolRouting:
    """What the queue routing needs to know about one node pool.

    ``preemptible``: sized by the queues' ``gpu.limit`` (over-quota work may run there), else
    by their ``gpu.quota`` (non-preemptible work runs in quota only). ``gpu_cap``: the pool's
    own GPU limit, if configured. ``gpu``: false for CPU pools, which queues may route to but
    which have no GPU limit. ``slices_per_gpu``: a time-sliced pool advertises each physical GPU
    as that many ``nvidia.com/gpu``; queues count those slices, Karpenter counts physical GPUs.
    """

    preemptible: bool
    gpu_cap: int | None
    gpu: bool = True
    slices_per_gpu: int = 1


def _pool_demand(
    queues: Sequence[QueueSpec], leaves: set[str], pool: str, routing: PoolRouting
) -> tuple[float | None, list[int]]:
    """GPUs the leaf queues routed to ``pool`` may use (None: unlimited) and those queues."""
    total = 0.0
    unlimited = False
    feeders = []
    for i, queue in enumerate(queues):
        if queue.name not in leaves or pool not in queue.node_pools:
            continue
        feeders.append(i)
        value = queue.gpu.limit if routing.preemptible else queue.gpu.quota
        if value == UNLIMITED:
            unlimited = True
        else:
            total += value
    return (None if unlimited else total), feeders


def _pool_limit(demand: float | None, cap: int | None, slices_per_gpu: int = 1) -> int | None:
    """Physical GPUs for ``demand`` admitted GPUs (slices on a time-sliced pool), within the cap."""
    if demand is None:
        return cap
    demand = demand / slices_per_gpu
    whole = math.ceil(round(demand, 6))
    return whole if cap is None else min(whole, cap)


def pool_gpu_limits(
    queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]
) -> dict[str, int]:
    """``NodePool.spec.limits["nvidia.com/gpu"]`` for each GPU pool, from the queues routed to it.

    Preemptible pool: the sum of ``gpu.limit`` over the leaf queues routed to it; non-preemptible
    pool: the sum of ``gpu.quota``. Fractions round up to whole GPUs; a queue routed to several
    pools counts in full in each. With the pool's own cap the result is ``min(sum, cap)``; an
    unlimited queue (-1) leaves only the cap. A pool no queue routes to gets 0. Raises
    ``ValueError`` for a pool fed by an unlimited queue without a cap (``routing_problems``
    reports it first).
    """
    leaves = leaf_queue_names(queues)
    out: dict[str, int] = {}
    for name, routing in pools.items():
        if not routing.gpu:
            continue
        demand, _ = _pool_demand(queues, leaves, name, routing)
        limit = _pool_limit(demand, routing.gpu_cap, routing.slices_per_gpu)
        if limit is None:
            raise ValueError(
                f"pool_gpu_limits: node pool {name!r} is fed by a queue with unlimited GPUs and "
                "has no GPU cap; see routing_problems"
            )
        out[name] = limit
    return out


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
        for j, pool in enumerate(queue.node_pools):
            if pool not in pools:
                out.append(
                    (
                        ("queues", i, "node_pools", j),
                        f"{show(pool)} is not a node pool; expected one of "
                        + ", ".join(sorted(pools))
                        + did_you_mean(pool, pools),
                    )
                )
    for name, routing in pools.items():
        if not routing.gpu:
            continue
        demand, feeders = _pool_demand(queues, leaves, name, routing)
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
            for i in feeders:
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
        if _pool_limit(demand, routing.gpu_cap, routing.slices_per_gpu) == 0:
            if routing.gpu_cap == 0:
                reason = "its GPU cap is 0"
            else:
                names = ", ".join(queues[i].name for i in feeders)
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
