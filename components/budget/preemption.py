"""KAI's preemption delay per leaf queue and pool: which queues share pools with preemptible
work, and how long their workloads wait before they may evict anyone.

KAI v0.17.0 lets a pending workload wait before it triggers evictions (preempt, reclaim,
consolidation): the ``kai.scheduler/preemption-delay`` annotation on the workload's top owner or
pod, a Go duration, copied by the pod grouper into the PodGroup's ``spec.preemptionDelay``
(kai-scheduler v0.17.0 ``pkg/podgrouper/podgrouper/plugins/constants/constants.go`` L13,
``plugins/defaultgrouper/default_grouper.go`` L81, L278-298; ``pkg/apis/scheduling/v2alpha2/
podgroup_types.go`` L79-84, L124-135). While the window runs, the scheduler skips the job as an
eviction trigger (``pkg/scheduler/actions/utils/input_jobs.go`` L75-80, for the preempt, reclaim
and consolidation actions: ``preempt.go`` L59, ``reclaim.go`` L59, ``consolidation.go`` L52)
and the pod stays ``PodScheduled=False/Unschedulable`` (``pkg/scheduler/cache/status_updater/
default_status_updater.go`` L249-262), which is what Karpenter provisions for whatever the
scheduler (kubernetes-sigs/karpenter v1.15.0 ``pkg/utils/pod/scheduling.go`` L103-109,
L126-133) - unless the pod has a ``nominatedNodeName`` (``IsPreempting``, L139-141). The window
counts from the PodGroup's creation (or its last eviction) (``pkg/scheduler/api/podgroup_info/
job_info.go`` L204-222); plain allocation into free capacity is never delayed.

Evictions only ever take preemptible work, so a delay matters for a queue whose pools carry
some: the one rule is :func:`preemptible_pools` (queue -> pool routing, each pool's
``preemptible``). Each such (queue, pool) gets ``KARPENTER_BATCH_SECONDS`` plus the pool's node
start (``node_start``), unless the queue sets ``preemptionDelaySeconds`` (the stack override).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..spec import Problem, show
from .node_start import KARPENTER_BATCH_SECONDS, MAX_NODE_START_SECONDS, pool_node_start

if TYPE_CHECKING:
    from ..nodepool.spec import NodePoolSpec
    from ..scheduler.spec import QueueSpec, SchedulerSpec

# The override's range: 0 (no delay) up to Karpenter's registration timeout, past which
# Karpenter has deleted a node that never registered and starts over (node_start).
MAX_PREEMPTION_DELAY_SECONDS = MAX_NODE_START_SECONDS


def preemptible_pools(queue: QueueSpec, pools: Mapping[str, NodePoolSpec]) -> tuple[str, ...]:
    """The GPU pools of ``queue``'s routing whose work is preemptible (``preemptible: true``), in
    routing order. A queue *shares pools with preemptible work* when this is not empty: its
    pending workloads there can evict others (KAI's victims are always preemptible work)."""
    return tuple(n for n in queue.node_pools if n in pools and pools[n].preemptible)


@dataclass(frozen=True)
class PreemptionDelay:
    """The delay of one leaf queue's workloads on one pool."""

    queue: str
    pool: str
    seconds: int
    source: str

    @property
    def annotation(self) -> str | None:
        """The annotation's value (a Go duration), or None for no delay."""
        return f"{self.seconds}s" if self.seconds > 0 else None

    def as_json(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "pool": self.pool,
            "seconds": self.seconds,
            "annotation": self.annotation,
            "source": self.source,
        }


def preemption_delays(
    gpu_pools: Sequence[NodePoolSpec], scheduler: SchedulerSpec
) -> list[PreemptionDelay]:
    """Every (leaf queue, pool of ``gpu_pools``) that shares a pool with preemptible work, in
    queue order then routing order; none without the scheduler."""
    if not scheduler.enabled:
        return []
    pools = {p.name: p for p in gpu_pools}
    out = []
    for i, queue in enumerate(scheduler.queues):
        override = queue.preemption_delay_seconds
        for name in preemptible_pools(queue, pools):
            if override is not None:
                key = f"scheduler.queues[{i}]({queue.name}).preemptionDelaySeconds"
                out.append(PreemptionDelay(queue.name, name, override, f"stack override {key}"))
                continue
            pool = pools[name]
            start = pool_node_start(pool.catalog_types, pool.mig_startup_taint)
            source = f"Karpenter batch window {KARPENTER_BATCH_SECONDS} s + {start.source}"
            out.append(
                PreemptionDelay(queue.name, name, KARPENTER_BATCH_SECONDS + start.seconds, source)
            )
    return out


def delay_for(delays: Sequence[PreemptionDelay], queue: str, pool: str) -> str | None:
    """The annotation value of ``queue``'s workloads on ``pool``, or None."""
    return next((d.annotation for d in delays if d.queue == queue and d.pool == pool), None)


def preemption_delay_problems(
    queues: Sequence[QueueSpec], pools: Mapping[str, NodePoolSpec]
) -> list[Problem]:
    """A queue that sets ``preemptionDelaySeconds`` but runs no workload (a parent queue) or
    shares no pool with preemptible work (nothing it runs can evict anyone): the override would
    do nothing (paths under ``scheduler``)."""
    out: list[Problem] = []
    for i, queue in enumerate(queues):
        if queue.preemption_delay_seconds is None:
            continue
        if not queue.node_pools:
            out.append(
                (
                    ("queues", i, "preemption_delay_seconds"),
                    f"is set, but {show(queue.name)} is a parent queue; only leaf queues run "
                    "workloads, so set it on the leaf queues below it",
                )
            )
        elif not preemptible_pools(queue, pools):
            routed = ", ".join(n for n in queue.node_pools if n in pools) or "none"
            out.append(
                (
                    ("queues", i, "preemption_delay_seconds"),
                    f"is {show(queue.preemption_delay_seconds)}, but queue {show(queue.name)} "
                    f"shares no pool with preemptible work (its GPU pools: {routed}; none is "
                    "preemptible), so its workloads never evict anyone; remove it",
                )
            )
    return out
