"""The network component (``eks_gpu_platform.network.component``): its children and their inputs
under the recording mocks."""

from collections import Counter

import pytest

from eks_gpu_platform.network.component import Network, NetworkArgs
from eks_gpu_platform.network.layout import subnet_layout
from eks_gpu_platform.network.spec import VpcSpec

CLUSTER = "gpu-dev"
NETWORK_TYPE = "eks-gpu-platform:index:Network"
TAGS = {"team": "ml"}


def network(run_program, spec: VpcSpec, *, protect: bool = False, region: str = "us-west-2"):
    def program():
        Network("net", NetworkArgs(spec=spec, cluster_name=CLUSTER, tags=TAGS, protect=protect))

    return run_program(program, region=region)


def by_type_and_name(recording):
    return {(r.type, r.name): r for r in recording.resources}


def expected_children(azs: int, nat_per_az: bool) -> list[tuple[str, str]]:
    out = [
        ("aws:ec2/vpc:Vpc", "net-vpc"),
        ("aws:ec2/internetGateway:InternetGateway", "net-igw"),
        ("aws:ec2/routeTable:RouteTable", "net-public-rt"),
        ("aws:ec2/route:Route", "net-public-default"),
    ]
    for i in range(azs):
        s = "abcdef"[i]
        out += [
            ("aws:ec2/subnet:Subnet", f"net-public-{s}"),
            ("aws:ec2/routeTableAssociation:RouteTableAssociation", f"net-public-{s}"),
            ("aws:ec2/subnet:Subnet", f"net-private-{s}"),
            ("aws:ec2/routeTable:RouteTable", f"net-private-{s}"),
            ("aws:ec2/route:Route", f"net-private-{s}-default"),
            ("aws:ec2/routeTableAssociation:RouteTableAssociation", f"net-private-{s}"),
        ]
        if i == 0 or nat_per_az:
            out += [
                ("aws:ec2/eip:Eip", f"net-nat-{s}"),
                ("aws:ec2/natGateway:NatGateway", f"net-nat-{s}"),
            ]
    return sorted(out)


NEW_VPCS = [
    pytest.param(2, False, 18, id="2az-single-nat"),
    pytest.param(2, True, 20, id="2az-nat-per-az"),
    pytest.param(3, False, 24, id="3az-single-nat"),
    pytest.param(3, True, 28, id="3az-nat-per-az"),
]


@pytest.mark.parametrize(("azs", "nat_per_az", "count"), NEW_VPCS)
def test_new_vpc_children(run_program, azs, nat_per_az, count):
    rec = network(
        run_program, VpcSpec(cidr="10.40.0.0/16", az_count=azs, nat_gateway_per_az=nat_per_az)
    )
    component = one_of(rec, NETWORK_TYPE)
    children = rec.children_of(component.urn)
    assert len(children) == count
    assert sorted((c.type, c.name) for c in children) == expected_children(azs, nat_per_az)
    # Everything the program registered is the component or one of its direct children.
    assert len(rec.resources) == count + 1
    types = Counter(c.type for c in children)
    assert types["aws:ec2/natGateway:NatGateway"] == (azs if nat_per_az else 1)
    assert types["aws:ec2/eip:Eip"] == (azs if nat_per_az else 1)


