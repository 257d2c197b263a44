"""An EFA pool's zone against the region's zones and the VPC's (issue 19 item 6): refused at lookup
time with every pool's problem in one error, as ``vpc.azCount`` is."""

import pulumi
import pulumi_kubernetes as k8s
import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.nodepool import NodePool, NodePoolArgs, NodePoolSpec
from eks_gpu_platform.nodepool.zones import checked_vpc_zones, efa_zone_problems
from eks_gpu_platform.offline.run import spec_error, spec_errors_made
from eks_gpu_platform.platform import GpuPlatform

REGION_ZONES = ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"]


def efa(name: str, zone: str) -> NodePoolSpec:
    return NodePoolSpec(name=name, kind="efa", instance_types=("p5.48xlarge",), zone=zone)


@pytest.mark.parametrize(
    ("zone", "vpc_zones", "expected"),
    [
        ("us-west-2a", ["us-west-2a", "us-west-2b"], None),
        (
            "us-west-2z",
            ["us-west-2a", "us-west-2b"],
            "'us-west-2z' is not an availability zone of us-west-2 that needs no opt-in; "
            "expected one of us-west-2a, us-west-2b, us-west-2c, us-west-2d",
        ),
        (
            "us-west-2c",
            ["us-west-2b", "us-west-2a", "us-west-2a"],
            "'us-west-2c' has no private subnet of the VPC, so the pool could never launch a "
            "node; expected one of us-west-2a, us-west-2b",
        ),
        # An existing VPC's subnet zones offline: not known, only the region is checked.
        ("us-west-2c", ["us-west-2a", None], None),
    ],
)
def test_efa_zone_problems(zone, vpc_zones, expected):
    problems = efa_zone_problems([(3, efa("train", zone))], REGION_ZONES, vpc_zones)
    assert [m for _, m in problems] == ([expected] if expected else [])


def test_every_pool_in_one_error_naming_the_pool_and_the_key():
    pools = [(0, efa("a", "us-west-2z")), (2, efa("b", "us-west-2d"))]
    with pytest.raises(SpecError) as err:
        checked_vpc_zones([REGION_ZONES, ["us-west-2a", "us-west-2b"]], pools)
    assert err.value.lines == [
        "nodePools[0](a).zone: 'us-west-2z' is not an availability zone of us-west-2 that needs "
        "no opt-in; expected one of us-west-2a, us-west-2b, us-west-2c, us-west-2d",
        "nodePools[2](b).zone: 'us-west-2d' has no private subnet of the VPC, so the pool could "
        "never launch a node; expected one of us-west-2a, us-west-2b",
    ]
    assert checked_vpc_zones([REGION_ZONES, ["us-west-2a"]], [(0, efa("a", "us-west-2a"))]) == [
        "us-west-2a"
    ]


def platform_config(*zones: str) -> PlatformConfig:
    return PlatformConfig.load(
        {
            "cluster": {"name": "gpu-test"},
            "vpc": {"azCount": 2},
            "nodePools": [
                {
                    "name": f"efa-{i}",
                    "kind": "efa",
                    "instanceTypes": ["p5.48xlarge"],
                    "zone": zone,
                    "limits": {"gpus": 16},
                }
                for i, zone in enumerate(zones)
            ],
            "scheduler": {"enabled": False},
        },
        "us-west-2",
    )


def test_the_platform_refuses_a_zone_outside_the_region_or_the_vpc(run_program):
    # us-west-2 has four zones without opt-in (the mocks model them); a 2-AZ VPC uses a and b.
    config = platform_config("us-west-2a", "us-west-2z", "us-west-2c")
    with spec_errors_made() as made, pytest.raises(Exception) as err:
        run_program(lambda: GpuPlatform("platform", config))
    found = spec_error(err.value, made)
    assert found is not None
    assert found.lines == [
        "nodePools[1](efa-1).zone: 'us-west-2z' is not an availability zone of us-west-2 that "
        "needs no opt-in; expected one of us-west-2a, us-west-2b, us-west-2c, us-west-2d",
        "nodePools[2](efa-2).zone: 'us-west-2c' has no private subnet of the VPC, so the pool "
        "could never launch a node; expected one of us-west-2a, us-west-2b",
    ]


def test_a_zone_of_the_vpc_is_accepted(run_program):
    rec = run_program(lambda: GpuPlatform("platform", platform_config("us-west-2b")))
    pools = [r for r in rec.resources if r.type == "kubernetes:karpenter.sh/v1:NodePool"]
    assert sorted(p.name for p in pools) == [
        "platform-pool-efa-0-p5-48xlarge-pool",
        "platform-pool-general-pool",
    ]


def existing_vpc_config(zone: str) -> PlatformConfig:
    values = {
        "cluster": {"name": "gpu-test"},
        "vpc": {
            "vpcId": "vpc-0123456789abcdef0",
            "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
        },
        "nodePools": [
            {
                "name": "efa",
                "kind": "efa",
                "instanceTypes": ["p5.48xlarge"],
                "zone": zone,
                "limits": {"gpus": 16},
            }
        ],
        "scheduler": {"enabled": False},
    }
    return PlatformConfig.load(values, "us-west-2")


def test_an_existing_vpc_is_checked_against_the_region_offline(run_program):
    # Its subnets' zones come from aws.ec2.getSubnet at deployment; the mocks do not know them.
    rec = run_program(lambda: GpuPlatform("platform", existing_vpc_config("us-west-2d")))
    invokes = [args for token, args in rec.calls if token == "aws:ec2/getSubnet:getSubnet"]
    assert sorted(args["id"] for args in invokes) == [
        "subnet-0123456789abcdef0",
        "subnet-0123456789abcdef1",
    ]
    with spec_errors_made() as made, pytest.raises(Exception) as err:
        run_program(lambda: GpuPlatform("platform", existing_vpc_config("us-west-2z")))
    found = spec_error(err.value, made)
    assert found is not None
    assert found.lines == [
        "nodePools[0](efa).zone: 'us-west-2z' is not an availability zone of us-west-2 that "
        "needs no opt-in; expected one of us-west-2a, us-west-2b, us-west-2c, us-west-2d"
    ]


def standalone_efa_pool(vpc_zones):
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        marker = k8s.core.v1.ConfigMap(
            "karpenter-ready", opts=pulumi.ResourceOptions(provider=provider)
        )
        NodePool(
            "pool",
            NodePoolArgs(
                spec=efa("train", "us-west-2b"),
                cluster_name="gpu-test",
                label_domain="eks-gpu-platform.io",
                node_role="node-role",
                k8s_provider=provider,
                vpc_id="vpc-0123456789abcdef0",
                vpc_zones=vpc_zones,
                gpu_limit=16,
                depends_on=[marker],
            ),
        )

    return program


def test_a_standalone_efa_pool_checks_its_zone_against_the_vpc_zones(run_program):
    rec = run_program(standalone_efa_pool(["us-west-2a", "us-west-2b"]))
    assert [r.name for r in rec.resources if r.type == "aws:ec2/placementGroup:PlacementGroup"] == [
        "pool-pg"
    ]
    with spec_errors_made() as made, pytest.raises(Exception) as err:
        run_program(standalone_efa_pool(["us-west-2a", "us-west-2c"]))
    found = spec_error(err.value, made)
    assert found is not None
    assert found.lines == [
        "NodePoolArgs.spec.zone: 'us-west-2b' of efa pool 'train' has no private subnet of the "
        "VPC; expected one of us-west-2a, us-west-2c"
    ]
