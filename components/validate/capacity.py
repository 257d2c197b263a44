"""The capacity phase: for each GPU pool opted in with ``--pool``, one small Job through a queue
routed to the pool proves that Karpenter launches a node of an allowed type, that the node
advertises what ``capacity.json`` says, that ``nvidia-smi`` sees the pool's GPU, and that the
node is consolidated away afterwards. Runs only on a real cluster with GPU capacity; costs money
(bounded before anything is created by ``--cost-cap-usd`` and ``--time-cap-minutes``).

One check per pool, named after the pool (``capacity/<pool>``); its details list every step.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import catalog
from . import gpu_specs, prices
from .core import FAIL, Context, KubeError, Planned, Result, result, skip

NAME = "capacity"
NO_GPU_CHECK = "gpu"  # the one check of a render without a GPU pool (a skip)
NODECLAIM_API = "karpenter.sh/v1"
POLL_S = 5.0
# How long after the pod is gone Karpenter may take, beyond the NodePool's consolidateAfter, to
# start removing the empty node (sigs.k8s.io/karpenter v1.15.0):
# - consolidateAfter counts from the NodeClaim's lastPodEventTime, and the NodeClaim is marked
#   Consolidatable by a reconcile requeued for exactly that instant
#   (pkg/controllers/nodeclaim/disruption/consolidation.go:63-76). lastPodEventTime is written at
#   most every 10 s (pkg/controllers/nodeclaim/podevents/controller.go:44 dedupeTimeout, L84-87):
#   an event within 10 s of the last write is dropped, so the window can only start earlier than
#   the pod's deletion, never later; it adds nothing to the margin;
# - the disruption controller looks for candidates every 10 s, Emptiness first
#   (pkg/controllers/disruption/controller.go:72 pollingPeriod, L192; NewMethods L102-123:
#   Repair precedes it only under the nodeRepair feature gate, off by default: karpenter/values.py);
# - an emptiness command is re-validated 15 s after it is computed before it is executed
#   (pkg/controllers/disruption/consolidation.go:45 commandValidationDelay, emptiness.go:101,
#   validation.go:134-141); with no replacement the queue then deletes the NodeClaim at once
#   (queue.go:231-261; the deadline step L236-255 is for candidates with a drain bound, which
#   only Repair sets, repair.go:159);
# - plus this check's own polling interval (POLL_S).
# Not in the margin: the disruption loop runs its methods one after another, so an iteration
# busy with multi- or single-node consolidation of other nodes (timeouts of 1 min and 3 min,
# multinodeconsolidation.go:35, singlenodeconsolidation.go:33) delays the next Emptiness pass;
# the failure's details say so.
# "Consolidated away" is judged when Karpenter marks the NodeClaim for deletion (or it is gone):
# the EC2 termination after that is AWS's time, not Karpenter's.
KARPENTER_POLL_S = 10.0
KARPENTER_VALIDATION_S = 15.0
CONSOLIDATION_MARGIN_S = KARPENTER_POLL_S + KARPENTER_VALIDATION_S + POLL_S
BUSY_LOOP_NOTE = (
    "Karpenter's disruption loop runs Emptiness after the multi- and single-node consolidation "
    "of its previous pass (up to 1 min and 3 min, karpenter v1.15.0 disruption/"
    "multinodeconsolidation.go:35, singlenodeconsolidation.go:33): on a cluster with other "
    "consolidation candidates the empty node can be removed later than this bound"
)
SUCCEEDED = "Succeeded"
FAILED = "Failed"


def job_name(pool: str) -> str:
    return f"validate-capacity-{pool}"[:63].rstrip("-")


def _plan(ctx: Context, pool: gpu_specs.Pool, region: str | None) -> Planned:
    queue = pool.queues[0] if pool.queues else "<no queue>"
    namespace = ctx.queue_namespace_name(queue)
    itype, unpriced = gpu_specs.cheapest_type(pool, region or "", ctx.options.prices)
    types = (itype,) if itype else tuple(unpriced or pool.instance_types)
    return Planned(
        phase=NAME,
        check=pool.name,
        objects=(f"Namespace {namespace}", f"Job {namespace}/{job_name(pool.name)}"),
        pool=pool.name,
        instance_types=types,
        nodes=1,
        max_minutes=ctx.options.time_cap_s / 60.0,
    )


DRA_SKIP = (
    "a DRA pool: this check requests nvidia.com/gpu, which its nodes do not advertise; "
    "DRA pools are not validated yet (docs/dra-pools.md)"
)


def checks(ctx: Context) -> list[str]:
    """The names of the checks ``run`` would report on this render: one per GPU pool."""
    return list(gpu_specs.pools(ctx.render.capacity, ctx.render.manifests)) or [NO_GPU_CHECK]


def planned(ctx: Context) -> list[Planned]:
    """One node of the pool's cheapest priced type for at most the time cap, per opted-in pool."""
    region = ctx.render.region
    pools = gpu_specs.pools(ctx.render.capacity, ctx.render.manifests)
    return [
        _plan(ctx, p, region)
        for p in pools.values()
        if p.name in ctx.options.pools and not p.dra  # a DRA pool is skipped (DRA_SKIP)
    ]


