import pytest
from policy_baselines import DELETE, aws_eks_cluster, change, eks_cluster

from eks_gpu_platform.policies.rules.eks_secrets_encryption import (
    RULE,
    check_aws_cluster,
    check_eks_component,
)

CONFIG = RULE.config()


def test_baselines_are_compliant():
    assert check_eks_component(eks_cluster(), CONFIG) == []
    assert check_aws_cluster(aws_eks_cluster(), CONFIG) == []


@pytest.mark.parametrize("value", [DELETE, ""], ids=["unset", "empty"])
def test_component_without_key(value):
    props = change(eks_cluster(), ("encryptionConfigKeyArn",), value)
    assert check_eks_component(props, CONFIG) == [
        "encryptionConfigKeyArn is not set: Kubernetes Secrets are not envelope-encrypted with "
        "a customer-managed KMS key"
    ]


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            ("encryptionConfig",),
            DELETE,
            "encryptionConfig is not set: Kubernetes Secrets are not envelope-encrypted with a "
            "customer-managed KMS key",
        ),
        (
            ("encryptionConfig", "resources"),
            [],
            'encryptionConfig.resources is []; it must include "secrets"',
        ),
        (
            ("encryptionConfig", "provider", "keyArn"),
            "",
            "encryptionConfig.provider.keyArn is not set",
        ),
    ],
    ids=["no-encryption-config", "no-secrets-resource", "no-key"],
)
def test_aws_cluster_violations(path, value, expected):
    assert check_aws_cluster(change(aws_eks_cluster(), path, value), CONFIG) == [expected]
