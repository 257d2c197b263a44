"""``validation.principal`` against the other access entries and the region's partition. Pure.

EKS keeps one access entry per IAM principal and cluster (``CreateAccessEntry`` answers
``ResourceInUseException`` for a second one,
https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html, Errors), so the
validation role may not also be an admin, a viewer, the break-glass role or a queue's tenant:
the run's permissions are the ClusterRole's, nothing more.
"""

from __future__ import annotations

from typing import Any

from ..cluster.access import short_identity
from ..errors import Problem, show


def _holders(config: Any) -> list[tuple[str, str]]:
    cluster = config.cluster
    out = [(f"cluster.admins[{i}]", p) for i, p in enumerate(cluster.admins)]
    out += [(f"cluster.viewers[{i}]", p) for i, p in enumerate(cluster.viewers)]
    if isinstance(cluster.break_glass_role, str):
        out.append(("cluster.breakGlassRole", cluster.break_glass_role))
    for qi, queue in enumerate(config.scheduler.queues):
        for ti, p in enumerate(getattr(queue, "tenants", ()) or ()):
            out.append((f"scheduler.queues[{qi}]({queue.name}).tenants[{ti}]", p))
    return [(k, p) for k, p in out if isinstance(p, str)]


def principal_problems(config: Any) -> list[Problem]:
    """The validation principal in another partition, or also holding another access entry
    (paths from the config root)."""
    principal = config.validation.principal
    if not isinstance(principal, str) or (ident := short_identity(principal)) is None:
        return []
    where = ("validation", "principal")
    if principal.startswith("arn:") and principal.split(":")[1] != config.partition:
        return [
            (
                where,
                f"{show(principal)} is in partition {principal.split(':')[1]!r}, but region "
                f"{config.region} is in {config.partition!r}",
            )
        ]
    for key, other in _holders(config):
        theirs = short_identity(other)
        if theirs is None or theirs[1:] != ident[1:]:
            continue
        if theirs[0] == ident[0] or theirs[0] is None or ident[0] is None:
            return [
                (
                    where,
                    f"{show(principal)} is also {key}; a principal has one access entry, and the "
                    "validation role gets only its own ClusterRole: use a role of its own",
                )
            ]
    return []


def validation_principal_keys(config: Any) -> list[tuple[str, str]]:
    """The (config key, principal) the pre-flight finds in IAM with the admins and tenants."""
    principal = config.validation.principal
    return [("validation.principal", principal)] if isinstance(principal, str) else []
