"""Karpenter (``eks_gpu_platform.karpenter``): the IAM documents against upstream, the queue, the
rules, the chart values, and the component's children under the recording mocks.

``UPSTREAM_POLICIES`` is aws/karpenter-provider-aws
``website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml``
with ``AWS::Partition=aws``, ``AWS::Region=us-west-2``, ``AWS::AccountId=111122223333``,
``ClusterName=gpu-dev``, written out by hand: 6 managed policies, 18 statements.
"""

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from crd_validation import reference_dir
from values_check import load_defaults, unknown_keys

from eks_gpu_platform import versions
from eks_gpu_platform.config import KarpenterSpec
from eks_gpu_platform.iam import ec2_trust_policy
from eks_gpu_platform.karpenter import (
    INTERRUPTION_EVENTS,
    POLICY_GROUPS,
    Karpenter,
    KarpenterArgs,
    compact_json,
    controller_policies,
    interruption_rules,
    irsa_trust_policy,
    karpenter_values,
    pod_identity_trust_policy,
    policy_name,
    queue_policy,
)
from eks_gpu_platform.naming import bounded_name

CHART_VALUES = reference_dir() / "karpenter" / "chart-values-1.14.1.yaml"
COMPONENT = "eks-gpu-platform:index:Karpenter"

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
                "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
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


def policies(**overrides: Any) -> dict[str, dict]:
    kwargs = {
        "partition": "aws",
        "region": "us-west-2",
        "account_id": "111122223333",
        "cluster_name": "gpu-dev",
        "node_role_arn": NODE_ROLE_ARN,
        "queue_arn": QUEUE_ARN,
        **overrides,
    }
    return controller_policies(**kwargs)


def statements(documents: dict[str, dict]) -> list[dict]:
    return [s for doc in documents.values() for s in doc["Statement"]]


# --- controller policies --------------------------------------------------------------------


def test_controller_policies_match_upstream_exactly():
    assert policies() == UPSTREAM_POLICIES


def test_controller_policies_have_upstreams_18_statements_in_order():
    docs = policies()
    assert list(docs) == list(POLICY_GROUPS) == list(UPSTREAM_POLICIES)
    assert [s["Sid"] for s in statements(docs)] == UPSTREAM_SIDS
    assert [len(d["Statement"]) for d in docs.values()] == [6, 4, 1, 1, 5, 1]
    assert upstream_actions() == {
        "ec2:RunInstances",
        "ec2:CreateFleet",
        "ec2:CreateLaunchTemplate",
        "ec2:CreateTags",
        "ec2:TerminateInstances",
        "ec2:DeleteLaunchTemplate",
        "iam:PassRole",
        "iam:CreateInstanceProfile",
        "iam:TagInstanceProfile",
        "iam:AddRoleToInstanceProfile",
        "iam:RemoveRoleFromInstanceProfile",
        "iam:DeleteInstanceProfile",
        "eks:DescribeCluster",
        "sqs:DeleteMessage",
        "sqs:GetQueueUrl",
        "sqs:ReceiveMessage",
        "arc-zonal-shift:GetManagedResource",
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
        "ssm:GetParameter",
        "pricing:GetProducts",
        "iam:ListInstanceProfiles",
        "iam:GetInstanceProfile",
    }


def test_controller_policies_in_the_china_partition():
    node_role = "arn:aws-cn:iam::111122223333:role/KarpenterNodeRole-gpu-dev"
    queue = "arn:aws-cn:sqs:cn-north-1:111122223333:Karpenter-gpu-dev"
    docs = policies(
        partition="aws-cn", region="cn-north-1", node_role_arn=node_role, queue_arn=queue
    )
    text = json.dumps(UPSTREAM_POLICIES).replace("arn:aws:", "arn:aws-cn:")
    assert docs == json.loads(text.replace("us-west-2", "cn-north-1"))
    rendered = json.dumps(docs)
    assert "arn:aws:" not in rendered
    assert rendered.count("arn:aws-cn:") == json.dumps(UPSTREAM_POLICIES).count("arn:aws:")
    # The service principals stay as upstream lists them, both partitions' EC2.
    pass_role = docs["IAMIntegration"]["Statement"][0]
    assert pass_role["Condition"]["StringEquals"]["iam:PassedToService"] == [
        "ec2.amazonaws.com",
        "ec2.amazonaws.com.cn",
    ]


