"""A pool's GPU limits do not exceed what the KAI queues routed to it can admit, counted the way
Karpenter, the device plugin and KAI count them (issue 12).

- Karpenter charges a NodePool with its nodes' advertised capacity (kubernetes-sigs/karpenter
  v1.15.0 ``pkg/controllers/state/statenode.go`` ``Capacity()``), so a time-sliced or MIG pool's
  limits are in slices or MIG devices; the platform's NodeOverlays (one per pool and instance
  type) say how many each node advertises, and without one a node advertises its GPUs.
- KAI charges a queue 1 per ``nvidia.com/gpu`` and the profile's g-count per
  ``nvidia.com/mig-<g>g.<mem>gb`` (kai-scheduler v0.16.8 ``resources/mig.go`` L13-15).
- A queue routed to several GPU pools gives each its share of one budget: its annotation
  ``<domain>/pool-shares`` when set, else the even split of ``budget/queues.py``
  ``queue_shares`` (mirrored here: the pack reads only the stack's resources).
- Limits are whole nodes: queues admitting 7.5 GPUs justify 8, and 12 GPUs on 8-GPU nodes 16.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ... import catalog
from ._base import LABEL_DOMAIN_SCHEMA, MANDATORY, Finding, Rule, StackResource
from ._kube import (
    KAI_QUEUE,
    NODEPOOL,
    is_preemptible,
    object_name,
    of_type,
    pool_name,
    stack_label_domain,
)
from ._props import dig, fmt_number, mapping, number, sequence, show_list

UNLIMITED = -1
NODEOVERLAY = "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"
GPU = "nvidia.com/gpu"
MIG = "nvidia.com/mig-"
SELECTORS = {
    "node.kubernetes.io/instance-type": "types",
    "karpenter.k8s.aws/instance-family": "families",
    "karpenter.k8s.aws/instance-gpu-name": "gpu_names",
}


def _routes(queue: StackResource, domain: str) -> list[str]:
    raw = mapping(dig(queue.props, "metadata", "annotations")).get(f"{domain}/node-pools")
    if not isinstance(raw, str):
        return []
    return [p.strip() for p in raw.split(",") if p.strip()]


def _explicit_shares(queue: StackResource, domain: str) -> dict[str, float]:
    raw = mapping(dig(queue.props, "metadata", "annotations")).get(f"{domain}/pool-shares")
    out: dict[str, float] = {}
    for item in raw.split(",") if isinstance(raw, str) else ():
        pool, _, value = item.partition("=")
        share = number(value.strip())
        if pool.strip() and share is not None:
            out[pool.strip()] = share
    return out


def _leaf_queues(queues: list[StackResource]) -> list[StackResource]:
    """Only leaf queues admit workloads; a parent's quota is its children's, not extra."""
    parents = {dig(q.props, "spec", "parentQueue") for q in queues}
    return [q for q in queues if object_name(q.props) not in parents]


def _gpu(queue: StackResource, field: str) -> float:
    """``spec.resources.gpu.<field>``; unset means 0 (no guarantee / nothing allowed)."""
    value = number(dig(queue.props, "spec", "resources", "gpu", field))
    return 0.0 if value is None else value


def _shares(
    queue: StackResource, domain: str, preemptible: Mapping[str, bool]
) -> dict[str, float | None]:
    """The queue's GPU budget per GPU pool (None: unlimited), as ``routing.queue_shares``."""
    routed = [p for p in _routes(queue, domain) if p in preemptible]
    if len(routed) == 1:
        value = _gpu(queue, "limit" if preemptible[routed[0]] else "quota")
        return {routed[0]: None if value == UNLIMITED else value}
    explicit = _explicit_shares(queue, domain)
    if explicit:
        return {p: explicit.get(p, 0.0) for p in routed}
    quota, limit = _gpu(queue, "quota"), _gpu(queue, "limit")
    budget = limit if any(preemptible[p] for p in routed) else quota
    out: dict[str, float | None] = {}
    for p in routed:
        if budget == UNLIMITED:
            out[p] = None
        elif preemptible[p] or quota == UNLIMITED:
            out[p] = budget / len(routed)
        else:
            out[p] = min(budget, quota) / len(routed)
    return out


def _types(nodepool: StackResource) -> list[catalog.InstanceType]:
    """The catalogued GPU types the NodePool's ``In`` requirements select."""
    selected: dict[str, list[str]] = {}
    for req in sequence(dig(nodepool.props, "spec", "template", "spec", "requirements")):
        key = mapping(req).get("key")
        if key in SELECTORS and mapping(req).get("operator") == "In":
            values = [v for v in sequence(mapping(req).get("values")) if isinstance(v, str)]
            selected[SELECTORS[key]] = values
    if not selected:
        return []
    try:
        found = catalog.instance_types_for(
            selected.get("gpu_names", ()), selected.get("families", ()), selected.get("types", ())
        )
    except ValueError:
        return []
    return [t for t in found if t.gpu_count > 0]


