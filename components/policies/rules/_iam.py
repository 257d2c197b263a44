"""Reading IAM policy documents as the engine hands them over: JSON strings (or mappings)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ._props import mapping, sequence, strings

IAM_POLICY = "aws:iam/policy:Policy"
IAM_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
IAM_USER_POLICY = "aws:iam/userPolicy:UserPolicy"
IAM_GROUP_POLICY = "aws:iam/groupPolicy:GroupPolicy"
IAM_ROLE = "aws:iam/role:Role"
# Identity policies: the document is the ``policy`` prop.
DOCUMENT_TYPES = (IAM_POLICY, IAM_ROLE_POLICY, IAM_USER_POLICY, IAM_GROUP_POLICY)


class Statement(NamedTuple):
    label: str  # 'statement "Sid"' or 'statement #2' (1-based)
    body: Mapping[str, Any]


class Document(NamedTuple):
    where: str  # "" for the ``policy`` prop, "inlinePolicies[0] ("name"): " for roles
    statements: list[Statement]
    error: str | None


def _parse(value: Any) -> tuple[Mapping[str, Any] | None, str | None]:
    if isinstance(value, Mapping):
        return value, None
    if not isinstance(value, str):
        return None, "is not a JSON policy document"
    try:
        parsed = json.loads(value)
    except ValueError as err:
        return None, f"is not valid JSON ({err})"
    if not isinstance(parsed, Mapping):
        return None, "is not a JSON object"
    return parsed, None


def statements_of(document: Mapping[str, Any]) -> list[Statement]:
    raw = document.get("Statement")
    items = [raw] if isinstance(raw, Mapping) else list(sequence(raw))
    out = []
    for index, item in enumerate(items, start=1):
        body = mapping(item)
        sid = body.get("Sid")
        label = f'statement "{sid}"' if isinstance(sid, str) and sid else f"statement #{index}"
        out.append(Statement(label, body))
    return out


def document(value: Any, where: str = "") -> Document:
    parsed, error = _parse(value)
    if parsed is None:
        return Document(where, [], error)
    return Document(where, statements_of(parsed), None)


def identity_documents(resource_type: str, props: Mapping[str, Any]) -> list[Document]:
    """The identity-policy documents a resource carries (roles: their inline policies)."""
    if resource_type in DOCUMENT_TYPES:
        return [document(props.get("policy"))]
    if resource_type == IAM_ROLE:
        out = []
        for index, inline in enumerate(sequence(props.get("inlinePolicies"))):
            inline = mapping(inline)
            if "policy" not in inline:
                continue
            name = inline.get("name")
            named = f" ({json.dumps(name)})" if isinstance(name, str) and name else ""
            out.append(document(inline.get("policy"), f"inlinePolicies[{index}]{named}: "))
        return out
    return []


def is_allow(statement: Statement) -> bool:
    return statement.body.get("Effect") == "Allow"


def actions(statement: Statement) -> list[str]:
    return strings(statement.body.get("Action"))


def not_actions(statement: Statement) -> list[str]:
    return strings(statement.body.get("NotAction"))


def resources(statement: Statement) -> list[str]:
    return strings(statement.body.get("Resource"))


def has_not_resource(statement: Statement) -> bool:
    return "NotResource" in statement.body


def _all_names(pattern: str) -> bool:
    """Whether an IAM wildcard pattern matches every non-empty name: only ``*`` and ``?``, and
    at least one ``*`` (``*``, ``**``, ``?*``; action names are never shorter than three)."""
    pattern = pattern.strip()
    return "*" in pattern and set(pattern) <= {"*", "?"} and pattern.count("?") < 3


def is_wildcard_action(action: str) -> bool:
    """``*`` or a whole service, however it is spelled: ``ec2:*``, ``EC2:*``, ``*:*``,
    ``ec2:**``, ``ec2:?*``, ``e*:*``, `` s3 : * `` (IAM matches action names case-insensitively
    with ``*`` and ``?`` wildcards)."""
    if _all_names(action):
        return True
    _, sep, name = action.partition(":")
    return bool(sep) and _all_names(name)


def pattern_matches(pattern: str, value: str) -> bool:
    """IAM wildcard matching (``*`` and ``?``), case-insensitive as IAM action names are."""
    regex = "".join(
        ".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern.strip()
    )
    return re.fullmatch(regex, value, flags=re.IGNORECASE) is not None


def condition_values(condition: Any, operators: Sequence[str], key: str) -> list[str]:
    """Values of condition ``key`` under any of ``operators`` (keys compared case-insensitively)."""
    out = []
    for operator, entries in mapping(condition).items():
        if operator not in operators:
            continue
        for cond_key, value in mapping(entries).items():
            if isinstance(cond_key, str) and cond_key.lower() == key.lower():
                if isinstance(value, bool):
                    out.append("true" if value else "false")
                else:
                    out.extend(str(v).lower() for v in strings(value))
    return out