@pytest.mark.parametrize(("azs", "nat_per_az", "count"), NEW_VPCS)
def test_new_vpc_routes_and_subnets(run_program, azs, nat_per_az, count):
    rec = network(
        run_program, VpcSpec(cidr="10.40.0.0/16", az_count=azs, nat_gateway_per_az=nat_per_az)
    )
    res = by_type_and_name(rec)
    vpc = res[("aws:ec2/vpc:Vpc", "net-vpc")]
    assert vpc.inputs == {
        "cidrBlock": "10.40.0.0/16",
        "enableDnsHostnames": True,
        "enableDnsSupport": True,
        "tags": {"team": "ml", "Name": "gpu-dev-vpc"},
    }
    igw = res[("aws:ec2/internetGateway:InternetGateway", "net-igw")]
    public_rt = res[("aws:ec2/routeTable:RouteTable", "net-public-rt")]
    assert res[("aws:ec2/route:Route", "net-public-default")].inputs == {
        "routeTableId": public_rt.id,
        "destinationCidrBlock": "0.0.0.0/0",
        "gatewayId": igw.id,
    }
    private_cidrs, public_cidrs = subnet_layout("10.40.0.0/16", azs)
    for i in range(azs):
        s = "abcdef"[i]
        private = res[("aws:ec2/subnet:Subnet", f"net-private-{s}")]
        assert private.inputs == {
            "vpcId": vpc.id,
            "cidrBlock": private_cidrs[i],
            "availabilityZone": f"us-west-2{s}",
            "tags": {
                "team": "ml",
                "karpenter.sh/discovery": "gpu-dev",
                "kubernetes.io/role/internal-elb": "1",
                "Name": f"gpu-dev-private-{s}",
            },
        }
        public = res[("aws:ec2/subnet:Subnet", f"net-public-{s}")]
        assert public.inputs == {
            "vpcId": vpc.id,
            "cidrBlock": public_cidrs[i],
            "availabilityZone": f"us-west-2{s}",
            "mapPublicIpOnLaunch": False,
            "tags": {"team": "ml", "kubernetes.io/role/elb": "1", "Name": f"gpu-dev-public-{s}"},
        }
        nat = res[("aws:ec2/natGateway:NatGateway", f"net-nat-{s if nat_per_az else 'a'}")]
        rt = res[("aws:ec2/routeTable:RouteTable", f"net-private-{s}")]
        assert res[("aws:ec2/route:Route", f"net-private-{s}-default")].inputs == {
            "routeTableId": rt.id,
            "destinationCidrBlock": "0.0.0.0/0",
            "natGatewayId": nat.id,
        }
        assert res[
            ("aws:ec2/routeTableAssociation:RouteTableAssociation", f"net-private-{s}")
        ].inputs == {"subnetId": private.id, "routeTableId": rt.id}
        assert res[
            ("aws:ec2/routeTableAssociation:RouteTableAssociation", f"net-public-{s}")
        ].inputs == {"subnetId": public.id, "routeTableId": public_rt.id}
    nat_a = res[("aws:ec2/natGateway:NatGateway", "net-nat-a")]
    assert nat_a.inputs["subnetId"] == res[("aws:ec2/subnet:Subnet", "net-public-a")].id
    assert nat_a.inputs["allocationId"] == res[("aws:ec2/eip:Eip", "net-nat-a")].id
    # NAT gateways need the internet gateway attached first.
    assert igw.urn in nat_a.dependencies


def test_new_vpc_outputs_and_protect(run_program):
    rec = network(run_program, VpcSpec(cidr="10.40.0.0/16", az_count=2), protect=True)
    res = by_type_and_name(rec)
    component = one_of(rec, NETWORK_TYPE)
    assert component.registered_outputs == {
        "vpc_id": res[("aws:ec2/vpc:Vpc", "net-vpc")].id,
        "private_subnet_ids": [
            res[("aws:ec2/subnet:Subnet", "net-private-a")].id,
            res[("aws:ec2/subnet:Subnet", "net-private-b")].id,
        ],
        "public_subnet_ids": [
            res[("aws:ec2/subnet:Subnet", "net-public-a")].id,
            res[("aws:ec2/subnet:Subnet", "net-public-b")].id,
        ],
    }
    protected = sorted(r.name for r in rec.resources if r.protect)
    # Issue 21, point 8: the subnets and the NAT address too.
    assert protected == [
        "net-nat-a",
        "net-private-a",
        "net-private-b",
        "net-public-a",
        "net-public-b",
        "net-vpc",
    ]


def test_new_vpc_uses_the_default_cidr_and_three_azs(run_program):
    rec = network(run_program, VpcSpec())
    subnets = sorted((r.name, r.inputs["cidrBlock"]) for r in rec.of_type("aws:ec2/subnet:Subnet"))
    assert subnets == [
        ("net-private-a", "10.0.0.0/19"),
        ("net-private-b", "10.0.32.0/19"),
        ("net-private-c", "10.0.64.0/19"),
        ("net-public-a", "10.0.224.0/22"),
        ("net-public-b", "10.0.228.0/22"),
        ("net-public-c", "10.0.232.0/22"),
    ]


def test_existing_vpc_only_tags_private_subnets(run_program):
    spec = VpcSpec(
        vpc_id="vpc-0123456789abcdef0",
        private_subnet_ids=(
            "subnet-0123456789abcdef0",
            "subnet-0123456789abcdef1",
            "subnet-0aa11bb22",
        ),
        public_subnet_ids=("subnet-0123456789abcdef2",),
    )
    rec = network(run_program, spec)
    component = one_of(rec, NETWORK_TYPE)
    children = rec.children_of(component.urn)
    assert [(c.type, c.name, c.inputs) for c in sorted(children, key=lambda c: c.name)] == [
        (
            "aws:ec2/tag:Tag",
            f"net-private-{i}-discovery",
            {"resourceId": subnet, "key": "karpenter.sh/discovery", "value": "gpu-dev"},
        )
        for i, subnet in enumerate(spec.private_subnet_ids)
    ]
    assert len(rec.resources) == 4
    assert not [
        r for r in rec.resources if r.type.startswith("aws:ec2/") and r.type != "aws:ec2/tag:Tag"
    ]
    assert component.registered_outputs == {
        "vpc_id": "vpc-0123456789abcdef0",
        "private_subnet_ids": list(spec.private_subnet_ids),
        "public_subnet_ids": ["subnet-0123456789abcdef2"],
    }