def run(ctx: Context) -> list[Result]:
    region = ctx.render.region
    results: list[Result] = []
    pools = gpu_specs.pools(ctx.render.capacity, ctx.render.manifests)
    if not pools:
        # Not silent: a phase of no check would read as nothing wrong.
        return [skip(NAME, NO_GPU_CHECK, "the render has no GPU pool")]
    for pool in pools.values():
        if pool.name not in ctx.options.pools:
            results.append(skip(NAME, pool.name, f"not opted in (--pool {pool.name})"))
            continue
        if pool.dra:
            # Its pods would claim gpu.nvidia.com devices; this check requests nvidia.com/gpu.
            results.append(skip(NAME, pool.name, DRA_SKIP))
            continue
        if not ctx.wants(pool.name):
            continue  # left out by --checks: nothing created, no result
        start = ctx.clock()
        try:
            outcome, cost = _check(ctx, pool, region, ctx.committed_usd)
        except Exception as exc:  # a check never raises to the runner
            outcome, cost = result(NAME, pool.name, False, f"unexpected error: {exc!r}"), 0.0
        ctx.committed_usd += cost
        results.append(dataclasses.replace(outcome, seconds=ctx.clock() - start))
    return results


def _fail(pool: gpu_specs.Pool, reason: str, details: list[str]) -> Result:
    return Result(NAME, pool.name, FAIL, reason, tuple(details))


def _nodeclaims(ctx: Context, pool: gpu_specs.Pool) -> list[dict]:
    out: list[dict] = []
    for node_pool in pool.node_pools:
        out += ctx.kube.list(
            NODECLAIM_API, "NodeClaim", label_selector=f"{gpu_specs.NODEPOOL_LABEL}={node_pool}"
        )
    return out


def _finished_pod(ctx: Context, namespace: str, name: str) -> dict | None:
    pods = ctx.kube.list(
        "v1", "Pod", namespace=namespace, label_selector=f"{gpu_specs.JOB_NAME_LABEL}={name}"
    )
    return next((p for p in pods if p.get("status", {}).get("phase") in (SUCCEEDED, FAILED)), None)


