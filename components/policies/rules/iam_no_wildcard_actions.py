"""No identity policy allows ``*`` or a whole service (``ec2:*``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import Any

from ._base import MANDATORY, Rule
from ._iam import (
    DOCUMENT_TYPES,
    IAM_ROLE,
    actions,
    identity_documents,
    is_allow,
    is_wildcard_action,
    not_actions,
)
from ._props import sequence, show_list

ATTACHMENT_TYPES = (
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:iam/userPolicyAttachment:UserPolicyAttachment",
    "aws:iam/groupPolicyAttachment:GroupPolicyAttachment",
    "aws:iam/policyAttachment:PolicyAttachment",
)
# AWS-managed policies that grant "*" or "<service>:*" (AdministratorAccess, PowerUserAccess's
# NotAction, IAMFullAccess and every "<Service>FullAccess").
BROAD_MANAGED_POLICY = re.compile(
    r"^arn:[^:]+:iam::aws:policy/(?:.+/)?"
    r"(AdministratorAccess(?:-[A-Za-z0-9]+)?|PowerUserAccess|[A-Za-z0-9]*FullAccess)$"
)


def _document_problems(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    out = []
    for doc in identity_documents(resource_type, props):
        if doc.error is not None:
            out.append(f"{doc.where}policy {doc.error}")
            continue
        for statement in doc.statements:
            if not is_allow(statement):
                continue
            wild = [a for a in actions(statement) if is_wildcard_action(a)]
            if wild:
                out.append(
                    f"{doc.where}{statement.label} allows {show_list(wild)}; grant the "
                    "specific actions instead"
                )
            excluded = not_actions(statement)
            if excluded:
                out.append(
                    f"{doc.where}{statement.label} allows every action except "
                    f"{show_list(excluded)} (Allow with NotAction); list the actions instead"
                )
    return out


def _managed_problems(arns: list[Any], where: str) -> list[str]:
    return [
        f'{where}attaches "{arn}", an AWS-managed policy that allows wildcard actions; '
        "attach a policy listing the actions needed"
        for arn in arns
        if isinstance(arn, str) and BROAD_MANAGED_POLICY.match(arn)
    ]


def check_document(
    resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]
) -> list[str]:
    return _document_problems(resource_type, props)


def check_role(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    return _document_problems(IAM_ROLE, props) + _managed_problems(
        list(sequence(props.get("managedPolicyArns"))), "managedPolicyArns "
    )


def check_attachment(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    return _managed_problems([props.get("policyArn")], "")


RULE = Rule(
    name="iam-no-wildcard-actions",
    description=(
        'IAM policies must not allow "*" or a whole service ("<service>:*"), nor attach '
        "AWS-managed policies that do: every grant is a blast radius, and wildcards also grant "
        "actions AWS adds later."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="critical",
    resource_checks={
        **{t: partial(check_document, t) for t in DOCUMENT_TYPES},
        IAM_ROLE: check_role,
        **{t: check_attachment for t in ATTACHMENT_TYPES},
    },
)
