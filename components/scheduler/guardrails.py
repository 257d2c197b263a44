"""Tenant guardrails (issue 22 point 5; pure builders, dicts out): the Pod Security levels of the
system namespaces the platform creates, and the ``ValidatingAdmissionPolicy`` that keeps tenant
pods off the system nodes by toleration (``spec.nodeName``, which skips taints but NoExecute, is
refused by ``tenancy_policies``' pod policy, deployed with it).

Which pods it must never touch: every system pod. The binding (and the policy's own
``matchConstraints``) select only the platform's queue namespaces (label ``<labelDomain>/
queue``) and exclude every namespace of ``SYSTEM_NAMESPACES`` by name even if it is mislabelled
(``manifests.queue_namespace_selector``). System pods do tolerate everything (aws-node and
eks-pod-identity-agent carry ``{operator: Exists}``) or ``CriticalAddonsOnly`` (coredns,
Karpenter, KAI, the EFA plugin): ``tests/scheduler/test_guardrails_fixtures.py`` runs the policy
over ``tests/fixtures/system-pods`` as the API server would.

``admissionregistration.k8s.io/v1`` ``ValidatingAdmissionPolicy`` is GA and on by default from
Kubernetes 1.30 (KEP-3488), so the same object serves every supported minor (1.30-1.36).
"""

from collections.abc import Sequence

from .admission_pair import validating_pair
from .manifests import queue_namespace_selector
from .podsecurity import BASELINE, PRIVILEGED, pod_security_labels

TENANT_TOLERATION_POLICY_NAME = "platform-tenant-tolerations"
# Pod Security of the system namespaces the stack creates, with why (audit and warn stay at
# "restricted", as on every namespace of the project: ``podsecurity.pod_security_labels``):
# - ``kai-scheduler``: KAI's operator and the Deployments it creates run with KAI's default
#   container securityContext (kai-scheduler v0.16.8 pkg/apis/kai/v1/global.go L91-97:
#   allowPrivilegeEscalation false, runAsNonRoot, runAsUser 10000, drop ALL) but no seccomp
#   profile (the chart's ``global.podSecurityContext`` is ``{}``), which "restricted" requires:
#   "baseline" admits them; nothing there needs a host namespace, hostPath or privilege. The one
#   operand that does, the NUMA placement exporter (hostPath /sys and the podresources socket, as
#   root: pkg/operator/operands/numa_placement_exporter/resources.go L50-67), is deployed only
#   when a shard enables the numa plugin (numa_placement_exporter.go L57-66), which the
#   platform does not.
# - ``kai-resource-reservation`` (created by KAI's chart, labelled through
#   ``global.resourceReservation.namespaceLabels``: deployments/kai-scheduler/templates/services/
#   resourcereservation-namespace.yaml) and ``kai-scale-adjust`` (``nodescaleadjuster.labels``,
#   scalingpod-namespace.yaml, with cluster autoscaling): the reservation pods take the same
#   container securityContext (pkg/operator/operands/binder/resources.go L277-288); the scaling
#   pods set none (pkg/nodescaleadjuster): "baseline".
# - ``gpu-operator``: its operands (device plugin, DCGM, validator, MIG manager, feature
#   discovery) run privileged with hostPath mounts (NVIDIA/gpu-operator v26.7.0
#   assets/state-device-plugin/0500_daemonset.yaml L33, assets/state-dcgm-exporter/
#   0800_daemonset.yaml L34, assets/gpu-feature-discovery/0500_daemonset.yaml L34:
#   ``privileged: true``), so "privileged".
# kube-system (Karpenter, the EFA plugin, the EKS add-ons) is EKS's, not created by the stack.
KAI_NAMESPACE_LEVEL = BASELINE
KAI_WORKLOAD_NAMESPACE_LEVEL = BASELINE
GPU_OPERATOR_NAMESPACE_LEVEL = PRIVILEGED


def system_namespace_labels(level: str, kubernetes_version: str) -> dict[str, str]:
    """The Pod Security labels of a system namespace: enforce ``level``, audit and warn at
    "restricted" (an operand that should not need its level is then seen in the audit log)."""
    return pod_security_labels(level, kubernetes_version)


def _cel_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def tenant_toleration_expressions(system_taint_keys: Sequence[str]) -> list[dict]:
    """The policy's validations (CEL on a Pod): no toleration of a system node taint key, and no
    toleration without a key (with ``operator: Exists``, the only operator an empty key allows:
    k8s.io/api v0.36.3 core/v1/types.go ``Toleration.Key``, "If the key is empty, operator must
    be Exists; this combination means to match all values and all keys")."""
    keys = _cel_list(system_taint_keys)
    return [
        {
            "expression": (
                "!has(object.spec.tolerations) || !object.spec.tolerations.exists(t, "
                f"has(t.key) && t.key in {keys})"
            ),
            "message": (
                "tenant pods may not tolerate the system node group's taint "
                f"({', '.join(system_taint_keys)}): the system nodes run only the platform's "
                "controllers"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": (
                "!has(object.spec.tolerations) || !object.spec.tolerations.exists(t, "
                "!has(t.key) || t.key == '')"
            ),
            "message": (
                "tenant pods may not carry a toleration without a key (operator Exists "
                "tolerates every taint, the system nodes' included): name the taint to tolerate"
            ),
            "reason": "Forbidden",
        },
    ]


def tenant_toleration_policy(*, label_domain: str, system_taint_keys: Sequence[str]) -> list[dict]:
    """The ``ValidatingAdmissionPolicy`` and its binding denying, in the queue namespaces only,
    pods (created or updated: tolerations may be added to a running pod) that tolerate a system
    node taint or every taint. ``failurePolicy: Fail``: a CEL error denies rather than admits."""
    if not system_taint_keys:
        raise ValueError("tenant_toleration_policy: system_taint_keys is empty")
    selector = queue_namespace_selector(label_domain)
    return validating_pair(
        name=TENANT_TOLERATION_POLICY_NAME,
        match_constraints={
            "namespaceSelector": selector,
            "resourceRules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["pods"],
                }
            ],
        },
        validations=tenant_toleration_expressions(system_taint_keys),
        namespace_selector=selector,
    )
