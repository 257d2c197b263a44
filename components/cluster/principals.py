"""Every principal the stack gives an access entry (``cluster.admins``, ``cluster.viewers``,
``cluster.breakGlassRole``) looked up in IAM before anything is registered (issue 28, point 2).

Why: EKS refuses ``CreateAccessEntry`` for a principal that does not exist, and for a role with
a path given without it ("InvalidParameterException: The specified principalArn is invalid:
invalid principal", terraform-aws-modules/terraform-aws-eks#2969: an AWS SSO role
``role/AWSReservedSSO_...`` written without its ``aws-reserved/sso.amazonaws.com/<region>/``
path). Both fail only after the ~15-minute cluster create, and a bad admin blocks every
Kubernetes step (the Kubernetes provider waits for every admin's association).

What is decided here: a principal in the deploying account is looked up by name
(``aws:iam/getRole`` / ``aws:iam/getUser``; IAM names are unique per account whatever the path,
https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html ``RoleName``), and:

- none exists: refused, the config key and value named;
- it exists: its entry uses the ARN IAM answers (``arn``, path included), whatever form was
  written (``role/NAME``, ``role/path/NAME`` or a full ARN). There is no ambiguity to refuse:
  the name names one role. A written form that differs from that ARN is said in an info line;
- the lookup fails otherwise (access denied): refused in ``pulumi up`` naming the permission
  (iam:GetRole / iam:GetUser), a warning in preview;
- unknown (a provider configured from unknown outputs, in preview): the written form is kept.

A principal in another account cannot be looked up with the deploying account's credentials
and is used as written. The deployer's own admin entry always uses the deployer's exact ARN
(``iam.getSessionContext``'s ``issuerArn`` for an assumed role; path included).

Both data sources fail a missing name with the bridge's "couldn't find resource"
(hashicorp/terraform-provider-aws internal/service/iam/role_data_source.go
``dataSourceRoleRead``: ``"reading IAM Role (%s): %s"`` over ``findRoleByName``'s
``retry.NotFoundError``; user_data_source.go ``"reading IAM User (%s): %s"``), passed on as
``cluster.access.cluster_missing`` says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .access import is_deployer
from .spec import ClusterSpec

GET_ROLE = "aws:iam/getRole:getRole"
GET_USER = "aws:iam/getUser:getUser"
_ARN = re.compile(r"^arn:([^:]+):iam::([0-9]{12}):(role|user)/(.+)$")
_PERMISSION = {"role": "iam:GetRole", "user": "iam:GetUser"}
_NOT_FOUND = {"role": "reading IAM Role", "user": "reading IAM User"}


@dataclass(frozen=True)
class Principal:
    """One configured principal: its config key, the value as written, and what it names."""

    key: str
    value: str
    account: str | None  # None: a short form, in the deploying account
    kind: str  # "role" or "user"
    name: str

    def written_arn(self, partition: str, account: str) -> str:
        if self.value.startswith("arn:"):
            return self.value
        return f"arn:{partition}:iam::{account}:{self.value}"


def configured_principals(
    spec: ClusterSpec, extra: Sequence[tuple[str, str]] = ()
) -> list[Principal]:
    """Every plain-string principal of the spec with its config key, in config order (outputs,
    roles this program creates, are skipped: they exist by construction), then ``extra``:
    other (config key, principal) pairs to find in IAM (the queues' tenants)."""
    keyed = [(f"cluster.admins[{i}]", a) for i, a in enumerate(spec.admins)]
    keyed += [(f"cluster.viewers[{i}]", v) for i, v in enumerate(spec.viewers)]
    if spec.break_glass_role is not None:
        keyed.append(("cluster.breakGlassRole", spec.break_glass_role))
    keyed += list(extra)
    out = []
    for key, value in keyed:
        if isinstance(value, str) and (parsed := parse_principal(key, value)) is not None:
            out.append(parsed)
    return out


def parse_principal(key: str, value: str) -> Principal | None:
    """``role/NAME``, ``role/path/NAME``, ``user/NAME`` or an IAM role or user ARN; None for
    anything else (``ClusterSpec`` refuses it before this runs)."""
    if m := _ARN.match(value):
        return Principal(key, value, m.group(2), m.group(3), m.group(4).rsplit("/", 1)[-1])
    kind, _, rest = value.partition("/")
    if kind in ("role", "user") and rest:
        return Principal(key, value, None, kind, rest.rsplit("/", 1)[-1])
    return None


def lookup_missing(kind: str, error: Exception) -> bool:
    """Whether a failed ``getRole``/``getUser`` invoke means that no such principal exists."""
    text = str(error)
    return _NOT_FOUND[kind] in text and ("couldn't find resource" in text or "NoSuchEntity" in text)


def missing_line(p: Principal, account: str) -> str:
    what = "IAM role" if p.kind == "role" else "IAM user"
    return (
        f"{p.key}: {p.value!r}: no {what} named {p.name} exists in account {account} "
        f'({_PERMISSION[p.kind]} found none); EKS would refuse its access entry ("The specified '
        'principalArn is invalid: invalid principal") after the cluster is created; create it '
        "first, or remove it from the list"
    )


def failed_line(p: Principal, error: Exception) -> str:
    return (
        f"{p.key}: looking up {p.value!r} failed ({str(error).strip()}); the deploying identity "
        f"needs {_PERMISSION[p.kind]} to check every principal before anything is created"
    )


@dataclass(frozen=True)
class PrincipalCheck:
    """``arns``: configured value -> the ARN its access entry uses; ``problems``: refusals;
    ``failures``: lookups that failed for another reason than a missing principal; ``notes``:
    info lines (a written form resolved to another ARN)."""

    arns: Mapping[str, str]
    problems: list[str]
    failures: list[str]
    notes: list[str]


def check_principals(
    spec: ClusterSpec,
    partition: str,
    account: str,
    deployer: str,
    lookup: Callable[[str, dict[str, str]], dict],
    extra: Sequence[tuple[str, str]] = (),
) -> PrincipalCheck:
    """Look up every configured principal with ``lookup(token, args)`` (a synchronous invoke
    answering a dict, ``{}`` when unknown, raising the provider's error). Pure but for
    ``lookup``."""
    arns: dict[str, str] = {}
    problems: list[str] = []
    failures: list[str] = []
    notes: list[str] = []
    for p in configured_principals(spec, extra):
        written = p.written_arn(partition, account)
        if is_deployer(written, deployer):
            # The deployer's exact ARN (with its path): the form EKS accepts.
            arns[p.value] = deployer
            if written != deployer:
                notes.append(
                    f"{p.key}: {p.value!r} is the deploying identity; entry for {deployer}"
                )
            continue
        if p.account is not None and p.account != account:
            arns[p.value] = written  # another account: not visible to these credentials
            continue
        token, args = (
            (GET_ROLE, {"name": p.name})
            if p.kind == "role"
            else (
                GET_USER,
                {"userName": p.name},
            )
        )
        try:
            found = lookup(token, args)
        except Exception as error:  # the provider's "not found" only: lookup_missing
            if lookup_missing(p.kind, error):
                problems.append(missing_line(p, account))
            else:
                failures.append(failed_line(p, error))
            arns[p.value] = written
            continue
        real = found.get("arn") if found else None
        arns[p.value] = real or written
        if real and real != written:
            notes.append(f"{p.key}: {p.value!r} is {real}; its access entry uses that ARN")
    return PrincipalCheck(arns, problems, failures, notes)
