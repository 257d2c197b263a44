"""Every GPU NodePool caps ``nvidia.com/gpu`` (or its MIG devices), with a limit some queue
budget could produce.

1. ``check``: the cap exists and is a positive whole number.
2. ``budget_findings``: a pool's limits (summed over its NodePools, per resource) stay within
   what the KAI queues routed to it could ever admit, plus one node of rounding per NodePool.
   The bound is derived from the Queue objects alone:

   - a leaf Queue routes to the pools its ``<domain>/node-pools`` annotation names;
   - it can admit at most the smallest finite ``gpu.limit`` of itself and its ancestors (KAI
     checks every ancestor's limit: kai-scheduler v0.16.8
     ``pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go``); a queue with no
     finite limit up its chain bounds nothing, and its pools are not checked here;
   - KAI charges 1 per ``nvidia.com/gpu`` (whole, time-slice or MIG ``single`` device alike)
     and g per ``nvidia.com/mig-<g>g.<mem>gb`` (v0.16.8
     ``pkg/scheduler/api/common_info/resources/mig.go`` L13-15), so the routed queues' sum B
     caps ``nvidia.com/gpu`` at B and ``nvidia.com/mig-<g>g.*`` at B / g devices;
   - Karpenter charges whole nodes (kubernetes-sigs/karpenter v1.15.0
     ``pkg/controllers/state/statenode.go`` ``Capacity()``): each NodePool may round up by at
     most one node, its largest (the NodeOverlay's advertised count, else the catalogue's GPUs).

   A stack without KAI Queues (scheduler off) has no queue budget: only the cap is checked. An
   absurdly large limit (10^9 GPUs) is thus refused wherever a queue budget exists.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ._base import LABEL_DOMAIN_SCHEMA, MANDATORY, Finding, Rule, StackResource
from ._kube import (
    GPU_RESOURCE,
    KAI_QUEUE,
    NODEPOOL,
    gpu_limit,
    is_nvidia_gpu_pool,
    label,
    label_domain,
    object_name,
    of_type,
    pool_name,
    stack_label_domain,
)
from ._props import dig, fmt_number, mapping, number, show
from .nodepool_gpu_limit_within_queue_capacity import (
    NODEOVERLAY,
    _advertised,
    _leaf_queues,
    _routes,
    _types,
    _units,
)

MIG_PREFIX = "nvidia.com/mig-"
UNLIMITED = -1


def _positive_whole(raw: Any) -> bool:
    value = number(raw)
    return value is not None and value > 0 and value.is_integer()


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if not is_nvidia_gpu_pool(props):
        return []
    name, limit = show(object_name(props)), gpu_limit(props)
    if label(props, label_domain(props, config), "dra") == "true":
        # A DRA pool's nodes advertise no nvidia.com/gpu: its budget is a cpu cap
        # (eks_gpu_platform.budget.dra, docs/dra-pools.md).
        cpu = mapping(dig(props, "spec", "limits")).get("cpu")
        if cpu is None or limit is not None or not _positive_whole(cpu):
            return [
                f"DRA NodePool {name}: expected a positive whole spec.limits.cpu (its GPU "
                f'budget) and no spec.limits["{GPU_RESOURCE}"], which its nodes never '
                f"advertise; limits are {show(dict(mapping(dig(props, 'spec', 'limits'))))}"
            ]
        return []
    mig = {
        k: v
        for k, v in mapping(dig(props, "spec", "limits")).items()
        if isinstance(k, str) and k.startswith(MIG_PREFIX)
    }
    if limit is None and mig:
        # A MIG pool under the mixed strategy advertises nvidia.com/mig-<profile>, not
        # nvidia.com/gpu (NVIDIA/k8s-device-plugin v0.20.0 internal/rm/rm.go L140-146): its
        # limits cap those (issue 12).
        bad = sorted(k for k, v in mig.items() if not _positive_whole(v))
        return [
            f"NodePool {name}: spec.limits[{show(k)}] is {show(mig[k])}; expected a positive "
            "whole number of MIG devices"
            for k in bad
        ]
    if limit is None:
        return [
            f'NodePool {name} launches NVIDIA GPU nodes without a spec.limits["{GPU_RESOURCE}"] '
            "cap; pending pods (over-quota KAI pods included) can launch GPUs without bound"
        ]
    if not _positive_whole(limit):
        return [
            f'NodePool {name}: spec.limits["{GPU_RESOURCE}"] is {show(limit)}; expected a '
            "positive whole number of GPUs"
        ]
    return []


def _queue_cap(queue: StackResource, by_name: Mapping[str, StackResource]) -> float | None:
    """The smallest finite gpu.limit of the queue and its ancestors; None when all unlimited."""
    caps: list[float] = []
    seen: set[str] = set()
    current: StackResource | None = queue
    while current is not None and object_name(current.props) not in seen:
        seen.add(object_name(current.props))
        limit = number(dig(current.props, "spec", "resources", "gpu", "limit"))
        if limit is not None and limit != UNLIMITED:
            caps.append(limit)
        parent = dig(current.props, "spec", "parentQueue")
        current = by_name.get(parent) if isinstance(parent, str) else None
    return min(caps) if caps else None


def _node_size(
    nodepool: StackResource, pool: str, resource: str, advertised: Mapping[tuple[str, str], dict]
) -> float:
    """The most of ``resource`` one node of the NodePool advertises (its largest type)."""
    sizes = [
        advertised.get((pool, t.name), {GPU_RESOURCE: t.gpu_count}).get(resource, 0)
        for t in _types(nodepool)
    ]
    return max(sizes, default=0)


def budget_findings(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    queues = of_type(resources, KAI_QUEUE)
    if not queues:
        return []
    domain = stack_label_domain(resources, config)
    by_name = {object_name(q.props): q for q in queues}
    budgets: dict[str, float | None] = defaultdict(float)
    routed: dict[str, list[str]] = defaultdict(list)
    for queue in _leaf_queues(queues):
        cap = _queue_cap(queue, by_name)
        for pool in _routes(queue, domain):
            routed[pool].append(object_name(queue.props))
            current = budgets[pool]
            budgets[pool] = None if cap is None or current is None else current + cap
    pools: dict[str, list[StackResource]] = defaultdict(list)
    for nodepool in of_type(resources, NODEPOOL):
        name = pool_name(nodepool.props, domain)
        if name is not None and is_nvidia_gpu_pool(nodepool.props):
            pools[name].append(nodepool)
    advertised = _advertised(of_type(resources, NODEOVERLAY), domain)
    out: list[str] = []
    for pool, nodepools in sorted(pools.items()):
        if pool not in routed:
            continue  # nodepool-gpu-limit-within-queue-capacity reports an unrouted pool
        budget = budgets[pool]
        if budget is None:
            continue  # a routed queue has no finite limit: no budget bounds this pool
        limits: dict[str, float] = defaultdict(float)
        slack: dict[str, float] = defaultdict(float)
        for nodepool in nodepools:
            for resource, raw in mapping(dig(nodepool.props, "spec", "limits")).items():
                value = number(raw)
                if value is None or not (
                    resource == GPU_RESOURCE or resource.startswith(MIG_PREFIX)
                ):
                    continue
                limits[resource] += value
                slack[resource] += _node_size(nodepool, pool, resource, advertised)
        for resource, total in sorted(limits.items()):
            allowed = math.floor(budget / _units(resource) + 1e-9) + slack[resource]
            if total > allowed:
                names = ", ".join(show(object_name(n.props)) for n in nodepools)
                queues_here = ", ".join(show(q) for q in sorted(routed[pool])) or "none"
                out.append(
                    Finding(
                        f"pool {show(pool)} (NodePools {names}) caps {show(resource)} at "
                        f"{fmt_number(total)}, more than any queue budget could use: the leaf "
                        f"queues routed to it ({queues_here}) admit at most {fmt_number(budget)} "
                        f"GPUs (their smallest finite gpu.limit up the queue tree), "
                        f"{fmt_number(allowed)} {resource} with one node of rounding per NodePool",
                        nodepools[0].urn,
                    )
                )
    return out


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for nodepool in of_type(resources, NODEPOOL):
        out += [Finding(m, nodepool.urn) for m in check(nodepool.props, config)]
    return out + budget_findings(resources, config)


RULE = Rule(
    name="gpu-nodepool-gpu-limit",
    description=(
        "GPU NodePools must cap nvidia.com/gpu (or their MIG devices) in spec.limits, at no more "
        "than the KAI queues routed to the pool could ever admit (their smallest finite "
        "gpu.limit up the queue tree, plus one node of rounding per NodePool): Karpenter "
        "provisions for every Unschedulable pod, including pods a queue will never admit, so an "
        "uncapped or oversized pool's spend is unbounded."
    ),
    enforcement_level=MANDATORY,
    category="cost",
    severity="high",
    check_stack=check_stack,
    config_schema=LABEL_DOMAIN_SCHEMA,
)
