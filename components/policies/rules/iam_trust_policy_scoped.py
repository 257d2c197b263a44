"""Role trust policies name who may assume them: no anonymous principal, no whole account
outside ``trustedAccounts``, no unconditioned EKS Pod Identity or web-identity (IRSA) trust."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._iam import IAM_ROLE, Statement, actions, condition_values, document, is_allow
from ._props import mapping, strings

POD_IDENTITY = "pods.eks.amazonaws.com"
# The session tags EKS Pod Identity adds (EKS user guide, pod-id-abac.html#pod-id-abac-tags):
# a trust must pin the namespace, the service account and the cluster (by ARN or by name).
POD_IDENTITY_KEYS = (
    "aws:RequestTag/kubernetes-namespace",
    "aws:RequestTag/kubernetes-service-account",
)
POD_IDENTITY_CLUSTER_KEYS = ("aws:RequestTag/eks-cluster-arn", "aws:RequestTag/eks-cluster-name")
EXACT = ("StringEquals", "StringEqualsIgnoreCase", "ArnEquals")
PATTERN = (*EXACT, "StringLike", "ArnLike")
# An AWS principal naming a whole account: its root ARN or the bare account id ("Specifying a
# principal", IAM user guide, reference_policies_elements_principal.html#principal-accounts:
# either form delegates to every principal that account's own policies allow).
ACCOUNT_PRINCIPAL = re.compile(r"^(?:arn:[a-z-]+:iam::(\d{12}):root|(\d{12}))$")


def _principals(statement: Statement) -> tuple[bool, list[str], list[str], list[str]]:
    """(anonymous, aws, services, federated) of a statement's Principal."""
    principal = statement.body.get("Principal")
    if principal == "*":
        return True, [], [], []
    body = mapping(principal)
    aws = strings(body.get("AWS"))
    return "*" in aws, aws, strings(body.get("Service")), strings(body.get("Federated"))


def _whole_accounts(aws: list[str], trusted: list[str]) -> list[str]:
    """The AWS principals of ``aws`` that name a whole account not in ``trusted``."""
    out = []
    for principal in aws:
        match = ACCOUNT_PRINCIPAL.match(principal)
        if match and (match.group(1) or match.group(2)) not in trusted:
            out.append(principal)
    return out


def _pinned(condition: Any, key: str, operators: tuple[str, ...]) -> bool:
    """Whether ``key`` is pinned to values that are not all wildcards."""
    values = condition_values(condition, operators, key)
    return bool(values) and not any(set(v) <= {"*", "?"} for v in values)


def _statement_problems(label: str, statement: Statement, trusted: list[str]) -> list[str]:
    if not is_allow(statement):
        return []
    anonymous, aws, services, federated = _principals(statement)
    condition = statement.body.get("Condition")
    out = []
    if anonymous:
        out.append(
            f'{label} trusts Principal "*": anyone in any AWS account may assume the role; '
            "name the account, role or service that needs it"
        )
    for principal in _whole_accounts(aws, trusted):
        out.append(
            f"{label} trusts the whole account {principal!r}: every principal that account "
            "allows may assume the role; name the role that needs it, or list the account in "
            f"the rule's trustedAccounts (now {', '.join(trusted) or 'none'})"
        )
    if any(s.lower() == POD_IDENTITY for s in services):
        missing = [k for k in POD_IDENTITY_KEYS if not _pinned(condition, k, EXACT)]
        if not any(_pinned(condition, k, EXACT) for k in POD_IDENTITY_CLUSTER_KEYS):
            missing.append(" or ".join(POD_IDENTITY_CLUSTER_KEYS))
        if missing:
            out.append(
                f"{label} trusts {POD_IDENTITY} without pinning {', '.join(missing)} "
                "(StringEquals): any Pod Identity association in the account, on any cluster, "
                "can hand the role to any pod"
            )
    web_identity = any(a.lower() == "sts:assumerolewithwebidentity" for a in actions(statement))
    if federated and web_identity:
        for provider in federated:
            issuer = provider.split(":oidc-provider/", 1)[-1]
            missing = [
                f"{issuer}:{claim}"
                for claim in ("aud", "sub")
                if not _pinned(condition, f"{issuer}:{claim}", PATTERN)
            ]
            if missing:
                out.append(
                    f"{label} trusts web identities of {provider} without pinning "
                    f"{', '.join(missing)}: any service account (or token audience) of that "
                    "issuer may assume the role"
                )
    return out


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if "assumeRolePolicy" not in props:
        return []
    doc = document(props.get("assumeRolePolicy"))
    if doc.error:
        return []  # IAM refuses it; not a trust question
    out = []
    for statement in doc.statements:
        out += _statement_problems(
            f"assumeRolePolicy {statement.label}",
            statement,
            [str(a) for a in config.get("trustedAccounts") or []],
        )
    return out


RULE = Rule(
    name="iam-trust-policy-scoped",
    description=(
        'Role trust policies must name who may assume the role: no Principal "*", no whole '
        "account (its root or bare id) outside trustedAccounts, and EKS "
        "Pod Identity or web-identity (IRSA) trusts pinned to a cluster, namespace and service "
        "account (EKS user guide, pod-id-role; EKS Best Practices, IAM): an unconditioned trust "
        "lets any workload in the account take the role."
    ),
    config_schema={
        "trustedAccounts": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[0-9]{12}$"},
            "default": [],
            "description": (
                "Account ids whose whole account (arn:...:iam::<id>:root, or the bare id) a "
                "role may trust; the platform's own roles trust none."
            ),
        },
    },
    enforcement_level=MANDATORY,
    category="security",
    severity="high",
    resource_checks={IAM_ROLE: check},
)
