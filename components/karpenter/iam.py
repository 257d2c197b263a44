"""Karpenter's IAM documents: the controller's six upstream managed policies (18 statements,
built from the partition), their names, the controller's trust policies (Pod Identity or IRSA),
the interruption queue's policy, and the node role's managed policies. Pure: data in, dict out.
"""

from typing import Any

from ..iam import IAM_VERSION, SSM_NODE_POLICY
from ..iam import pod_identity_trust_policy as _pod_identity_trust
from ..naming import IAM_POLICY_NAME_MAX, bounded_name
from .spec import NAMESPACE, SERVICE_ACCOUNT

# Upstream's node role (v1.14 and v1.15 CloudFormation, KarpenterNodeRole) attaches four policies:
# AmazonEKS_CNI_Policy, AmazonEKSWorkerNodePolicy, AmazonEC2ContainerRegistryPullOnly and
# AmazonSSMManagedInstanceCore. Deviation (EKS Best Practices, IAM: give aws-node its own
# role; Hosts: the SSM policy's ssm:GetParameter(s) on "*"): the CNI policy is on the vpc-cni
# add-on's own Pod Identity role (EksCluster), and the SSM policy only with
# ``cluster.nodeSsmAccess`` (``node_role_policies(ssm=True)``).
NODE_ROLE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
)


def node_role_policies(*, ssm: bool) -> tuple[str, ...]:
    """The node role's AWS managed policies; Session Manager's only when asked for."""
    return NODE_ROLE_POLICIES + ((SSM_NODE_POLICY,) if ssm else ())


# Upstream's policy groups, in upstream's order.
POLICY_GROUPS = (
    "NodeLifecycle",
    "IAMIntegration",
    "EKSIntegration",
    "Interruption",
    "ResourceDiscovery",
    "ZonalShift",
)


def _statement(sid: str, actions: Any, resource: Any, condition: dict | None = None) -> dict:
    out: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Resource": resource, "Action": actions}
    if condition:
        out["Condition"] = condition
    return out


