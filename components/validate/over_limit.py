"""The scheduling check ``over-limit-stays-pending`` (it could launch a node, and must not),
with the pure choice it makes from the render; ``gangs.py`` has ``gang-all-or-nothing``.

``over-limit-stays-pending``: README friction point 1 promises that Karpenter cannot provision
beyond what the queues can admit, up to whole-node rounding (and a shared pool, which the render
warns about); it does not promise that Karpenter ignores a pod KAI keeps pending: KAI marks it
``PodScheduled=False/Unschedulable`` (kai-scheduler v0.16.8 pkg/scheduler/cache/status_updater/
default_status_updater.go L242-248) and Karpenter provisions for such pods whatever the scheduler
(kubernetes-sigs/karpenter v1.15.0 pkg/utils/pod/scheduling.go L97-133). So the check picks a
leaf queue for which the promise means "nothing": a single pod asking for ``effectiveLimit + 1``
GPUs, where no instance type of the queue's NodePools can hold it within the NodePool's limit
(Karpenter drops a type whose capacity exceeds the remaining limit: pkg/controllers/
provisioning/scheduling/scheduler.go ``filterByRemainingResources`` L1097-1114). It passes when
KAI keeps the pod Pending with its ``OverLimit`` reason (the PodGroup's
``status.schedulingConditions[].reasons[].reason``, pkg/apis/scheduling/v2alpha2/
podgroup_types.go L357-358; capacity_policy/max_allowed_check.go L16-49) and, for
``OBSERVE_WINDOW_S`` after that, no NodeClaim of those NodePools appears (label
``karpenter.sh/nodepool``, pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go L79-81)
and Karpenter publishes no ``Nominated`` event for the pod (pkg/events/reason.go L34,
pkg/controllers/provisioning/scheduling/events.go L35-50).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..scheduler.constants import GPU_RESOURCE, PREEMPTIBILITY_LABEL
from .core import Context, Planned, Result, result, skip
from .probes import (
    POD_GROUP_ANNOTATION,
    POD_GROUP_API,
    nodepool_tolerations,
    pool_label_key,
    probe_pod,
    queue_namespaces,
)
from .workspace import queue_workspace, workspace_objects

PHASE = "scheduling"
OVER_LIMIT_CHECK = "over-limit-stays-pending"
POLL_S = 10.0
# How long KAI may take to mark the over-limit pod: its scheduling cycle runs every second by
# default (kai-scheduler v0.16.8 cmd/scheduler/app/options/options.go L33, L105
# ``--schedule-period``); two minutes is generous, and bounded by the time cap.
KAI_MARK_TIMEOUT_S = 120.0
# How long Karpenter is watched after KAI marked the pod Unschedulable: its provisioner batches
# pending pods for at most BATCH_MAX_DURATION (default 10 s; karpenter v1.15.0
# pkg/operator/options/options.go L231-232), then simulates and creates NodeClaims at once.
# Six batch windows.
OBSERVE_WINDOW_S = 60.0
NODECLAIM_API = "karpenter.sh/v1"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
NOMINATED = "Nominated"
OVER_LIMIT = "OverLimit"
UNSCHEDULABLE = "Unschedulable"  # k8s.io/api v0.36.3 core/v1 PodReasonUnschedulable


# ---------------------------------------------------------------------------------------------
# Pure choice from the render
# ---------------------------------------------------------------------------------------------


def over_limit_choice(
    capacity: Mapping, namespaced_queues: Sequence[str]
) -> tuple[str, int, tuple[str, ...], tuple[str, ...]] | str:
    """(queue, GPUs to request, the NodePools to watch, the types that could hold it were the
    limits wrong) for the first leaf queue where Karpenter can launch nothing for a pod one GPU
    over the queue's effective limit, preferring one where some instance type could hold the
    pod so the NodePool limit is what stops Karpenter; or the reason there is none."""
    pools = {p["name"]: p for p in capacity.get("pools", [])}
    fallback = None
    reasons = []
    for queue in capacity.get("queues", []):
        name = queue["name"]
        limit = queue.get("effectiveLimit", queue.get("limit", -1))
        if name not in namespaced_queues or limit == -1 or not queue.get("pools"):
            continue
        request = int(limit) + 1
        nodepools: list[str] = []
        fitting: list[str] = []
        launchable = []
        for pool_name in queue["pools"]:
            pool = pools.get(pool_name)
            if pool is None:
                continue
            advertised = pool.get("advertisedPerNode", {})
            for nodepool in pool.get("nodePools", []) or [
                {"name": pool_name, "instanceTypes": pool["instanceTypes"]}
            ]:
                nodepools.append(nodepool["name"])
                cap = pool.get("limit", {}).get(nodepool["name"], {}).get(GPU_RESOURCE)
                for t in nodepool["instanceTypes"]:
                    units = advertised.get(t, {}).get(GPU_RESOURCE, 0)
                    if units >= request:
                        fitting.append(t)
                        if cap is None or units <= cap:
                            launchable.append(f"{nodepool['name']}/{t} ({units})")
        if launchable:
            reasons.append(
                f"{name}: {request} GPUs fit {', '.join(launchable[:3])} within the NodePool limit"
            )
            continue
        choice = (name, request, tuple(nodepools), tuple(dict.fromkeys(fitting)))
        if fitting:
            return choice
        fallback = fallback or choice
    if fallback is not None:
        return fallback
    return (
        "no leaf queue whose NodePools can launch nothing for a job one GPU over its limit "
        "(whole-node rounding or a shared pool, README friction point 1: the platform promises "
        "no more there): " + "; ".join(reasons)
    )


# ---------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------


def _pod_group_reasons(ctx: Context, pod: dict) -> list[str]:
    name = pod.get("metadata", {}).get("annotations", {}).get(POD_GROUP_ANNOTATION)
    if not name:
        return []
    group = ctx.kube.get(POD_GROUP_API, "PodGroup", name, pod["metadata"]["namespace"]) or {}
    return [
        reason.get("reason", "")
        for condition in group.get("status", {}).get("schedulingConditions", [])
        for reason in condition.get("reasons", [])
    ]


def _pod_scheduled(pod: dict) -> dict:
    for condition in pod.get("status", {}).get("conditions", []):
        if condition.get("type") == "PodScheduled":
            return condition
    return {}


def _nodeclaims(ctx: Context, nodepools: Sequence[str]) -> set[str]:
    return {
        nc["metadata"]["name"]
        for np in nodepools
        for nc in ctx.kube.list(NODECLAIM_API, "NodeClaim", label_selector=f"{NODEPOOL_LABEL}={np}")
    }


def over_limit_pod(
    ctx: Context,
    *,
    namespace: str,
    queue: str,
    gpus: int,
    pools: Sequence[str],
    pool_label: str,
    tolerations: Sequence[Mapping[str, str]],
) -> dict:
    return probe_pod(
        name=ctx.run_object_name("over-limit"),
        namespace=namespace,
        queue=queue,
        labels={PREEMPTIBILITY_LABEL: "preemptible"},
        priority_class="train",
        gpus={GPU_RESOURCE: gpus},
        tolerations=tolerations,
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": pool_label, "operator": "In", "values": list(pools)}
                            ]
                        }
                    ]
                }
            }
        },
    )


def over_limit_check(ctx: Context) -> Result:
    queues = [q for q, _, _ in queue_namespaces(ctx.render.manifests)]
    choice = over_limit_choice(ctx.render.capacity, queues)
    if isinstance(choice, str):
        return skip(PHASE, OVER_LIMIT_CHECK, choice)
    queue, gpus, nodepools, _ = choice
    pool_label = pool_label_key(ctx.render.manifests)
    if pool_label is None:
        return skip(PHASE, OVER_LIMIT_CHECK, "the render's NodePools carry no pool label")
    pools = next(q["pools"] for q in ctx.render.capacity["queues"] if q["name"] == queue)
    namespace = queue_workspace(ctx, queue)
    before = _nodeclaims(ctx, nodepools)
    pod = over_limit_pod(
        ctx,
        namespace=namespace,
        queue=queue,
        gpus=gpus,
        pools=pools,
        pool_label=pool_label,
        # Every taint of the NodePools watched: a pod that tolerates none of an EFA NodePool's
        # would be left alone by Karpenter for its taint, and the check would pass without the
        # NodePool limit being tried.
        tolerations=nodepool_tolerations(ctx.render.manifests, nodepools),
    )
    name = pod["metadata"]["name"]
    ctx.create(pod)
    try:
        return _watch_over_limit(ctx, queue, gpus, nodepools, namespace, name, before)
    finally:
        ctx.kube.delete("v1", "Pod", name, namespace)


def _watch_over_limit(
    ctx: Context,
    queue: str,
    gpus: int,
    nodepools: Sequence[str],
    namespace: str,
    name: str,
    before: set[str],
) -> Result:
    # Karpenter provisions only for a pod marked PodScheduled=False/Unschedulable (karpenter
    # v1.15.0 pkg/utils/pod/scheduling.go L103-109, ``FailedToSchedule`` L126-133), which KAI
    # does by default (markUnschedulable, pkg/scheduler/utils/pod_group_utils.go L16, L62-67;
    # default_status_updater.go L244-253): the window starts once both marks are there, or
    # "Karpenter launched nothing" would hold without Karpenter having been asked.
    def marked() -> dict | None:
        pod = ctx.kube.get("v1", "Pod", name, namespace) or {}
        if pod.get("spec", {}).get("nodeName"):
            return pod
        unschedulable = _pod_scheduled(pod).get("reason") == UNSCHEDULABLE
        if unschedulable and OVER_LIMIT in _pod_group_reasons(ctx, pod):
            return pod
        return None

    cap = ctx.options.time_cap_s
    pod, waited = ctx.wait(marked, min(KAI_MARK_TIMEOUT_S, cap), POLL_S)
    details = [f"queue {queue}: one pod of {gpus} x {GPU_RESOURCE} (effective limit {gpus - 1})"]
    if pod is None:
        last = ctx.kube.get("v1", "Pod", name, namespace) or {}
        condition = _pod_scheduled(last)
        if OVER_LIMIT in _pod_group_reasons(ctx, last):
            return result(
                PHASE,
                OVER_LIMIT_CHECK,
                False,
                f"KAI marked the job {OVER_LIMIT} but not the pod PodScheduled=False/"
                f"{UNSCHEDULABLE} within {waited:g} s (PodScheduled: "
                + (condition.get("reason") or "none")
                + "): Karpenter never considered it, so its limits were not tried",
                details,
            )
        return result(
            PHASE,
            OVER_LIMIT_CHECK,
            False,
            f"KAI did not mark the job {OVER_LIMIT} within {waited:g} s (PodScheduled: "
            + " ".join(x for x in (condition.get("reason", "none"), condition.get("message")) if x)
            + ")",
            details,
        )
    if pod.get("spec", {}).get("nodeName"):
        return result(
            PHASE,
            OVER_LIMIT_CHECK,
            False,
            f"a job over queue {queue}'s limit was placed on {pod['spec']['nodeName']}",
            details,
        )
    condition = _pod_scheduled(pod)
    details.append(
        f"KAI: {OVER_LIMIT}; PodScheduled {condition.get('status', '?')} "
        f"{condition.get('reason', '')}: {condition.get('message', '')}"
    )
    left = cap - waited
    if left < OBSERVE_WINDOW_S:
        # A shorter watch proves less than the check states, and none at all proves nothing.
        return result(
            PHASE,
            OVER_LIMIT_CHECK,
            False,
            f"the time cap ({cap:g} s) leaves {max(0.0, left):g} s to watch after KAI's marks "
            f"({waited:g} s), less than the {OBSERVE_WINDOW_S:g} s the check must watch "
            "Karpenter: raise --time-cap-minutes",
            details,
        )
    observe = OBSERVE_WINDOW_S
    ctx.wait(lambda: False, observe, POLL_S)
    last = ctx.kube.get("v1", "Pod", name, namespace) or {}
    new = sorted(_nodeclaims(ctx, nodepools) - before)
    nominated = [
        e.get("message", "")
        for e in ctx.kube.list("v1", "Event", namespace)
        if e.get("involvedObject", {}).get("name") == name and e.get("reason") == NOMINATED
    ]
    problems = []
    if last.get("spec", {}).get("nodeName") or last.get("status", {}).get("phase") != "Pending":
        problems.append(
            f"the pod left Pending ({last.get('status', {}).get('phase', 'gone')} on "
            f"{last.get('spec', {}).get('nodeName') or '-'})"
        )
    if new:
        problems.append(f"Karpenter launched NodeClaim(s) {', '.join(new)}")
    if nominated:
        problems.append(f"Karpenter nominated the pod: {'; '.join(nominated)}")
    details.append(f"watched NodePools {', '.join(nodepools)} for {observe:g} s")
    if problems:
        return result(PHASE, OVER_LIMIT_CHECK, False, "; ".join(problems), details)
    return result(
        PHASE,
        OVER_LIMIT_CHECK,
        True,
        f"a job one GPU over queue {queue}'s limit stayed Pending ({OVER_LIMIT}) and Karpenter "
        f"launched nothing for it in {observe:g} s",
        details,
    )


def planned(ctx: Context) -> list[Planned]:
    out: list[Planned] = []
    queues = [q for q, _, _ in queue_namespaces(ctx.render.manifests)]
    over = over_limit_choice(ctx.render.capacity, queues)
    if not isinstance(over, str):
        queue, _, _, fitting = over
        ns = ctx.queue_namespace_name(queue)
        pools = next(q["pools"] for q in ctx.render.capacity["queues"] if q["name"] == queue)
        out.append(
            Planned(
                PHASE,
                OVER_LIMIT_CHECK,
                (*workspace_objects(ctx, queue), f"Pod {ns}/{ctx.run_object_name('over-limit')}"),
                pool=pools[0] if len(pools) == 1 else None,
                # Nothing launches unless the promise is broken; then at most one node of a
                # type that holds the pod, until the pod is deleted and the node consolidated.
                instance_types=fitting,
                nodes=1 if fitting else 0,
                max_minutes=(KAI_MARK_TIMEOUT_S + OBSERVE_WINDOW_S) / 60 if fitting else 0.0,
            )
        )
    return out
