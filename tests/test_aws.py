"""AWS facts (``eks_gpu_platform.aws``): the partition of each region."""

import pytest

from eks_gpu_platform.aws import partition_for_region


@pytest.mark.parametrize(
    ("region", "partition"),
    [
        ("us-west-2", "aws"),
        ("eu-central-1", "aws"),
        ("cn-north-1", "aws-cn"),
        ("cn-northwest-1", "aws-cn"),
        ("us-gov-west-1", "aws-us-gov"),
        ("us-iso-east-1", "aws-iso"),
        ("us-isob-east-1", "aws-iso-b"),
    ],
    ids=lambda v: v,
)
def test_partition_for_region(region, partition):
    assert partition_for_region(region) == partition