def _check(
    ctx: Context, pool: gpu_specs.Pool, region: str | None, spent: float
) -> tuple[Result, float]:
    details: list[str] = []
    cap_s = ctx.options.time_cap_s
    start = ctx.clock()

    def remaining() -> float:
        return max(cap_s - (ctx.clock() - start), 0.0)

    # 1. the cost, before anything is created
    if region is None:
        return _fail(pool, "the render names no AWS region (outputs.json clusterEndpoint)", []), 0
    itype, unpriced = gpu_specs.cheapest_type(pool, region, ctx.options.prices)
    if itype is None:
        if unpriced:
            reason = prices.describe(_plan(ctx, pool, region), region, ctx.options.prices)
            return _fail(pool, f"{reason}: the cost cap cannot be checked; nothing created", []), 0
        return _fail(pool, "no instance type of the pool advertises a GPU in capacity.json", []), 0
    plan = _plan(ctx, pool, region)
    estimate = prices.estimate_usd(plan, region, ctx.options.prices) or 0.0
    details.append(f"cost estimate: {prices.describe(plan, region, ctx.options.prices)}")
    if spent + estimate > ctx.options.cost_cap_usd:
        return _fail(
            pool,
            f"estimated ${estimate:.2f} ({itype} for up to {plan.max_minutes:g} min; "
            f"${spent + estimate:.2f} for the run so far) is above the cost cap "
            f"${ctx.options.cost_cap_usd:.2f}; nothing created",
            details,
        ), 0.0
    if not pool.queues:
        return _fail(pool, "no queue of the render routes to this pool", details), 0.0
    queue = pool.queues[0]
    resource = gpu_specs.unit_resource(pool.advertised[itype]) or gpu_specs.GPU_RESOURCE

    # 2. one pod of one unit through the queue
    try:
        namespace = ctx.queue_namespace(queue)
    except (KeyError, KubeError) as exc:
        return _fail(pool, f"queue {queue!r}: no namespace for it: {exc}", details), 0.0
    before = {nc["metadata"]["name"] for nc in _nodeclaims(ctx, pool)}
    name = job_name(pool.name)
    job = gpu_specs.capacity_job(
        name=name,
        namespace=namespace,
        queue=queue,
        pool=pool,
        instance_type=itype,
        resource=resource,
        deadline_s=int(cap_s),
    )
    try:
        ctx.create(job)
    except KubeError as exc:
        return _fail(pool, f"create Job {namespace}/{name}: {exc}", details), estimate
    details.append(f"Job {namespace}/{name} via queue {queue}: requests 1 {resource} on {itype}")
    pod, waited = ctx.wait(lambda: _finished_pod(ctx, namespace, name), remaining(), POLL_S)
    if not pod:
        return _fail(
            pool, f"the pod did not finish within the time cap ({cap_s:g} s)", details
        ), estimate
    pod_name = pod["metadata"]["name"]
    node_name = pod.get("spec", {}).get("nodeName", "")
    logs = ctx.kube.logs(pod_name, namespace)
    phase = pod["status"]["phase"]
    details.append(f"pod {pod_name} {phase} on node {node_name} after {waited:g} s")
    details += [f"  | {line}" for line in logs.splitlines()]

    # 3. the node: a new NodeClaim of the pool's NodePools, of an allowed type
    claims = {nc.get("status", {}).get("nodeName"): nc for nc in _nodeclaims(ctx, pool)}
    claim = claims.get(node_name)
    if claim is None:
        return _fail(
            pool,
            f"node {node_name!r} belongs to no NodeClaim of NodePool(s) "
            f"{', '.join(pool.node_pools)}",
            details,
        ), estimate
    claim_name = claim["metadata"]["name"]
    node_pool = claim["metadata"].get("labels", {}).get(gpu_specs.NODEPOOL_LABEL, "")
    launched = claim["metadata"].get("labels", {}).get(gpu_specs.INSTANCE_TYPE_LABEL, "")
    details.append(f"NodeClaim {claim_name} (NodePool {node_pool}, {launched})")
    if claim_name in before:
        return _fail(
            pool,
            f"the pod ran on node {node_name}, which existed before the check (NodeClaim "
            f"{claim_name}): no launch was tested; retry when the pool has no free node",
            details,
        ), estimate
    if launched not in pool.instance_types:
        return _fail(
            pool,
            f"NodeClaim {claim_name} launched {launched!r}, not a type of the pool "
            f"({', '.join(pool.instance_types)})",
            details,
        ), estimate

    # 4. what the node advertises
    node = ctx.kube.get("v1", "Node", node_name) or {}
    expected = pool.advertised.get(launched, {})
    actual = gpu_specs.nvidia_allocatable(node)
    details.append(f"Node {node_name} allocatable {_fmt(actual)}; capacity.json {_fmt(expected)}")
    if actual != expected:
        return _fail(
            pool,
            f"node {node_name} ({launched}) advertises {_fmt(actual)}, capacity.json says "
            f"{_fmt(expected)}",
            details,
        ), estimate

    # 5. nvidia-smi
    if pod["status"]["phase"] != SUCCEEDED:
        return _fail(pool, f"pod {pod_name} failed; its log is in the details", details), estimate
    smi_ok, smi_reason = _judge_smi(logs, launched, resource)
    details.append(f"nvidia-smi: {smi_reason}")
    if not smi_ok:
        return _fail(pool, f"nvidia-smi: {smi_reason}", details), estimate

    # 6. consolidated away once the pod is gone
    # the pod goes first: its deletion is the pod event consolidateAfter counts from
    ctx.kube.delete("v1", "Pod", pod_name, namespace)
    ctx.kube.delete("batch/v1", "Job", name, namespace)
    consolidate_after = pool.consolidate_after.get(node_pool, "")
    after_s = gpu_specs.duration_s(consolidate_after)
    if after_s is None:
        ctx.kube.delete(NODECLAIM_API, "NodeClaim", claim_name)
        details.append(
            f"consolidateAfter is Never on NodePool {node_pool}: the check deleted NodeClaim "
            f"{claim_name} itself"
        )
        return result(
            NAME,
            pool.name,
            True,
            f"{launched} launched, advertised and ran nvidia-smi; consolidation not tested "
            "(consolidateAfter: Never)",
            details,
        ), estimate
    bound = after_s + CONSOLIDATION_MARGIN_S
    gone, waited = ctx.wait(lambda: _removing(ctx, claim_name), min(bound, remaining()), POLL_S)
    details.append(
        f"consolidation: {'started' if gone else 'not started'} after {waited:g} s (bound "
        f"{bound:g} s = consolidateAfter {consolidate_after} + margin "
        f"{CONSOLIDATION_MARGIN_S:g} s)"
    )
    if not gone:
        why = "the time cap" if remaining() <= 0 and bound > waited else f"{bound:g} s"
        details.append(BUSY_LOOP_NOTE)
        return _fail(
            pool,
            f"NodeClaim {claim_name} was not consolidated within {why} "
            f"(consolidateAfter {consolidate_after} + {CONSOLIDATION_MARGIN_S:g} s)",
            details,
        ), estimate
    return result(
        NAME,
        pool.name,
        True,
        f"{launched} launched, advertised {_fmt(actual)}, ran nvidia-smi, consolidated after "
        f"{waited:g} s",
        details,
    ), estimate


