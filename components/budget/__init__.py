"""The GPU budget: one model of what Karpenter may buy for the queues (friction point 1).

Pure (no Pulumi), and at the bottom of the import graph: it imports only ``spec``, ``catalog``,
``catalog_mig``, ``prices`` and ``versions``, and reads the capability specs it is given
(``NodePoolSpec``, ``QueueSpec``, ``SchedulerSpec``, ``GpuOperatorSpec``, ...) by attribute, never
the stack configuration. ``nodepool``, ``scheduler``, ``config``, ``platform`` and ``offline``
import it; it imports none of them.

Modules, bottom up:

- ``units``: KAI's GPU units, ``UNLIMITED``, the queue tree (leaves, ancestors);
- ``capacity``: what a pool's nodes advertise (time-slicing, MIG) and its NodeOverlays;
- ``nodepools``: a pool's Karpenter NodePools (one per EFA layout) and the split of its budget;
- ``queues``: queue -> pool routing, shares cut to the ancestors' limits, the pools' budgets;
- ``gangs``: where each queue's gangs run (pool, instance type, zone) and why;
- ``layouts``: EFA pools whose budget leaves a layout's NodePool empty;
- ``plan``: per leaf queue, what Karpenter can buy for it, reachability, largest gang;
- ``stack``: the same over a whole stack's pools, queues and GPU Operator settings (the
  config's checks and warnings);
- ``cost``: the pools and the stack at full budget, per hour (the dated price table);
- ``resources``: queues' CPU and memory against their workload templates' pods;
- ``node_start``: the estimate, per GPU family, of a new node's start (one table, cited);
- ``preemption``: KAI's preemption delay per leaf queue sharing a pool with preemptible work;
- ``report``: ``capacity.json``'s content.
"""

from .capacity import (
    GPU_OVERLAY_WEIGHT,
    Mode,
    PoolCapacity,
    TypeCapacity,
    gpu_overlay_manifests,
    mig_g_count,
    pool_capacity,
    uneven_density_problem,
)
from .cost import cost_document, cost_lines, most_per_hour
from .nodepools import (
    NodePoolGroup,
    efa_layout,
    gpu_limit_shortfall,
    layout_groups,
    nodepool_groups,
    nodepool_names,
    ordered_types,
    split_gpu_limit,
    type_share_problems,
    type_slug,
)
from .plan import QueuePlan, plan_problems, plan_warnings, queue_plans
from .queues import (
    AncestorCap,
    PoolRouting,
    capped_shares,
    pool_gpu_limits,
    queue_shares,
    routing_problems,
    unknown_pool_problems,
)
from .report import capacity_document, pool_entries
from .resources import resource_lines
from .stack import (
    capacity_of,
    capacity_plan,
    capacity_warnings,
    gpu_limits,
    gpu_pools,
    layout_config_problems,
    needs_node_overlay,
    plan_config_problems,
    pool_capacity_problems,
    pool_nodepools,
    pool_routing,
    queue_bounds,
    queue_needs,
    stranded_gpu_warnings,
    type_share_budget_problems,
)
from .units import (
    GPU_RESOURCE,
    MAX_POOL_GPUS,
    MIG_RESOURCE_PREFIX,
    UNLIMITED,
    ancestors,
    leaf_queue_names,
)

__all__ = [
    "GPU_OVERLAY_WEIGHT",
    "GPU_RESOURCE",
    "MAX_POOL_GPUS",
    "MIG_RESOURCE_PREFIX",
    "UNLIMITED",
    "AncestorCap",
    "Mode",
    "NodePoolGroup",
    "PoolCapacity",
    "PoolRouting",
    "QueuePlan",
    "TypeCapacity",
    "ancestors",
    "capacity_document",
    "capacity_of",
    "capacity_plan",
    "capacity_warnings",
    "capped_shares",
    "cost_document",
    "cost_lines",
    "efa_layout",
    "gpu_limit_shortfall",
    "gpu_limits",
    "gpu_overlay_manifests",
    "gpu_pools",
    "layout_config_problems",
    "layout_groups",
    "leaf_queue_names",
    "mig_g_count",
    "most_per_hour",
    "needs_node_overlay",
    "nodepool_groups",
    "nodepool_names",
    "ordered_types",
    "plan_config_problems",
    "plan_problems",
    "plan_warnings",
    "pool_capacity",
    "pool_capacity_problems",
    "pool_entries",
    "pool_gpu_limits",
    "pool_nodepools",
    "pool_routing",
    "queue_bounds",
    "queue_needs",
    "queue_plans",
    "queue_shares",
    "resource_lines",
    "routing_problems",
    "split_gpu_limit",
    "stranded_gpu_warnings",
    "type_share_budget_problems",
    "type_share_problems",
    "type_slug",
    "uneven_density_problem",
    "unknown_pool_problems",
]
