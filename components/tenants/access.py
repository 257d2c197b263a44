"""Who the tenants are and what EKS grants them. Pure: plain config in, plain data out.

Each principal listed in ``scheduler.queues[].tenants`` gets one EKS access entry (type
``STANDARD``) with one association of ``AmazonEKSEditPolicy`` whose access scope is
``{"type": "namespace", "namespaces": [...]}``: the namespaces of every queue that lists it, and
no other (https://docs.aws.amazon.com/eks/latest/userguide/access-policies.html, "namespace"
scope; https://docs.aws.amazon.com/eks/latest/APIReference/API_AccessScope.html).

- One entry per principal: EKS keeps one access entry per IAM principal and cluster
  (``CreateAccessEntry`` answers ``ResourceInUseException`` for a second one,
  https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html, Errors;
  pulumi/pulumi-eks#2373), and an association is identified by cluster, principal and policy
  alone (``DisassociateAccessPolicy`` takes exactly those three,
  https://docs.aws.amazon.com/eks/latest/APIReference/API_DisassociateAccessPolicy.html), so a
  principal has one Edit association whatever its scope. A principal in two queues therefore
  gets one entry whose single Edit association lists both namespaces.
- What Edit allows (https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html,
  ``AmazonEKSEditPolicy``, the Kubernetes ``edit`` role's rules): create and change most
  namespaced workload objects (Pods, Jobs, Deployments, Services, ConfigMaps, Secrets,
  NetworkPolicies) in the scoped namespaces; *not* Roles or RoleBindings, and ResourceQuotas
  and LimitRanges only read (kubernetes v1.36.3
  ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`` ``editRules`` L155-195 write no
  ``rbac.authorization.k8s.io`` resource and no ``resourcequotas``; ``viewRules`` L116 read
  them). Nothing cluster-scoped: no Queue, PriorityClass, NodePool, Namespace, admission
  policy. So a tenant cannot lift its own GPU quota or edit the platform's guardrails.
- Principals are compared as IAM compares them (``cluster.access.short_identity``: the path
  dropped, case ignored), so ``role/ml/alice`` and ``role/Alice`` are one principal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..cluster.access import admin_entry_key, short_identity

EDIT_POLICY = "AmazonEKSEditPolicy"
ACCESS_ENTRY_TYPE = "STANDARD"


def edit_policy_arn(partition: str) -> str:
    """The EKS access policy granting Kubernetes ``edit`` in the scoped namespaces."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{EDIT_POLICY}"


@dataclass(frozen=True)
class TenantBinding:
    """One tenant principal (as first written in config) and the queue namespaces it may edit."""

    principal: str
    queues: tuple[str, ...]
    namespaces: tuple[str, ...]

    @property
    def key(self) -> str:
        """Stable resource-name key (``role-alice``), as the admins' entries are keyed."""
        return admin_entry_key(self.principal)

    def association_scope(self) -> dict[str, Any]:
        """The ``accessScope`` of the principal's one Edit association."""
        return {"type": "namespace", "namespaces": list(self.namespaces)}


def _identity(principal: str) -> tuple[str | None, str, str] | str:
    return short_identity(principal) or principal


def tenant_bindings(queues: Iterable[Any]) -> list[TenantBinding]:
    """Every tenant principal of the leaf queues, once, with the namespaces of the queues that
    list it (in the order the queues come); principals in the order first listed."""
    order: list[tuple[str | None, str, str] | str] = []
    first: dict[Any, str] = {}
    queue_names: dict[Any, list[str]] = {}
    namespaces: dict[Any, list[str]] = {}
    for queue in queues:
        for principal in getattr(queue, "tenants", ()) or ():
            if not isinstance(principal, str):
                continue
            ident = _identity(principal)
            if ident not in first:
                order.append(ident)
                first[ident] = principal
                queue_names[ident], namespaces[ident] = [], []
            if queue.name not in queue_names[ident]:
                queue_names[ident].append(queue.name)
                namespaces[ident].append(queue.workload_namespace)
    return [TenantBinding(first[i], tuple(queue_names[i]), tuple(namespaces[i])) for i in order]


def tenant_principal_keys(config: Any) -> list[tuple[str, str]]:
    """The tenant principals the pre-flight finds in IAM (``iam:GetRole``/``GetUser``) before
    anything is registered (``preflight.py``, with the admins), each distinct principal of
    ``scheduler.queues[].tenants`` once, with the config key it was first written at; none
    when the scheduler is off."""
    scheduler = config.scheduler
    if not scheduler.enabled:
        return []
    keyed: list[tuple[str, str]] = []
    seen: set[Any] = set()
    for i, queue in enumerate(scheduler.queues):
        for j, principal in enumerate(getattr(queue, "tenants", ()) or ()):
            if not isinstance(principal, str) or _identity(principal) in seen:
                continue
            seen.add(_identity(principal))
            keyed.append((f"scheduler.queues[{i}]({queue.name}).tenants[{j}]", principal))
    return keyed


def principal_spellings(queues: Sequence[Any]) -> dict[Any, list[tuple[int, int, str]]]:
    """Every spelling of each tenant principal: identity -> [(queue index, item index, text)]."""
    out: dict[Any, list[tuple[int, int, str]]] = {}
    for qi, queue in enumerate(queues):
        for ti, principal in enumerate(getattr(queue, "tenants", ()) or ()):
            if isinstance(principal, str):
                out.setdefault(_identity(principal), []).append((qi, ti, principal))
    return out
