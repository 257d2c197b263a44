"""The MIG startup remover: on each node of a MIG pool, once the MIG manager has applied the
pool's layout, starts the device plugin and then, once the node advertises the layout, takes
the NodePool startup taint off (review F6).

Pure builders, plain data in, manifests out: a ServiceAccount, a ClusterRole and its binding, a
ValidatingAdmissionPolicy and its binding, and a DaemonSet in the GPU Operator's namespace
running ``mig_ready_script.py``.

- Why: Karpenter initializes a node once every requested resource is non-zero and from then on
  charges ``Node.Status.Capacity`` (kubernetes-sigs/karpenter v1.15.0
  pkg/controllers/nodeclaim/lifecycle/initialization.go L89-92, L137-147). The startup taint
  keeps the node uninitialized (initialization.go L81-84) and KAI from binding pods to it; but
  an uninitialized node is charged its NodeClaim's (overlaid) capacity only for the resources
  the node reports as zero (pkg/controllers/state/statenode.go L458-467), and the device plugin,
  were it running, would advertise the whole GPUs as ``nvidia.com/gpu: 8`` before the MIG
  manager reconfigured (and rebooted) the node (NVIDIA/k8s-device-plugin v0.20.0
  internal/rm/rm.go L111). So the MIG pool's NodePool also labels its nodes
  ``nvidia.com/gpu.deploy.device-plugin=false`` (``nodepool.DEVICE_PLUGIN_HELD``), which the GPU
  Operator and the MIG manager keep; the node advertises no GPU until this remover sets it to
  ``true``, and Karpenter charges the NodeClaim's overlaid capacity meanwhile (56 on a p4d
  under ``all-1g.5gb``, not 8). Nothing the MIG manager does waits for the device plugin: it
  waits for the device plugin's pods to be gone (NVIDIA/mig-parted v0.15.0
  pkg/mig/reconfigure/reconfigure.go L388-395), and GFD and the MIG manager wait only for the
  validator's ``toolkit-ready`` (gpu-operator v26.7.0 assets/gpu-feature-discovery/
  0500_daemonset.yaml L29-32, assets/state-mig-manager/0600_daemonset.yaml L28-31). The
  validator's ``plugin-validation`` init container gives up after 30 tries 5 s apart and the
  kubelet restarts it (cmd/nvidia-validator/main.go L198-201, L1447-1466) until the device
  plugin has registered; nothing waits on its ``plugin-ready`` marker.
- Where: every node of the MIG pools (``<domain>/pool``) from the moment it joins (issue 30.1:
  it must hold the device plugin off before the GPU Operator can start it, see
  ``mig_ready_script.py`` step 1), not only nodes with ``nvidia.com/mig.config.state=success``
  (NVIDIA/mig-parted v0.15.0 pkg/mig/reconfigure/reconfigure.go L142-145, L233-239). It
  tolerates the startup taint, ``nvidia.com/gpu`` and the GPU pools' other taints. Selecting
  on the pool label only, which the NodePool's template carries, it is now part of a new MIG
  node's DaemonSet overhead for Karpenter (kubernetes-sigs/karpenter v1.15.0
  pkg/controllers/provisioning/scheduling/scheduler.go L1049-1072, ``IsCompatible``): 10m CPU
  and 32Mi more reserved on a node of 96 or more vCPUs.
- Permissions: get and patch on nodes, cluster-wide. RBAC cannot narrow that to the pod's own
  node (``resourceNames`` are fixed names), so a ValidatingAdmissionPolicy
  (``mig_ready_admission``) does: the ServiceAccount's node updates must come from a pod on that
  node (the bound token's ``authentication.kubernetes.io/node-name`` extra: k8s.io/apiserver
  v0.36.3 pkg/authentication/serviceaccount/util.go L47, L153-156; feature
  ServiceAccountTokenPodNodeInfo beta and on from 1.30, GA 1.32: kubernetes v1.36.3
  pkg/features/kube_features.go L1982-1986), may remove the startup taint and nothing else of
  the taints, and may change one label, ``nvidia.com/gpu.deploy.device-plugin`` from ``false``
  to ``true``, or to ``false`` from unset or ``true`` while the layout is not applied (every
  other label and every annotation unchanged). It may also delete its node's NodeClaim and
  record Events (``mig_replace.py``).
  ``admissionregistration.k8s.io/v1`` is served from Kubernetes 1.30, the oldest version the
  platform supports.
- Pod: Pod Security "restricted" (non-root, no privilege escalation, every capability dropped,
  RuntimeDefault seccomp, read-only root filesystem), 10m CPU and 32Mi. No priority class:
  the node it serves is tainted and empty of workloads until it has run, so it never needs to
  preempt anything, and ``system-node-critical`` would let a helper of this kind evict user pods.
- Image: the official Python image, pinned by digest (``versions.MIG_READY_IMAGE``).
"""

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import versions
from ..nodepool import (
    DEVICE_PLUGIN_DEPLOY_LABEL,
    DEVICE_PLUGIN_HELD,
    DEVICE_PLUGIN_RELEASED,
    GPU_TAINT,
    MIG_CONFIG_STATE_LABEL,
    MIG_CONFIG_STATE_SUCCESS,
    MIG_PENDING_TAINT,
)
from .spec import DEFAULT_MIG_READY_DEADLINE_SECONDS, NAMESPACE

