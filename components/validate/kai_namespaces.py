"""The scheduling phase's ``kai-pods-in-queue-namespaces`` check (review 2026-11-27 L2).

KAI schedules pods in every namespace (its chart's ``global.namespaceLabelSelector`` is ``{}``,
kai-scheduler v0.16.8 ``deployments/kai-scheduler/values.yaml``), but the do-not-disrupt
admission policies act only in the platform's queue namespaces (``scheduler.manifests.
queue_namespace_selector``), so a non-preemptible KAI pod elsewhere is never annotated and
Karpenter may consolidate its node. A policy refusing such pods would break KAI users of
namespaces the platform does not manage; this check reports them instead. A pod is left out when
it carries ``karpenter.sh/do-not-disrupt`` (any value), or shows itself preemptible: the label
``kai.scheduler/preemptibility: preemptible``, or, without a ``non-preemptible`` label, a
``spec.priorityClassName`` whose resolved ``spec.priority`` is below 100 (kai-scheduler v0.16.8
``pkg/common/podgroup/preemptible.go`` L14-25). Its owner's labels, which KAI reads first, are
not read here: a pod without a class may be either, and is reported.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..scheduler.constants import (
    DO_NOT_DISRUPT_ANNOTATION,
    NON_PREEMPTIBLE_PRIORITY,
    PREEMPTIBILITY_LABEL,
    SCHEDULER_NAME,
    SYSTEM_NAMESPACES,
)
from .core import Context, Result, result

CHECK = "kai-pods-in-queue-namespaces"


def _preemptible(pod: dict) -> bool:
    labels = pod.get("metadata", {}).get("labels", {})
    label = labels.get(PREEMPTIBILITY_LABEL)
    if label == "preemptible":
        return True
    spec = pod.get("spec", {})
    return (
        label != "non-preemptible"
        and bool(spec.get("priorityClassName"))
        and isinstance(spec.get("priority"), int)
        and spec["priority"] < NON_PREEMPTIBLE_PRIORITY
    )


def unprotected_pods(pods: Iterable[dict], queue_namespaces: Iterable[str]) -> tuple[int, list]:
    """(KAI pods outside the queue and system namespaces, those of them reported: one line each,
    ``namespace/name``)."""
    skip = {*queue_namespaces, *SYSTEM_NAMESPACES}
    outside = 0
    reported = []
    for pod in pods:
        meta = pod.get("metadata", {})
        if pod.get("spec", {}).get("schedulerName") != SCHEDULER_NAME:
            continue
        if meta.get("namespace") in skip:
            continue
        outside += 1
        if DO_NOT_DISRUPT_ANNOTATION in meta.get("annotations", {}) or _preemptible(pod):
            continue
        reported.append(f"{meta.get('namespace')}/{meta.get('name')}")
    return outside, sorted(reported)


def check(ctx: Context, phase: str, queue_namespaces: Iterable[str]) -> Result:
    namespaces = list(queue_namespaces)
    outside, reported = unprotected_pods(ctx.kube.list("v1", "Pod"), namespaces)
    if reported:
        return result(
            phase,
            CHECK,
            False,
            f"{len(reported)} {SCHEDULER_NAME} pods outside the queue namespaces "
            f"({', '.join(dict.fromkeys(namespaces))}) may be non-preemptible and carry no "
            f"{DO_NOT_DISRUPT_ANNOTATION}: the admission policies act only in queue namespaces, "
            "so Karpenter may consolidate their nodes; run them in a queue's namespace, or "
            f"annotate or label them {PREEMPTIBILITY_LABEL}=preemptible",
            reported,
        )
    return result(
        phase,
        CHECK,
        True,
        f"{outside} {SCHEDULER_NAME} pods outside the queue namespaces, none unprotected",
    )
