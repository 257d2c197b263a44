"""The scheduling checks that launch (or could launch) nodes: ``gang-all-or-nothing`` and
``over-limit-stays-pending``, with the pure choices they make from the render.

``gang-all-or-nothing``: a KAI PodGroup (``scheduling.run.ai/v2alpha2``, ``minMember`` 2) of
two one-GPU pods with required pod anti-affinity on the hostname, so the smallest gang that must
span two nodes. Anti-affinity, not per-pod requests over half a node: on the pinned type (the
gang template's, ``budget.gangs``) both ask for two nodes, but requests over
half a node charge the queue and the NodePool limit more GPUs on multi-GPU types, and on a
time-sliced pool (4 slices per GPU) a one-GPU type would need 3-slice pods; anti-affinity asks
for exactly one unit per pod everywhere. It runs on the cheapest eligible pool (a pool a leaf
queue routes to whose share holds two units, at least two nodes), through that queue; it passes
when both pods run on two nodes of the pool, in the zone and on the instance type the pool's gang
template pins (build/<stack>/examples/training-<queue>.yaml, ``scheduler.gang_placement``); a
gang placed in part, or not at all within the time cap, fails.

``over-limit-stays-pending``: README friction point 1 promises that Karpenter cannot provision
beyond what the queues can admit, up to whole-node rounding (and a shared pool, which the render
warns about); it does not promise that Karpenter ignores a pod KAI keeps pending: KAI marks it
``PodScheduled=False/Unschedulable`` (kai-scheduler v0.16.8 pkg/scheduler/cache/status_updater/
default_status_updater.go L242-248) and Karpenter provisions for such pods whatever the scheduler
(kubernetes-sigs/karpenter v1.14.1 pkg/utils/pod/scheduling.go L96-132). So the check picks a
leaf queue for which the promise means "nothing": a single pod asking for ``effectiveLimit + 1``
GPUs, where no instance type of the queue's NodePools can hold it within the NodePool's limit
(Karpenter drops a type whose capacity exceeds the remaining limit: pkg/controllers/
provisioning/scheduling/scheduler.go ``filterByRemainingResources`` L1068-1085). It passes when
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
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..scheduler.constants import GPU_RESOURCE, PREEMPTIBILITY_LABEL
from . import prices
from .core import Context, Planned, Result, result, skip
from .probes import (
    INSTANCE_TYPE_LABEL,
    POD_GROUP_ANNOTATION,
    POD_GROUP_API,
    ZONE_LABEL,
    gang_affinity,
    gang_pods,
    nodepool_tolerations,
    pod_group,
    probe_pod,
    queue_namespaces,
)
from .workspace import queue_workspace, workspace_objects

PHASE = "scheduling"
GANG_CHECK = "gang-all-or-nothing"
OVER_LIMIT_CHECK = "over-limit-stays-pending"
GANG_SIZE = 2
POLL_S = 10.0
# How long KAI may take to mark the over-limit pod: its scheduling cycle runs every second by
# default (kai-scheduler v0.16.8 cmd/scheduler/app/options/options.go L33, L105
# ``--schedule-period``); two minutes is generous, and bounded by the time cap.
KAI_MARK_TIMEOUT_S = 120.0
# How long Karpenter is watched after KAI marked the pod Unschedulable: its provisioner batches
# pending pods for at most BATCH_MAX_DURATION (default 10 s; karpenter v1.14.1
# pkg/operator/options/options.go L129-130), then simulates and creates NodeClaims at once.
# Six batch windows.
OBSERVE_WINDOW_S = 60.0
NODECLAIM_API = "karpenter.sh/v1"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
NOMINATED = "Nominated"
OVER_LIMIT = "OverLimit"
UNSCHEDULABLE = "Unschedulable"  # k8s.io/api v0.36.3 core/v1 PodReasonUnschedulable


# ---------------------------------------------------------------------------------------------
# Pure choices from the render
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GangPlan:
    pool: str
    queue: str
    zone: str | None
    instance_type: str | None
    instance_types: tuple[str, ...]  # what Karpenter may launch for it


def pool_label_key(manifests: Sequence[dict]) -> str | None:
    """The platform's pool label (``<labelDomain>/pool``), read from a rendered NodePool."""
    for manifest in manifests:
        if manifest.get("kind") == "NodePool":
            labels = manifest["spec"]["template"].get("metadata", {}).get("labels", {})
            for key in labels:
                if key.endswith("/pool"):
                    return key
    return None


def gang_pin(render_dir: Path, queue: str) -> tuple[str | None, str | None]:
    """(zone, instance type) the queue's gang template pins by required node affinity, read
    from the render's ``examples/training-<queue>.yaml`` (None where it pins none)."""
    path = render_dir / "examples" / f"training-{queue}.yaml"
    if not path.is_file():
        return None, None
    zone = instance_type = None
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc or doc.get("kind") != "Job":
            continue
        affinity = doc["spec"]["template"]["spec"].get("affinity", {}).get("nodeAffinity", {})
        required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {})
        for term in required.get("nodeSelectorTerms", []):
            for expr in term.get("matchExpressions", []):
                if expr.get("operator") == "In" and len(expr.get("values", [])) == 1:
                    if expr["key"] == ZONE_LABEL:
                        zone = expr["values"][0]
                    elif expr["key"] == INSTANCE_TYPE_LABEL:
                        instance_type = expr["values"][0]
    return zone, instance_type


