"""Customer-managed KMS keys rotate their key material."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import is_true, show

KMS_KEY = "aws:kms/key:Key"
# Only symmetric encryption keys support automatic rotation.
ROTATABLE_SPEC = "SYMMETRIC_DEFAULT"


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    spec = props.get("customerMasterKeySpec") or props.get("keySpec") or ROTATABLE_SPEC
    if spec != ROTATABLE_SPEC or is_true(props.get("enableKeyRotation")):
        return []
    return [
        f"enableKeyRotation is {show(props.get('enableKeyRotation'))}; set it to true so KMS "
        "rotates the key material every year"
    ]


RULE = Rule(
    name="kms-key-rotation",
    description=(
        "Symmetric KMS keys (such as the one encrypting the cluster's Secrets) must rotate "
        "their key material automatically, limiting how much data one key version protects."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="medium",
    resource_checks={KMS_KEY: check},
)
