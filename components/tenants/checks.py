"""Validation of ``scheduler.queues[].tenants``: the principal forms ``cluster.admins`` takes, one
spelling per principal, leaf queues only, and no principal that already holds an access entry
of another kind (admins, viewers, the break-glass role).

A tenant that is also an admin, a viewer or the break-glass role is refused, not merged: EKS
keeps one access entry per principal (``access.py``), the admin's and viewer's entries carry a
cluster-scoped policy (cluster-admin, AdminView) that already covers every namespace, and a
merged entry would tie the tenant's Edit association to the lifetime of an admin entry. The
message says which list to keep it in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..aws import IAM_PRINCIPAL_PATTERN, IAM_SHORTHAND_PATTERN
from ..cluster.access import short_identity
from ..errors import Problem, show
from .access import principal_spellings

FORM = (
    "is not an IAM role or user; expected an ARN such as "
    "'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME' / 'user/NAME'"
)


def queue_tenant_problems(tenants: Sequence[Any]) -> list[Problem]:
    """One queue's ``tenants`` (paths relative to the queue)."""
    out: list[Problem] = []
    seen: dict[Any, int] = {}
    for i, principal in enumerate(tenants):
        if not isinstance(principal, str) or not (
            re.fullmatch(IAM_PRINCIPAL_PATTERN, principal)
            or re.fullmatch(IAM_SHORTHAND_PATTERN, principal)
        ):
            out.append((("tenants", i), f"{show(principal)} {FORM}"))
            continue
        ident = short_identity(principal) or principal
        if ident in seen:
            out.append(
                (
                    ("tenants", i),
                    f"{show(principal)} names the same IAM principal as tenants[{seen[ident]}] "
                    f"{show(tenants[seen[ident]])}; list it once",
                )
            )
        else:
            seen[ident] = i
    return out


def scheduler_tenant_problems(queues: Sequence[Any], leaves: set[str]) -> list[Problem]:
    """Across the queues (paths relative to ``scheduler``): tenants only on leaf queues (only
    they have a namespace), and one principal written one way in every queue (its one access
    entry has one principal ARN)."""
    out: list[Problem] = []
    for i, queue in enumerate(queues):
        if queue.tenants and queue.name not in leaves:
            out.append(
                (
                    ("queues", i, "tenants"),
                    f"is set, but {show(queue.name)} is a parent queue; only leaf queues take "
                    "workloads and have a namespace to grant",
                )
            )
    for spellings in principal_spellings(queues).values():
        qi0, ti0, first = spellings[0]
        for qi, ti, text in spellings[1:]:
            if text != first and qi != qi0:
                out.append(
                    (
                        ("queues", qi, "tenants", ti),
                        f"{show(text)} names the same IAM principal as "
                        f"queues[{qi0}].tenants[{ti0}] {show(first)}, written differently; a "
                        "principal has one access entry, so write it the same way in every queue",
                    )
                )
    return out


def tenant_conflict_problems(cluster: Any, queues: Sequence[Any]) -> list[Problem]:
    """Tenants that are also ``cluster.admins``, ``cluster.viewers`` or
    ``cluster.breakGlassRole`` (paths from the config root)."""
    holders: list[tuple[str, Any]] = []
    for key in ("admins", "viewers"):
        holders += [(f"cluster.{key}", p) for p in getattr(cluster, key, ()) or ()]
    if isinstance(getattr(cluster, "break_glass_role", None), str):
        holders.append(("cluster.breakGlassRole", cluster.break_glass_role))
    known: list[tuple[tuple[str | None, str, str], str]] = []
    for where, principal in holders:
        if isinstance(principal, str) and (ident := short_identity(principal)) is not None:
            known.append((ident, where))
    out: list[Problem] = []
    for qi, queue in enumerate(queues):
        for ti, principal in enumerate(queue.tenants):
            ident = short_identity(principal) if isinstance(principal, str) else None
            where = next((w for k, w in known if ident is not None and _same(k, ident)), None)
            if where is not None:
                out.append(
                    (
                        ("scheduler", "queues", qi, "tenants", ti),
                        f"{show(principal)} is also in {where}, whose access entry "
                        "already reaches every namespace; a principal has one access entry, so "
                        "list it in one of the two",
                    )
                )
    return out


def _same(a: tuple[str | None, str, str], b: tuple[str | None, str, str]) -> bool:
    """Same kind and name, and the same account, or a short form (account unknown until the
    deploy: the deploying account, which a full ARN of the same name most likely names)."""
    return a[1:] == b[1:] and (a[0] == b[0] or a[0] is None or b[0] is None)


def tenant_partition_problems(queues: Sequence[Any], region: str, partition: str) -> list[Problem]:
    """Tenant ARNs in another partition than the region's."""
    out: list[Problem] = []
    for qi, queue in enumerate(queues):
        for ti, principal in enumerate(queue.tenants):
            if not isinstance(principal, str) or not principal.startswith("arn:"):
                continue
            arn_partition = principal.split(":")[1]
            if arn_partition != partition:
                out.append(
                    (
                        ("scheduler", "queues", qi, "tenants", ti),
                        f"{show(principal)} is in partition {arn_partition!r}, but region "
                        f"{region} is in {partition!r}",
                    )
                )
    return out
