"""Karpenter's IAM documents (``eks_gpu_platform.karpenter.iam``) against upstream (see
``upstream.py``): the controller policies, their names, the queue policy and the trust policies.
"""

import json
from typing import Any

import pytest

from eks_gpu_platform.iam import compact_json, ec2_trust_policy
from eks_gpu_platform.karpenter.iam import (
    POLICY_GROUPS,
    controller_policies,
    irsa_trust_policy,
    pod_identity_trust_policy,
    policy_name,
    queue_policy,
)
from eks_gpu_platform.naming import bounded_name

from .upstream import NODE_ROLE_ARN, QUEUE_ARN, UPSTREAM_POLICIES, UPSTREAM_SIDS, upstream_actions


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
        "ec2:RebootInstances",  # v1.15 (issue 31)
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


RULE_ARNS = [
    "arn:aws:events:us-west-2:111122223333:rule/spot-interrupt-1a2b3c",
    "arn:aws:events:us-west-2:111122223333:rule/health-event-4d5e6f",
]


def test_queue_policy():
    # Above upstream (issue 22, Low list): EventBridge only for this stack's rules, SQS only
    # from this account (upstream's statement has neither condition).
    assert queue_policy(QUEUE_ARN, RULE_ARNS, "111122223333") == {
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Sid": "SqsWrite",
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": QUEUE_ARN,
                "Condition": {"ArnEquals": {"aws:SourceArn": sorted(RULE_ARNS)}},
            },
            {
                "Sid": "SqsWriteFromSqs",
                "Effect": "Allow",
                "Principal": {"Service": "sqs.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": QUEUE_ARN,
                "Condition": {"StringEquals": {"aws:SourceAccount": "111122223333"}},
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
    # The conditions EKS documents (user guide pod-id-role.html, "Setting Conditions";
    # pod-id-abac.html, the session tags) and aws:SourceAccount (see
    # eks_gpu_platform.iam.pod_identity_trust_policy for its sources): issue 22, point 4.
    assert pod_identity_trust_policy(
        partition="aws-cn", region="cn-north-1", account_id="111122223333", cluster_name="gpu"
    ) == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowEksAuthToAssumeRoleForPodIdentity",
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {
                        "aws:SourceAccount": "111122223333",
                        "aws:RequestTag/eks-cluster-arn": (
                            "arn:aws-cn:eks:cn-north-1:111122223333:cluster/gpu"
                        ),
                        "aws:RequestTag/kubernetes-namespace": "kube-system",
                        "aws:RequestTag/kubernetes-service-account": "karpenter",
                    }
                },
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


def test_v1_15_scoped_deletion_allows_reboot_for_repair():
    """Karpenter 1.15's CloudFormation (v1.15 docs, reference/cloudformation.md, commit
    d77d1a3a5a44d7ce9c041bcc51da1e567de3f2ec, "AllowScopedDeletion") adds ec2:RebootInstances,
    scoped like the termination (issue 31, point 1); written out by hand."""
    (deletion,) = [s for s in statements(policies()) if s["Sid"] == "AllowScopedDeletion"]
    assert deletion == {
        "Sid": "AllowScopedDeletion",
        "Effect": "Allow",
        "Resource": [
            "arn:aws:ec2:us-west-2:*:instance/*",
            "arn:aws:ec2:us-west-2:*:launch-template/*",
        ],
        "Action": ["ec2:TerminateInstances", "ec2:RebootInstances", "ec2:DeleteLaunchTemplate"],
        "Condition": {
            "StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/gpu-dev": "owned"},
            "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
        },
    }
