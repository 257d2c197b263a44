import pytest
from policy_baselines import change, ec2nodeclass

from eks_gpu_platform.policies.rules.node_volume_size import RULE, check

CONFIG = RULE.config()
SIZE = ("spec", "blockDeviceMappings", 0, "ebs", "volumeSize")


def test_baseline_is_compliant():
    assert check(ec2nodeclass(), CONFIG) == []


@pytest.mark.parametrize("size", ["2048Gi", "2Ti", "2000G"])
def test_at_or_below_two_tebibytes(size):
    assert check(change(ec2nodeclass(), SIZE, size), CONFIG) == []


@pytest.mark.parametrize("size", ["2049Gi", "3Ti", "2200G"])
def test_above_two_tebibytes(size):
    assert check(change(ec2nodeclass(), SIZE, size), CONFIG) == [
        f'EC2NodeClass "inference": spec.blockDeviceMappings[0] (/dev/xvda) is "{size}", above '
        "2048 GiB; every node pays for it while it runs (GPU nodes have local NVMe for scratch: "
        "instanceStorePolicy RAID0)"
    ]


def test_threshold_is_configurable():
    config = RULE.config({"maxVolumeGiB": 400})
    assert check(ec2nodeclass(), config) == [
        'EC2NodeClass "inference": spec.blockDeviceMappings[0] (/dev/xvda) is "500Gi", above '
        "400 GiB; every node pays for it while it runs (GPU nodes have local NVMe for scratch: "
        "instanceStorePolicy RAID0)"
    ]
