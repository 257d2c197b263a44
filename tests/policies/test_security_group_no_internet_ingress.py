"""``security-group-no-internet-ingress`` (issue 22, Low list): the three ways a rule is
written, each with the exact message; egress and self-references pass."""

import pytest

from eks_gpu_platform.policies.rules.security_group_no_internet_ingress import (
    RULE,
    check_group,
    check_ingress_rule,
    check_rule,
)

CONFIG = RULE.config()
MESSAGE = 'admits "{}", the whole internet; allow the security groups or CIDRs that need it'


def test_self_referencing_and_private_rules_pass():
    assert (
        check_ingress_rule({"referencedSecurityGroupId": "sg-1", "ipProtocol": "-1"}, CONFIG) == []
    )
    assert check_ingress_rule({"cidrIpv4": "10.0.0.0/16"}, CONFIG) == []
    assert check_rule({"type": "egress", "cidrBlocks": ["0.0.0.0/0"]}, CONFIG) == []
    assert (
        check_group(
            {"ingress": [{"self": True}], "egress": [{"cidrBlocks": ["0.0.0.0/0"]}]}, CONFIG
        )
        == []
    )


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "::/0", "10.1.2.3/0"])
def test_ingress_rule_from_the_internet(cidr):
    key = "cidrIpv6" if ":" in cidr else "cidrIpv4"
    assert check_ingress_rule({key: cidr}, CONFIG) == ["ingress rule " + MESSAGE.format(cidr)]


def test_legacy_rule_and_inline_group():
    assert check_rule({"type": "ingress", "ipv6CidrBlocks": ["::/0"]}, CONFIG) == [
        "ingress rule " + MESSAGE.format("::/0")
    ]
    group = {"ingress": [{"cidrBlocks": ["10.0.0.0/8"]}, {"cidrBlocks": ["0.0.0.0/0"]}]}
    assert check_group(group, CONFIG) == ["ingress[1] " + MESSAGE.format("0.0.0.0/0")]