def _advertised(overlays: Sequence[StackResource], domain: str) -> dict[tuple[str, str], dict]:
    """(pool, instance type) -> the GPU resources an overlay says its nodes advertise."""
    out: dict[tuple[str, str], dict] = {}
    for overlay in overlays:
        reqs = {
            mapping(r).get("key"): sequence(mapping(r).get("values"))
            for r in sequence(dig(overlay.props, "spec", "requirements"))
        }
        capacity = {
            k: number(v)
            for k, v in mapping(dig(overlay.props, "spec", "capacity")).items()
            if k == GPU or k.startswith(MIG)
        }
        if not capacity:
            continue
        for pool in reqs.get(f"{domain}/pool", ()):
            for itype in reqs.get("node.kubernetes.io/instance-type", ()):
                out[(pool, itype)] = {k: v for k, v in capacity.items() if v is not None}
    return out


def _units(resource: str) -> int:
    return 1 if resource == GPU else int(resource.removeprefix(MIG).split("g.", 1)[0] or 1)


def _pool_view(
    pool: str, nodepools: Sequence[StackResource], advertised: Mapping[tuple[str, str], dict]
) -> tuple[float, float, int, dict[str, float]] | None:
    """The pool's physical-GPU budget its limits allow, KAI units one GPU surely offers, GPUs
    of its smallest node, and its limits; None without a GPU limit on every NodePool."""
    limits: dict[str, float] = defaultdict(float)
    types: dict[str, catalog.InstanceType] = {}
    for nodepool in nodepools:
        own = {
            k: number(v)
            for k, v in mapping(dig(nodepool.props, "spec", "limits")).items()
            if k == GPU or k.startswith(MIG)
        }
        if not own or any(v is None for v in own.values()):
            return None
        for k, v in own.items():
            limits[k] += v or 0.0
        types.update({t.name: t for t in _types(nodepool)})
    per_gpu: dict[str, float] = {}
    for resource in limits:
        ratios = [
            advertised.get((pool, t.name), {GPU: t.gpu_count}).get(resource, 0) / t.gpu_count
            for t in types.values()
        ]
        per_gpu[resource] = min(ratios, default=1.0)
    usable = {r: n for r, n in per_gpu.items() if n > 0}
    if not usable:
        return None
    gpus = min(limits[r] / n for r, n in usable.items())
    sizing = min(n * _units(r) for r, n in usable.items())
    node = min((t.gpu_count for t in types.values()), default=1)
    return gpus, sizing, node, dict(limits)


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
    advertised = _advertised(of_type(resources, NODEOVERLAY), domain)
    views = {name: _pool_view(name, nps, advertised) for name, nps in pools.items()}
    preemptible = {
        name: all(is_preemptible(p.props, domain) for p in nps)
        for name, nps in pools.items()
        if views[name] is not None
    }
    out: list[str] = []
    routed: dict[str, list[tuple[StackResource, float | None]]] = defaultdict(list)
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
        for target, share in _shares(queue, domain, preemptible).items():
            routed[target].append((queue, share))
    for pool, nodepools in sorted(pools.items()):
        view = views[pool]
        if view is None:
            continue  # uncapped or CPU pool: gpu-nodepool-gpu-limit reports GPU pools
        gpus, sizing, node, limits = view
        cap = sum(n * _units(r) for r, n in limits.items()) if GPU not in limits else limits[GPU]
        if cap <= 0:
            continue
        field = "limit" if preemptible[pool] else "quota"
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
        if any(share is None for _, share in queues_here):
            continue
        total = sum(share or 0.0 for _, share in queues_here)
        # Whole nodes: the GPUs the admitted units need, rounded up to the smallest node.
        needed = math.ceil(round(total / sizing, 6))
        needed = -(-needed // node) * node
        if gpus > needed + 1e-9:
            names = show_list(sorted(object_name(q.props) for q, _ in queues_here))
            kind = "preemptible" if preemptible[pool] else "non-preemptible"
            units = (
                ""
                if sizing == 1
                else f" ({fmt_number(gpus)} physical, {fmt_number(sizing)} KAI units each)"
            )
            out.append(
                Finding(
                    f'pool "{pool}" (NodePools {members}) caps {fmt_number(cap)} GPUs{units}, but '
                    f"the queues routed to this {kind} pool ({names}) admit only "
                    f"{fmt_number(total)} (sum of gpu.{field}); Karpenter would launch GPUs no "
                    "queue can use",
                    nodepools[0].urn,
                )
            )
    return out


RULE = Rule(
    name="nodepool-gpu-limit-within-queue-capacity",
    description=(
        "A pool's GPU limits (summed over its NodePools, in the units its nodes advertise: "
        "slices, MIG devices) must not exceed, beyond rounding to whole nodes, what the KAI "
        "queues routed to it can admit (their gpu.limit for preemptible pools, gpu.quota for "
        "the others; a queue routed to several pools counts its share in each): KAI marks "
        "over-quota pods Unschedulable, and Karpenter provisions GPUs for them that no queue "
        "will ever use."
    ),
    enforcement_level=MANDATORY,
    category="cost",
    severity="high",
    check_stack=check_stack,
    config_schema=LABEL_DOMAIN_SCHEMA,
)
