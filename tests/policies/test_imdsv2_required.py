import pytest
from policy_baselines import DELETE, change, ec2nodeclass, launch_template

from eks_gpu_platform.policies.rules.imdsv2_required import (
    RULE,
    check_ec2nodeclass,
    check_launch_template,
)

CONFIG = RULE.config()
OPTIONS = ("spec", "metadataOptions")


def test_baselines_are_compliant():
    assert check_ec2nodeclass(ec2nodeclass(), CONFIG) == []
    assert check_launch_template(launch_template(), CONFIG) == []


def test_ec2nodeclass_without_metadata_options_takes_karpenters_secure_defaults():
    assert check_ec2nodeclass(change(ec2nodeclass(), OPTIONS, DELETE), CONFIG) == []
    assert check_ec2nodeclass(change(ec2nodeclass(), OPTIONS, {}), CONFIG) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            (*OPTIONS, "httpTokens"),
            "optional",
            'EC2NodeClass "inference": spec.metadataOptions.httpTokens is "optional"; set '
            '"required" so the instance metadata service only answers IMDSv2 session requests',
        ),
        (
            (*OPTIONS, "httpPutResponseHopLimit"),
            2,
            'EC2NodeClass "inference": spec.metadataOptions.httpPutResponseHopLimit is 2; set 1 '
            "so pods without hostNetwork cannot reach the node role's credentials",
        ),
    ],
    ids=["tokens-optional", "hop-limit-2"],
)
def test_ec2nodeclass_violations(path, value, expected):
    assert check_ec2nodeclass(change(ec2nodeclass(), path, value), CONFIG) == [expected]


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            ("metadataOptions",),
            DELETE,
            "metadataOptions is not set, so IMDS follows the AMI's and account's defaults; set "
            'httpTokens "required" and httpPutResponseHopLimit 1',
        ),
        (
            ("metadataOptions", "httpTokens"),
            DELETE,
            'metadataOptions.httpTokens is not set; set "required" so the instance metadata '
            "service only answers IMDSv2 session requests",
        ),
        (
            ("metadataOptions", "httpPutResponseHopLimit"),
            2.0,
            "metadataOptions.httpPutResponseHopLimit is 2; set 1 so pods without hostNetwork "
            "cannot reach the node role's credentials",
        ),
        (
            ("metadataOptions", "httpPutResponseHopLimit"),
            DELETE,
            "metadataOptions.httpPutResponseHopLimit is not set; set 1 so pods without "
            "hostNetwork cannot reach the node role's credentials",
        ),
    ],
    ids=["no-options", "no-tokens", "hop-limit-2-as-double", "no-hop-limit"],
)
def test_launch_template_violations(path, value, expected):
    assert check_launch_template(change(launch_template(), path, value), CONFIG) == [expected]


def test_hop_limit_arriving_as_a_double_is_accepted():
    """Numbers cross gRPC as protobuf doubles: the engine hands the policy 1.0."""
    props = change(launch_template(), ("metadataOptions", "httpPutResponseHopLimit"), 1.0)
    assert check_launch_template(props, CONFIG) == []
