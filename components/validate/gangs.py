"""The scheduling check ``gang-all-or-nothing`` (it launches nodes), with the pure choices it
makes from the render; ``over_limit.py`` has the phase's other node check,
``over-limit-stays-pending``.

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..scheduler.constants import GPU_RESOURCE
from . import prices
from .core import Context, Planned, Result, result, skip
from .probes import (
    INSTANCE_TYPE_LABEL,
    POD_GROUP_API,
    ZONE_LABEL,
    gang_affinity,
    gang_pods,
    nodepool_tolerations,
    pod_group,
    pool_label_key,
    queue_namespaces,
)
from .workspace import queue_workspace, workspace_objects

PHASE = "scheduling"
GANG_CHECK = "gang-all-or-nothing"
GANG_SIZE = 2
POLL_S = 10.0


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


def planned(ctx: Context) -> list[Planned]:
    out: list[Planned] = []
    choice = choose_gang(ctx)
    if not isinstance(choice, str):
        out.append(choice[1])
    return out