def test_no_interruption_policy_without_a_queue():
    docs = policies(queue_arn=None)
    assert list(docs) == [
        "NodeLifecycle",
        "IAMIntegration",
        "EKSIntegration",
        "ResourceDiscovery",
        "ZonalShift",
    ]
    assert {k: v for k, v in UPSTREAM_POLICIES.items() if k != "Interruption"} == docs
    assert not any(a.startswith("sqs:") for s in statements(docs) for a in _actions(s))


def _actions(statement: dict) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


LONG_CLUSTER = "c" * 100


def long_policies() -> dict[str, dict]:
    return policies(
        partition="aws-us-gov",
        region="us-gov-west-1",
        cluster_name=LONG_CLUSTER,
        node_role_arn="arn:aws-us-gov:iam::111122223333:role/"
        + bounded_name("KarpenterNodeRole-", LONG_CLUSTER, 64),
        queue_arn="arn:aws-us-gov:sqs:us-gov-west-1:111122223333:"
        + bounded_name("Karpenter-", LONG_CLUSTER, 80),
    )


@pytest.mark.parametrize("group", POLICY_GROUPS)
def test_every_document_fits_a_managed_policy_for_a_100_character_cluster_name(group):
    document = long_policies()[group]
    assert LONG_CLUSTER in json.dumps(document) or group in ("ResourceDiscovery", "Interruption")
    assert len(compact_json(document)) < 6144


def test_compact_json_has_no_whitespace():
    assert compact_json({"a": [1, {"b": "c d"}]}) == '{"a":[1,{"b":"c d"}]}'


def test_no_statement_grants_a_wildcard_action():
    for statement in statements(long_policies()) + statements(policies()):
        assert statement["Effect"] == "Allow"
        for action in _actions(statement):
            service, _, name = action.partition(":")
            assert service and name and "*" not in action, action


def test_pass_role_is_granted_only_on_the_node_role():
    passing = [s for s in statements(policies()) if "iam:PassRole" in _actions(s)]
    assert passing == [UPSTREAM_POLICIES["IAMIntegration"]["Statement"][0]]
    assert passing[0]["Resource"] == NODE_ROLE_ARN
    assert _actions(passing[0]) == ["iam:PassRole"]


# --- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("group", POLICY_GROUPS)
def test_policy_name_is_upstreams_for_short_cluster_names(group):
    assert policy_name(group, "gpu-dev") == f"KarpenterController{group}Policy-gpu-dev"


@pytest.mark.parametrize("group", POLICY_GROUPS)
def test_policy_name_is_bounded_stable_and_unique_for_long_cluster_names(group):
    name = policy_name(group, LONG_CLUSTER)
    assert len(name) == 128
    assert name.startswith(f"KarpenterController{group}Policy-ccc")
    assert name == policy_name(group, LONG_CLUSTER)
    other = policy_name(group, "c" * 99 + "d")
    assert other != name and len(other) == 128


@pytest.mark.parametrize(
    ("prefix", "cluster", "limit", "expected"),
    [
        ("KarpenterNodeRole-", "gpu-dev", 64, "KarpenterNodeRole-gpu-dev"),
        ("KarpenterNodeRole-", "x" * 46, 64, "KarpenterNodeRole-" + "x" * 46),
        ("Karpenter-", "gpu-dev", 80, "Karpenter-gpu-dev"),
    ],
    ids=["short", "exactly-64", "queue"],
)
def test_bounded_name_keeps_names_that_fit(prefix, cluster, limit, expected):
    assert bounded_name(prefix, cluster, limit) == expected


