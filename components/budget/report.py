"""``capacity.json``'s content: every GPU pool's NodePools and limits, and the queues' plan.

Pure: the stack's pools, the GPU Operator's and the scheduler's specs, the queues' workload
kinds, the region and the system node group in (read by attribute, as in ``stack``), plain data
out; ``offline.capacity`` writes it.

- per GPU pool: ``name``, ``instanceTypes``, ``gpusPerNode`` and ``advertisedPerNode`` (per
  instance type: the device plugin's resources once the node is initialized, which is what
  Karpenter charges), ``limit`` (each Karpenter NodePool of the pool and its GPU limits: one
  NodePool, or for an EFA pool one per EFA layout, ``nodepools``), ``nodePools`` (each
  NodePool's ``name``, ``instanceTypes``, ``gpus`` budget and ``largestGang``: the physical
  GPUs one gang, on one instance type, can get from it), ``maxNodes`` (the most nodes those
  limits let Karpenter launch: every one of the smallest type) and ``maxGpus`` (the most
  physical GPUs).
- per leaf queue (``plan.QueuePlan.as_json``): ``name``, ``quota``, ``limit``, ``pools``,
  ``purchasableMin``, ``purchasableMax`` (KAI GPU units, the units its pods request),
  ``quotaReachable``, ``limitReachable``, ``ancestors`` (each ancestor, nearest first, with
  its ``gpuLimit`` and ``gpuQuota``, -1 for none, ``capsShares``: whether it cut the budgets
  below it, and ``cutBy``: which of its keys cut them, ``"quota"`` (the non-preemptible pools'
  budgets) and/or ``"limit"``, each that would cut on its own),
  ``effectiveLimit``, ``reachablePerPool`` and, for queues routed to an EFA pool,
  ``largestGang``.
- ``queueResources`` (``resources.resource_document``): per leaf queue, its workload
  template's pod on each GPU pool (``gpuUnits``, ``cpu`` cores, ``memoryGiB``, ``preemptible``,
  ``budgetGpuUnits``: the GPU units the budget gives it there) and, for ``cpu`` (cores) and
  ``memory`` (GiB): ``oneNode`` (the pods that fill one node of its pools, the most over them),
  ``budget`` (the pods on its whole GPU budget), ``bounds`` (each finite ``limit`` of the queue
  and its ancestors, and each finite ``quota`` where its pods are non-preemptible, with
  ``oneNode`` and ``budget`` summed over the leaves under it, ``holdsOneNode``,
  ``holdsBudget``) and ``reachable`` (every bound holds its budget).
- ``preemptionDelays``: per leaf queue and pool that shares a pool with preemptible work
  (``preemption.preemption_delays``): ``queue``, ``pool``, ``seconds``, ``annotation`` (the
  ``kai.scheduler/preemption-delay`` value its templates carry, null for 0) and ``source`` (the
  stack override's key, or the node-start estimate it was sized from).
- ``warnings``: the capacity warnings (``stack.capacity_warnings``).
- ``cost``: each GPU pool's hourly cost at full budget, the system node group's at its largest
  and the stack's total, from the dated price table (``cost.cost_document``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .cost import cost_document
from .dra import dra_pool_entry, nodepool_entries
from .preemption import preemption_delays
from .resources import resource_document
from .stack import (
    capacity_of,
    capacity_plan,
    capacity_warnings,
    gpu_pools,
    pool_nodepools,
    queue_bounds,
    queue_needs,
)

if TYPE_CHECKING:
    from ..cluster.spec import SystemNodeGroupSpec
    from ..gpu_operator.spec import GpuOperatorSpec
    from ..nodepool.spec import NodePoolSpec
    from ..scheduler.spec import SchedulerSpec


def pool_entries(
    pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec, scheduler: SchedulerSpec
) -> list[dict[str, Any]]:
    """The ``pools`` of ``capacity.json``: every GPU pool with a GPU budget."""
    groups_of = pool_nodepools(pools, operator, scheduler)
    out = []
    for pool in gpu_pools(pools):
        groups = groups_of[pool.name]
        if any(g.gpus is None for g in groups):
            continue
        if pool.dra:  # limits in cpu, GPUs as DRA devices (budget/dra.py)
            out.append(dra_pool_entry(pool, groups))
            continue
        capacity = capacity_of(pool, operator)
        advertised = {t.name: dict(sorted(t.advertised.items())) for t in capacity.types}
        limit, nodepools, max_gpus = nodepool_entries(groups, capacity.limits)
        max_nodes = 0
        for group in groups:
            limits = limit[group.name]
            # A type fits while its advertised capacity stays within every limited resource
            # (Karpenter v1.15.0 scheduler.go filterByRemainingResources): the smallest node
            # of the NodePool uses the least of the limit, so it launches the most nodes.
            per_node = [
                min(limits[r] // t.advertised[r] for r in limits if t.advertised.get(r, 0) > 0)
                for t in capacity.types
                if t.name in group.instance_types
                and any(t.advertised.get(r, 0) > 0 for r in limits)
            ]
            max_nodes += max(per_node, default=0)
        out.append(
            {
                "name": pool.name,
                "instanceTypes": [t.name for t in capacity.types],
                "gpusPerNode": {t.name: t.gpus for t in capacity.types},
                "advertisedPerNode": advertised,
                "limit": limit,
                "nodePools": nodepools,
                "maxNodes": max_nodes,
                "maxGpus": max_gpus,
            }
        )
    return out


def capacity_document(
    pools: Sequence[NodePoolSpec],
    operator: GpuOperatorSpec,
    scheduler: SchedulerSpec,
    *,
    kinds: Mapping[str, str],
    region: str,
    system_node_group: SystemNodeGroupSpec,
    cpu_pools: Sequence[str],
) -> dict[str, Any]:
    """``capacity.json``'s content (the arguments: ``stack``'s and ``cost.cost_document``'s)."""
    stack = (pools, operator, scheduler)
    return {
        "pools": pool_entries(*stack),
        "queues": [plan.as_json() for plan in capacity_plan(*stack)],
        "queueResources": resource_document(
            scheduler.queues, queue_needs(*stack, kinds), queue_bounds(*stack, kinds)
        ),
        "preemptionDelays": [d.as_json() for d in preemption_delays(gpu_pools(pools), scheduler)],
        "warnings": capacity_warnings(*stack, kinds),
        "cost": cost_document(
            *stack, region=region, system_node_group=system_node_group, cpu_pools=cpu_pools
        ),
    }
