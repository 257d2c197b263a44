"""eks-gpu-platform: Pulumi components for a production GPU cluster on Amazon EKS."""

from importlib.metadata import PackageNotFoundError, version

from .cluster import EksCluster, EksClusterArgs
from .config import (
    ClusterSpec,
    KarpenterSpec,
    PlatformConfig,
    SystemNodeGroupSpec,
    VpcSpec,
)
from .efa import EfaDevicePlugin, EfaDevicePluginArgs
from .gpu_operator import GpuOperator, GpuOperatorArgs, GpuOperatorSpec
from .karpenter import Karpenter, KarpenterArgs
from .network import Network, NetworkArgs
from .nodepool import NodePool, NodePoolArgs, NodePoolSpec
from .platform import GpuPlatform, GpuPlatformArgs, read_stack_config
from .scheduler import KaiScheduler, KaiSchedulerArgs, QueueSpec, SchedulerSpec
from .spec import SpecError

try:
    __version__ = version("eks-gpu-platform")
except PackageNotFoundError:  # imported from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = [
    "ClusterSpec",
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
    "Network",
    "NetworkArgs",
    "NodePool",
    "NodePoolArgs",
    "NodePoolSpec",
    "PlatformConfig",
    "QueueSpec",
    "SchedulerSpec",
    "SpecError",
    "SystemNodeGroupSpec",
    "VpcSpec",
    "__version__",
    "read_stack_config",
]
