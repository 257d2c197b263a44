"""GPU, EFA and CPU capacity: Karpenter v1 NodePools and EC2NodeClasses from one pool spec.

Every pool in the stack configuration (``nodePools``) becomes one ``NodePool`` component:

- ``gpu`` pools: an EC2NodeClass on the EKS AL2023 NVIDIA AMI (drivers and container toolkit
  preinstalled; Bottlerocket as an option) and a NodePool tainted ``nvidia.com/gpu=true:NoSchedule``
  that requires ``instance-gpu-manufacturer: nvidia`` plus the configured GPU names, families or
  types, labels every node with the project's pool label, and caps ``nvidia.com/gpu``.
- ``efa`` pools (multi-node training): one EC2NodeClass and NodePool per EFA layout (types with
  the same network interfaces share one, ``budget.nodepools``), with every
  EFA interface laid out (``networkInterfaces``), one AZ, a cluster placement group and a security
  group open to itself, hugepages reserved at boot and declared to Karpenter by a NodeOverlay.
- ``cpu`` pools: untainted general-purpose capacity, so nothing non-GPU lands on GPU nodes.

Pure builders (``nodepool_manifest``, ``ec2nodeclass_manifest``, ``nodeoverlay_manifest``,
``hugepages_user_data``) return plain dicts; the component registers them as CustomResources.

The package: ``constants`` (resources, taints, defaults, patterns), ``parts`` (the sub-specs),
``spec`` (``NodePoolSpec``), ``manifests`` (the pure builders) and ``component`` (``NodePoolArgs``,
``NodePool``). Every name the old ``nodepool`` module defined is re-exported here.
"""

# What a pool's nodes advertise and its budget's split live with the GPU budget (``budget``).
from typing import TYPE_CHECKING

from ..budget import (
    GPU_OVERLAY_WEIGHT,
    MIG_RESOURCE_PREFIX,
    PoolCapacity,
    TypeCapacity,
    gpu_overlay_manifests,
    mig_g_count,
    nodepool_groups,
    pool_capacity,
    split_gpu_limit,
)
from ..lazy import lazy_exports
from .constants import (
    AMI_FAMILIES,
    AMI_SHIPS_NVIDIA_DRIVER,
    BUDGET_REASONS,
    CAPACITY_PRIORITY,
    CAPACITY_TYPE_LABEL,
    DEFAULT_AMI_VERSION,
    DEFAULT_CONSOLIDATE_AFTER,
    DEFAULT_CPU_CATEGORIES,
    DEFAULT_CPU_MIN_GENERATION,
    DEFAULT_CPU_POOL_NAME,
    DEFAULT_CPU_ROOT_VOLUME_GIB,
    DEFAULT_PREEMPTIBLE_EXPIRE_AFTER,
    DEFAULT_PREEMPTIBLE_GRACE,
    DEFAULT_STABLE_EXPIRE_AFTER,
    DEFAULT_STABLE_GRACE,
    DEVICE_PLUGIN_DEPLOY_LABEL,
    DEVICE_PLUGIN_HELD,
    DEVICE_PLUGIN_RELEASED,
    EBS_ONLY_GPU_ROOT_IOPS,
    EBS_ONLY_GPU_ROOT_THROUGHPUT,
    EBS_ONLY_GPU_ROOT_VOLUME_GIB,
    EFA_RESOURCE,
    EFA_TAINT,
    GP3_BASE_IOPS,
    GP3_BASE_THROUGHPUT,
    GP3_IOPS_PER_GIB,
    GP3_MAX_IOPS,
    GP3_MAX_THROUGHPUT,
    GP3_MIBPS_PER_IOPS,
    GPU_RESOURCE,
    GPU_TAINT,
    INSTANCE_STORE_ROOT_VOLUME_GIB,
    KUBELET_RESERVED_KEYS,
    LABEL_VALUE,
    LABEL_VALUE_TEXT,
    MIG_CONFIG_STATE_LABEL,
    MIG_CONFIG_STATE_SUCCESS,
    MIG_PENDING_TAINT,
    NAME_PATTERN,
    POOL_KINDS,
    PREEMPTIBLE_BUDGETS,
    QUALIFIED_NAME,
    QUALIFIED_NAME_TEXT,
    RESERVED_LABEL_DOMAINS,
    STABLE_BUDGETS,
    ZONE_PATTERN,
)
from .manifests import (
    GRAVITON_FAMILY,
    HUGEPAGE_BYTES,
    block_device_mappings,
    ec2nodeclass_manifest,
    family_arch,
    hugepages_user_data,
    nodeoverlay_manifest,
    nodepool_manifest,
    pool_labels,
    pool_requirements,
    pool_startup_taints,
    pool_taints,
    taint_tolerations,
    type_slug,
)
from .parts import (
    AmiSpec,
    BudgetSpec,
    CapacityReservationSpec,
    DisruptionSpec,
    KubeletSpec,
    LimitsSpec,
    RootVolumeSpec,
    TaintSpec,
    article,
)
from .spec import NodePoolSpec, default_cpu_pool

