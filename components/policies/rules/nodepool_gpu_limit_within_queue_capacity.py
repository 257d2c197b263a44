"""A pool's GPU cap does not exceed what the KAI queues routed to it can admit."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ._base import LABEL_DOMAIN_SCHEMA, MANDATORY, Finding, Rule, StackResource
from ._kube import (
    KAI_QUEUE,
    NODEPOOL,
    gpu_limit,
    is_preemptible,
    object_name,
    of_type,
    pool_name,
    stack_label_domain,
)
from ._props import dig, fmt_number, mapping, number, show_list

UNLIMITED = -1


def _routes(queue: StackResource, domain: str) -> list[str]:
    raw = mapping(dig(queue.props, "metadata", "annotations")).get(f"{domain}/node-pools")
    if not isinstance(raw, str):
        return []
    return [p.strip() for p in raw.split(",") if p.strip()]


def _leaf_queues(queues: list[StackResource]) -> list[StackResource]:
    """Only leaf queues admit workloads; a parent's quota is its children's, not extra."""
    parents = {dig(q.props, "spec", "parentQueue") for q in queues}
    return [q for q in queues if object_name(q.props) not in parents]


def _gpu(queue: StackResource, field: str) -> float:
    """``spec.resources.gpu.<field>``; unset means 0 (no guarantee / nothing allowed)."""
    value = number(dig(queue.props, "spec", "resources", "gpu", field))
    return 0.0 if value is None else value


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    domain = stack_label_domain(resources, config)
    queues = of_type(resources, KAI_QUEUE)
    if not queues:
        return []
    pools: dict[str, list[StackResource]] = defaultdict(list)
    for nodepool in of_type(resources, NODEPOOL):
        name = pool_name(nodepool.props, domain)
        if name is not None:
            pools[name].append(nodepool)
    out: list[str] = []
    routed: dict[str, list[StackResource]] = defaultdict(list)
    for queue in _leaf_queues(queues):
        for target in _routes(queue, domain):
            if target not in pools:
                out.append(
                    Finding(
                        f'Queue "{object_name(queue.props)}" routes to pool "{target}" '
                        f"({domain}/node-pools), but no NodePool in this stack has the label "
                        f'{domain}/pool: "{target}"',
                        queue.urn,
                    )
                )
            routed[target].append(queue)
    for pool, nodepools in sorted(pools.items()):
        limits = [number(gpu_limit(p.props)) for p in nodepools]
        if any(limit is None for limit in limits):
            continue  # uncapped or CPU pool: gpu-nodepool-gpu-limit reports GPU pools
        cap = sum(limit for limit in limits if limit is not None)
        if cap <= 0:
            continue
        preemptible = all(is_preemptible(p.props, domain) for p in nodepools)
        field = "limit" if preemptible else "quota"
        members = show_list(sorted(object_name(p.props) for p in nodepools))
        queues_here = routed.get(pool, [])
        if not queues_here:
            out.append(
                Finding(
                    f'pool "{pool}" (NodePools {members}) caps {fmt_number(cap)} GPUs but no leaf '
                    f"Queue routes to it ({domain}/node-pools), so no queue can admit work there",
                    nodepools[0].urn,
                )
            )
            continue
        admits = [_gpu(q, field) for q in queues_here]
        if any(a == UNLIMITED for a in admits):
            continue
        total = sum(admits)
        # Karpenter launches whole GPUs: queues admitting 7.5 GPUs justify a cap of 8.
        if cap > math.ceil(total):
            names = show_list(sorted(object_name(q.props) for q in queues_here))
            kind = "preemptible" if preemptible else "non-preemptible"
            out.append(
                Finding(
                    f'pool "{pool}" (NodePools {members}) caps {fmt_number(cap)} GPUs, but the '
                    f"queues routed to this {kind} pool ({names}) admit only "
                    f"{fmt_number(total)} (sum of gpu.{field}); Karpenter would launch GPUs no "
                    "queue can use",
                    nodepools[0].urn,
                )
            )
    return out


RULE = Rule(
    name="nodepool-gpu-limit-within-queue-capacity",
    description=(
        "A pool's nvidia.com/gpu cap (summed over its NodePools) must not exceed what the KAI "
        "queues routed to it can admit (sum of gpu.limit for preemptible pools, of gpu.quota "
        "for the others): KAI marks over-quota pods Unschedulable, and Karpenter provisions "
        "GPUs for them that no queue will ever use."
    ),
    enforcement_level=MANDATORY,
    category="cost",
    severity="high",
    check_stack=check_stack,
    config_schema=LABEL_DOMAIN_SCHEMA,
)
