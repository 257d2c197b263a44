"""SQS queues (the Karpenter interruption queue) encrypted at rest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import is_true

SQS_QUEUE = "aws:sqs/queue:Queue"


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    kms = props.get("kmsMasterKeyId")
    if is_true(props.get("sqsManagedSseEnabled")) or (isinstance(kms, str) and kms):
        return []
    return [
        "the queue is not encrypted at rest: set sqsManagedSseEnabled to true, or "
        "kmsMasterKeyId to a KMS key"
    ]


RULE = Rule(
    name="sqs-queue-encrypted",
    description=(
        "SQS queues, including Karpenter's interruption queue, must be encrypted at rest "
        "(SSE-SQS or SSE-KMS): their messages describe the account's instances and events."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="medium",
    resource_checks={SQS_QUEUE: check},
)
