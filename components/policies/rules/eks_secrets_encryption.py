"""EKS Secrets envelope-encrypted with a customer-managed KMS key."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import dig, mapping, sequence, show

EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"


# AWS-managed keys are named "alias/aws/<service>" (KMS developer guide, "AWS managed keys":
# https://docs.aws.amazon.com/kms/latest/developerguide/concepts.html#aws-managed-key); their
# key policy cannot be edited, so access to them cannot be controlled or revoked.
AWS_MANAGED_ALIAS = re.compile(r"(^|:)alias/aws/", re.IGNORECASE)


def _aws_managed(where: str, key: str) -> list[str]:
    if not AWS_MANAGED_ALIAS.search(key.strip()):
        return []
    return [
        f'{where} is "{key}", an AWS-managed key (alias/aws/...): its key policy cannot be '
        "changed, so who may decrypt Secrets cannot be controlled or revoked; use a "
        "customer-managed key"
    ]


def check_eks_component(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    key = props.get("encryptionConfigKeyArn")
    if isinstance(key, str) and key:
        return _aws_managed("encryptionConfigKeyArn", key)
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
    else:
        out += _aws_managed("encryptionConfig.provider.keyArn", key)
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