def controller_policies(
    *,
    partition: str,
    region: str,
    account_id: str,
    cluster_name: str,
    node_role_arn: str,
    queue_arn: str | None,
) -> dict[str, dict]:
    """The controller's IAM documents, one per upstream managed policy, keyed by group.

    Statement for statement the v1.15 CloudFormation reference, built from the partition (never
    a literal ``arn:aws:``). Without an interruption queue the Interruption policy is left out.
    """
    ec2 = f"arn:{partition}:ec2:{region}"
    cluster_tag = f"kubernetes.io/cluster/{cluster_name}"
    profiles = f"arn:{partition}:iam::{account_id}:instance-profile/*"
    cluster_arn = f"arn:{partition}:eks:{region}:{account_id}:cluster/{cluster_name}"
    tagged_types = [
        f"{ec2}:*:{kind}/*"
        for kind in (
            "fleet",
            "instance",
            "volume",
            "network-interface",
            "launch-template",
            "spot-instances-request",
        )
    ]
    owned_resource = {
        "StringEquals": {f"aws:ResourceTag/{cluster_tag}": "owned"},
        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
    }
    owned_request = {
        f"aws:RequestTag/{cluster_tag}": "owned",
        "aws:RequestTag/eks:eks-cluster-name": cluster_name,
    }
    docs: dict[str, list[dict]] = {
        "NodeLifecycle": [
            _statement(
                "AllowScopedEC2InstanceAccessActions",
                ["ec2:RunInstances", "ec2:CreateFleet"],
                [
                    f"{ec2}::image/*",
                    f"{ec2}::snapshot/*",
                    f"{ec2}:*:security-group/*",
                    f"{ec2}:*:subnet/*",
                    f"{ec2}:*:capacity-reservation/*",
                    f"{ec2}:*:placement-group/*",
                ],
            ),
            _statement(
                "AllowScopedEC2LaunchTemplateAccessActions",
                ["ec2:RunInstances", "ec2:CreateFleet"],
                f"{ec2}:*:launch-template/*",
                owned_resource,
            ),
            _statement(
                "AllowScopedEC2InstanceActionsWithTags",
                ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
                tagged_types,
                {
                    "StringEquals": dict(owned_request),
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            ),
            _statement(
                "AllowScopedResourceCreationTagging",
                "ec2:CreateTags",
                tagged_types,
                {
                    "StringEquals": {
                        **owned_request,
                        "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                    },
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            ),
            _statement(
                "AllowScopedResourceTagging",
                "ec2:CreateTags",
                f"{ec2}:*:instance/*",
                {
                    **owned_resource,
                    "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster_name},
                    "ForAllValues:StringEquals": {
                        "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                    },
                },
            ),
            # v1.15 adds ec2:RebootInstances here (reference/cloudformation.md, v1.15 docs,
            # "AllowScopedDeletion"): node repair reboots in place with the alpha
            # awsFeatureGates.rebootForRepair (karpenter-provider-aws v1.15.0
            # pkg/providers/instance/instance.go L299-318; chart values.yaml, off by default).
            _statement(
                "AllowScopedDeletion",
                ["ec2:TerminateInstances", "ec2:RebootInstances", "ec2:DeleteLaunchTemplate"],
                [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
                owned_resource,
            ),
        ],
        "IAMIntegration": [
            _statement(
                "AllowPassingInstanceRole",
                "iam:PassRole",
                node_role_arn,
                {
                    "StringEquals": {
                        "iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]
                    }
                },
            ),
            _statement(
                "AllowScopedInstanceProfileCreationActions",
                ["iam:CreateInstanceProfile"],
                profiles,
                {
                    "StringEquals": {
                        **owned_request,
                        "aws:RequestTag/topology.kubernetes.io/region": region,
                    },
                    "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            ),
            _statement(
                "AllowScopedInstanceProfileTagActions",
                ["iam:TagInstanceProfile"],
                profiles,
                {
                    "StringEquals": {
                        f"aws:ResourceTag/{cluster_tag}": "owned",
                        "aws:ResourceTag/topology.kubernetes.io/region": region,
                        **owned_request,
                        "aws:RequestTag/topology.kubernetes.io/region": region,
                    },
                    "StringLike": {
                        "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                        "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
                    },
                },
            ),
            _statement(
                "AllowScopedInstanceProfileActions",
                [
                    "iam:AddRoleToInstanceProfile",
                    "iam:RemoveRoleFromInstanceProfile",
                    "iam:DeleteInstanceProfile",
                ],
                profiles,
                {
                    "StringEquals": {
                        f"aws:ResourceTag/{cluster_tag}": "owned",
                        "aws:ResourceTag/topology.kubernetes.io/region": region,
                    },
                    "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            ),
        ],
        "EKSIntegration": [
            _statement("AllowAPIServerEndpointDiscovery", "eks:DescribeCluster", cluster_arn)
        ],
        "Interruption": [
            _statement(
                "AllowInterruptionQueueActions",
                ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
                queue_arn,
            )
        ],
        "ResourceDiscovery": [
            _statement(
                "AllowRegionalReadActions",
                [
                    "ec2:DescribeCapacityReservations",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstances",
                    "ec2:DescribeInstanceStatus",
                    "ec2:DescribeInstanceTypeOfferings",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplates",
                    "ec2:DescribePlacementGroups",
                    "ec2:DescribeSecurityGroups",
                    "ec2:DescribeSpotPriceHistory",
                    "ec2:DescribeSubnets",
                ],
                "*",
                {"StringEquals": {"aws:RequestedRegion": region}},
            ),
            _statement(
                "AllowSSMReadActions",
                "ssm:GetParameter",
                f"arn:{partition}:ssm:{region}::parameter/aws/service/*",
            ),
            _statement("AllowPricingReadActions", "pricing:GetProducts", "*"),
            _statement("AllowUnscopedInstanceProfileListAction", "iam:ListInstanceProfiles", "*"),
            _statement("AllowInstanceProfileReadActions", "iam:GetInstanceProfile", profiles),
        ],
        "ZonalShift": [
            _statement(
                "AllowZonalShiftStatusReadOnly",
                ["arc-zonal-shift:GetManagedResource"],
                "*",
                {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}},
            )
        ],
    }
    if queue_arn is None:
        del docs["Interruption"]
    return {group: {"Version": IAM_VERSION, "Statement": stmts} for group, stmts in docs.items()}


def policy_name(group: str, cluster_name: str) -> str:
    """Upstream's managed policy name, shortened with a hash past IAM's 128 characters."""
    return bounded_name(f"KarpenterController{group}Policy-", cluster_name, IAM_POLICY_NAME_MAX)


def pod_identity_trust_policy(
    *, partition: str, region: str, account_id: str, cluster_name: str
) -> dict:
    """Trust policy of the controller role with EKS Pod Identity: ``kube-system/karpenter`` of
    this cluster in this account only (``eks_gpu_platform.iam.pod_identity_trust_policy``)."""
    return _pod_identity_trust(
        partition=partition,
        region=region,
        account_id=account_id,
        cluster_name=cluster_name,
        namespace=NAMESPACE,
        service_account=SERVICE_ACCOUNT,
    )


def irsa_trust_policy(oidc_provider_arn: str, oidc_provider_url: str) -> dict:
    """Trust policy of the controller role with IRSA, for ``kube-system/karpenter`` only."""
    issuer = oidc_provider_url.removeprefix("https://")
    return {
        "Version": IAM_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{issuer}:aud": "sts.amazonaws.com",
                        f"{issuer}:sub": f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}",
                    }
                },
            }
        ],
    }


def queue_policy(queue_arn: str, rule_arns: list[str], account_id: str) -> dict:
    """The interruption queue's policy: this stack's EventBridge rules (and SQS in this account)
    may send; no plain HTTP at all.

    Upstream (v1.14 cloudformation.yaml, KarpenterInterruptionQueuePolicy) lets
    ``events.amazonaws.com`` and ``sqs.amazonaws.com`` send with no condition. Above upstream:
    EventBridge only for the interruption rules (``aws:SourceArn``) and SQS only from this
    account (``aws:SourceAccount``), the service-principal confused-deputy conditions
    (https://docs.aws.amazon.com/IAM/latest/UserGuide/confused-deputy.html).
    """
    return {
        "Version": IAM_VERSION,
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Sid": "SqsWrite",
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": sorted(rule_arns)}},
            },
            {
                "Sid": "SqsWriteFromSqs",
                "Effect": "Allow",
                "Principal": {"Service": "sqs.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
        ],
    }
