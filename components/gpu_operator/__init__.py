"""NVIDIA GPU Operator on EKS GPU AMIs: driver and toolkit from the AMI, the rest from the operator.

- Namespace ``gpu-operator`` (Pod Security ``privileged``: the operands are privileged
  DaemonSets), then the ``gpu-operator`` chart pinned in ``versions.GPU_OPERATOR``.
- On the EKS AL2023 and Bottlerocket NVIDIA AMIs the driver and the container toolkit are
  preinstalled, so ``driver.enabled`` and ``toolkit.enabled`` are off; device plugin, GPU feature
  discovery (KAI needs its labels), DCGM exporter, MIG manager and node feature discovery stay on.
- The operator, NFD master and NFD garbage collector run on the system node group; the operand
  DaemonSets and the NFD worker tolerate the GPU pools' taints.
- MIG: a built-in mig-parted configuration with named profiles for A100 40GB/80GB, H100 80GB and
  H200 141GB (``MIG_PROFILE_NAMES``). A pool picks one with the node label
  ``nvidia.com/mig.config=<profile>``; nodes without the label stay ``all-disabled``.
- MIG pools' nodes start with the NodePool startup taint ``nvidia.com/mig.config.state=pending``
  and the label ``nvidia.com/gpu.deploy.device-plugin=false``; the MIG startup remover
  (``mig_ready.py``: a DaemonSet, its ServiceAccount, node RBAC and an admission policy) sets the
  label to ``true`` once the layout is applied and takes the taint off once the device plugin
  advertises it, so Karpenter never charges a MIG node its physical GPUs.
- Time-slicing: named device-plugin configurations (``GpuOperatorSpec.time_slicing``), picked per
  pool with ``nvidia.com/device-plugin.config=<name>``; unlabelled nodes use ``default`` (no
  sharing). Keep time-sliced pools apart from KAI GPU fractions (FACTS §6, #3376).

Builders (``gpu_operator_values``, ``mig_parted_config``, ``time_slicing_config``) are pure: plain
data in, dict out. Every values key exists in the chart's v26.7.0 defaults (or, under
``node-feature-discovery``, in the NFD subchart's defaults).
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from .mig import (
    MIG_80GB_BALANCED,
    MIG_80GB_PROFILES,
    MIG_GPU_CLASSES,
    MIG_PROFILE_NAMES,
    MigGpuClass,
    mig_devices_per_gpu,
    mig_layout,
    mig_parted_config,
    mig_profiles_for_family,
)
from .mig_ready import (
    MIG_READY_LABELS,
    MIG_READY_NAME,
    MIG_READY_SCRIPT,
    mig_ready_daemonset,
    mig_ready_rbac,
)
from .spec import (
    CONFIG_NAME_PATTERN,
    DEFAULT_MIG_STRATEGY,
    DEFAULT_PROMETHEUS_RELEASE,
    DEVICE_PLUGIN_CONFIG_LABEL,
    DEVICE_PLUGIN_CONFIG_NAME,
    GPU_RESOURCE,
    LABEL_VALUE_PATTERN,
    MAX_TIME_SLICING_REPLICAS,
    MIG_CONFIG_KEY,
    MIG_CONFIG_LABEL,
    MIG_CONFIG_NAME,
    MIG_DISABLED,
    MIG_STRATEGIES,
    MIN_TIME_SLICING_REPLICAS,
    NAMESPACE,
    NO_SHARING_CONFIG,
    RELEASE_NAME,
    GpuOperatorSpec,
)
from .values import (
    CONTROL_PLANE_TOLERATION,
    GPU_TOLERATION,
    OPERATOR_NODE_SELECTOR,
    gpu_operator_values,
    no_sharing_config,
    time_slicing_config,
)

if TYPE_CHECKING:
    from .component import (
        EFA_TOLERATION,
        PRIVILEGED_NAMESPACE_LABELS,
        GpuOperator,
        GpuOperatorArgs,
        mig_ready_pools,
    )

# Loaded on first use: these load the Pulumi SDKs, which a reader of the specs (the stack's
# validation) does not need (lazy.py).
__getattr__ = lazy_exports(
    __name__,
    {
        "EFA_TOLERATION": ".component",
        "PRIVILEGED_NAMESPACE_LABELS": ".component",
        "GpuOperator": ".component",
        "GpuOperatorArgs": ".component",
        "mig_ready_pools": ".component",
    },
)

__all__ = [
    "CONFIG_NAME_PATTERN",
    "CONTROL_PLANE_TOLERATION",
    "DEFAULT_MIG_STRATEGY",
    "DEFAULT_PROMETHEUS_RELEASE",
    "DEVICE_PLUGIN_CONFIG_LABEL",
    "DEVICE_PLUGIN_CONFIG_NAME",
    "EFA_TOLERATION",
    "GPU_RESOURCE",
    "GPU_TOLERATION",
    "LABEL_VALUE_PATTERN",
    "MAX_TIME_SLICING_REPLICAS",
    "MIG_80GB_BALANCED",
    "MIG_80GB_PROFILES",
    "MIG_CONFIG_KEY",
    "MIG_CONFIG_LABEL",
    "MIG_CONFIG_NAME",
    "MIG_DISABLED",
    "MIG_GPU_CLASSES",
    "MIG_PROFILE_NAMES",
    "MIG_READY_LABELS",
    "MIG_READY_NAME",
    "MIG_READY_SCRIPT",
    "MIG_STRATEGIES",
    "MIN_TIME_SLICING_REPLICAS",
    "NAMESPACE",
    "NO_SHARING_CONFIG",
    "OPERATOR_NODE_SELECTOR",
    "PRIVILEGED_NAMESPACE_LABELS",
    "RELEASE_NAME",
    "GpuOperator",
    "GpuOperatorArgs",
    "GpuOperatorSpec",
    "MigGpuClass",
    "gpu_operator_values",
    "mig_devices_per_gpu",
    "mig_layout",
    "mig_parted_config",
    "mig_profiles_for_family",
    "mig_ready_daemonset",
    "mig_ready_pools",
    "mig_ready_rbac",
    "no_sharing_config",
    "time_slicing_config",
]
