"""The EKS cluster: control plane (pulumi-eks), secrets encryption, add-ons and system nodes.

- ``pulumi_eks.Cluster`` with authentication mode API and one access entry per admin, a KMS key
  (rotation on) for secrets encryption unless a key ARN is given, control-plane logging, the
  private endpoint always on and the public one only behind a CIDR allowlist.
- EKS managed add-ons ``vpc-cni``, ``kube-proxy`` and ``eks-pod-identity-agent`` before any node,
  ``coredns`` once the system nodes exist.
- A managed node group for controllers (AL2023, on-demand, tainted ``CriticalAddonsOnly``, IMDSv2
  with hop limit 1, encrypted gp3 root volume) spread over every private subnet's AZ. Karpenter's
  chart affinity keeps Karpenter from ever provisioning these nodes.
- The cluster primary security group tagged ``karpenter.sh/discovery``: EKS gives it the
  self-referencing rules that EFA needs, and managed nodes already use it.
- One Kubernetes provider, built from the cluster's kubeconfig, for every in-cluster resource.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from .access import ADMIN_POLICY, admin_policy_arn, admin_principal_arn
from .nodegroup import (
    SYSTEM_NODE_POLICIES,
    SYSTEM_TAINT_KEY,
    system_launch_template_data,
    system_node_label,
    system_tolerations,
)
from .spec import ClusterSpec, SystemNodeGroupSpec

if TYPE_CHECKING:
    from .args import EksClusterArgs
    from .component import EksCluster
    from .managed_addons import ADDONS_AFTER_COMPUTE, ADDONS_BEFORE_COMPUTE

# Loaded on first use: these load the Pulumi SDKs, which a reader of the specs (the stack's
# validation) does not need (lazy.py).
__getattr__ = lazy_exports(
    __name__,
    {
        "EksClusterArgs": ".args",
        "EksCluster": ".component",
        "ADDONS_AFTER_COMPUTE": ".managed_addons",
        "ADDONS_BEFORE_COMPUTE": ".managed_addons",
    },
)

__all__ = [
    "ADDONS_AFTER_COMPUTE",
    "ADDONS_BEFORE_COMPUTE",
    "ADMIN_POLICY",
    "SYSTEM_NODE_POLICIES",
    "SYSTEM_TAINT_KEY",
    "ClusterSpec",
    "EksCluster",
    "EksClusterArgs",
    "SystemNodeGroupSpec",
    "admin_policy_arn",
    "admin_principal_arn",
    "system_launch_template_data",
    "system_node_label",
    "system_tolerations",
]
