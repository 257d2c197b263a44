"""No security group admits traffic from the whole internet."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import mapping, sequence, strings

SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def _whole_internet(cidr: str) -> bool:
    try:
        return ipaddress.ip_network(cidr.strip(), strict=False).prefixlen == 0
    except ValueError:
        return False


def _open(where: str, cidrs: list[str]) -> list[str]:
    return [
        f'{where} admits "{cidr}", the whole internet; allow the security groups or CIDRs '
        "that need it"
        for cidr in cidrs
        if _whole_internet(cidr)
    ]


def check_group(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    out = []
    for i, rule in enumerate(sequence(props.get("ingress"))):
        rule = mapping(rule)
        cidrs = strings(rule.get("cidrBlocks")) + strings(rule.get("ipv6CidrBlocks"))
        out += _open(f"ingress[{i}]", cidrs)
    return out


def check_rule(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if props.get("type") != "ingress":
        return []
    return _open(
        "ingress rule", strings(props.get("cidrBlocks")) + strings(props.get("ipv6CidrBlocks"))
    )


def check_ingress_rule(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    return _open("ingress rule", strings(props.get("cidrIpv4")) + strings(props.get("cidrIpv6")))


RULE = Rule(
    name="security-group-no-internet-ingress",
    description=(
        "Security groups must not admit traffic from 0.0.0.0/0 or ::/0: nodes sit in private "
        "subnets and EFA groups are self-referencing only, so an internet-wide rule is a "
        "mistake that exposes every port it names (CIS EKS 5.4.3)."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="high",
    resource_checks={
        SECURITY_GROUP: check_group,
        SECURITY_GROUP_RULE: check_rule,
        INGRESS_RULE: check_ingress_rule,
    },
)
