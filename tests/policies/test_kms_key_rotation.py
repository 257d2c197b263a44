import pytest
from policy_baselines import DELETE, change, kms_key

from eks_gpu_platform.policies.rules.kms_key_rotation import RULE, check

CONFIG = RULE.config()


def test_baseline_is_compliant():
    assert check(kms_key(), CONFIG) == []


@pytest.mark.parametrize(
    ("value", "shown"), [(False, "false"), (DELETE, "not set")], ids=["false", "unset"]
)
def test_rotation_off(value, shown):
    props = change(kms_key(), ("enableKeyRotation",), value)
    assert check(props, CONFIG) == [
        f"enableKeyRotation is {shown}; set it to true so KMS rotates the key material every year"
    ]


def test_asymmetric_keys_cannot_rotate_and_are_skipped():
    props = change(kms_key(), ("enableKeyRotation",), False)
    props["customerMasterKeySpec"] = "RSA_2048"
    assert check(props, CONFIG) == []
