"""The AWS regions the provider knows, and the zones the offline render models for them.

``REGIONS`` is pulumi-aws 7.51.1's own region list: the ``Region`` enum of its Python SDK
(``pulumi_aws/_enums.py`` lines 15-64, "A Region represents any valid Amazon region that may be
targeted with deployments"), kept here as a list so the configuration is checked without importing
the provider; ``tests/test_regions.py`` compares the two. ``aws:region`` must be one of them.

``MODELLED_ZONES`` is what the offline mocks answer for ``aws.getAvailabilityZones`` (state
available, no opt-in) in the regions of the shipped stacks, from AWS's published zone counts
(AWS Global Infrastructure, "Regions and Availability Zones": US East (N. Virginia) 6 zones,
US West (Oregon) 4); other regions get ``DEFAULT_MODELLED_ZONES`` (every region has at least
three zones for new accounts except us-west-1's two). The real count comes from the invoke at
run time: ``vpc.azCount`` more than it is an error then (``network/layout.py``).
"""

REGIONS = (
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
    "cn-north-1",
    "cn-northwest-1",
    "eusc-de-east-1",
    "us-gov-east-1",
    "us-gov-west-1",
    "us-iso-east-1",
    "us-iso-west-1",
    "us-isob-east-1",
    "us-isob-west-1",
    "eu-isoe-west-1",
    "us-isof-east-1",
    "us-isof-south-1",
)

MODELLED_ZONES = {"us-east-1": 6, "us-west-2": 4, "us-west-1": 2}
DEFAULT_MODELLED_ZONES = 3


def modelled_zone_count(region: str) -> int:
    """How many zones the offline mocks give ``region``."""
    return MODELLED_ZONES.get(region, DEFAULT_MODELLED_ZONES)


def modelled_zone_names(region: str) -> list[str]:
    """The zone names the offline mocks give ``region``: ``<region>a``, ``<region>b``, ..."""
    return [f"{region}{c}" for c in "abcdef"[: modelled_zone_count(region)]]