@pytest.mark.parametrize(
    ("prefix", "limit"),
    [("KarpenterNodeRole-", 64), ("KarpenterController-", 64), ("Karpenter-", 80)],
    ids=["node-role", "controller-role", "queue"],
)
def test_bounded_name_shortens_long_names(prefix, limit):
    name = bounded_name(prefix, LONG_CLUSTER, limit)
    assert len(name) == limit
    assert name.startswith(prefix + "c" * (limit - len(prefix) - 9) + "-")
    assert name == bounded_name(prefix, LONG_CLUSTER, limit)
    digests = {bounded_name(prefix, "c" * 99 + end, limit)[-8:] for end in "abcdefgh"}
    assert len(digests) == 8
    assert bounded_name(prefix, "x" * (limit - len(prefix) + 1), limit) != bounded_name(
        prefix, "x" * (limit - len(prefix) + 2), limit
    )


# --- queue, rules, trust policies ----------------------------------------------------------


def test_queue_policy():
    assert queue_policy(QUEUE_ARN) == {
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Sid": "SqsWrite",
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": QUEUE_ARN,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": QUEUE_ARN,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
        ],
    }


def test_interruption_rules_are_upstreams_five():
    assert interruption_rules() == {
        "ScheduledChange": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
        "SpotInterruption": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Spot Instance Interruption Warning"],
        },
        "Rebalance": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Instance Rebalance Recommendation"],
        },
        "InstanceStateChange": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Instance State-change Notification"],
        },
        "CapacityReservationInterruption": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
        },
    }
    assert len(INTERRUPTION_EVENTS) == 5


@pytest.mark.parametrize(
    ("dns_suffix", "service"),
    [("amazonaws.com", "ec2.amazonaws.com"), ("amazonaws.com.cn", "ec2.amazonaws.com.cn")],
    ids=["aws", "aws-cn"],
)
def test_node_trust_policy(dns_suffix, service):
    assert ec2_trust_policy(dns_suffix) == {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
        ],
    }


def test_pod_identity_trust_policy():
    assert pod_identity_trust_policy() == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
        ],
    }


OIDC_ARN = (
    "arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E"
)
OIDC_URL = "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E"
OIDC_ISSUER = "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E"


@pytest.mark.parametrize("url", [OIDC_URL, OIDC_ISSUER], ids=["https-url", "bare-issuer"])
def test_irsa_trust_policy(url):
    assert irsa_trust_policy(OIDC_ARN, url) == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": OIDC_ARN},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{OIDC_ISSUER}:aud": "sts.amazonaws.com",
                        f"{OIDC_ISSUER}:sub": "system:serviceaccount:kube-system:karpenter",
                    }
                },
            }
        ],
    }


# --- chart values ---------------------------------------------------------------------------

SYSTEM_SELECTOR = {"eks-gpu-platform.io/system": "true"}
SYSTEM_TOLERATIONS = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
DEFAULT_GATES = {
    "nodeRepair": False,
    "nodeOverlay": False,
    "reservedCapacity": True,
    "spotToSpotConsolidation": False,
    "staticCapacity": False,
    "capacityBuffer": False,
}


