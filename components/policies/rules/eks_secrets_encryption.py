"""EKS Secrets envelope-encrypted with a customer-managed KMS key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import dig, mapping, sequence, show

EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"


def check_eks_component(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    key = props.get("encryptionConfigKeyArn")
    if isinstance(key, str) and key:
        return []
    return [
        "encryptionConfigKeyArn is not set: Kubernetes Secrets are not envelope-encrypted with "
        "a customer-managed KMS key"
    ]


def check_aws_cluster(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if "encryptionConfig" not in props:
        return [
            "encryptionConfig is not set: Kubernetes Secrets are not envelope-encrypted with a "
            "customer-managed KMS key"
        ]
    encryption = mapping(props["encryptionConfig"])
    out = []
    resources = [r for r in sequence(encryption.get("resources")) if isinstance(r, str)]
    if "secrets" not in resources:
        out.append(f'encryptionConfig.resources is {show(resources)}; it must include "secrets"')
    key = dig(encryption, "provider", "keyArn")
    if not (isinstance(key, str) and key):
        out.append("encryptionConfig.provider.keyArn is not set")
    return out


RULE = Rule(
    name="eks-secrets-encryption",
    description=(
        "EKS clusters must envelope-encrypt Kubernetes Secrets with a customer-managed KMS key, "
        "so that access to the key is controlled and audited and it can be revoked."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="high",
    resource_checks={EKS_CLUSTER: check_eks_component, AWS_EKS_CLUSTER: check_aws_cluster},
)
