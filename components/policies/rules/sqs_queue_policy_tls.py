"""SQS queue policies deny every request made without TLS."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...aws import partition_for_region
from ._base import MANDATORY, Rule
from ._iam import (
    Statement,
    actions,
    condition_values,
    document,
    has_not_resource,
    pattern_matches,
    resources,
)
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


# An action no SQS API has: a pattern that matches it matches every SQS action, present and
# future ("*", "sqs:*", "SQS:*", "sqs:*?", ...).
ANY_SQS_ACTION = "sqs:Zz9AnyFutureAction"
# https://sqs.<region>.amazonaws.com[.cn]/<account>/<name> and the legacy
# https://<region>.queue.amazonaws.com/<account>/<name> (SQS developer guide, "Queue and message
# identifiers": queue URL and ARN arn:<partition>:sqs:<region>:<account>:<name>).
QUEUE_URL = re.compile(
    r"^https?://(?:sqs\.([a-z0-9-]+)|([a-z0-9-]+)\.queue)\.amazonaws\.com(?:\.cn)?/"
    r"([0-9]{12})/([A-Za-z0-9_.-]+)/?$"
)


def queue_arn(url: Any) -> str | None:
    """The ARN of the queue a ``queueUrl`` points at (``None`` when it is not a queue URL)."""
    match = QUEUE_URL.match(url.strip()) if isinstance(url, str) else None
    if match is None:
        return None
    region = match.group(1) or match.group(2)
    account, name = match.group(3), match.group(4)
    return f"arn:{partition_for_region(region)}:sqs:{region}:{account}:{name}"


def _covers(statement: Statement, arn: str | None) -> bool:
    """Whether the statement applies to the queue (every queue when its ARN is unknown)."""
    target = arn or "arn:aws:sqs:zz-unknown-1:000000000000:Zz9AnyQueue"
    if has_not_resource(statement):
        excluded = strings(statement.body.get("NotResource"))
        return not any(pattern_matches(p, target) for p in excluded)
    return any(pattern_matches(p, target) for p in resources(statement))


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    doc = document(props.get("policy"))
    if doc.error is not None:
        return [f"policy {doc.error}"]
    arn = queue_arn(props.get("queueUrl"))
    denies_tls = [
        statement
        for statement in doc.statements
        if statement.body.get("Effect") == "Deny"
        and _everyone(statement.body.get("Principal"))
        and any(pattern_matches(a, ANY_SQS_ACTION) for a in actions(statement))
        and "false"
        in condition_values(statement.body.get("Condition"), BOOL_OPERATORS, SECURE_TRANSPORT)
    ]
    if any(_covers(statement, arn) for statement in denies_tls):
        return []
    if denies_tls:
        return [
            f"the statements denying requests without TLS "
            f"({', '.join(s.label for s in denies_tls)}) do not cover this queue"
            + (f' ("{arn}")' if arn else "")
            + '; set their Resource to the queue\'s ARN (or "*")'
        ]
    return [f"no statement denies requests made without TLS; add {EXAMPLE}"]


RULE = Rule(
    name="sqs-queue-policy-denies-insecure-transport",
    description=(
        "SQS queue policies (the interruption queue's) must deny all actions on the queue when "
        "aws:SecureTransport is false, so no client can send or read messages over plain HTTP."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="medium",
    resource_checks={SQS_QUEUE_POLICY: check},
)
