import pytest
from policy_baselines import DELETE, aws_eks_cluster, change, eks_cluster

from eks_gpu_platform.policies.rules.eks_public_endpoint import (
    RULE,
    check_aws_cluster,
    check_eks_component,
)

CONFIG = RULE.config()


def test_baselines_are_compliant():
    assert check_eks_component(eks_cluster(), CONFIG) == []
    assert check_aws_cluster(aws_eks_cluster(), CONFIG) == []


def test_private_endpoint_needs_no_allowlist():
    props = change(eks_cluster(), ("endpointPublicAccess",), False)
    assert check_eks_component(change(props, ("publicAccessCidrs",), DELETE), CONFIG) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            ("publicAccessCidrs",),
            DELETE,
            "endpointPublicAccess is on and publicAccessCidrs is empty, so the API server is open "
            "to 0.0.0.0/0; list the CIDRs that may reach it, or turn the public endpoint off",
        ),
        (
            ("publicAccessCidrs",),
            ["203.0.113.0/24", "0.0.0.0/0"],
            'publicAccessCidrs includes "0.0.0.0/0", which opens the API server to the whole '
            "internet",
        ),
        (
            ("publicAccessCidrs",),
            ["::/0"],
            'publicAccessCidrs includes "::/0", which opens the API server to the whole internet',
        ),
        (
            ("publicAccessCidrs",),
            ["10.0.0.1/0"],
            'publicAccessCidrs includes "10.0.0.1/0", which opens the API server to the whole '
            "internet",
        ),
        (
            ("publicAccessCidrs",),
            ["office"],
            'publicAccessCidrs includes "office", which is not a CIDR',
        ),
    ],
    ids=["no-allowlist", "ipv4-any", "ipv6-any", "any-non-canonical", "not-a-cidr"],
)
def test_component_violations(path, value, expected):
    assert check_eks_component(change(eks_cluster(), path, value), CONFIG) == [expected]


def test_public_endpoint_is_on_by_default():
    props = change(eks_cluster(), ("endpointPublicAccess",), DELETE)
    assert check_eks_component(change(props, ("publicAccessCidrs",), []), CONFIG) == [
        "endpointPublicAccess is on and publicAccessCidrs is empty, so the API server is open "
        "to 0.0.0.0/0; list the CIDRs that may reach it, or turn the public endpoint off"
    ]


def test_aws_cluster_open_to_the_internet():
    props = change(aws_eks_cluster(), ("vpcConfig", "publicAccessCidrs"), ["0.0.0.0/0"])
    assert check_aws_cluster(props, CONFIG) == [
        'vpcConfig.publicAccessCidrs includes "0.0.0.0/0", which opens the API server to the '
        "whole internet"
    ]


# Issue 22, point 8: the allowlist's breadth, merged, is bounded (a /16, a /48), configurable.
def test_a_broad_allowlist_is_refused_unless_configured():
    props = change(eks_cluster(), ("publicAccessCidrs",), ["10.0.0.0/15"])
    assert check_eks_component(props, CONFIG) == [
        'publicAccessCidrs "10.0.0.0/15" allow 131,072 IPv4 addresses, more than '
        "maxIpv4Addresses (65,536); list the egress ranges that need the API server, or keep "
        "the endpoint private"
    ]
    assert check_eks_component(props, RULE.config({"maxIpv4Addresses": 131072})) == []
    one_16 = change(eks_cluster(), ("publicAccessCidrs",), ["10.0.0.0/17", "10.0.128.0/17"])
    assert check_eks_component(one_16, CONFIG) == []


def test_a_broad_ipv6_allowlist_on_the_aws_cluster():
    props = change(aws_eks_cluster(), ("vpcConfig", "publicAccessCidrs"), ["2001:db8::/47"])
    assert check_aws_cluster(props, CONFIG) == [
        'vpcConfig.publicAccessCidrs "2001:db8::/47" allow 2,417,851,639,229,258,349,412,352 '
        "IPv6 addresses, more than maxIpv6Addresses (1,208,925,819,614,629,174,706,176); list "
        "the egress ranges that need the API server, or keep the endpoint private"
    ]
