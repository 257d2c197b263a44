"""GPU capacity across sections (friction point 1): what each pool's nodes advertise given the
GPU Operator's settings, the queue routing built from it, and the capacity plan's checks.

Pure (no Pulumi). ``PlatformConfig`` calls these with itself; they only read its sections.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .gpu_operator import GpuOperatorSpec, mig_layout
from .nodepool import NodePoolSpec, PoolCapacity, pool_capacity
from .nodepool.capacity import uneven_density_problem
from .scheduler.plan import QueuePlan, plan_problems, plan_warnings, queue_plans
from .scheduler.routing import PoolRouting
from .spec import Problem, show

if TYPE_CHECKING:
    from .config import PlatformConfig


def capacity_of(pool: NodePoolSpec, operator: GpuOperatorSpec) -> PoolCapacity:
    """What the pool's nodes advertise under the operator's time-slicing and MIG settings."""
    replicas = operator.time_slicing.get(pool.time_slicing) if pool.time_slicing else None
    layouts = None
    if pool.mig_profile and operator.mig_strategy in ("single", "mixed"):
        layouts = {t.family: mig_layout(pool.mig_profile, t.family) for t in pool.catalog_types}
    return pool_capacity(
        pool, replicas=replicas, mig_strategy=operator.mig_strategy, mig_layouts=layouts
    )


def pool_routing(config: "PlatformConfig") -> dict[str, PoolRouting]:
    """Every pool's routing facts: preemptible, cap, KAI units per GPU, smallest node."""
    out = {}
    for p in config.pools:
        cap = capacity_of(p, config.gpu_operator) if p.is_gpu else None
        out[p.name] = PoolRouting(
            preemptible=p.preemptible,
            gpu_cap=p.limits.gpus,
            gpu=p.is_gpu,
            slices_per_gpu=cap.units_per_gpu if cap else 1,
            node_gpus=cap.node_gpus if cap else 1,
            max_units_per_gpu=cap.max_units_per_gpu if cap else None,
        )
    return out


def needs_node_overlay(config: "PlatformConfig") -> bool:
    """Whether any pool declares something to Karpenter with a NodeOverlay (EFA hugepages,
    advertised GPUs of a time-sliced or MIG pool): Karpenter then needs its ``nodeOverlay``
    feature gate (off by default: kubernetes-sigs/karpenter v1.14.1
    ``pkg/operator/options/options.go`` L134)."""
    return any(
        p.kind == "efa" or capacity_of(p, config.gpu_operator).needs_overlay
        for p in config.gpu_pools
    )


def capacity_plan(config: "PlatformConfig") -> list[QueuePlan]:
    """The leaf queues' plan (empty without the scheduler)."""
    if not config.scheduler.enabled:
        return []
    return queue_plans(config.scheduler.queues, pool_routing(config))


def capacity_warnings(config: "PlatformConfig") -> list[str]:
    """Queues Karpenter can buy more for than their limit plus whole-node rounding."""
    return plan_warnings(capacity_plan(config))


def plan_config_problems(config: "PlatformConfig") -> list[Problem]:
    """Unreachable quotas, as configuration problems (call once routing has no problems)."""
    return [(("scheduler", *p), m) for p, m in plan_problems(capacity_plan(config))]


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
    "needs_node_overlay",
    "plan_config_problems",
    "pool_capacity_problems",
    "pool_routing",
)
