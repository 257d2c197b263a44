"""The EKS add-ons' configuration values (pure: plain data in, a JSON string or None out).

vpc-cni: ``enableNetworkPolicy: "true"`` turns on the VPC CNI's network policy agent on every node
and EKS's network policy controller, without which a NetworkPolicy is stored but never enforced
(EKS user guide, "Restrict Pod network traffic with Kubernetes network policies", Step 2,
"Enable the network policy parameter for the add-on": the configuration values
``{"enableNetworkPolicy": "true"}``; awsdocs/amazon-eks-user-guide
latest/ug/networking/eks-networking-add-ons.adoc L1448-1572). The value is the string "true":
the add-on's configuration schema follows the aws-vpc-cni chart's values, where it is a string
(aws/amazon-vpc-cni-k8s v1.23.0 charts/aws-vpc-cni/values.yaml L126 ``enableNetworkPolicy:
"false"``, quoted into the ``amazon-vpc-cni`` ConfigMap's ``enable-network-policy-controller``,
templates/configmap.yaml L21). The feature needs vpc-cni 1.14 or later and Kubernetes 1.25 or
later, and the BPF file system, which every EKS AL2023 and Bottlerocket AMI for 1.27 or later
mounts (same page, Prerequisites and Step 3); the platform supports 1.30-1.36 and installs the
add-on's default version for the minor. Policies apply to the pod's primary interface only;
EFA traffic bypasses the kernel and is not filtered (same page, Considerations).
"""

import json

VPC_CNI = "vpc-cni"
VPC_CNI_CONFIGURATION = {"enableNetworkPolicy": "true"}


def addon_configuration_values(addon: str) -> str | None:
    """The ``configurationValues`` JSON of an EKS add-on, or None to keep EKS's defaults."""
    if addon == VPC_CNI:
        return json.dumps(VPC_CNI_CONFIGURATION, sort_keys=True)
    return None
