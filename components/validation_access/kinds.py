"""The (apiVersion, kind) pairs the stack renders, from its config alone (no ``build/``): what
the validation's ``deployment`` phase reads one by one (``validate.rbac.rendered_rules``), so
the ClusterRole the stack deploys grants ``get`` on exactly these kinds. Pure.

Which component creates which kind (the render's ``manifests/`` is every ``kubernetes:``
resource but Helm releases, ``offline/write.py``):

- every pool: a ``NodePool`` and an ``EC2NodeClass`` (``nodepool/component.py``); a
  ``NodeOverlay`` when a pool declares hugepages or advertised GPUs (``budget.stack.
  needs_node_overlay``, the same test that turns on Karpenter's gate);
- the GPU Operator: its ``Namespace`` (``gpu_operator/component.py``);
- the KAI scheduler (on, with the GPU Operator): its and the queues' ``Namespace``, the
  ``PriorityClass``, ``Queue``, validating admission policies and bindings, from Kubernetes
  1.36 mutating ones too, ``NetworkPolicy`` (``scheduler/component.py``, which the platform
  builds with its guardrails and disruption policy on);
- a finite queue GPU limit: a ``ResourceQuota`` (``tenants.quota``);
- ``validation.principal``: the ``ClusterRole`` and ``ClusterRoleBinding`` themselves
  (``component.py``), so ``deployment`` can read them back.

tests/test_validation_access.py holds this equal to the offline render's kinds of the fixture
stacks, with a principal, without the scheduler, and on Kubernetes 1.35.
"""

from __future__ import annotations

from typing import Any

from ..budget.stack import needs_node_overlay
from ..karpenter.spec import version_tuple
from ..scheduler.constants import MUTATING_ADMISSION_POLICY_GA
from ..tenants.quota import resource_quota_manifests

Kind = tuple[str, str]

_SCHEDULER: tuple[Kind, ...] = (
    ("v1", "Namespace"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.run.ai/v2", "Queue"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
)
# From Kubernetes 1.36 only (scheduler.constants.MUTATING_ADMISSION_POLICY_GA).
_MUTATING: tuple[Kind, ...] = (
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding"),
)
_RBAC: tuple[Kind, ...] = (
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
)


def platform_kinds(config: Any) -> list[Kind]:
    """The kinds ``config``'s stack renders, sorted."""
    kinds: set[Kind] = set()
    if config.pools:
        kinds |= {("karpenter.sh/v1", "NodePool"), ("karpenter.k8s.aws/v1", "EC2NodeClass")}
    if needs_node_overlay(config.pools, config.gpu_operator):
        kinds.add(("karpenter.sh/v1alpha1", "NodeOverlay"))
    if config.gpu_operator.enabled:
        kinds.add(("v1", "Namespace"))
        if config.scheduler.enabled:
            kinds |= set(_SCHEDULER)
            minor = version_tuple(config.cluster.kubernetes_version)[:2]
            if minor >= MUTATING_ADMISSION_POLICY_GA:
                kinds |= set(_MUTATING)
            if resource_quota_manifests(config):
                kinds.add(("v1", "ResourceQuota"))
    if config.validation.principal is not None:
        kinds |= set(_RBAC)
    return sorted(kinds)


def kind_manifests(config: Any) -> list[dict[str, str]]:
    """``platform_kinds`` as the stubs ``validate.rbac.cluster_role`` reads."""
    return [{"apiVersion": a, "kind": k} for a, k in platform_kinds(config)]
