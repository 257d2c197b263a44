"""eks-gpu-platform: Pulumi components for a production GPU cluster on Amazon EKS.

Everything a program composing the components needs is exported here: the components and their
``*Args``, every spec they take, and the system-node helpers (``system_node_label``,
``system_tolerations``) for workloads of your own that run next to the controllers.

Importing the package imports none of them: each name loads its module on first use (PEP 562
module ``__getattr__``, https://peps.python.org/pep-0562/), so a tool that needs one submodule
(``python -m eks_gpu_platform.offline.stacks`` in the workflows) does not load the Pulumi SDKs,
and ``from eks_gpu_platform import GpuPlatform`` loads what ``GpuPlatform`` needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cluster import EksCluster, EksClusterArgs, system_node_label, system_tolerations
    from .config import ClusterSpec, KarpenterSpec, PlatformConfig, SystemNodeGroupSpec, VpcSpec
    from .efa import EfaDevicePlugin, EfaDevicePluginArgs
    from .gpu_operator import GpuOperator, GpuOperatorArgs, GpuOperatorSpec
    from .karpenter import Karpenter, KarpenterArgs
    from .network import Network, NetworkArgs
    from .nodepool import (
        AmiSpec,
        BudgetSpec,
        CapacityReservationSpec,
        DisruptionSpec,
        KubeletSpec,
        LimitsSpec,
        NodePool,
        NodePoolArgs,
        NodePoolSpec,
        RootVolumeSpec,
        TaintSpec,
    )
    from .platform import GpuPlatform, GpuPlatformArgs, read_stack_config
    from .scheduler import (
        KaiScheduler,
        KaiSchedulerArgs,
        QueueResourceSpec,
        QueueSpec,
        SchedulerSpec,
    )
    from .spec import SpecError
    from .tenants.component import TenantAccess, TenantAccessArgs

# Public name -> the submodule that defines it.
_EXPORTS = {
    "EksCluster": ".cluster",
    "EksClusterArgs": ".cluster",
    "system_node_label": ".cluster",
    "system_tolerations": ".cluster",
    "ClusterSpec": ".config",
    "KarpenterSpec": ".config",
    "PlatformConfig": ".config",
    "SystemNodeGroupSpec": ".config",
    "VpcSpec": ".config",
    "EfaDevicePlugin": ".efa",
    "EfaDevicePluginArgs": ".efa",
    "GpuOperator": ".gpu_operator",
    "GpuOperatorArgs": ".gpu_operator",
    "GpuOperatorSpec": ".gpu_operator",
    "Karpenter": ".karpenter",
    "KarpenterArgs": ".karpenter",
    "Network": ".network",
    "NetworkArgs": ".network",
    "AmiSpec": ".nodepool",
    "BudgetSpec": ".nodepool",
    "CapacityReservationSpec": ".nodepool",
    "DisruptionSpec": ".nodepool",
    "KubeletSpec": ".nodepool",
    "LimitsSpec": ".nodepool",
    "NodePool": ".nodepool",
    "NodePoolArgs": ".nodepool",
    "NodePoolSpec": ".nodepool",
    "RootVolumeSpec": ".nodepool",
    "TaintSpec": ".nodepool",
    "GpuPlatform": ".platform",
    "GpuPlatformArgs": ".platform",
    "read_stack_config": ".platform",
    "KaiScheduler": ".scheduler",
    "KaiSchedulerArgs": ".scheduler",
    "QueueResourceSpec": ".scheduler",
    "QueueSpec": ".scheduler",
    "SchedulerSpec": ".scheduler",
    "SpecError": ".spec",
    "TenantAccess": ".tenants.component",
    "TenantAccessArgs": ".tenants.component",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("eks-gpu-platform")
        except PackageNotFoundError:  # imported from a source tree that is not installed
            value = "0.0.0"
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AmiSpec",
    "BudgetSpec",
    "CapacityReservationSpec",
    "ClusterSpec",
    "DisruptionSpec",
    "EfaDevicePlugin",
    "EfaDevicePluginArgs",
    "EksCluster",
    "EksClusterArgs",
    "GpuOperator",
    "GpuOperatorArgs",
    "GpuOperatorSpec",
    "GpuPlatform",
    "GpuPlatformArgs",
    "KaiScheduler",
    "KaiSchedulerArgs",
    "Karpenter",
    "KarpenterArgs",
    "KarpenterSpec",
    "KubeletSpec",
    "LimitsSpec",
    "Network",
    "NetworkArgs",
    "NodePool",
    "NodePoolArgs",
    "NodePoolSpec",
    "PlatformConfig",
    "QueueResourceSpec",
    "QueueSpec",
    "RootVolumeSpec",
    "SchedulerSpec",
    "SpecError",
    "SystemNodeGroupSpec",
    "TaintSpec",
    "TenantAccess",
    "TenantAccessArgs",
    "VpcSpec",
    "__version__",
    "read_stack_config",
    "system_node_label",
    "system_tolerations",
]
