"""The stack configuration: ``PlatformConfig``, every section's spec together, and the views
derived from them (the pools with the default cpu pool, the GPU pools' budgets, the queues'
workload kinds, the partition).

Each top-level configuration key of the ``eks-gpu-platform`` namespace maps to one spec
(``cluster`` -> ``ClusterSpec``, ``karpenter`` -> ``KarpenterSpec``, ...), defined in its
capability's package (``cluster/spec.py``, ``karpenter/spec.py``, ...) and re-exported here.
``PlatformConfig.load`` parses a whole stack's configuration, collects every problem, and raises
one ``SpecError`` listing them all before any resource is registered. Components take these specs
as plain values: they decide the shape of the graph.

Two concepts live beside it, mixed into ``PlatformConfig``: loading a stack's values
(``config_load``: namespaces, keys, ``aws:region``, the sections) and the checks that read more
than one section (``config_cross``).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields

from .aws import PARTITIONS, REGION_PATTERN, TAG_KEY_PATTERN, partition_for_region
from .budget import PoolRouting, capacity_of, gpu_limits, pool_routing
from .cluster.spec import (
    DEFAULT_LABEL_DOMAIN,
    DEFAULT_LOG_TYPES,
    LABEL_DOMAIN_ANNOTATION,
    ClusterSpec,
    SystemNodeGroupSpec,
)
from .config_checks import KARPENTER_RESERVED_TAGS, region_problem
from .config_cross import OPERATOR_LABELS, PLATFORM_LABEL_SUFFIXES, CrossSectionChecks
from .config_load import PROVIDER_NAMESPACES, ConfigLoader, namespace_problems
from .gpu_operator import GpuOperatorSpec
from .karpenter.spec import (
    MAX_KARPENTER_VERSION_EXCLUSIVE,
    MIN_KARPENTER_VERSION,
    KarpenterSpec,
    version_tuple,
)
from .naming import PROJECT
from .network.spec import VpcSpec
from .nodepool import AMI_SHIPS_NVIDIA_DRIVER, NodePoolSpec, default_cpu_pool
from .scheduler import SchedulerSpec
from .scheduler.spec import leaf_queue_names
from .spec import Problem, Spec, doc
from .validate.spec import ValidationSpec

# Its own names, and those it re-exports from where they moved (the section specs, the AWS
# partitions and patterns, version_tuple).
__all__ = [
    "DEFAULT_LABEL_DOMAIN",
    "DEFAULT_LOG_TYPES",
    "KARPENTER_RESERVED_TAGS",
    "LABEL_DOMAIN_ANNOTATION",
    "MAX_KARPENTER_VERSION_EXCLUSIVE",
    "MIN_KARPENTER_VERSION",
    "OPERATOR_LABELS",
    "PARTITIONS",
    "PLATFORM_LABEL_SUFFIXES",
    "PROJECT",
    "PROVIDER_NAMESPACES",
    "REGION_PATTERN",
    "TAG_KEY_PATTERN",
    "ClusterSpec",
    "KarpenterSpec",
    "PlatformConfig",
    "SystemNodeGroupSpec",
    "VpcSpec",
    "namespace_problems",
    "partition_for_region",
    "version_tuple",
]

# GPUs built for training: SXM parts with NVLink between a node's GPUs (p4d/p4de, p5/p5e/p5en,
# p6-b200/p6-b300; catalog.py). A queue whose first GPU pool selects only these defaults to
# training; the PCIe parts (l4, l40s, a10g, t4, t4g, rtx-pro-server-6000) default to inference.
TRAINING_GPUS = frozenset({"a100", "h100", "h200", "b200", "b300"})


def derived_workload_kind(pools: typing.Sequence[NodePoolSpec]) -> str:
    """A leaf queue's workload kind when ``workloadKind`` is unset, from its GPU pools in
    routing order (issue 23, point 6): ``training`` if one is an efa pool (multi-node
    training); else from the first: ``notebook`` on a time-sliced pool (slices share a GPU
    without memory or fault isolation: interactive work, not serving), ``training`` on a
    preemptible pool (checkpointed batch work tolerates the interruptions) or one that selects
    only ``TRAINING_GPUS``, else ``inference``."""
    if any(p.kind == "efa" for p in pools):
        return "training"
    first = pools[0]
    if first.time_slicing is not None:
        return "notebook"
    if first.preemptible:
        return "training"
    names = {t.gpu_name for t in first.catalog_types}
    return "training" if names and names <= TRAINING_GPUS else "inference"


@dataclass(frozen=True, kw_only=True)
class PlatformConfig(ConfigLoader, CrossSectionChecks, Spec):
    """Every configuration key of a stack, validated together."""

    region: str = doc(text="AWS region (`aws:region`).")
    cluster: ClusterSpec = doc(text="EKS control plane.")
    vpc: VpcSpec = doc(VpcSpec(), "Network: a new VPC or an existing one.")
    system_node_group: SystemNodeGroupSpec = doc(
        SystemNodeGroupSpec(), "Managed node group for controllers."
    )
    karpenter: KarpenterSpec = doc(KarpenterSpec(), "Karpenter controller.")
    node_pools: tuple[NodePoolSpec, ...] = doc(
        (), "Karpenter capacity: gpu, efa and cpu pools (see Node pools)."
    )
    gpu_operator: GpuOperatorSpec = doc(GpuOperatorSpec(), "NVIDIA GPU Operator.")
    scheduler: SchedulerSpec = doc(
        SchedulerSpec(enabled=False),
        "KAI scheduler and queues; off unless configured (then enabled: true by default).",
    )
    tags: Mapping[str, str] = doc(
        text="Tags on every AWS resource (and on Karpenter's instances).", default_factory=dict
    )
    validation: ValidationSpec = doc(
        ValidationSpec(),
        "The validation the deploy workflow runs after `pulumi up` (docs/validation.md); off "
        "unless afterDeploy lists phases.",
    )

    @property
    def pools(self) -> tuple[NodePoolSpec, ...]:
        """The configured pools, plus the default general-purpose pool when none is cpu."""
        if any(p.kind == "cpu" for p in self.node_pools):
            return self.node_pools
        return (*self.node_pools, default_cpu_pool(spot=self.karpenter.interruption_handling))

    @property
    def efa_pools(self) -> tuple[NodePoolSpec, ...]:
        return tuple(p for p in self.node_pools if p.kind == "efa")

    @property
    def gpu_pools(self) -> tuple[NodePoolSpec, ...]:
        return tuple(p for p in self.node_pools if p.is_gpu)

    @property
    def drivers_preinstalled(self) -> bool:
        """Whether every GPU node boots an AMI that ships the NVIDIA driver and toolkit."""
        return all(AMI_SHIPS_NVIDIA_DRIVER[p.ami.family] for p in self.gpu_pools)

    def slices_per_gpu(self, pool: NodePoolSpec) -> int:
        """``nvidia.com/gpu`` each physical GPU of the pool advertises: time-slicing replicas,
        or MIG devices under strategy ``single`` (the smallest count over the pool's GPU
        families, so the pool is never sized too small). Queues count these; Karpenter counts
        physical GPUs (see ``capacity.py``)."""
        return capacity_of(pool, self.gpu_operator).units_per_gpu

    def _routing(self) -> dict[str, PoolRouting]:
        return pool_routing(self.pools, self.gpu_operator)

    @property
    def gpu_limits(self) -> dict[str, int | None]:
        """Each GPU pool's ``nvidia.com/gpu`` limit: from the queues routed to it when the
        scheduler is on (friction point 1), else the pool's own cap."""
        return gpu_limits(self.pools, self.gpu_operator, self.scheduler)

    @property
    def workload_kinds(self) -> dict[str, str]:
        """The workload kind of every leaf queue routed to a GPU pool, by queue name:
        ``scheduler.queues[].workloadKind``, else ``derived_workload_kind`` of its GPU pools
        (in routing order). The example templates follow it (offline.examples)."""
        if not self.scheduler.enabled:
            return {}
        pools = {p.name: p for p in self.gpu_pools}
        leaves = leaf_queue_names(self.scheduler.queues)
        out: dict[str, str] = {}
        for queue in self.scheduler.queues:
            routed = [pools[n] for n in queue.node_pools if n in pools]
            if queue.name in leaves and routed:
                out[queue.name] = queue.workload_kind or derived_workload_kind(routed)
        return out

    @property
    def partition(self) -> str:
        return partition_for_region(self.region)

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := region_problem(self.region):
            out.append((("region",), msg))
        return out + self.cross_problems(SECTIONS)


SECTIONS = frozenset(f.name for f in fields(PlatformConfig))
