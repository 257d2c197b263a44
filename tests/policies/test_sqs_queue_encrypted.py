import pytest
from policy_baselines import DELETE, change, sqs_queue

from eks_gpu_platform.policies.rules.sqs_queue_encrypted import RULE, check

CONFIG = RULE.config()
MESSAGE = (
    "the queue is not encrypted at rest: set sqsManagedSseEnabled to true, or kmsMasterKeyId to "
    "a KMS key"
)


def test_baseline_is_compliant():
    assert check(sqs_queue(), CONFIG) == []


def test_kms_encryption_is_compliant():
    props = change(sqs_queue(), ("sqsManagedSseEnabled",), DELETE)
    assert check(change(props, ("kmsMasterKeyId",), "alias/sqs"), CONFIG) == []


@pytest.mark.parametrize("value", [False, DELETE], ids=["sse-off", "sse-unset"])
def test_unencrypted(value):
    assert check(change(sqs_queue(), ("sqsManagedSseEnabled",), value), CONFIG) == [MESSAGE]