def one_of(recording, typ):
    matches = recording.of_type(typ)
    assert len(matches) == 1
    return matches[0]


def test_new_vpc_uses_only_zones_without_opt_in(run_program):
    """Issue 11, item 7 (fails on the old code: an opted-in Local Zone is `available` too)."""
    from eks_gpu_platform.network.component import Network, NetworkArgs
    from eks_gpu_platform.network.spec import VpcSpec

    rec = run_program(lambda: Network("n", NetworkArgs(cluster_name="gpu", spec=VpcSpec())))
    (call,) = [
        a for t, a in rec.calls if t == "aws:index/getAvailabilityZones:getAvailabilityZones"
    ]
    # No `state` filter (issue 21, point 7): the zones are chosen by name, whatever their state.
    assert call == {"filters": [{"name": "opt-in-status", "values": ["opt-in-not-required"]}]}


def zones_of(rec) -> dict[str, str]:
    return {r.name: r.inputs["availabilityZone"] for r in rec.of_type("aws:ec2/subnet:Subnet")}


def test_an_impaired_zone_does_not_move_the_subnets(run_program, monkeypatch):
    """Issue 21, point 7; fails on the old code, which took the zones by index from the list of
    zones `available` right now: with us-west-2a impaired, every subnet moved one zone on
    (subnet replacement planned during an outage)."""
    from eks_gpu_platform.network.component import Network, NetworkArgs
    from eks_gpu_platform.offline import mocks

    def program():
        Network("n", NetworkArgs(cluster_name="gpu", spec=VpcSpec(az_count=2)))

    healthy = zones_of(run_program(program))
    monkeypatch.setattr(mocks.RecordingMocks, "impaired_zones", frozenset({"us-west-2a"}))
    impaired = zones_of(run_program(program))
    assert (
        healthy
        == impaired
        == {
            "n-public-a": "us-west-2a",
            "n-private-a": "us-west-2a",
            "n-public-b": "us-west-2b",
            "n-private-b": "us-west-2b",
        }
    )


def test_configured_zones_are_used_by_name(run_program):
    from eks_gpu_platform.network.component import Network, NetworkArgs

    spec = VpcSpec(zones=("us-west-2d", "us-west-2b"))
    rec = run_program(lambda: Network("n", NetworkArgs(cluster_name="gpu", spec=spec)))
    assert zones_of(rec) == {
        "n-public-a": "us-west-2d",
        "n-private-a": "us-west-2d",
        "n-public-b": "us-west-2b",
        "n-private-b": "us-west-2b",
    }


@pytest.mark.parametrize(
    ("tagging", "tags", "retained"),
    [("owned", 2, False), ("shared", 2, True), ("none", 0, False)],
)
def test_existing_vpc_subnet_tagging(run_program, tagging, tags, retained):
    """Issue 11, item 11: 'shared' keeps its tag on destroy (retain_on_delete; exact values in
    test_shared_subnets.py), 'none' leaves the subnets alone."""
    spec = VpcSpec(
        vpc_id="vpc-0123456789abcdef0",
        private_subnet_ids=("subnet-0123456789abcdef0", "subnet-0123456789abcdef1"),
        subnet_tagging=tagging,
    )
    rec = network(run_program, spec)
    found = rec.of_type("aws:ec2/tag:Tag")
    assert len(found) == tags
    assert {t.retain_on_delete for t in found} <= {retained}


def test_subnet_tagging_only_for_an_existing_vpc():
    from eks_gpu_platform.errors import SpecError

    with pytest.raises(SpecError) as err:
        VpcSpec(subnet_tagging="shared")
    assert err.value.lines == [
        "VpcSpec.subnet_tagging: 'shared' only applies to an existing VPC (vpcId); a new VPC's "
        "subnets are always this stack's"
    ]


def test_egress_lists_routes_associations_and_nat_gateways(run_program):
    """Issue 11, item 3: what whatever runs on the nodes depends on (Karpenter's release), so
    `pulumi destroy` removes the routes and NAT gateways only after it."""
    from eks_gpu_platform.network.component import Network, NetworkArgs

    found: dict = {}

    def program():
        net = Network("n", NetworkArgs(cluster_name="gpu", spec=VpcSpec(az_count=2)))
        found["egress"] = net.egress

    rec = run_program(program)
    names = sorted(r._name for r in found["egress"])
    assert names == [
        "n-nat-a",
        "n-private-a",
        "n-private-a-default",
        "n-private-b",
        "n-private-b-default",
        "n-public-a",
        "n-public-b",
        "n-public-default",
    ]
    assert len(rec.of_type("aws:ec2/natGateway:NatGateway")) == 1
