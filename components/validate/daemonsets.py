"""Which nodes a DaemonSet should run on, as the DaemonSet controller decides it: a DaemonSet
that schedules 0 pods is rolled out by kubectl's test (nothing to wait for), which proves nothing
when nodes it should run on exist.

Kubernetes v1.36.3 ``pkg/controller/daemon/daemon_controller.go``: ``NodeShouldRunDaemonPod``
(L1378-1400) builds the pod the DaemonSet would create on the node (``NewPod`` L1416-1425: the
template, plus the default DaemonSet tolerations of ``pkg/controller/daemon/util/
daemonset_util.go`` ``AddOrUpdateDaemonPodTolerations`` L48-102) and runs ``predicates``
(L1404-1413): the template's ``nodeName`` (empty or the node's), its required node affinity
(``nodeSelector`` and ``requiredDuringSchedulingIgnoredDuringExecution``: k8s.io/
component-helpers v0.36.3 ``scheduling/corev1/nodeaffinity/nodeaffinity.go``
``GetRequiredNodeAffinity``/``Match`` L306-333, terms ORed and an empty term matching nothing
L56-101, a term's requirements ANDed L190-201, the operators L214-251; ``Gt``/``Lt`` compare
integers, k8s.io/apimachinery v0.36.3 ``pkg/labels/selector.go`` ``Requirement.Matches``
L265-289), and no untolerated ``NoSchedule``/``NoExecute`` taint (k8s.io/api v0.36.3
``core/v1/toleration.go`` ``ToleratesTaint`` L52-77; ``Gt``/``Lt`` tolerations sit behind the
alpha gate ``TaintTolerationComparisonOperators`` and match nothing here, as with the gate off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

# AddOrUpdateDaemonPodTolerations (daemonset_util.go L48-102): (key, effect); the last one only
# for a hostNetwork pod.
DEFAULT_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def _int(value: Any) -> int | None:
    """Go's ``strconv.ParseInt(value, 10, 64)``: an optional sign and decimal digits only."""
    text = str(value)
    if not re.fullmatch(r"[+-]?[0-9]+", text) or not -(2**63) <= int(text) < 2**63:
        return None
    return int(text)


def _requirement(expr: Mapping[str, Any], value: str | None) -> bool:
    """One matchExpressions entry against the node's label value (None: no such label)."""
    op, values = expr.get("operator"), list(expr.get("values") or [])
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None or len(values) != 1:
            return False
        have, want = _int(value), _int(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _term(term: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    labels = node.get("metadata", {}).get("labels", {}) or {}
    name = node.get("metadata", {}).get("name")
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False  # an empty term matches nothing
    if not all(_requirement(e, labels.get(e.get("key"))) for e in exprs):
        return False
    return all(_requirement(f, name if f.get("key") == "metadata.name" else None) for f in fields)


def node_affinity_matches(pod_spec: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    labels = node.get("metadata", {}).get("labels", {}) or {}
    selector = pod_spec.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = (
        (pod_spec.get("affinity") or {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    if required is None:
        return True
    return any(_term(t, node) for t in required.get("nodeSelectorTerms") or [])


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def daemon_tolerations(pod_spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    defaults = [*DEFAULT_TOLERATIONS]
    if pod_spec.get("hostNetwork"):
        defaults.append(HOST_NETWORK_TOLERATION)
    added = [{"key": k, "operator": "Exists", "effect": e} for k, e in defaults]
    return [*(pod_spec.get("tolerations") or []), *added]


def untolerated_taint(pod_spec: Mapping[str, Any], node: Mapping[str, Any]) -> dict | None:
    tolerations = daemon_tolerations(pod_spec)
    for taint in node.get("spec", {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def should_run(daemonset: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether the DaemonSet controller would run the DaemonSet's pod on ``node``."""
    pod_spec = daemonset.get("spec", {}).get("template", {}).get("spec", {}) or {}
    node_name = pod_spec.get("nodeName")
    if node_name and node_name != node.get("metadata", {}).get("name"):
        return False
    return node_affinity_matches(pod_spec, node) and untolerated_taint(pod_spec, node) is None


def nodes_to_run_on(daemonset: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of ``nodes`` the DaemonSet should run a pod on, sorted."""
    return sorted(n["metadata"]["name"] for n in nodes if should_run(daemonset, n))
