"""eks-gpu-platform: Pulumi components for a production GPU cluster on Amazon EKS.

Everything a program composing the components needs is exported here: the components and their
``*Args``, every spec they take, and the system-node helpers (``system_node_label``,
``system_tolerations``) for workloads of your own that run next to the controllers.
"""

from importlib.metadata import PackageNotFoundError, version

from .cluster import EksCluster, EksClusterArgs, system_node_label, system_tolerations
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

try:
    __version__ = version("eks-gpu-platform")
except PackageNotFoundError:  # imported from a source tree that is not installed
    __version__ = "0.0.0"

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
    "VpcSpec",
    "__version__",
    "read_stack_config",
    "system_node_label",
    "system_tolerations",
]
