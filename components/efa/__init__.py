"""EFA for multi-node training: the AWS EFA device plugin, and a reference NCCL all-reduce test.

The EKS GPU AMIs ship the EFA host software but not the device plugin; without the plugin no
pod can request ``vpc.amazonaws.com/efa``. The chart's DaemonSet tolerates nothing but
``CriticalAddonsOnly`` by default, so it would skip tainted GPU nodes: here it tolerates the
GPU and EFA taints and runs only on this stack's EFA nodes (the pool's ``<domain>/efa`` label).

``nccl_test_manifest`` renders a Kubeflow ``MPIJob`` running ``all_reduce_perf`` across two or
more nodes of an EFA pool, requesting every GPU, EFA interface and the hugepages of each node.
"""

from .component import NAMESPACE, EfaDevicePlugin, EfaDevicePluginArgs
from .manifests import (
    MPI_OPERATOR_VERSION,
    MPIJOB_API,
    NCCL_ENV,
    NCCL_TESTS_IMAGE,
    nccl_test_manifest,
)
from .values import device_plugin_values

__all__ = [
    "MPIJOB_API",
    "MPI_OPERATOR_VERSION",
    "NAMESPACE",
    "NCCL_ENV",
    "NCCL_TESTS_IMAGE",
    "EfaDevicePlugin",
    "EfaDevicePluginArgs",
    "device_plugin_values",
    "nccl_test_manifest",
]
