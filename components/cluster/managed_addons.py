"""The cluster's EKS managed add-ons (``EksCluster``'s children): ``vpc-cni``, ``kube-proxy`` and
``eks-pod-identity-agent`` before any node, ``coredns`` after the system nodes, and the vpc-cni
add-on's own IAM role."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from ..iam import attach_managed_policies, pod_identity_trust_policy
from ..naming import IAM_ROLE_NAME_MAX, bounded_name
from .addon_versions import ADDON_MINOR_TAG, addon_version_input
from .addons import addon_configuration_values
from .spec import ClusterSpec
from .timeouts import addon_timeouts

if TYPE_CHECKING:  # the component imports this module
    from .component import EksCluster

# Add-ons installed before any node (networking, proxy, pod credentials) and after (DNS).
ADDONS_BEFORE_COMPUTE = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
ADDONS_AFTER_COMPUTE = ("coredns",)
# The vpc-cni add-on's own IAM role, through EKS Pod Identity, instead of the CNI policy on
# every node role (EKS Best Practices, IAM, "Update the aws-node daemonset to use IRSA"; the
# add-on takes Pod Identity associations: EKS API CreateAddon ``podIdentityAssociations``).
VPC_CNI_SERVICE_ACCOUNT = "aws-node"
VPC_CNI_NAMESPACE = "kube-system"
VPC_CNI_POLICY = "AmazonEKS_CNI_Policy"


def addons_before_compute(
    component: EksCluster,
    name: str,
    spec: ClusterSpec,
    tags: dict[str, str],
    partition: pulumi.Output[str],
    region: pulumi.Output[str],
    account_id: pulumi.Output[str],
) -> list[aws.eks.Addon]:
    """The add-ons installed before any node (``ADDONS_BEFORE_COMPUTE``), in that order; vpc-cni
    with its own IAM role through EKS Pod Identity, after the role's policy is attached."""
    child = pulumi.ResourceOptions(parent=component)
    cni_role = aws.iam.Role(
        f"{name}-vpc-cni",
        name=bounded_name("EKSVpcCniRole-", spec.name, IAM_ROLE_NAME_MAX),
        description=f"The vpc-cni add-on (aws-node) of EKS cluster {spec.name}",
        assume_role_policy=pulumi.Output.all(partition, region, account_id).apply(
            lambda a: json.dumps(
                pod_identity_trust_policy(
                    partition=a[0],
                    region=a[1],
                    account_id=a[2],
                    cluster_name=spec.name,
                    namespace=VPC_CNI_NAMESPACE,
                    service_account=VPC_CNI_SERVICE_ACCOUNT,
                )
            )
        ),
        tags=tags,
        opts=child,
    )
    cni_policy = attach_managed_policies(
        f"{name}-vpc-cni", cni_role, (VPC_CNI_POLICY,), partition, child
    )
    cni_identity = {
        "vpc-cni": [{"role_arn": cni_role.arn, "service_account": VPC_CNI_SERVICE_ACCOUNT}]
    }
    cni_opts = pulumi.ResourceOptions(parent=component, depends_on=cni_policy)
    before = [
        managed_addon(
            component,
            name,
            addon,
            tags,
            cni_opts if addon == "vpc-cni" else child,
            cni_identity.get(addon),
        )
        for addon in ADDONS_BEFORE_COMPUTE
    ]
    return before


def managed_addon(
    component: EksCluster,
    name: str,
    addon: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
    pod_identity: list[dict] | None = None,
) -> aws.eks.Addon:
    """An EKS managed add-on at its resolved version (addon_versions.py: a pin, the version
    installed for the minor, or EKS's most recent for the minor), taking over any existing
    self-managed copy.

    The version is a plain value, resolved before anything is registered, so the preview
    shows it. EKS does not update an add-on when the control plane's minor changes
    ("Amazon EKS doesn't automatically update an add-on ... after you update your cluster
    to a new Kubernetes minor version",
    https://docs.aws.amazon.com/eks/latest/userguide/updating-an-add-on.html): a minor
    upgrade resolves a version for the new minor and updates the add-on in place
    (addon_version is not ForceNew) after the control plane (cluster_name waits for it),
    within its update timeout (timeouts.py). The tag ``ADDON_MINOR_TAG`` records the minor
    the version was resolved for, so an upgrade interrupted after the control plane moved
    still moves the add-ons on the next `up`."""
    resolved = component.resolved_addons[addon]
    return aws.eks.Addon(
        f"{name}-{addon}",
        cluster_name=component.cluster_name,
        addon_name=addon,
        addon_version=addon_version_input(resolved),
        configuration_values=addon_configuration_values(addon),
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="OVERWRITE",
        pod_identity_associations=pod_identity,
        tags={**tags, ADDON_MINOR_TAG: resolved.minor},
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(custom_timeouts=pulumi.CustomTimeouts(**addon_timeouts(addon))),
        ),
    )
