"""``iam-trust-policy-scoped`` (issue 22, point 4 and the Low list): one compliant trust per
principal kind, each case changing one thing, with the exact message."""

import json

import pytest

from eks_gpu_platform.iam import ec2_trust_policy, pod_identity_trust_policy
from eks_gpu_platform.karpenter.iam import irsa_trust_policy
from eks_gpu_platform.policies.rules.iam_trust_policy_scoped import RULE, check

CONFIG = RULE.config()
OIDC_ARN = "arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"
OIDC_URL = "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"
ISSUER = "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"


def pod_identity() -> dict:
    return pod_identity_trust_policy(
        partition="aws",
        region="us-west-2",
        account_id="111122223333",
        cluster_name="gpu-dev",
        namespace="kube-system",
        service_account="karpenter",
    )


def role(document: dict) -> dict:
    return {"name": "r", "assumeRolePolicy": json.dumps(document)}


@pytest.mark.parametrize(
    "document",
    [pod_identity(), irsa_trust_policy(OIDC_ARN, OIDC_URL), ec2_trust_policy("amazonaws.com")],
    ids=["pod-identity", "irsa", "ec2"],
)
def test_the_platforms_trusts_are_compliant(document):
    assert check(role(document), CONFIG) == []


def test_a_role_without_a_trust_document_is_not_checked():
    assert check({"name": "r"}, CONFIG) == []


@pytest.mark.parametrize(
    ("drop", "missing"),
    [
        ("aws:RequestTag/kubernetes-namespace", "aws:RequestTag/kubernetes-namespace"),
        (
            "aws:RequestTag/eks-cluster-arn",
            "aws:RequestTag/eks-cluster-arn or aws:RequestTag/eks-cluster-name",
        ),
    ],
)
def test_pod_identity_without_one_of_its_pins(drop, missing):
    document = pod_identity()
    del document["Statement"][0]["Condition"]["StringEquals"][drop]
    assert check(role(document), CONFIG) == [
        'assumeRolePolicy statement "AllowEksAuthToAssumeRoleForPodIdentity" trusts '
        f"pods.eks.amazonaws.com without pinning {missing} (StringEquals): any Pod Identity "
        "association in the account, on any cluster, can hand the role to any pod"
    ]


def test_a_wildcard_service_account_is_no_pin():
    document = pod_identity()
    conditions = document["Statement"][0]["Condition"]["StringEquals"]
    conditions["aws:RequestTag/kubernetes-service-account"] = "*"
    assert check(role(document), CONFIG) == [
        'assumeRolePolicy statement "AllowEksAuthToAssumeRoleForPodIdentity" trusts '
        "pods.eks.amazonaws.com without pinning aws:RequestTag/kubernetes-service-account "
        "(StringEquals): any Pod Identity association in the account, on any cluster, can hand "
        "the role to any pod"
    ]


def test_irsa_without_the_subject():
    document = irsa_trust_policy(OIDC_ARN, OIDC_URL)
    del document["Statement"][0]["Condition"]["StringEquals"][f"{ISSUER}:sub"]
    assert check(role(document), CONFIG) == [
        f"assumeRolePolicy statement #1 trusts web identities of {OIDC_ARN} without pinning "
        f"{ISSUER}:sub: any service account (or token audience) of that issuer may assume the "
        "role"
    ]


@pytest.mark.parametrize(
    "principal", ["*", {"AWS": "*"}, {"AWS": ["arn:aws:iam::111122223333:role/Ops", "*"]}]
)
def test_anyone(principal):
    document = ec2_trust_policy("amazonaws.com")
    document["Statement"][0]["Principal"] = principal
    assert check(role(document), CONFIG) == [
        'assumeRolePolicy statement #1 trusts Principal "*": anyone in any AWS account may '
        "assume the role; name the account, role or service that needs it"
    ]


def test_a_deny_statement_is_not_a_trust():
    document = ec2_trust_policy("amazonaws.com")
    document["Statement"].append({"Effect": "Deny", "Principal": "*", "Action": "sts:AssumeRole"})
    assert check(role(document), CONFIG) == []


# Review 2026-11-27, L7: a foreign account's root in a role trust passed the rule.
@pytest.mark.parametrize(
    "principal",
    ["arn:aws:iam::999999999999:root", "999999999999", "arn:aws-us-gov:iam::999999999999:root"],
)
def test_a_whole_account_is_refused(principal):
    document = ec2_trust_policy("amazonaws.com")
    document["Statement"][0]["Principal"] = {"AWS": principal}
    assert check(role(document), CONFIG) == [
        f"assumeRolePolicy statement #1 trusts the whole account '{principal}': every "
        "principal that account allows may assume the role; name the role that needs it, or "
        "list the account in the rule's trustedAccounts (now none)"
    ]


def test_a_trusted_account_and_a_named_role_pass():
    document = ec2_trust_policy("amazonaws.com")
    document["Statement"][0]["Principal"] = {
        "AWS": ["arn:aws:iam::111122223333:root", "arn:aws:iam::999999999999:role/Deployer"]
    }
    config = RULE.config({"trustedAccounts": ["111122223333"]})
    assert check(role(document), config) == []
    assert check(role(document), CONFIG) == [
        "assumeRolePolicy statement #1 trusts the whole account "
        "'arn:aws:iam::111122223333:root': every principal that account allows may assume the "
        "role; name the role that needs it, or list the account in the rule's trustedAccounts "
        "(now none)"
    ]
