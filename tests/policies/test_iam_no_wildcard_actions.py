import json

import pytest
from policy_baselines import IAM_POLICY, IAM_ROLE, change, iam_document, iam_policy

from eks_gpu_platform.policies.rules.iam_no_wildcard_actions import RULE

CONFIG = RULE.config()
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
READ = ("Statement", 1)


def check(resource_type, props):
    return RULE.check(resource_type, props, CONFIG)


def test_baseline_is_compliant():
    assert check(IAM_POLICY, iam_policy()) == []
    assert check(ROLE_POLICY, iam_policy()) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "*",
            'statement "AllowRegionalReadActions" allows "*"; grant the specific actions instead',
        ),
        (
            ["ec2:DescribeInstances", "ec2:*"],
            'statement "AllowRegionalReadActions" allows "ec2:*"; grant the specific actions '
            "instead",
        ),
        (
            ["*:*", "iam:*"],
            'statement "AllowRegionalReadActions" allows "*:*", "iam:*"; grant the specific '
            "actions instead",
        ),
    ],
    ids=["star", "service-star", "several"],
)
def test_wildcard_actions(value, expected):
    document = change(iam_document(), (*READ, "Action"), value)
    assert check(IAM_POLICY, iam_policy(document)) == [expected]


def test_prefix_wildcards_are_allowed():
    document = change(iam_document(), (*READ, "Action"), ["ec2:Describe*", "s3:Get*"])
    assert check(IAM_POLICY, iam_policy(document)) == []


def test_allow_with_not_action():
    document = iam_document()
    del document["Statement"][1]["Action"]
    document["Statement"][1]["NotAction"] = ["iam:*"]
    assert check(IAM_POLICY, iam_policy(document)) == [
        'statement "AllowRegionalReadActions" allows every action except "iam:*" (Allow with '
        "NotAction); list the actions instead"
    ]


def test_statement_without_sid_is_numbered():
    document = change(iam_document(), (*READ, "Action"), "*")
    del document["Statement"][1]["Sid"]
    assert check(IAM_POLICY, iam_policy(document)) == [
        'statement #2 allows "*"; grant the specific actions instead'
    ]


def test_single_statement_object():
    document = {"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "*"}}
    assert check(IAM_POLICY, iam_policy(document)) == [
        'statement #1 allows "*"; grant the specific actions instead'
    ]


def test_role_inline_policy():
    document = change(iam_document(), (*READ, "Action"), "s3:*")
    role = {
        "assumeRolePolicy": json.dumps({"Statement": []}),
        "inlinePolicies": [{"name": "extra", "policy": json.dumps(document)}],
    }
    assert check(IAM_ROLE, role) == [
        'inlinePolicies[0] ("extra"): statement "AllowRegionalReadActions" allows "s3:*"; grant '
        "the specific actions instead"
    ]


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:iam::aws:policy/AdministratorAccess",
        "arn:aws:iam::aws:policy/AmazonS3FullAccess",
        "arn:aws-cn:iam::aws:policy/PowerUserAccess",
    ],
)
def test_broad_managed_policy_attachment(arn):
    assert check(ATTACHMENT, {"policyArn": arn, "role": "node"}) == [
        f'attaches "{arn}", an AWS-managed policy that allows wildcard actions; attach a policy '
        "listing the actions needed"
    ]


def test_scoped_managed_policies_are_allowed():
    for name in (
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonSSMManagedInstanceCore",
    ):
        props = {"policyArn": f"arn:aws:iam::aws:policy/{name}", "role": "node"}
        assert check(ATTACHMENT, props) == []


def test_role_managed_policy_arns():
    role = {"managedPolicyArns": ["arn:aws:iam::aws:policy/IAMFullAccess"]}
    assert check(IAM_ROLE, role) == [
        'managedPolicyArns attaches "arn:aws:iam::aws:policy/IAMFullAccess", an AWS-managed '
        "policy that allows wildcard actions; attach a policy listing the actions needed"
    ]


def test_policy_that_is_not_a_document():
    assert check(IAM_POLICY, {"policy": 42}) == ["policy is not a JSON policy document"]
