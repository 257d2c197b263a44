"""Tests for ``eks_gpu_platform.scheduler.guardrails`` (issue 22 point 5): the tenant toleration
policy's exact manifests, and its verdict on the pods of a real EKS GPU node
(``tests/fixtures/system-pods``: never denied, in their own namespaces or in a mislabelled one)
and on tenant pods, evaluated as the API server does (``test_admission_fixtures``' helpers)."""

import copy
import re

import pytest

from eks_gpu_platform.scheduler import SYSTEM_NAMESPACES
from eks_gpu_platform.scheduler.guardrails import (
    GPU_OPERATOR_NAMESPACE_LEVEL,
    KAI_NAMESPACE_LEVEL,
    KAI_WORKLOAD_NAMESPACE_LEVEL,
    system_namespace_labels,
    tenant_toleration_policy,
)

from .helpers import queue_namespace_selector
from .test_admission_fixtures import RENDERS, SYSTEM_PODS, _cel, _id, _namespaces, _selected

DOMAIN = "eks-gpu-platform.io"
TAINT_KEYS = ["CriticalAddonsOnly"]
SELECTOR = queue_namespace_selector(DOMAIN)
NO_SYSTEM_TAINT = (
    "!has(object.spec.tolerations) || !object.spec.tolerations.exists(t, "
    "has(t.key) && t.key in ['CriticalAddonsOnly'])"
)
NO_EMPTY_KEY = (
    "!has(object.spec.tolerations) || !object.spec.tolerations.exists(t, "
    "!has(t.key) || t.key == '')"
)
SYSTEM_TAINT_MESSAGE = (
    "tenant pods may not tolerate the system node group's taint (CriticalAddonsOnly): the "
    "system nodes run only the platform's controllers"
)
EMPTY_KEY_MESSAGE = (
    "tenant pods may not carry a toleration without a key (operator Exists tolerates every "
    "taint, the system nodes' included): name the taint to tolerate"
)


def test_tenant_toleration_policy_manifests():
    assert tenant_toleration_policy(label_domain=DOMAIN, system_taint_keys=TAINT_KEYS) == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "platform-tenant-tolerations"},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "namespaceSelector": SELECTOR,
                    "resourceRules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["pods"],
                        }
                    ],
                },
                "validations": [
                    {
                        "expression": NO_SYSTEM_TAINT,
                        "message": SYSTEM_TAINT_MESSAGE,
                        "reason": "Forbidden",
                    },
                    {
                        "expression": NO_EMPTY_KEY,
                        "message": EMPTY_KEY_MESSAGE,
                        "reason": "Forbidden",
                    },
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "platform-tenant-tolerations"},
            "spec": {
                "policyName": "platform-tenant-tolerations",
                "matchResources": {"namespaceSelector": SELECTOR},
                "validationActions": ["Deny"],
            },
        },
    ]


def test_tenant_toleration_policy_needs_a_taint_key():
    with pytest.raises(ValueError, match=re.escape("system_taint_keys is empty")):
        tenant_toleration_policy(label_domain=DOMAIN, system_taint_keys=[])


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        (KAI_NAMESPACE_LEVEL, "baseline"),
        (KAI_WORKLOAD_NAMESPACE_LEVEL, "baseline"),
        (GPU_OPERATOR_NAMESPACE_LEVEL, "privileged"),
    ],
)
def test_system_namespace_levels(level, expected):
    assert level == expected
    assert system_namespace_labels(level, "1.30") == {
        "pod-security.kubernetes.io/enforce": expected,
        "pod-security.kubernetes.io/enforce-version": "v1.30",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "v1.30",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "v1.30",
    }


# --- the policy as the API server evaluates it --------------------------------------------------


def denials(manifests: list[dict], pod: dict, namespace_labels: dict) -> list[str]:
    """The messages the API server would deny ``pod`` with (empty: admitted)."""
    policy, binding = manifests
    if not _selected(policy["spec"]["matchConstraints"]["namespaceSelector"], namespace_labels):
        return []
    if not _selected(binding["spec"]["matchResources"]["namespaceSelector"], namespace_labels):
        return []
    return [
        v["message"] for v in policy["spec"]["validations"] if not _cel(v["expression"], pod, "Pod")
    ]


