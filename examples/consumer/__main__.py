"""A separate Pulumi program built from eks-gpu-platform's components: a working GPU platform.

It composes the components one by one (instead of ``GpuPlatform``) to show the library's
building blocks: a network, the EKS cluster, Karpenter, a Karpenter GPU pool, and the NVIDIA GPU
Operator (the device plugin that makes ``nvidia.com/gpu`` schedulable). Each component takes the
ones it builds on and derives the rest from them: Karpenter runs on the cluster's system nodes,
the pool uses Karpenter's node role and waits for its CRDs, the operator tolerates the pool's
taints. Only names the package root exports are imported.
"""

import pulumi

from eks_gpu_platform import (
    ClusterSpec,
    EksCluster,
    EksClusterArgs,
    GpuOperator,
    GpuOperatorArgs,
    Karpenter,
    KarpenterArgs,
    LimitsSpec,
    Network,
    NetworkArgs,
    NodePool,
    NodePoolArgs,
    NodePoolSpec,
    SystemNodeGroupSpec,
    VpcSpec,
)

config = pulumi.Config()
name = config.require("clusterName")
gpu_limit = config.get_int("gpuLimit") or 8
tags = {"project": "gpu-research"}

network = Network(
    "research-network",
    NetworkArgs(spec=VpcSpec(az_count=2), cluster_name=name, tags=tags),
)
cluster = EksCluster(
    "research-cluster",
    EksClusterArgs(
        spec=ClusterSpec(name=name, admins=("role/ResearchAdmin",)),
        system_node_group=SystemNodeGroupSpec(instance_types=("m7i.large",)),
        network=network,
        tags=tags,
    ),
)
karpenter = Karpenter("research-karpenter", KarpenterArgs(cluster=cluster, tags=tags))
pool = NodePool(
    "research-l4",
    NodePoolArgs(
        spec=NodePoolSpec(
            name="l4",
            kind="gpu",
            gpus=("l4",),
            capacity_types=("spot", "on-demand"),
            preemptible=True,
            limits=LimitsSpec(gpus=gpu_limit),
        ),
        cluster=cluster,
        karpenter=karpenter,
        tags=tags,
    ),
)
gpu_operator = GpuOperator(
    "research-gpu-operator", GpuOperatorArgs(cluster=cluster, node_pools=[pool])
)

pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("nodePools", pool.node_pool_names)
pulumi.export("gpuOperatorNamespace", gpu_operator.namespace)