if TYPE_CHECKING:
    from .component import NodePool, NodePoolArgs, pool_specs

# Loaded on first use: these load the Pulumi SDKs, which a reader of the specs (the stack's
# validation) does not need (lazy.py).
__getattr__ = lazy_exports(
    __name__,
    {
        "NodePool": ".component",
        "NodePoolArgs": ".component",
        "pool_specs": ".component",
    },
)

__all__ = [
    "AMI_FAMILIES",
    "AMI_SHIPS_NVIDIA_DRIVER",
    "BUDGET_REASONS",
    "CAPACITY_PRIORITY",
    "CAPACITY_TYPE_LABEL",
    "DEFAULT_AMI_VERSION",
    "DEFAULT_CONSOLIDATE_AFTER",
    "DEFAULT_CPU_CATEGORIES",
    "DEFAULT_CPU_MIN_GENERATION",
    "DEFAULT_CPU_POOL_NAME",
    "DEFAULT_CPU_ROOT_VOLUME_GIB",
    "DEFAULT_PREEMPTIBLE_EXPIRE_AFTER",
    "DEFAULT_PREEMPTIBLE_GRACE",
    "DEFAULT_STABLE_EXPIRE_AFTER",
    "DEFAULT_STABLE_GRACE",
    "DEVICE_PLUGIN_DEPLOY_LABEL",
    "DEVICE_PLUGIN_HELD",
    "DEVICE_PLUGIN_RELEASED",
    "EBS_ONLY_GPU_ROOT_IOPS",
    "EBS_ONLY_GPU_ROOT_THROUGHPUT",
    "EBS_ONLY_GPU_ROOT_VOLUME_GIB",
    "EFA_RESOURCE",
    "EFA_TAINT",
    "GP3_BASE_IOPS",
    "GP3_BASE_THROUGHPUT",
    "GP3_IOPS_PER_GIB",
    "GP3_MAX_IOPS",
    "GP3_MAX_THROUGHPUT",
    "GP3_MIBPS_PER_IOPS",
    "GPU_OVERLAY_WEIGHT",
    "GPU_RESOURCE",
    "GPU_TAINT",
    "GRAVITON_FAMILY",
    "HUGEPAGE_BYTES",
    "INSTANCE_STORE_ROOT_VOLUME_GIB",
    "KUBELET_RESERVED_KEYS",
    "LABEL_VALUE",
    "LABEL_VALUE_TEXT",
    "MIG_CONFIG_STATE_LABEL",
    "MIG_CONFIG_STATE_SUCCESS",
    "MIG_PENDING_TAINT",
    "MIG_RESOURCE_PREFIX",
    "NAME_PATTERN",
    "POOL_KINDS",
    "PREEMPTIBLE_BUDGETS",
    "QUALIFIED_NAME",
    "QUALIFIED_NAME_TEXT",
    "RESERVED_LABEL_DOMAINS",
    "STABLE_BUDGETS",
    "ZONE_PATTERN",
    "AmiSpec",
    "BudgetSpec",
    "CapacityReservationSpec",
    "DisruptionSpec",
    "KubeletSpec",
    "LimitsSpec",
    "NodePool",
    "NodePoolArgs",
    "NodePoolSpec",
    "PoolCapacity",
    "RootVolumeSpec",
    "TaintSpec",
    "TypeCapacity",
    "article",
    "block_device_mappings",
    "default_cpu_pool",
    "ec2nodeclass_manifest",
    "family_arch",
    "gpu_overlay_manifests",
    "hugepages_user_data",
    "mig_g_count",
    "nodeoverlay_manifest",
    "nodepool_groups",
    "nodepool_manifest",
    "pool_capacity",
    "pool_labels",
    "pool_requirements",
    "pool_specs",
    "pool_startup_taints",
    "pool_taints",
    "split_gpu_limit",
    "taint_tolerations",
    "type_slug",
]