def gang_candidates(
    capacity: Mapping, namespaced_queues: Sequence[str], render_dir: Path, opted: Sequence[str]
) -> list[GangPlan]:
    """Every (pool, queue) that can hold the gang: a leaf queue with a namespace routes to the
    GPU pool (opted in with ``--pool`` when any is), its share of the pool and its effective
    limit hold ``GANG_SIZE`` units of ``nvidia.com/gpu`` and the pool holds two nodes."""
    pools = {p["name"]: p for p in capacity.get("pools", [])}
    out = []
    for queue in capacity.get("queues", []):
        if queue["name"] not in namespaced_queues:
            continue
        limit = queue.get("effectiveLimit", queue.get("limit", -1))
        for pool_name in queue.get("pools", []):
            pool = pools.get(pool_name)
            if pool is None or (opted and pool_name not in opted):
                continue
            share = queue.get("reachablePerPool", {}).get(pool_name, 0)
            if share < GANG_SIZE or (limit != -1 and limit < GANG_SIZE):
                continue
            if pool.get("maxNodes", 0) < GANG_SIZE:
                continue
            zone, instance_type = gang_pin(render_dir, queue["name"])
            types = (instance_type,) if instance_type else tuple(pool["instanceTypes"])
            advertised = pool.get("advertisedPerNode", {})
            if any(advertised.get(t, {}).get(GPU_RESOURCE, 0) < 1 for t in types):
                continue  # a MIG-mixed type advertises no nvidia.com/gpu
            out.append(GangPlan(pool_name, queue["name"], zone, instance_type, types))
    return out


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


def _gang_planned(ctx: Context, plan: GangPlan) -> Planned:
    ns = ctx.queue_namespace_name(plan.queue)
    group = ctx.run_object_name("gang")
    return Planned(
        PHASE,
        GANG_CHECK,
        (
            *workspace_objects(ctx, plan.queue),
            f"PodGroup {ns}/{group}",
            *(f"Pod {ns}/{group}-{i}" for i in range(GANG_SIZE)),
        ),
        pool=plan.pool,
        instance_types=plan.instance_types,
        nodes=GANG_SIZE,
        max_minutes=ctx.options.time_cap_s / 60,
    )


def choose_gang(ctx: Context) -> tuple[GangPlan, Planned, float] | str:
    """The cheapest candidate with its Planned and estimate, or why the gang cannot start."""
    if not ctx.render.capacity.get("pools"):
        return "the render has no GPU pool"
    queues = [q for q, _, _ in queue_namespaces(ctx.render.manifests)]
    candidates = gang_candidates(ctx.render.capacity, queues, ctx.render.dir, ctx.options.pools)
    if not candidates:
        opted = f" among --pool {', '.join(ctx.options.pools)}" if ctx.options.pools else ""
        return (
            f"no GPU pool{opted} holds a gang of {GANG_SIZE} one-GPU pods for a queue routed to "
            "it (share, limit or nodes below 2)"
        )
    region = ctx.render.region
    if region is None:
        return "the render names no region: the cost cap cannot be held"
    priced = []
    for plan in candidates:
        planned = _gang_planned(ctx, plan)
        cost = prices.estimate_usd(planned, region, ctx.options.prices)
        if cost is not None:
            priced.append((cost, plan, planned))
    if not priced:
        types = sorted({t for p in candidates for t in p.instance_types})
        return (
            f"no price for {', '.join(types)} in {region}: the cost cap cannot be held "
            "(--price INSTANCE_TYPE=USD_PER_HOUR supplies one)"
        )
    cost, plan, planned = min(priced, key=lambda x: x[0])
    if ctx.committed_usd + cost > ctx.options.cost_cap_usd:
        # the cap bounds the run: the capacity phase's checks ran before this one
        so_far = f" (${ctx.committed_usd + cost:.2f} for the run)" if ctx.committed_usd else ""
        return (
            f"the cheapest gang ({GANG_SIZE} x {'/'.join(plan.instance_types)} in pool "
            f"{plan.pool} for up to {planned.max_minutes:g} min) is estimated at ${cost:.2f}"
            f"{so_far}, over the cost cap ${ctx.options.cost_cap_usd:.2f}"
        )
    return plan, planned, cost


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------


def _pool_nodepools(ctx: Context, pool: str) -> list[str]:
    """The NodePools of ``pool`` (capacity.json ``nodePools``; one of the pool's name if none)."""
    for p in ctx.render.capacity.get("pools", []):
        if p["name"] == pool:
            return [n["name"] for n in p.get("nodePools", [])] or [pool]
    return [pool]


