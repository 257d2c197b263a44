"""Upstream's controller policies, the reference ``karpenter/test_iam.py`` and ``test_render.py``
check the IAM documents against.

``UPSTREAM_POLICIES`` is aws/karpenter-provider-aws
``website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml``
moved to v1.15 (``website/content/en/v1.15/reference/cloudformation.md`` at commit
d77d1a3a5a44d7ce9c041bcc51da1e567de3f2ec, which quotes each statement of the v1.15 template: the
one change from v1.14 is ``ec2:RebootInstances`` in ``AllowScopedDeletion``)
with ``AWS::Partition=aws``, ``AWS::Region=us-west-2``, ``AWS::AccountId=111122223333``,
``ClusterName=gpu-dev``, written out by hand: 6 managed policies, 18 statements.
"""

from typing import Any

NODE_ROLE_ARN = "arn:aws:iam::111122223333:role/KarpenterNodeRole-gpu-dev"
QUEUE_ARN = "arn:aws:sqs:us-west-2:111122223333:Karpenter-gpu-dev"
EC2 = "arn:aws:ec2:us-west-2"
PROFILES = "arn:aws:iam::111122223333:instance-profile/*"
CLUSTER_ARN = "arn:aws:eks:us-west-2:111122223333:cluster/gpu-dev"
TAGGED = [
    f"{EC2}:*:fleet/*",
    f"{EC2}:*:instance/*",
    f"{EC2}:*:volume/*",
    f"{EC2}:*:network-interface/*",
    f"{EC2}:*:launch-template/*",
    f"{EC2}:*:spot-instances-request/*",
]

