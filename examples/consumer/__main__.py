"""A separate Pulumi program built from eks-gpu-platform's components: a cluster and one GPU pool.

It composes the components one by one (instead of ``GpuPlatform``) to show the library's
building blocks: a network, the EKS cluster, Karpenter, and a Karpenter GPU pool.
"""

import pulumi

from eks_gpu_platform import (
    ClusterSpec,
    EksCluster,
    EksClusterArgs,
    Karpenter,
    KarpenterArgs,
    KarpenterSpec,
    Network,
    NetworkArgs,
    NodePool,
    NodePoolArgs,
    NodePoolSpec,
    SystemNodeGroupSpec,
    VpcSpec,
)
from eks_gpu_platform.cluster import system_node_label, system_tolerations
from eks_gpu_platform.nodepool import LimitsSpec

config = pulumi.Config()
name = config.require("clusterName")
gpu_limit = config.get_int("gpuLimit") or 8
tags = {"project": "gpu-research"}

cluster_spec = ClusterSpec(name=name, admins=("role/ResearchAdmin",))
network = Network("research-network", NetworkArgs(spec=VpcSpec(az_count=2), cluster_name=name))
cluster = EksCluster(
    "research-cluster",
    EksClusterArgs(
        spec=cluster_spec,
        system_node_group=SystemNodeGroupSpec(instance_types=("m7i.large",)),
        vpc_id=network.vpc_id,
        private_subnet_ids=network.private_subnet_ids,
        public_subnet_ids=network.public_subnet_ids,
        tags=tags,
    ),
)
label_key, label_value = system_node_label(cluster_spec.label_domain)
karpenter = Karpenter(
    "research-karpenter",
    KarpenterArgs(
        spec=KarpenterSpec(),
        cluster_name=name,
        cluster=cluster.cluster_name,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_provider_url=cluster.oidc_provider_url,
        k8s_provider=cluster.provider,
        node_selector={label_key: label_value},
        tolerations=system_tolerations(),
        depends_on=[cluster.system_node_group, cluster.pod_identity_agent],
        tags=tags,
    ),
)
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
        cluster_name=name,
        label_domain=cluster_spec.label_domain,
        node_role=karpenter.node_role_name,
        k8s_provider=cluster.provider,
        gpu_limit=gpu_limit,
        depends_on=[karpenter.crd_release, karpenter.release],
        tags=tags,
    ),
)

pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("nodePools", pool.node_pool_names)