def _policy(config) -> list[dict]:
    return tenant_toleration_policy(
        label_domain=config.cluster.label_domain, system_taint_keys=TAINT_KEYS
    )


def _tenant_namespace(config) -> str:
    return next(
        name
        for name, labels in _namespaces(config).items()
        if name not in SYSTEM_NAMESPACES and f"{config.cluster.label_domain}/queue" in labels
    )


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", SYSTEM_PODS, ids=_id)
def test_no_system_pod_is_denied(stack, config, pod):
    namespaces = _namespaces(config)
    assert denials(_policy(config), pod, namespaces[pod["metadata"]["namespace"]]) == []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", SYSTEM_PODS, ids=_id)
def test_a_mislabelled_system_namespace_is_still_excluded(stack, config, pod):
    labels = {
        f"{config.cluster.label_domain}/queue": "research-serving",
        "kubernetes.io/metadata.name": pod["metadata"]["namespace"],
    }
    assert denials(_policy(config), pod, labels) == []


def test_the_system_pods_would_be_denied_in_a_queue_namespace():
    """The policy is not vacuous: moved into a queue namespace, every system pod that tolerates
    everything or the system taint is denied; only the GPU Operator's operands (GPU and EFA
    taints only) and KAI's reservation pod (no tolerations) would pass."""
    _, config = RENDERS[0]
    labels = _namespaces(config)[_tenant_namespace(config)]
    admitted = [_id(p) for p in SYSTEM_PODS if not denials(_policy(config), p, labels)]
    assert admitted == [
        "gpu-operator/nvidia-device-plugin-daemonset-a9k0z",
        "gpu-operator/gpu-feature-discovery-b9k1z",
        "gpu-operator/nvidia-dcgm-exporter-c9k2z",
        "gpu-operator/nvidia-operator-validator-d9k3z",
        "gpu-operator/nvidia-mig-manager-e9k4z",
        "gpu-operator/gpu-operator-node-feature-discovery-worker-h7m2c",
        "kai-resource-reservation/gpu-reservation-8eee7ebe67d00371",
    ]
    assert len(SYSTEM_PODS) - len(admitted) == 17


def _tenant_pod(tolerations: list[dict] | None) -> dict:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "t", "labels": {}},
        "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "c", "image": "i"}]},
    }
    if tolerations is not None:
        pod["spec"]["tolerations"] = tolerations
    return pod


TENANT_CASES = [
    ("no tolerations", None, []),
    (
        "gpu toleration",
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        [],
    ),
    (
        "not-ready defaults",
        [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
        [],
    ),
    ("system taint", [{"key": "CriticalAddonsOnly", "operator": "Exists"}], [SYSTEM_TAINT_MESSAGE]),
    (
        "system taint by value",
        [
            {
                "key": "CriticalAddonsOnly",
                "operator": "Equal",
                "value": "true",
                "effect": "NoSchedule",
            }
        ],
        [SYSTEM_TAINT_MESSAGE],
    ),
    ("everything", [{"operator": "Exists"}], [EMPTY_KEY_MESSAGE]),
    (
        "everything NoSchedule",
        [{"operator": "Exists", "effect": "NoSchedule"}],
        [EMPTY_KEY_MESSAGE],
    ),
    (
        "both",
        [
            {"key": "nvidia.com/gpu", "operator": "Exists"},
            {"key": "CriticalAddonsOnly"},
            {"operator": "Exists"},
        ],
        [SYSTEM_TAINT_MESSAGE, EMPTY_KEY_MESSAGE],
    ),
]


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize(
    ("case", "tolerations", "expected"), TENANT_CASES, ids=[c[0] for c in TENANT_CASES]
)
def test_tenant_pods(stack, config, case, tolerations, expected):
    labels = _namespaces(config)[_tenant_namespace(config)]
    assert denials(_policy(config), _tenant_pod(tolerations), labels) == expected


def test_a_tenant_pod_outside_the_queue_namespaces_is_left_alone():
    _, config = RENDERS[0]
    pod = _tenant_pod([{"operator": "Exists"}])
    assert denials(_policy(config), copy.deepcopy(pod), _namespaces(config)["default"]) == []
