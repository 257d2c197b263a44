"""SQS queue policies deny every request made without TLS."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._iam import actions, condition_values, document
from ._props import mapping, strings

SQS_QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
SECURE_TRANSPORT = "aws:SecureTransport"
BOOL_OPERATORS = ("Bool", "BoolIfExists")
EXAMPLE = (
    '{"Effect": "Deny", "Principal": "*", "Action": "sqs:*", '
    '"Condition": {"Bool": {"aws:SecureTransport": "false"}}}'
)


def _everyone(principal: Any) -> bool:
    if principal == "*":
        return True
    return "*" in strings(mapping(principal).get("AWS"))


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    doc = document(props.get("policy"))
    if doc.error is not None:
        return [f"policy {doc.error}"]
    for statement in doc.statements:
        body = statement.body
        if (
            body.get("Effect") == "Deny"
            and _everyone(body.get("Principal"))
            and any(a in ("*", "sqs:*") for a in actions(statement))
            and "false" in condition_values(body.get("Condition"), BOOL_OPERATORS, SECURE_TRANSPORT)
        ):
            return []
    return [f"no statement denies requests made without TLS; add {EXAMPLE}"]


RULE = Rule(
    name="sqs-queue-policy-denies-insecure-transport",
    description=(
        "SQS queue policies (the interruption queue's) must deny all actions when "
        "aws:SecureTransport is false, so no client can send or read messages over plain HTTP."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="medium",
    resource_checks={SQS_QUEUE_POLICY: check},
)
