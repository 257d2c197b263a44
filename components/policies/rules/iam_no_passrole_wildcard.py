"""No identity policy allows ``iam:PassRole`` on every role."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import Any

from ._base import MANDATORY, Rule
from ._iam import (
    DOCUMENT_TYPES,
    IAM_ROLE,
    Statement,
    actions,
    has_not_resource,
    identity_documents,
    is_allow,
    not_actions,
    pattern_matches,
    resources,
)

PASS_ROLE = "iam:PassRole"
# "*", "arn:aws:iam::*:*", "arn:aws:iam::123456789012:role/*": any role of the account(s).
ANY_ROLE = re.compile(r"^(\*|arn:[^:]+:iam::[^:]*:(\*|role/\*))$")
# A role no one would name: a Resource pattern that matches it (in the pattern's own partition
# and account) matches every role: "arn:*:iam::*:role/**", "arn:aws:iam::1:role*", "*:*" ...
UNLIKELY_ROLE = "role/zz9-unlikely/Zz9UnlikelyRole"


def every_role(resource: str) -> bool:
    """Whether an IAM Resource pattern covers every role of the account(s) it names."""
    resource = resource.strip()
    if ANY_ROLE.match(resource):
        return True
    fields = resource.split(":", 5)
    if len(fields) == 6 and fields[0] == "arn":
        partition = fields[1] if "*" not in fields[1] and "?" not in fields[1] else "aws"
        account = fields[4] if fields[4] and not set("*?") & set(fields[4]) else "123456789012"
        target = f"arn:{partition}:iam::{account}:{UNLIKELY_ROLE}"
    else:
        target = f"arn:aws:iam::123456789012:{UNLIKELY_ROLE}"
    return pattern_matches(resource, target)


def _passes_roles(statement: Statement) -> str | None:
    """The action through which an Allow statement grants iam:PassRole, if it does."""
    for action in actions(statement):
        if pattern_matches(action, PASS_ROLE):
            return action
    excluded = not_actions(statement)
    if excluded and not any(pattern_matches(a, PASS_ROLE) for a in excluded):
        return "NotAction"
    return None


def check(resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    out = []
    for doc in identity_documents(resource_type, props):
        for statement in doc.statements:
            if not is_allow(statement):
                continue
            via = _passes_roles(statement)
            if via is None:
                continue
            how = "" if via == PASS_ROLE else f' (via "{via}")'
            if has_not_resource(statement):
                out.append(
                    f"{doc.where}{statement.label} allows iam:PassRole{how} with NotResource, "
                    "i.e. on every other role; scope Resource to the roles it must pass"
                )
            for resource in resources(statement):
                if every_role(resource):
                    out.append(
                        f'{doc.where}{statement.label} allows iam:PassRole{how} on "{resource}"; '
                        "scope Resource to the roles it must pass"
                    )
    return out


RULE = Rule(
    name="iam-no-passrole-on-wildcard",
    description=(
        "IAM policies must not allow iam:PassRole on every role: whoever holds such a policy "
        "can hand any role, including administrator roles, to a service they control."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="critical",
    resource_checks={
        **{t: partial(check, t) for t in DOCUMENT_TYPES},
        IAM_ROLE: partial(check, IAM_ROLE),
    },
)
