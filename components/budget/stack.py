"""GPU capacity across sections (friction point 1): what each pool's nodes advertise given the
GPU Operator's settings, the queue routing built from it, each pool's budget and NodePools, and
the capacity plan's checks.

Pure (no Pulumi). Each function takes the specs it reads, by attribute (the budget imports no
capability package and never the stack configuration): ``pools``, the stack's node pools with
the default cpu pool (the GPU pools among them, in order); ``operator``, the GPU Operator's
settings; ``scheduler``, the scheduler's (``enabled``, the ``queues``, ``gpu_sharing``);
``kinds``, the workload kind of every leaf queue routed to a GPU pool, by queue name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..catalog_mig import mig_layout
from ..spec import Problem, show
from .capacity import PoolCapacity, pool_capacity, uneven_density_problem
from .gangs import queue_gang_gpus
from .layouts import empty_layout_problems
from .nodepools import NodePoolGroup, nodepool_groups
from .plan import QueuePlan, plan_problems, plan_warnings, queue_plans
from .queues import PoolRouting, pool_gpu_limits
from .resources import (
    Bound,
    Need,
    TemplatePod,
    bounds,
    needs,
    resource_problems,
    resource_warnings,
    template_pod,
)

if TYPE_CHECKING:
    from ..gpu_operator.spec import GpuOperatorSpec
    from ..nodepool.spec import NodePoolSpec
    from ..scheduler.spec import SchedulerSpec


# ``capacity_of``'s answers for the last pools and operators asked (specs are frozen): one
# configuration's checks, plan and components ask it for each pool many times. The entries hold
# the specs themselves, so an id is not reused while its entry stands.
_CAPACITIES: dict[tuple[int, int], tuple[NodePoolSpec, GpuOperatorSpec, PoolCapacity]] = {}
_CAPACITIES_KEPT = 256


def capacity_of(pool: NodePoolSpec, operator: GpuOperatorSpec) -> PoolCapacity:
    """What the pool's nodes advertise under the operator's time-slicing and MIG settings."""
    key = (id(pool), id(operator))
    kept = _CAPACITIES.get(key)
    if kept is not None and kept[0] is pool and kept[1] is operator:
        return kept[2]
    capacity = _capacity_of(pool, operator)
    if len(_CAPACITIES) >= _CAPACITIES_KEPT:
        _CAPACITIES.clear()
    _CAPACITIES[key] = (pool, operator, capacity)
    return capacity


def _capacity_of(pool: NodePoolSpec, operator: GpuOperatorSpec) -> PoolCapacity:
    replicas = operator.time_slicing.get(pool.time_slicing) if pool.time_slicing else None
    layouts = None
    if pool.mig_profile and operator.mig_strategy in ("single", "mixed"):
        layouts = {t.family: mig_layout(pool.mig_profile, t.family) for t in pool.catalog_types}
    return pool_capacity(
        pool, replicas=replicas, mig_strategy=operator.mig_strategy, mig_layouts=layouts
    )


def gpu_pools(pools: Sequence[NodePoolSpec]) -> tuple[NodePoolSpec, ...]:
    """The GPU pools among ``pools``, in order."""
    return tuple(p for p in pools if p.is_gpu)


def pool_routing(
    pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec
) -> dict[str, PoolRouting]:
    """Every pool's routing facts: preemptible, cap, KAI units per GPU, smallest node."""
    out = {}
    for p in pools:
        cap = capacity_of(p, operator) if p.is_gpu else None
        out[p.name] = PoolRouting(
            preemptible=p.preemptible,
            gpu_cap=p.limits.gpus,
            gpu=p.is_gpu,
            slices_per_gpu=cap.units_per_gpu if cap else 1,
            node_gpus=cap.node_gpus if cap else 1,
            max_units_per_gpu=cap.max_units_per_gpu if cap else None,
        )
    return out


def needs_node_overlay(pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec) -> bool:
    """Whether any pool declares something to Karpenter with a NodeOverlay (EFA hugepages,
    advertised GPUs of a time-sliced or MIG pool): Karpenter then needs its ``nodeOverlay``
    feature gate (off by default: kubernetes-sigs/karpenter v1.15.0
    ``pkg/operator/options/options.go`` L109-115)."""
    return any(p.kind == "efa" or capacity_of(p, operator).needs_overlay for p in gpu_pools(pools))


def gpu_limits(
    pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec, scheduler: SchedulerSpec
) -> dict[str, int | None]:
    """Each GPU pool's budget (physical GPUs): from the queues routed to it when the scheduler
    is on (friction point 1), else the pool's own cap."""
    if scheduler.enabled:
        return dict(pool_gpu_limits(scheduler.queues, pool_routing(pools, operator)))
    return {p.name: p.limits.gpus for p in gpu_pools(pools)}


def pool_nodepools(
    pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec, scheduler: SchedulerSpec
) -> dict[str, list[NodePoolGroup]]:
    """Every GPU pool's Karpenter NodePools with their budgets (``nodepools.nodepool_groups``)."""
    budgets = gpu_limits(pools, operator, scheduler)
    return {p.name: nodepool_groups(p, budgets.get(p.name)) for p in gpu_pools(pools)}