def _removing(ctx: Context, claim_name: str) -> bool:
    claim = ctx.kube.get(NODECLAIM_API, "NodeClaim", claim_name)
    return claim is None or bool(claim["metadata"].get("deletionTimestamp"))


def _fmt(resources: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(resources.items())) or "no nvidia.com resource"


def _judge_smi(logs: str, instance_type: str, resource: str) -> tuple[bool, str]:
    """Whether the pod's nvidia-smi output shows exactly the one unit it asked for, of the GPU of
    ``instance_type``; the parsed figures as the reason."""
    try:
        if gpu_specs.is_mig(resource):
            gpus = gpu_specs.parse_smi_list(logs)
        else:
            gpus = gpu_specs.parse_smi_csv(logs)
    except ValueError as exc:
        return False, str(exc)
    if len(gpus) != 1:
        return False, f"{len(gpus)} GPUs visible, expected 1"
    gpu = gpus[0]
    if gpu_specs.is_mig(resource):
        profile = resource[len(gpu_specs.MIG_RESOURCE_PREFIX) :]
        seen = [p for p, _ in gpu.mig]
        shown = f"{gpu.name}, MIG {', '.join(seen) or 'none'}"
        if seen != [profile]:
            return False, f"{shown}; expected one MIG {profile} device"
    else:
        shown = f"{gpu.name}, {gpu.memory_mib} MiB, driver {gpu.driver}"
    if not gpu_specs.gpu_matches(instance_type, gpu.name):
        gpu_name = catalog.INSTANCE_TYPES[instance_type].gpu_name
        return False, f"{shown}: not the {gpu_name} of {instance_type}"
    return True, shown
