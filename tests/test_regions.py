"""Issue 13, class 3: ``aws:region`` is a region the AWS provider knows (its own list), and
``vpc.azCount`` fits the region's zones (at run time, from ``aws.getAvailabilityZones``; the
offline mocks model the shipped regions' real zone counts)."""

import pytest
from pulumi_aws._enums import Region

from eks_gpu_platform.aws import partition_for_region
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.network.component import Network, NetworkArgs
from eks_gpu_platform.network.layout import zone_at
from eks_gpu_platform.network.spec import VpcSpec
from eks_gpu_platform.offline.run import spec_error, spec_errors_made
from eks_gpu_platform.regions import REGIONS, modelled_zone_count

BASE = {"cluster": {"name": "gpu-dev"}}


def test_regions_are_the_providers_own_list():
    # pulumi-aws 7.51.1, pulumi_aws/_enums.py lines 15-64 (class Region).
    assert list(REGIONS) == [r.value for r in Region]


BAD_REGIONS = [
    pytest.param(
        "us-west-9",
        "aws:region: 'us-west-9' is not a region the AWS provider (pulumi-aws) knows; did you "
        "mean 'us-west-2'?",
        id="no-such-number",
    ),
    pytest.param(
        "eu-middle-1",
        "aws:region: 'eu-middle-1' is not a region the AWS provider (pulumi-aws) knows; did you "
        "mean 'eu-west-1'?",
        id="no-such-place",
    ),
    pytest.param(
        "US-WEST-2", "aws:region: 'US-WEST-2' is not an AWS region such as 'us-west-2'", id="case"
    ),
    pytest.param("5", "aws:region: '5' is not an AWS region such as 'us-west-2'", id="digit"),
]


@pytest.mark.parametrize(("region", "line"), BAD_REGIONS)
def test_unknown_regions_are_refused(region, line):
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(BASE, region)
    assert err.value.lines == [line]


@pytest.mark.parametrize(
    ("region", "partition"),
    [
        ("eusc-de-east-1", "aws-eusc"),
        ("eu-isoe-west-1", "aws-iso-e"),
        ("us-isof-south-1", "aws-iso-f"),
        ("us-isob-east-1", "aws-iso-b"),
        ("ap-southeast-7", "aws"),
    ],
)
def test_every_provider_region_loads_in_its_partition(region, partition):
    assert PlatformConfig.load(BASE, region).partition == partition == partition_for_region(region)


def test_zone_at():
    names = ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"]
    assert [zone_at(names, i, 4) for i in range(4)] == names
    with pytest.raises(SpecError) as err:
        zone_at(names, 0, 5)
    assert err.value.lines == [
        "vpc.azCount: 5 is more than the 4 availability zones of us-west-2 that need no opt-in; "
        "expected at most 4"
    ]


@pytest.mark.parametrize(
    ("region", "zones"), [("us-east-1", 6), ("us-west-2", 4), ("us-west-1", 2), ("eu-west-1", 3)]
)
def test_the_mocks_model_real_zone_counts(run_program, region, zones):
    assert modelled_zone_count(region) == zones

    def program():
        Network("net", NetworkArgs(spec=VpcSpec(az_count=zones), cluster_name="c", tags={}))

    rec = run_program(program, region=region)
    subnets = [r for r in rec.resources if r.type == "aws:ec2/subnet:Subnet"]
    assert sorted(s.inputs["availabilityZone"] for s in subnets) == sorted(
        f"{region}{c}" for c in "abcdef"[:zones] for _ in range(2)
    )


@pytest.mark.parametrize(
    ("region", "az_count", "zones"), [("us-west-2", 5, 4), ("us-west-1", 3, 2)]
)
def test_more_zones_than_the_region_has_is_a_spec_error(run_program, region, az_count, zones):
    def program():
        Network("net", NetworkArgs(spec=VpcSpec(az_count=az_count), cluster_name="c", tags={}))

    with spec_errors_made() as made, pytest.raises(Exception) as err:
        run_program(program, region=region)
    found = spec_error(err.value, made)
    assert found is not None
    assert found.lines == [
        f"vpc.azCount: {az_count} is more than the {zones} availability zones of {region} that "
        f"need no opt-in; expected at most {zones}"
    ]
