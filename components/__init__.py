"""eks-gpu-platform: Pulumi components for a production GPU cluster on Amazon EKS."""

from .cluster import EksCluster, EksClusterArgs
from .config import (
    ClusterSpec,
    KarpenterSpec,
    PlatformConfig,
    SystemNodeGroupSpec,
    VpcSpec,
)
from .karpenter import Karpenter, KarpenterArgs
from .network import Network, NetworkArgs
from .platform import GpuPlatform, read_stack_config
from .spec import SpecError

__all__ = [
    "ClusterSpec",
    "EksCluster",
    "EksClusterArgs",
    "GpuPlatform",
    "Karpenter",
    "KarpenterArgs",
    "KarpenterSpec",
    "Network",
    "NetworkArgs",
    "PlatformConfig",
    "SpecError",
    "SystemNodeGroupSpec",
    "VpcSpec",
    "read_stack_config",
]