def capacity_plan(
    pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec, scheduler: SchedulerSpec
) -> list[QueuePlan]:
    """The leaf queues' plan (empty without the scheduler)."""
    if not scheduler.enabled:
        return []
    queues = scheduler.queues
    nodepools = pool_nodepools(pools, operator, scheduler)
    gangs = queue_gang_gpus(queues, gpu_pools(pools), nodepools)
    return queue_plans(queues, pool_routing(pools, operator), gangs)


def stranded_gpu_warnings(pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec) -> list[str]:
    """GPU models a pool offers only on multi-GPU types (item 8): KAI charges a queue the GPUs a
    pod requests, Karpenter charges the NodePool the node's capacity (kubernetes-sigs/karpenter
    v1.15.0 ``pkg/controllers/state/statenode.go`` L458-474 ``Capacity()``), so a 1-GPU pod of
    that model takes a whole node of the pool's limit. On a MIG or time-sliced pool a pod takes
    one MIG device or one slice (the device plugin advertises each as one resource: see
    ``capacity``), and the node it launches charges the limit all of its devices or slices."""
    out = []
    for pool in gpu_pools(pools):
        capacity = capacity_of(pool, operator)
        advertised = {t.name: t.advertised for t in capacity.types}
        by_model: dict[str, list] = {}
        for t in pool.catalog_types:
            if t.gpu_count > 0:
                by_model.setdefault(t.gpu_name, []).append(t)
        for model, types in by_model.items():
            smallest = min(t.gpu_count for t in types)
            if smallest <= 1:
                continue
            head = (
                f"warning: pool {show(pool.name)} offers {model} only on {smallest}-GPU or "
                f"larger nodes ({', '.join(t.name for t in types)})"
            )
            if capacity.mode in ("whole", "dra"):
                out.append(
                    f"{head}: Karpenter charges the pool's limit a whole node, so a 1-GPU "
                    f"{model} pod uses {smallest} of it"
                )
                continue
            node = next(t.name for t in types if t.gpu_count == smallest)
            devices = ", ".join(f"{n} {r}" for r, n in sorted(advertised[node].items()) if n)
            if capacity.mode == "time-sliced":
                what, one = "time-sliced: a pod takes one slice", "one slice"
            else:
                what, one = (
                    "split into MIG devices: a pod takes one device, a slice of a GPU",
                    "one MIG device",
                )
            out.append(
                f"{head}, its GPUs {what}, but Karpenter charges the pool's limit a whole node, "
                f"so a pod asking for {one} uses all of a {node}'s {devices} ({smallest} GPUs)"
            )
    return out


def queue_needs(
    pools: Sequence[NodePoolSpec],
    operator: GpuOperatorSpec,
    scheduler: SchedulerSpec,
    kinds: Mapping[str, str],
) -> list[Need]:
    """Per leaf queue and GPU pool it has a budget on, its workload template's pod there
    (the queue's workload kind in ``kinds``, ``resources.template_pod``) and its GPU units."""
    if not scheduler.enabled:
        return []
    by_name = {p.name: p for p in gpu_pools(pools)}
    pods: dict[tuple[str, str], TemplatePod] = {}
    for queue in scheduler.queues:
        kind = kinds.get(queue.name)
        for name in queue.node_pools if kind else ():
            if (pool := by_name.get(name)) is not None:
                pods[(queue.name, name)] = template_pod(
                    kind,
                    efa=pool.kind == "efa",
                    preemptible=pool.preemptible,
                    capacity=capacity_of(pool, operator),
                    gpu_sharing=scheduler.gpu_sharing,
                )
    limits = gpu_limits(pools, operator, scheduler)
    plan = capacity_plan(pools, operator, scheduler)
    return needs(plan, pool_routing(pools, operator), limits, pods)


def queue_bounds(
    pools: Sequence[NodePoolSpec],
    operator: GpuOperatorSpec,
    scheduler: SchedulerSpec,
    kinds: Mapping[str, str],
) -> list[Bound]:
    """Every finite queue CPU/memory limit or quota over a template's pods (``resources``)."""
    if not scheduler.enabled:
        return []
    return bounds(scheduler.queues, queue_needs(pools, operator, scheduler, kinds))


def capacity_warnings(
    pools: Sequence[NodePoolSpec],
    operator: GpuOperatorSpec,
    scheduler: SchedulerSpec,
    kinds: Mapping[str, str],
) -> list[str]:
    """Queues Karpenter can buy more for than their limit plus whole-node rounding, GPU
    models a pool offers only on multi-GPU nodes, and queue CPU/memory limits or quotas below
    what their GPU budget's template pods request (``resources.resource_warnings``)."""
    return (
        plan_warnings(capacity_plan(pools, operator, scheduler))
        + stranded_gpu_warnings(pools, operator)
        + resource_warnings(queue_bounds(pools, operator, scheduler, kinds))
    )