UPSTREAM_POLICIES: dict[str, dict[str, Any]] = {
    "NodeLifecycle": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowScopedEC2InstanceAccessActions",
                "Effect": "Allow",
                "Resource": [
                    "arn:aws:ec2:us-west-2::image/*",
                    "arn:aws:ec2:us-west-2::snapshot/*",
                    "arn:aws:ec2:us-west-2:*:security-group/*",
                    "arn:aws:ec2:us-west-2:*:subnet/*",
                    "arn:aws:ec2:us-west-2:*:capacity-reservation/*",
                    "arn:aws:ec2:us-west-2:*:placement-group/*",
                ],
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            },
            {
                "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
                "Effect": "Allow",
                "Resource": "arn:aws:ec2:us-west-2:*:launch-template/*",
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
                "Condition": {
                    "StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/gpu-dev": "owned"},
                    "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedEC2InstanceActionsWithTags",
                "Effect": "Allow",
                "Resource": [
                    "arn:aws:ec2:us-west-2:*:fleet/*",
                    "arn:aws:ec2:us-west-2:*:instance/*",
                    "arn:aws:ec2:us-west-2:*:volume/*",
                    "arn:aws:ec2:us-west-2:*:network-interface/*",
                    "arn:aws:ec2:us-west-2:*:launch-template/*",
                    "arn:aws:ec2:us-west-2:*:spot-instances-request/*",
                ],
                "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
                "Condition": {
                    "StringEquals": {
                        "aws:RequestTag/kubernetes.io/cluster/gpu-dev": "owned",
                        "aws:RequestTag/eks:eks-cluster-name": "gpu-dev",
                    },
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedResourceCreationTagging",
                "Effect": "Allow",
                "Resource": [
                    "arn:aws:ec2:us-west-2:*:fleet/*",
                    "arn:aws:ec2:us-west-2:*:instance/*",
                    "arn:aws:ec2:us-west-2:*:volume/*",
                    "arn:aws:ec2:us-west-2:*:network-interface/*",
                    "arn:aws:ec2:us-west-2:*:launch-template/*",
                    "arn:aws:ec2:us-west-2:*:spot-instances-request/*",
                ],
                "Action": "ec2:CreateTags",
                "Condition": {
                    "StringEquals": {
                        "aws:RequestTag/kubernetes.io/cluster/gpu-dev": "owned",
                        "aws:RequestTag/eks:eks-cluster-name": "gpu-dev",
                        "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                    },
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedResourceTagging",
                "Effect": "Allow",
                "Resource": "arn:aws:ec2:us-west-2:*:instance/*",
                "Action": "ec2:CreateTags",
                "Condition": {
                    "StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/gpu-dev": "owned"},
                    "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                    "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": "gpu-dev"},
                    "ForAllValues:StringEquals": {
                        "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                    },
                },
            },
            {
                "Sid": "AllowScopedDeletion",
                "Effect": "Allow",
                "Resource": [
                    "arn:aws:ec2:us-west-2:*:instance/*",
                    "arn:aws:ec2:us-west-2:*:launch-template/*",
                ],
                # Added in v1.15 (the v1.15 CloudFormation's AllowScopedDeletion).
                "Action": [
                    "ec2:TerminateInstances",
                    "ec2:RebootInstances",
                    "ec2:DeleteLaunchTemplate",
                ],
                "Condition": {
                    "StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/gpu-dev": "owned"},
                    "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                },
            },
        ],
    },
    "IAMIntegration": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowPassingInstanceRole",
                "Effect": "Allow",
                "Resource": "arn:aws:iam::111122223333:role/KarpenterNodeRole-gpu-dev",
                "Action": "iam:PassRole",
                "Condition": {
                    "StringEquals": {
                        "iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]
                    }
                },
            },
            {
                "Sid": "AllowScopedInstanceProfileCreationActions",
                "Effect": "Allow",
                "Resource": "arn:aws:iam::111122223333:instance-profile/*",
                "Action": ["iam:CreateInstanceProfile"],
                "Condition": {
                    "StringEquals": {
                        "aws:RequestTag/kubernetes.io/cluster/gpu-dev": "owned",
                        "aws:RequestTag/eks:eks-cluster-name": "gpu-dev",
                        "aws:RequestTag/topology.kubernetes.io/region": "us-west-2",
                    },
                    "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            },
            {
                "Sid": "AllowScopedInstanceProfileTagActions",
                "Effect": "Allow",
                "Resource": "arn:aws:iam::111122223333:instance-profile/*",
                "Action": ["iam:TagInstanceProfile"],
                "Condition": {
                    "StringEquals": {
                        "aws:ResourceTag/kubernetes.io/cluster/gpu-dev": "owned",
                        "aws:ResourceTag/topology.kubernetes.io/region": "us-west-2",
                        "aws:RequestTag/kubernetes.io/cluster/gpu-dev": "owned",
                        "aws:RequestTag/eks:eks-cluster-name": "gpu-dev",
                        "aws:RequestTag/topology.kubernetes.io/region": "us-west-2",
                    },
                    "StringLike": {
                        "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                        "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
                    },
                },
            },
            {
                "Sid": "AllowScopedInstanceProfileActions",
                "Effect": "Allow",
                "Resource": "arn:aws:iam::111122223333:instance-profile/*",
                "Action": [
                    "iam:AddRoleToInstanceProfile",
                    "iam:RemoveRoleFromInstanceProfile",
                    "iam:DeleteInstanceProfile",
                ],
                "Condition": {
                    "StringEquals": {
                        "aws:ResourceTag/kubernetes.io/cluster/gpu-dev": "owned",
                        "aws:ResourceTag/topology.kubernetes.io/region": "us-west-2",
                    },
                    "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            },
        ],
    },
    "EKSIntegration": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowAPIServerEndpointDiscovery",
                "Effect": "Allow",
                "Resource": "arn:aws:eks:us-west-2:111122223333:cluster/gpu-dev",
                "Action": "eks:DescribeCluster",
            }
        ],
    },
    "Interruption": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowInterruptionQueueActions",
                "Effect": "Allow",
                "Resource": "arn:aws:sqs:us-west-2:111122223333:Karpenter-gpu-dev",
                "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
            }
        ],
    },
    "ResourceDiscovery": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowRegionalReadActions",
                "Effect": "Allow",
                "Resource": "*",
                "Action": [
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
                "Condition": {"StringEquals": {"aws:RequestedRegion": "us-west-2"}},
            },
            {
                "Sid": "AllowSSMReadActions",
                "Effect": "Allow",
                "Resource": "arn:aws:ssm:us-west-2::parameter/aws/service/*",
                "Action": "ssm:GetParameter",
            },
            {
                "Sid": "AllowPricingReadActions",
                "Effect": "Allow",
                "Resource": "*",
                "Action": "pricing:GetProducts",
            },
            {
                "Sid": "AllowUnscopedInstanceProfileListAction",
                "Effect": "Allow",
                "Resource": "*",
                "Action": "iam:ListInstanceProfiles",
            },
            {
                "Sid": "AllowInstanceProfileReadActions",
                "Effect": "Allow",
                "Resource": "arn:aws:iam::111122223333:instance-profile/*",
                "Action": "iam:GetInstanceProfile",
            },
        ],
    },
    "ZonalShift": {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowZonalShiftStatusReadOnly",
                "Effect": "Allow",
                "Resource": "*",
                "Action": ["arc-zonal-shift:GetManagedResource"],
                "Condition": {
                    "StringEquals": {
                        "arc-zonal-shift:ResourceIdentifier": (
                            "arn:aws:eks:us-west-2:111122223333:cluster/gpu-dev"
                        )
                    }
                },
            }
        ],
    },
}

# Upstream's 18 Sids, in upstream's order.
UPSTREAM_SIDS = [
    "AllowScopedEC2InstanceAccessActions",
    "AllowScopedEC2LaunchTemplateAccessActions",
    "AllowScopedEC2InstanceActionsWithTags",
    "AllowScopedResourceCreationTagging",
    "AllowScopedResourceTagging",
    "AllowScopedDeletion",
    "AllowPassingInstanceRole",
    "AllowScopedInstanceProfileCreationActions",
    "AllowScopedInstanceProfileTagActions",
    "AllowScopedInstanceProfileActions",
    "AllowAPIServerEndpointDiscovery",
    "AllowInterruptionQueueActions",
    "AllowRegionalReadActions",
    "AllowSSMReadActions",
    "AllowPricingReadActions",
    "AllowUnscopedInstanceProfileListAction",
    "AllowInstanceProfileReadActions",
    "AllowZonalShiftStatusReadOnly",
]


def upstream_actions() -> set[str]:
    """Every action upstream grants (a test in test_render.py checks the rendered files)."""
    out: set[str] = set()
    for doc in UPSTREAM_POLICIES.values():
        for statement in doc["Statement"]:
            action = statement["Action"]
            out.update([action] if isinstance(action, str) else action)
    return out
