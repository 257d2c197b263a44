import pytest
from policy_baselines import DELETE, change, ec2nodeclass, launch_template

from eks_gpu_platform.policies.rules.node_volumes_encrypted import (
    RULE,
    check_ec2nodeclass,
    check_launch_template,
)

CONFIG = RULE.config()
EBS = ("spec", "blockDeviceMappings", 0, "ebs")


def test_baselines_are_compliant():
    assert check_ec2nodeclass(ec2nodeclass(), CONFIG) == []
    assert check_launch_template(launch_template(), CONFIG) == []


def test_ec2nodeclass_without_mappings_uses_karpenters_encrypted_defaults():
    props = change(ec2nodeclass(), ("spec", "blockDeviceMappings"), DELETE)
    assert check_ec2nodeclass(props, CONFIG) == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [(False, "false"), (DELETE, "not set"), ("false", '"false"')],
    ids=["false", "unset", "false-string"],
)
def test_ec2nodeclass_unencrypted_root(value, shown):
    props = change(ec2nodeclass(), (*EBS, "encrypted"), value)
    assert check_ec2nodeclass(props, CONFIG) == [
        'EC2NodeClass "inference": spec.blockDeviceMappings[0] (/dev/xvda) is not encrypted '
        f"(ebs.encrypted is {shown})"
    ]


def test_ec2nodeclass_unencrypted_data_volume():
    props = ec2nodeclass()
    props["spec"]["blockDeviceMappings"].append(
        {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi"}}
    )
    assert check_ec2nodeclass(props, CONFIG) == [
        'EC2NodeClass "inference": spec.blockDeviceMappings[1] (/dev/xvdb) is not encrypted '
        "(ebs.encrypted is not set)"
    ]


def test_launch_template_unencrypted():
    props = change(launch_template(), ("blockDeviceMappings", 0, "ebs", "encrypted"), "false")
    assert check_launch_template(props, CONFIG) == [
        'blockDeviceMappings[0] (/dev/xvda) is not encrypted (ebs.encrypted is "false")'
    ]


def test_launch_template_without_mappings():
    props = change(launch_template(), ("blockDeviceMappings",), DELETE)
    assert check_launch_template(props, CONFIG) == [
        "blockDeviceMappings is not set, so the root volume is encrypted only if the account "
        'enables EBS encryption by default; map the root device with ebs.encrypted "true"'
    ]


def test_launch_template_instance_store_mapping_is_skipped():
    props = launch_template()
    props["blockDeviceMappings"].append({"deviceName": "/dev/sdb", "virtualName": "ephemeral0"})
    assert check_launch_template(props, CONFIG) == []
