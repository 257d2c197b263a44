"""A new VPC's layout (``eks_gpu_platform.network.layout``): subnet CIDRs and tags."""

import ipaddress

import pytest

from eks_gpu_platform.network.layout import subnet_layout, subnet_tags


@pytest.mark.parametrize(
    ("cidr", "azs", "private", "public"),
    [
        pytest.param(
            "10.0.0.0/16",
            2,
            ["10.0.0.0/19", "10.0.32.0/19"],
            ["10.0.224.0/22", "10.0.228.0/22"],
            id="slash16-2az",
        ),
        pytest.param(
            "10.40.0.0/16",
            3,
            ["10.40.0.0/19", "10.40.32.0/19", "10.40.64.0/19"],
            ["10.40.224.0/22", "10.40.228.0/22", "10.40.232.0/22"],
            id="slash16-3az",
        ),
        pytest.param(
            "10.0.0.0/16",
            6,
            [
                "10.0.0.0/19",
                "10.0.32.0/19",
                "10.0.64.0/19",
                "10.0.96.0/19",
                "10.0.128.0/19",
                "10.0.160.0/19",
            ],
            [
                "10.0.224.0/22",
                "10.0.228.0/22",
                "10.0.232.0/22",
                "10.0.236.0/22",
                "10.0.240.0/22",
                "10.0.244.0/22",
            ],
            id="slash16-6az",
        ),
        pytest.param(
            "172.16.16.0/20",
            3,
            ["172.16.16.0/23", "172.16.18.0/23", "172.16.20.0/23"],
            ["172.16.30.0/26", "172.16.30.64/26", "172.16.30.128/26"],
            id="slash20-3az",
        ),
    ],
)
def test_subnet_layout(cidr, azs, private, public):
    assert subnet_layout(cidr, azs) == (private, public)


@pytest.mark.parametrize("cidr", ["10.0.0.0/16", "10.8.0.0/18", "192.168.0.0/20"])
@pytest.mark.parametrize("azs", [2, 3, 4, 5, 6])
def test_subnet_layout_never_overlaps_and_stays_inside_the_vpc(cidr, azs):
    private, public = subnet_layout(cidr, azs)
    vpc = ipaddress.ip_network(cidr)
    subnets = [ipaddress.ip_network(s) for s in private + public]
    assert len(subnets) == 2 * azs
    assert all(s.subnet_of(vpc) for s in subnets)
    for i, a in enumerate(subnets):
        for b in subnets[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    # Private subnets are an eighth of the VPC each; public ones a 64th.
    assert {s.prefixlen for s in subnets[:azs]} == {vpc.prefixlen + 3}
    assert {s.prefixlen for s in subnets[azs:]} == {vpc.prefixlen + 6}


@pytest.mark.parametrize(
    ("private", "expected"),
    [
        (True, {"karpenter.sh/discovery": "gpu-dev", "kubernetes.io/role/internal-elb": "1"}),
        (False, {"kubernetes.io/role/elb": "1"}),
    ],
    ids=["private", "public"],
)
def test_subnet_tags(private, expected):
    assert subnet_tags("gpu-dev", private=private) == expected


def test_vpc_zone_names_by_name():
    """Pure: by name, whatever the order the API lists them in; configured ones as given."""
    from eks_gpu_platform.errors import SpecError
    from eks_gpu_platform.network.layout import vpc_zone_names

    region = ["us-east-1c", "us-east-1a", "us-east-1f", "us-east-1b"]
    assert vpc_zone_names(region, 3) == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert vpc_zone_names(region, 2, ("us-east-1f", "us-east-1a")) == ["us-east-1f", "us-east-1a"]
    with pytest.raises(SpecError) as err:
        vpc_zone_names(region, 2, ("us-east-1a", "us-east-1e"))
    assert err.value.lines == [
        "vpc.zones[1]: 'us-east-1e' is not an availability zone of us-east-1 that needs no "
        "opt-in; expected one of us-east-1a, us-east-1b, us-east-1c, us-east-1f"
    ]


@pytest.mark.parametrize(
    ("kwargs", "lines"),
    [
        (
            {"zones": ("us-east-1a", "us-east-1b"), "az_count": 3},
            ["VpcSpec.zones: lists 2 zone(s) but azCount is 3; set one of them"],
        ),
        (
            {"zones": ("us-east-1a", "us-east-1a")},
            ["VpcSpec.zones[1]: 'us-east-1a' is listed twice"],
        ),
        (
            {"zones": ("us-east-1a", "use1-az1")},
            ["VpcSpec.zones[1]: 'use1-az1' is not a zone name such as 'us-east-1a'"],
        ),
        (
            {
                "vpc_id": "vpc-0123456789abcdef0",
                "private_subnet_ids": ("subnet-01234567", "subnet-01234568"),
                "zones": ("us-east-1a", "us-east-1b"),
            },
            ["VpcSpec.zones: is set with vpcId; zones only applies to a new VPC"],
        ),
    ],
    ids=["count", "twice", "pattern", "existing-vpc"],
)
def test_zones_spec_problems(kwargs, lines):
    from eks_gpu_platform.errors import SpecError
    from eks_gpu_platform.network.spec import VpcSpec

    with pytest.raises(SpecError) as err:
        VpcSpec(**kwargs)
    assert err.value.lines == lines