def test_karpenter_values_pod_identity():
    values = karpenter_values(
        cluster_name="gpu-dev",
        queue_name="Karpenter-gpu-dev",
        spec=KarpenterSpec(),
        node_selector=SYSTEM_SELECTOR,
        tolerations=SYSTEM_TOLERATIONS,
    )
    assert values == {
        "settings": {
            "clusterName": "gpu-dev",
            "interruptionQueue": "Karpenter-gpu-dev",
            "featureGates": DEFAULT_GATES,
        },
        "serviceAccount": {"create": True, "name": "karpenter"},
        "replicas": 2,
        "podDisruptionBudget": {"name": "karpenter", "maxUnavailable": 1},
        "controller": {
            "resources": {
                "requests": {"cpu": "1", "memory": "1Gi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            }
        },
        "nodeSelector": {"kubernetes.io/os": "linux", "eks-gpu-platform.io/system": "true"},
        "tolerations": SYSTEM_TOLERATIONS,
        "logLevel": "info",
    }


def test_karpenter_values_irsa_without_queue_with_gates():
    values = karpenter_values(
        cluster_name="gpu-dev",
        queue_name=None,
        spec=KarpenterSpec(
            auth="irsa",
            interruption_handling=False,
            replicas=3,
            cpu="500m",
            memory="2Gi",
            log_level="debug",
        ),
        node_selector={},
        tolerations=[],
        feature_gates={"nodeOverlay": True},
        irsa_role_arn="arn:aws:iam::111122223333:role/KarpenterController-gpu-dev",
    )
    assert values == {
        "settings": {
            "clusterName": "gpu-dev",
            "interruptionQueue": "",
            "featureGates": {**DEFAULT_GATES, "nodeOverlay": True},
        },
        "serviceAccount": {
            "create": True,
            "name": "karpenter",
            "annotations": {
                "eks.amazonaws.com/role-arn": (
                    "arn:aws:iam::111122223333:role/KarpenterController-gpu-dev"
                )
            },
        },
        "replicas": 3,
        "podDisruptionBudget": {"name": "karpenter", "maxUnavailable": 1},
        "controller": {
            "resources": {
                "requests": {"cpu": "500m", "memory": "2Gi"},
                "limits": {"cpu": "500m", "memory": "2Gi"},
            }
        },
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [],
        "logLevel": "debug",
    }


@pytest.fixture(scope="module")
def chart_defaults() -> dict:
    return load_defaults(CHART_VALUES)


def test_chart_defaults_are_the_pinned_version(chart_defaults):
    assert chart_defaults["controller"]["image"]["tag"] == versions.KARPENTER_VERSION == "1.14.1"
    assert chart_defaults["settings"]["featureGates"] == DEFAULT_GATES


def test_unknown_keys_walk(chart_defaults):
    values = {
        "settings": {"clusterName": "x", "clusterNmae": "y", "featureGates": {"nodeRepare": True}},
        "webhook": {"enabled": False},
        "controller": {"resources": {"anything": 1}, "imag": {}},
        "serviceAccount": {"annotations": {"any/key": "v"}},
        "nodeSelector": {"my/label": "x"},
        "tolerations": [{"not": "checked"}],
    }
    assert unknown_keys(values, chart_defaults) == [
        "settings.clusterNmae",
        "settings.featureGates.nodeRepare",
        "webhook",
        "controller.imag",
    ]


@pytest.mark.parametrize(
    "spec",
    [KarpenterSpec(), KarpenterSpec(auth="irsa", interruption_handling=False)],
    ids=["pod-identity", "irsa"],
)
def test_every_value_key_exists_in_the_chart(chart_defaults, spec):
    values = karpenter_values(
        cluster_name="gpu-dev",
        queue_name="Karpenter-gpu-dev",
        spec=spec,
        node_selector=SYSTEM_SELECTOR,
        tolerations=SYSTEM_TOLERATIONS,
        feature_gates={"nodeOverlay": True},
        irsa_role_arn="arn:aws:iam::111122223333:role/x" if spec.auth == "irsa" else None,
    )
    assert unknown_keys(values, chart_defaults) == []


# --- component ------------------------------------------------------------------------------

OIDC_MOCK_ARN = (
    "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABCDEF0123"
)
OIDC_MOCK_URL = "https://oidc.eks.us-west-2.amazonaws.com/id/ABCDEF0123"
NODE_POLICIES = (
    "AmazonEKS_CNI_Policy",
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
)


def karpenter(run_program, spec: KarpenterSpec, *, region="us-west-2", partition="aws"):
    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        # Stands for the system node group the chart's pods need (KarpenterArgs.depends_on).
        nodes = k8s.core.v1.ConfigMap(
            "system-nodes", opts=pulumi.ResourceOptions(provider=provider)
        )
        Karpenter(
            "k",
            KarpenterArgs(
                spec=spec,
                cluster_name="gpu-dev",
                cluster="gpu-dev",
                oidc_provider_arn=OIDC_MOCK_ARN,
                oidc_provider_url=OIDC_MOCK_URL,
                k8s_provider=provider,
                node_selector=SYSTEM_SELECTOR,
                tolerations=SYSTEM_TOLERATIONS,
                depends_on=[nodes],
                tags={"team": "ml"},
            ),
        )

    return run_program(program, region=region, partition=partition)


def find(recording, typ: str, name: str):
    matches = [r for r in recording.resources if r.type == typ and r.name == name]
    assert len(matches) == 1, (typ, name, len(matches))
    return matches[0]


def expected_children(
    *, pod_identity: bool, interruption: bool, spot: bool
) -> list[tuple[str, str]]:
    out = [
        ("aws:iam/role:Role", "k-node"),
        *[
            ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-node-{p}")
            for p in NODE_POLICIES
        ],
        ("aws:eks/accessEntry:AccessEntry", "k-node"),
        ("aws:iam/role:Role", "k-controller"),
        ("kubernetes:helm.sh/v3:Release", "k-crd"),
        ("kubernetes:helm.sh/v3:Release", "k-chart"),
    ]
    for group in POLICY_GROUPS:
        if group == "Interruption" and not interruption:
            continue
        out += [
            ("aws:iam/policy:Policy", f"k-{group}"),
            ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-{group}"),
        ]
    if interruption:
        out += [
            ("aws:sqs/queue:Queue", "k-interruption"),
            ("aws:sqs/queuePolicy:QueuePolicy", "k-interruption"),
        ]
        for key in INTERRUPTION_EVENTS:
            out += [
                ("aws:cloudwatch/eventRule:EventRule", f"k-{key}"),
                ("aws:cloudwatch/eventTarget:EventTarget", f"k-{key}"),
            ]
    if pod_identity:
        out.append(("aws:eks/podIdentityAssociation:PodIdentityAssociation", "k-controller"))
    if spot:
        out.append(("aws:iam/serviceLinkedRole:ServiceLinkedRole", "k-spot"))
    return sorted(out)


VARIANTS = [
    pytest.param(KarpenterSpec(), True, True, False, 34, id="pod-identity"),
    pytest.param(KarpenterSpec(auth="irsa"), False, True, False, 33, id="irsa"),
    pytest.param(
        KarpenterSpec(interruption_handling=False), True, False, False, 20, id="no-interruption"
    ),
    pytest.param(
        KarpenterSpec(auth="irsa", interruption_handling=False),
        False,
        False,
        False,
        19,
        id="irsa-no-interruption",
    ),
    pytest.param(KarpenterSpec(spot_service_linked_role=True), True, True, True, 35, id="spot-slr"),
]


@pytest.mark.parametrize(("spec", "pod_identity", "interruption", "spot", "count"), VARIANTS)
def test_children(run_program, spec, pod_identity, interruption, spot, count):
    rec = karpenter(run_program, spec)
    (component,) = rec.of_type(COMPONENT)
    assert component.name == "k"
    children = rec.children_of(component.urn)
    assert len(children) == count
    assert sorted((c.type, c.name) for c in children) == expected_children(
        pod_identity=pod_identity, interruption=interruption, spot=spot
    )
    # Nothing else: the program's provider and system-nodes stand-in, the component and its
    # direct children.
    assert len(rec.resources) == count + 3


@pytest.mark.parametrize(("spec", "pod_identity", "interruption", "spot", "count"), VARIANTS)
def test_access_entry_waits_for_the_queue_policy(
    run_program, spec, pod_identity, interruption, spot, count
):
    rec = karpenter(run_program, spec)
    entry = find(rec, "aws:eks/accessEntry:AccessEntry", "k-node")
    node_role = find(rec, "aws:iam/role:Role", "k-node")
    assert entry.inputs == {
        "clusterName": "gpu-dev",
        "principalArn": node_role.outputs["arn"],
        "type": "EC2_LINUX",
        "tags": {"team": "ml"},
    }
    queue_policies = rec.of_type("aws:sqs/queuePolicy:QueuePolicy")
    assert len(queue_policies) == (1 if interruption else 0)
    for qp in queue_policies:
        assert qp.urn in entry.dependencies


@pytest.mark.parametrize(("spec", "pod_identity", "interruption", "spot", "count"), VARIANTS)
def test_chart_release_waits_for_crds_permissions_and_identity(
    run_program, spec, pod_identity, interruption, spot, count
):
    rec = karpenter(run_program, spec)
    chart = find(rec, "kubernetes:helm.sh/v3:Release", "k-chart")
    crd = find(rec, "kubernetes:helm.sh/v3:Release", "k-crd")
    controller = find(rec, "aws:iam/role:Role", "k-controller")
    attachments = [
        find(rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-{group}")
        for group in POLICY_GROUPS
        if group != "Interruption" or interruption
    ]
    assert crd.urn in chart.dependencies
    for attachment in attachments:
        assert attachment.urn in chart.dependencies
        assert attachment.inputs["role"] == controller.outputs["name"]
    associations = rec.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert len(associations) == (1 if pod_identity else 0)
    for association in associations:
        assert association.urn in chart.dependencies
        assert association.inputs == {
            "clusterName": "gpu-dev",
            "namespace": "kube-system",
            "serviceAccount": "karpenter",
            "roleArn": controller.outputs["arn"],
            "tags": {"team": "ml"},
        }
    provider = find(rec, "pulumi:providers:kubernetes", "k8s")
    assert chart.provider == crd.provider == f"{provider.urn}::{provider.id}"

    assert crd.inputs == {
        "name": "karpenter-crd",
        "chart": "oci://public.ecr.aws/karpenter/karpenter-crd",
        "version": "1.14.1",
        "namespace": "kube-system",
        "compat": "true",
    }
    values = chart.inputs.pop("values")
    assert chart.inputs == {
        "name": "karpenter",
        "chart": "oci://public.ecr.aws/karpenter/karpenter",
        "version": "1.14.1",
        "namespace": "kube-system",
        "skipCrds": True,
        "compat": "true",
    }
    queues = rec.of_type("aws:sqs/queue:Queue")
    assert values == karpenter_values(
        cluster_name="gpu-dev",
        queue_name=queues[0].outputs["name"] if queues else None,
        spec=spec,
        node_selector=SYSTEM_SELECTOR,
        tolerations=SYSTEM_TOLERATIONS,
        irsa_role_arn=None if pod_identity else controller.outputs["arn"],
    )
    assert values["settings"]["interruptionQueue"] == ("Karpenter-gpu-dev" if interruption else "")


def test_interruption_queue_rules_and_policies(run_program):
    rec = karpenter(run_program, KarpenterSpec())
    queue = find(rec, "aws:sqs/queue:Queue", "k-interruption")
    assert queue.inputs == {
        "name": "Karpenter-gpu-dev",
        "messageRetentionSeconds": 300,
        "sqsManagedSseEnabled": True,
        "tags": {"team": "ml"},
    }
    queue_arn = queue.outputs["arn"]
    assert queue_arn == "arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-dev"
    qp = find(rec, "aws:sqs/queuePolicy:QueuePolicy", "k-interruption")
    assert qp.inputs["queueUrl"] == queue.outputs["url"] == queue.id
    assert json.loads(qp.inputs["policy"]) == queue_policy(queue_arn)
    for key, pattern in interruption_rules().items():
        rule = find(rec, "aws:cloudwatch/eventRule:EventRule", f"k-{key}")
        assert json.loads(rule.inputs["eventPattern"]) == pattern
        target = find(rec, "aws:cloudwatch/eventTarget:EventTarget", f"k-{key}")
        assert target.inputs == {
            "rule": rule.outputs["name"],
            "arn": queue_arn,
            "targetId": "KarpenterInterruptionQueueTarget",
        }

    node_role = find(rec, "aws:iam/role:Role", "k-node")
    expected = controller_policies(
        partition="aws",
        region="us-west-2",
        account_id="123456789012",
        cluster_name="gpu-dev",
        node_role_arn=node_role.outputs["arn"],
        queue_arn=queue_arn,
    )
    controller = find(rec, "aws:iam/role:Role", "k-controller")
    for group in POLICY_GROUPS:
        policy = find(rec, "aws:iam/policy:Policy", f"k-{group}")
        assert policy.inputs["name"] == f"KarpenterController{group}Policy-gpu-dev"
        assert policy.inputs["path"] == "/"
        assert policy.inputs["policy"] == compact_json(expected[group])
        attachment = find(rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-{group}")
        assert attachment.inputs == {
            "role": controller.outputs["name"],
            "policyArn": policy.outputs["arn"],
        }


@pytest.mark.parametrize(
    ("region", "partition", "suffix"),
    [("us-west-2", "aws", "amazonaws.com"), ("cn-north-1", "aws-cn", "amazonaws.com.cn")],
    ids=["aws", "aws-cn"],
)
def test_roles_follow_the_partition(run_program, region, partition, suffix):
    rec = karpenter(run_program, KarpenterSpec(), region=region, partition=partition)
    node_role = find(rec, "aws:iam/role:Role", "k-node")
    assert node_role.inputs == {
        "name": "KarpenterNodeRole-gpu-dev",
        "path": "/",
        "description": "Nodes launched by Karpenter in EKS cluster gpu-dev",
        "assumeRolePolicy": json.dumps(ec2_trust_policy(suffix)),
        "tags": {"team": "ml"},
    }
    for policy in NODE_POLICIES:
        attachment = find(
            rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-node-{policy}"
        )
        assert attachment.inputs == {
            "role": "KarpenterNodeRole-gpu-dev",
            "policyArn": f"arn:{partition}:iam::aws:policy/{policy}",
        }
    documents = [json.loads(p.inputs["policy"]) for p in rec.of_type("aws:iam/policy:Policy")]
    text = json.dumps(documents)
    assert f"arn:{partition}:ec2:{region}:*:instance/*" in text
    other = "arn:aws-cn:" if partition == "aws" else "arn:aws:"
    assert other not in text


@pytest.mark.parametrize("auth", ["podIdentity", "irsa"])
def test_controller_role_trust(run_program, auth):
    rec = karpenter(run_program, KarpenterSpec(auth=auth))
    controller = find(rec, "aws:iam/role:Role", "k-controller")
    trust = (
        pod_identity_trust_policy()
        if auth == "podIdentity"
        else irsa_trust_policy(OIDC_MOCK_ARN, OIDC_MOCK_URL)
    )
    assert controller.inputs == {
        "name": "KarpenterController-gpu-dev",
        "path": "/",
        "description": "Karpenter controller of EKS cluster gpu-dev",
        "assumeRolePolicy": json.dumps(trust),
        "tags": {"team": "ml"},
    }


def test_spot_service_linked_role(run_program):
    rec = karpenter(run_program, KarpenterSpec(spot_service_linked_role=True))
    slr = find(rec, "aws:iam/serviceLinkedRole:ServiceLinkedRole", "k-spot")
    assert slr.inputs == {"awsServiceName": "spot.amazonaws.com"}


def test_registered_outputs(run_program):
    rec = karpenter(run_program, KarpenterSpec())
    (component,) = rec.of_type(COMPONENT)
    assert component.registered_outputs == {
        "node_role_name": "KarpenterNodeRole-gpu-dev",
        "node_role_arn": "arn:aws:iam::123456789012:role/KarpenterNodeRole-gpu-dev",
        "controller_role_arn": "arn:aws:iam::123456789012:role/KarpenterController-gpu-dev",
        "queue_name": "Karpenter-gpu-dev",
        "queue_arn": "arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-dev",
        "release_name": "karpenter",
    }


def test_registered_outputs_without_a_queue(run_program):
    rec = karpenter(run_program, KarpenterSpec(interruption_handling=False))
    (component,) = rec.of_type(COMPONENT)
    assert component.registered_outputs["queue_name"] == ""
    assert component.registered_outputs["queue_arn"] == ""