def _pod_state(ctx: Context, namespace: str, names: Sequence[str]) -> list[dict]:
    return [ctx.kube.get("v1", "Pod", n, namespace) or {} for n in names]


def gang_check(ctx: Context) -> Result:
    choice = choose_gang(ctx)
    if isinstance(choice, str):
        return skip(PHASE, GANG_CHECK, choice)
    plan, _, cost = choice
    pool_label = pool_label_key(ctx.render.manifests)
    if pool_label is None:
        return skip(PHASE, GANG_CHECK, "the render's NodePools carry no pool label")
    namespace = queue_workspace(ctx, plan.queue)
    group = ctx.run_object_name("gang")
    affinity = gang_affinity(
        pool_label=pool_label,
        pool=plan.pool,
        group=group,
        zone=plan.zone,
        instance_type=plan.instance_type,
    )
    pods = gang_pods(
        group=group,
        namespace=namespace,
        queue=plan.queue,
        size=GANG_SIZE,
        gpu_resource=GPU_RESOURCE,
        affinity=affinity,
        tolerations=nodepool_tolerations(ctx.render.manifests, _pool_nodepools(ctx, plan.pool)),
    )
    names = [p["metadata"]["name"] for p in pods]
    ctx.committed_usd += cost
    ctx.create(pod_group(name=group, namespace=namespace, queue=plan.queue, min_member=GANG_SIZE))
    for pod in pods:
        ctx.create(pod)

    def all_running() -> bool:
        state = _pod_state(ctx, namespace, names)
        return all(p.get("status", {}).get("phase") == "Running" for p in state)

    try:
        _, waited = ctx.wait(all_running, ctx.options.time_cap_s, POLL_S)
        state = _pod_state(ctx, namespace, names)
    finally:
        for name in names:
            ctx.kube.delete("v1", "Pod", name, namespace)
        ctx.kube.delete(POD_GROUP_API, "PodGroup", group, namespace)
    return _judge_gang(ctx, plan, pool_label, state, waited, cost)


def _judge_gang(
    ctx: Context, plan: GangPlan, pool_label: str, state: list[dict], waited: float, cost: float
) -> Result:
    bound = [p for p in state if p.get("spec", {}).get("nodeName")]
    running = [p for p in state if p.get("status", {}).get("phase") == "Running"]
    details = [f"pool {plan.pool}, queue {plan.queue}, estimated at most ${cost:.2f}"]
    for pod in state:
        node = pod.get("spec", {}).get("nodeName")
        phase = pod.get("status", {}).get("phase", "?")
        details.append(f"{pod.get('metadata', {}).get('name', '?')}: {phase} on {node or '-'}")
    if not bound:
        return result(
            PHASE,
            GANG_CHECK,
            False,
            f"no member of the gang was placed within {waited:g} s (time cap)",
            details,
        )
    if len(bound) < GANG_SIZE or len(running) < GANG_SIZE:
        return result(
            PHASE,
            GANG_CHECK,
            False,
            f"part of the gang was placed: {len(bound)} of {GANG_SIZE} bound, {len(running)} "
            f"running after {waited:g} s",
            details,
        )
    nodes = [ctx.kube.get("v1", "Node", p["spec"]["nodeName"]) or {} for p in bound]
    labels = [n.get("metadata", {}).get("labels", {}) for n in nodes]
    problems = []
    names = {p["spec"]["nodeName"] for p in bound}
    if len(names) != GANG_SIZE:
        problems.append(f"the gang shares a node ({', '.join(sorted(names))})")
    pools = {lb.get(pool_label) for lb in labels}
    zones = {lb.get(ZONE_LABEL) for lb in labels}
    types = {lb.get(INSTANCE_TYPE_LABEL) for lb in labels}
    if pools != {plan.pool}:
        problems.append(f"nodes of pools {sorted(map(str, pools))}, not only {plan.pool}")
    if plan.zone is not None and zones != {plan.zone}:
        problems.append(f"zones {sorted(map(str, zones))}, the gang template pins {plan.zone}")
    if plan.instance_type is not None and types != {plan.instance_type}:
        problems.append(
            f"instance types {sorted(map(str, types))}, the gang template pins {plan.instance_type}"
        )
    details.append(
        f"nodes {', '.join(sorted(names))}: zones {sorted(map(str, zones))}, types "
        f"{sorted(map(str, types))}"
    )
    if problems:
        return result(PHASE, GANG_CHECK, False, "; ".join(problems), details)
    where = f"pool {plan.pool}"
    if plan.zone or plan.instance_type:
        where += f" ({', '.join(x for x in (plan.zone, plan.instance_type) if x)})"
    return result(
        PHASE,
        GANG_CHECK,
        True,
        f"all {GANG_SIZE} members ran on {GANG_SIZE} nodes of {where} after {waited:g} s",
        details,
    )


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
    # v1.14.1 pkg/utils/pod/scheduling.go L102-108, ``FailedToSchedule`` L125-132), which KAI
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
    choice = choose_gang(ctx)
    if not isinstance(choice, str):
        out.append(choice[1])
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