MIG_READY_NAME = "eks-gpu-platform-mig-ready"
MIG_READY_SCRIPT = Path(__file__).with_name("mig_ready_script.py").read_text()
MIG_READY_LABELS = {
    "app.kubernetes.io/name": "mig-ready",
    "app.kubernetes.io/part-of": "eks-gpu-platform",
}


def mig_ready_rbac() -> list[dict[str, Any]]:
    """The ServiceAccount, the ClusterRole (get and patch nodes, delete NodeClaims: both narrowed
    to the pod's own node by ``mig_ready_admission``) and the binding."""
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": MIG_READY_NAME,
                "namespace": NAMESPACE,
                "labels": MIG_READY_LABELS,
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": MIG_READY_NAME, "labels": MIG_READY_LABELS},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
                {"apiGroups": ["karpenter.sh"], "resources": ["nodeclaims"], "verbs": ["delete"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": MIG_READY_NAME, "labels": MIG_READY_LABELS},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": MIG_READY_NAME,
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": MIG_READY_NAME, "namespace": NAMESPACE}
            ],
        },
    ]


def mig_ready_daemonset(
    *,
    pool_label_key: str,
    expected: Mapping[str, Mapping[str, Mapping[str, int]]],
    tolerations: Sequence[Mapping[str, str]] = (),
    deadline_seconds: int = DEFAULT_MIG_READY_DEADLINE_SECONDS,
) -> dict[str, Any]:
    """The remover's DaemonSet. ``expected``: per MIG pool, per instance type, what its nodes
    advertise once the layout is applied (``PoolCapacity.types[].advertised``, the numbers its
    NodeOverlays give Karpenter); ``tolerations``: the MIG pools' taints beyond
    ``nvidia.com/gpu`` and the startup taint (``taint_tolerations``); ``deadline_seconds``: how
    long after joining a node may keep its startup taint before it is replaced
    (``gpuOperator.migReadyDeadline``)."""
    by_type: dict[str, dict[str, int]] = {}
    for types in expected.values():
        for itype, advertised in types.items():
            by_type[itype] = {r: int(n) for r, n in sorted(advertised.items())}
    taint = MIG_PENDING_TAINT
    own = [
        {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]},
        {"key": GPU_TAINT["key"], "operator": "Exists", "effect": GPU_TAINT["effect"]},
    ]
    extra = [dict(t) for t in tolerations if t["key"] not in (taint["key"], GPU_TAINT["key"])]
    container = {
        "name": "remove-startup-taint",
        "image": versions.MIG_READY_IMAGE,
        "command": ["python", "-c", MIG_READY_SCRIPT],
        "env": [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "TAINT_KEY", "value": taint["key"]},
            {"name": "TAINT_EFFECT", "value": taint["effect"]},
            {"name": "EXPECTED", "value": json.dumps(dict(sorted(by_type.items())))},
            {"name": "DEADLINE_SECONDS", "value": str(deadline_seconds)},
            {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
        ],
        "resources": {
            "requests": {"cpu": "10m", "memory": "32Mi"},
            "limits": {"memory": "64Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": MIG_READY_NAME, "namespace": NAMESPACE, "labels": MIG_READY_LABELS},
        "spec": {
            "selector": {"matchLabels": MIG_READY_LABELS},
            "template": {
                "metadata": {"labels": MIG_READY_LABELS},
                "spec": {
                    "serviceAccountName": MIG_READY_NAME,
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": pool_label_key,
                                                "operator": "In",
                                                "values": sorted(expected),
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": own + extra,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "runAsGroup": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "terminationGracePeriodSeconds": 5,
                    "containers": [container],
                },
            },
        },
    }


MIG_READY_USER = f"system:serviceaccount:{NAMESPACE}:{MIG_READY_NAME}"
NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"


def mig_ready_admission(*, pool_label_key: str, pools: Sequence[str]) -> list[dict[str, Any]]:
    """The ValidatingAdmissionPolicy and its binding: the remover may update only its own node,
    a node of one of ``pools`` (the MIG pools, by ``pool_label_key``), and only to remove
    ``MIG_PENDING_TAINT``, to set ``DEVICE_PLUGIN_DEPLOY_LABEL`` from ``false`` to ``true``, or,
    while the layout is not applied, to put ``false`` back where the label is unset or ``true``
    (issue 30.1)."""
    key, effect = MIG_PENDING_TAINT["key"], MIG_PENDING_TAINT["effect"]
    label, held, released = DEVICE_PLUGIN_DEPLOY_LABEL, DEVICE_PLUGIN_HELD, DEVICE_PLUGIN_RELEASED
    state, success = MIG_CONFIG_STATE_LABEL, MIG_CONFIG_STATE_SUCCESS
    taints = "(has({0}.spec.taints) ? {0}.spec.taints : [])"
    field = "(has({0}.metadata.{1}) ? {0}.metadata.{1} : {{}})"
    new, old = field.format("object", "labels"), field.format("oldObject", "labels")
    validations = [
        {
            "expression": (
                f"has(request.userInfo.extra) && '{NODE_NAME_EXTRA}' in request.userInfo.extra "
                f"&& request.userInfo.extra['{NODE_NAME_EXTRA}'] == [object.metadata.name]"
            ),
            "message": "the MIG startup remover may update only the node its pod runs on",
        },
        {
            "expression": (
                f"'{pool_label_key}' in {old} && {old}['{pool_label_key}'] in "
                f"[{', '.join(repr(p) for p in sorted(pools))}]"
            ),
            "message": (
                "the MIG startup remover may update only nodes of the MIG pools "
                f"({', '.join(sorted(pools))})"
            ),
        },
        {
            "expression": (
                f"{taints.format('object')} == {taints.format('oldObject')} || "
                f"{taints.format('object')} == {taints.format('oldObject')}"
                f".filter(t, !(t.key == '{key}' && t.effect == '{effect}'))"
            ),
            "message": f"the MIG startup remover may only remove the {key}:{effect} taint",
        },
        {
            "expression": (
                f"{new}.all(k, k == '{label}' || (k in {old} && {old}[k] == {new}[k])) "
                f"&& {old}.all(k, k == '{label}' || k in {new}) "
                f"&& (('{label}' in {new}) == ('{label}' in {old}) "
                f"&& (!('{label}' in {new}) || {new}['{label}'] == {old}['{label}']) "
                f"|| '{label}' in {old} && {old}['{label}'] == '{held}' "
                f"&& '{label}' in {new} && {new}['{label}'] == '{released}' "
                f"|| !('{state}' in {old} && {old}['{state}'] == '{success}') "
                f"&& (!('{label}' in {old}) || {old}['{label}'] == '{released}') "
                f"&& '{label}' in {new} && {new}['{label}'] == '{held}')"
            ),
            "message": (
                f"the MIG startup remover may change no node label but {label}, "
                f"and that only from '{held}' to '{released}', or to '{held}' from "
                f"'{released}' or unset while {state} is not '{success}'"
            ),
        },
        {
            "expression": (
                f"{field.format('object', 'annotations')} == "
                f"{field.format('oldObject', 'annotations')}"
            ),
            "message": "the MIG startup remover may not change node annotations",
        },
    ]
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": MIG_READY_NAME, "labels": MIG_READY_LABELS},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["UPDATE"],
                            "resources": ["nodes"],
                        }
                    ]
                },
                "matchConditions": [
                    {
                        "name": "mig-ready-service-account",
                        "expression": f"request.userInfo.username == '{MIG_READY_USER}'",
                    }
                ],
                "validations": validations,
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": MIG_READY_NAME, "labels": MIG_READY_LABELS},
            "spec": {"policyName": MIG_READY_NAME, "validationActions": ["Deny"]},
        },
    ]
