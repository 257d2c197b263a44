"""IAM pieces shared by the components: EC2 trust, AWS managed policy ARNs and attachments.

``ec2_trust_policy`` is pure; ``attach_managed_policies`` registers attachments as children of
the calling component.
"""

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

IAM_VERSION = "2012-10-17"
# EKS Pod Identity's service principal and the actions its trust needs (EKS user guide,
# https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html).
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"
# Session Manager on a node: opt-in (``cluster.nodeSsmAccess``). EKS Best Practices, Hosts:
# "Of concern specifically is the ``*`` permissions for ``ssm:GetParameter(s)``" in this policy.
SSM_NODE_POLICY = "AmazonSSMManagedInstanceCore"


def cluster_arn(partition: str, region: str, account_id: str, cluster_name: str) -> str:
    """An EKS cluster's ARN, built from the partition."""
    return f"arn:{partition}:eks:{region}:{account_id}:cluster/{cluster_name}"


def pod_identity_trust_policy(
    *,
    partition: str,
    region: str,
    account_id: str,
    cluster_name: str,
    namespace: str,
    service_account: str,
) -> dict:
    """Trust policy of a role used through EKS Pod Identity, for one service account of one
    cluster in this account.

    The conditions are the session tags EKS Pod Identity adds when it assumes the role
    ("You can use these tags in the condition keys in the trust policy to restrict which service
    accounts, namespaces, and clusters can use this role",
    https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html; the tag list:
    https://docs.aws.amazon.com/eks/latest/userguide/pod-id-abac.html#pod-id-abac-tags:
    ``eks-cluster-arn``, ``kubernetes-namespace``, ``kubernetes-service-account``; the
    ``eks-cluster-arn`` value format ``arn:<partition>:eks:<region>:<account>:cluster/<name>``:
    pod-id-assign-target-role.html, awsdocs/amazon-eks-user-guide latest/ug/manage-access/
    aws-access/pod-id-assign-target-role.adoc), and ``aws:SourceAccount`` against the confused
    deputy. The EKS user guide does not list ``aws:SourceAccount`` for this trust: the EKS Best
    Practices Guide (IAM, "EKS Pod Identities", aws/aws-eks-best-practices
    latest/bpg/security/iam.adoc) shows ``aws:SourceOrgId`` and says "EKS will pass in a value
    for aws:SourceOrgId ... when assuming a role with EKS Pod Identities"; IAM sets the
    ``aws:Source*`` keys together when a service principal calls on behalf of a resource
    (IAM user guide, reference_policies_condition-keys.html, "aws:SourceAccount"). It adds
    nothing the cluster ARN (which names the account) does not already pin: if a role cannot
    be assumed, that key is the first to drop. Without the tags any Pod Identity association
    in the account, on any cluster, could hand this role to any pod.
    """
    return {
        "Version": IAM_VERSION,
        "Statement": [
            {
                "Sid": "AllowEksAuthToAssumeRoleForPodIdentity",
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY_SERVICE},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {
                        "aws:SourceAccount": account_id,
                        "aws:RequestTag/eks-cluster-arn": cluster_arn(
                            partition, region, account_id, cluster_name
                        ),
                        "aws:RequestTag/kubernetes-namespace": namespace,
                        "aws:RequestTag/kubernetes-service-account": service_account,
                    }
                },
            }
        ],
    }


def ec2_trust_policy(dns_suffix: str) -> dict:
    """Trust policy letting EC2 instances in this partition assume a node role
    (``ec2.${AWS::URLSuffix}``)."""
    return {
        "Version": IAM_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": f"ec2.{dns_suffix}"},
                "Action": "sts:AssumeRole",
            }
        ],
    }


def managed_policy_arn(partition: str, policy: str) -> str:
    """The ARN of an AWS managed policy, built from the partition."""
    return f"arn:{partition}:iam::aws:policy/{policy}"


def compact_json(document: dict) -> str:
    """A policy document as IAM stores and counts it (no insignificant whitespace)."""
    return json.dumps(document, separators=(",", ":"))


def attach_managed_policies(
    name: str,
    role: aws.iam.Role,
    policies: Sequence[str],
    partition: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> list[aws.iam.RolePolicyAttachment]:
    """One ``RolePolicyAttachment`` per AWS managed policy, named ``<name>-<policy>``."""
    return [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy}",
            role=role.name,
            policy_arn=pulumi.Output.from_input(partition).apply(
                lambda p, policy=policy: managed_policy_arn(p, policy)
            ),
            opts=opts,
        )
        for policy in policies
    ]
