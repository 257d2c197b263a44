import pytest
from policy_baselines import IAM_POLICY, change, iam_document, iam_policy

from eks_gpu_platform.policies.rules.iam_no_passrole_wildcard import RULE

CONFIG = RULE.config()
PASS = ("Statement", 0)


def check(props):
    return RULE.check(IAM_POLICY, props, CONFIG)


def test_baseline_is_compliant():
    assert check(iam_policy()) == []


def test_path_scoped_roles_are_allowed():
    document = change(iam_document(), (*PASS, "Resource"), "arn:aws:iam::123456789012:role/nodes/*")
    assert check(iam_policy(document)) == []


@pytest.mark.parametrize(
    ("action", "resource", "expected"),
    [
        (
            "iam:PassRole",
            "*",
            'statement "AllowPassingInstanceRole" allows iam:PassRole on "*"; scope Resource to '
            "the roles it must pass",
        ),
        (
            "iam:PassRole",
            "arn:aws:iam::123456789012:role/*",
            'statement "AllowPassingInstanceRole" allows iam:PassRole on '
            '"arn:aws:iam::123456789012:role/*"; scope Resource to the roles it must pass',
        ),
        (
            "iam:Pass*",
            "arn:aws:iam::*:*",
            'statement "AllowPassingInstanceRole" allows iam:PassRole (via "iam:Pass*") on '
            '"arn:aws:iam::*:*"; scope Resource to the roles it must pass',
        ),
        (
            "IAM:passrole",
            ["arn:aws:iam::123456789012:role/KarpenterNodeRole-gpu-test", "*"],
            'statement "AllowPassingInstanceRole" allows iam:PassRole (via "IAM:passrole") on '
            '"*"; scope Resource to the roles it must pass',
        ),
    ],
    ids=["star", "any-role-of-account", "action-wildcard", "case-insensitive"],
)
def test_passrole_on_any_role(action, resource, expected):
    document = change(iam_document(), (*PASS, "Action"), action)
    change(document, (*PASS, "Resource"), resource)
    assert check(iam_policy(document)) == [expected]


def test_not_resource():
    document = iam_document()
    statement = document["Statement"][0]
    statement["NotResource"] = statement.pop("Resource")
    assert check(iam_policy(document)) == [
        'statement "AllowPassingInstanceRole" allows iam:PassRole with NotResource, i.e. on every '
        "other role; scope Resource to the roles it must pass"
    ]


def test_not_action_that_keeps_passrole():
    document = iam_document()
    statement = document["Statement"][1]
    statement["NotAction"] = ["s3:*"]
    del statement["Action"]
    assert check(iam_policy(document)) == [
        'statement "AllowRegionalReadActions" allows iam:PassRole (via "NotAction") on "*"; '
        "scope Resource to the roles it must pass"
    ]


def test_deny_statements_are_ignored():
    document = change(iam_document(), (*PASS, "Effect"), "Deny")
    assert check(iam_policy(change(document, (*PASS, "Resource"), "*"))) == []