def type_share_budget_problems(
    pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec, scheduler: SchedulerSpec
) -> list[Problem]:
    """An EFA pool's ``typeShares`` summing to more than the budget its queues give it."""
    out: list[Problem] = []
    budgets = gpu_limits(pools, operator, scheduler)
    for i, pool in enumerate(pools):
        budget = budgets.get(pool.name)
        total = sum(pool.type_shares.values())
        if pool.kind == "efa" and budget is not None and total > budget:
            out.append(
                (
                    ("node_pools", i, "type_shares"),
                    f"sum to {total} GPUs, more than the budget of efa pool {show(pool.name)} "
                    f"({budget} GPUs, from its queues and limits.gpus)",
                )
            )
    return out


def plan_config_problems(
    pools: Sequence[NodePoolSpec],
    operator: GpuOperatorSpec,
    scheduler: SchedulerSpec,
    kinds: Mapping[str, str],
) -> list[Problem]:
    """Unreachable quotas and gangs, and queue CPU/memory limits or quotas that cannot hold
    one node of their template's pods, as configuration problems (call once routing has no
    problems)."""
    plan_of = plan_problems(capacity_plan(pools, operator, scheduler))
    plan = [(("scheduler", *p), m) for p, m in plan_of]
    bounds_of = queue_bounds(pools, operator, scheduler, kinds)
    resources = [(("scheduler", *p), m) for p, m in resource_problems(bounds_of, kinds)]
    return (
        type_share_budget_problems(pools, operator, scheduler)
        + layout_config_problems(pools, operator, scheduler)
        + plan
        + resources
    )


def layout_config_problems(
    pools: Sequence[NodePoolSpec], operator: GpuOperatorSpec, scheduler: SchedulerSpec
) -> list[Problem]:
    """EFA pools whose budget leaves a NodePool without a whole node (``layouts``)."""
    gpu = gpu_pools(pools)
    indexes = {p.name: i for i, p in enumerate(pools) if p.is_gpu}
    return empty_layout_problems(gpu, gpu_limits(pools, operator, scheduler), indexes)


def pool_capacity_problems(i: int, pool: NodePoolSpec, operator: GpuOperatorSpec) -> list[Problem]:
    """What the capacity accounting cannot model: a mixed-strategy MIG pool over GPUs whose
    profiles have different names (its limits would not bound the other class's nodes), and
    time-slicing or MIG on Bottlerocket (its own device plugin renames time-sliced GPUs to
    ``nvidia.com/gpu.shared`` by default and applies MIG from its own settings at boot:
    bottlerocket.dev settings reference ``kubelet-device-plugins``, 1.34.x; the GPU Operator's
    operands are kept off Bottlerocket nodes, see ``nodepool.manifests.pool_labels``)."""
    out: list[Problem] = []
    if pool.ami.family == "bottlerocket":
        for field, what in (("mig_profile", "MIG"), ("time_slicing", "time-slicing")):
            if getattr(pool, field) is not None:
                out.append(
                    (
                        ("node_pools", i, field),
                        f"is not supported on Bottlerocket: its NVIDIA variants run their own "
                        f"device plugin, configured by Bottlerocket settings, not the GPU "
                        f"Operator's {what} configuration; use ami.family al2023",
                    )
                )
    if pool.mig_profile and operator.mig_strategy == "mixed":
        layouts = {
            tuple(sorted(mig_layout(pool.mig_profile, t.family))) for t in pool.catalog_types
        }
        if len(layouts) > 1:
            out.append(
                (
                    ("node_pools", i, "mig_profile"),
                    f"{show(pool.mig_profile)} gives the pool's GPU classes different MIG "
                    "resources under migStrategy mixed, so one NodePool limit cannot bound "
                    "them; select GPUs of one class (one pool per class)",
                )
            )
            return out
    if pool.mig_profile and operator.mig_strategy in ("single", "mixed"):
        # Only where every type takes the profile (else mig_problems reports it): the same
        # devices, but a different count per GPU (p4d + p4de under all-1g.10gb: 4 and 7).
        per_type = [mig_layout(pool.mig_profile, t.family) for t in pool.catalog_types]
        mixed = operator.mig_strategy == "mixed"
        fits = all(lay and (len(lay) == 1 or mixed) for lay in per_type)
        if fits and (msg := uneven_density_problem(capacity_of(pool, operator))):
            out.append((("node_pools", i, "mig_profile"), f"{show(pool.mig_profile)}: {msg}"))
    return out


__all__: Sequence[str] = (
    "capacity_of",
    "capacity_plan",
    "capacity_warnings",
    "gpu_limits",
    "gpu_pools",
    "layout_config_problems",
    "needs_node_overlay",
    "plan_config_problems",
    "pool_capacity_problems",
    "pool_nodepools",
    "pool_routing",
    "queue_bounds",
    "queue_needs",
    "stranded_gpu_warnings",
    "type_share_budget_problems",
)
