"""The capacity plan of a render: ``capacity.json`` and its section of ``summary.md``.

``capacity.json`` is ``{"pools": [...], "queues": [...]}``:

- per GPU pool: ``name``, ``instanceTypes``, ``gpusPerNode`` and ``advertisedPerNode`` (per
  instance type: the device plugin's resources once the node is initialized, which is what
  Karpenter charges), ``limit`` (each Karpenter NodePool of the pool and its GPU limits: one
  NodePool, or one per instance type for an EFA pool), ``maxNodes`` (the most nodes those
  limits let Karpenter launch: every one of the smallest type) and ``maxGpus`` (the most
  physical GPUs). ``maxHourlyUsd`` is left out: no price table with a cited public source and
  date is vendored, and prices are never guessed.
- per leaf queue: ``name``, ``quota``, ``limit``, ``pools``, ``purchasableMin``,
  ``purchasableMax`` (KAI GPU units, the units its pods request; see ``scheduler/plan.py``),
  ``quotaReachable`` and ``limitReachable``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..capacity import capacity_of, capacity_plan, capacity_warnings
from ..config import PlatformConfig
from ..nodepool import split_gpu_limit, type_slug


def _nodepools(pool: Any, gpus: int) -> list[tuple[str, list[Any], int]]:
    """The pool's Karpenter NodePools: name, the catalog types it launches, its GPU budget."""
    if pool.kind != "efa":
        return [(pool.name, [t for t in pool.catalog_types if t.gpu_count > 0], gpus)]
    shares = split_gpu_limit(gpus, pool.catalog_types)
    return [
        (f"{pool.name}-{type_slug(t.name)}", [t], share or 0)
        for t, share in zip(pool.catalog_types, shares, strict=True)
    ]


def pool_entries(config: PlatformConfig) -> list[dict[str, Any]]:
    """The ``pools`` of ``capacity.json``: every GPU pool with a GPU budget."""
    budgets = config.gpu_limits
    out = []
    for pool in config.gpu_pools:
        gpus = budgets.get(pool.name)
        if gpus is None:
            continue
        capacity = capacity_of(pool, config.gpu_operator)
        advertised = {t.name: dict(sorted(t.advertised.items())) for t in capacity.types}
        limit: dict[str, dict[str, int]] = {}
        max_nodes = max_gpus = 0
        for name, types, budget in _nodepools(pool, gpus):
            limits = {r: int(v) for r, v in capacity.limits(budget).items()}
            limit[name] = limits
            max_gpus += budget
            # A type fits while its advertised capacity stays within every limited resource
            # (Karpenter v1.14.1 scheduler.go filterByRemainingResources): the smallest node
            # of the NodePool uses the least of the limit, so it launches the most nodes.
            per_node = [
                min(limits[r] // t.advertised[r] for r in limits if t.advertised.get(r, 0) > 0)
                for t in capacity.types
                if t.name in {x.name for x in types}
                and any(t.advertised.get(r, 0) > 0 for r in limits)
            ]
            max_nodes += max(per_node, default=0)
        out.append(
            {
                "name": pool.name,
                "instanceTypes": [t.name for t in capacity.types],
                "gpusPerNode": {t.name: t.gpus for t in capacity.types},
                "advertisedPerNode": advertised,
                "limit": limit,
                "maxNodes": max_nodes,
                "maxGpus": max_gpus,
            }
        )
    return out


def capacity_document(config: PlatformConfig) -> dict[str, Any]:
    """``capacity.json``'s content."""
    return {
        "pools": pool_entries(config),
        "queues": [plan.as_json() for plan in capacity_plan(config)],
    }


def write_capacity(config: PlatformConfig, out: Path) -> dict[str, Any]:
    """Write ``out/capacity.json``; returns its content."""
    document = capacity_document(config)
    (out / "capacity.json").write_text(json.dumps(document, indent=2) + "\n")
    return document


def capacity_markdown(config: PlatformConfig) -> str:
    """The capacity plan's section of ``summary.md``."""
    document = capacity_document(config)
    if not document["pools"]:
        return ""
    lines = [
        "#### Capacity plan",
        "",
        "| Pool | NodePool limits | Max nodes | Max GPUs |",
        "|---|---|---:|---:|",
    ]
    for pool in document["pools"]:
        limits = "; ".join(
            f"{name}: " + ", ".join(f"{r} {v}" for r, v in values.items())
            for name, values in pool["limit"].items()
        )
        lines.append(f"| {pool['name']} | {limits} | {pool['maxNodes']} | {pool['maxGpus']} |")
    if document["queues"]:
        lines += [
            "",
            "| Queue | Quota | Limit | Pools | Purchasable min | Purchasable max | Quota "
            "reachable | Limit reachable |",
            "|---|---:|---:|---|---:|---:|---|---|",
        ]
        for q in document["queues"]:
            lines.append(
                f"| {q['name']} | {q['quota']} | {q['limit']} | {', '.join(q['pools'])} | "
                f"{q['purchasableMin']} | {q['purchasableMax']} | "
                f"{'yes' if q['quotaReachable'] else 'no'} | "
                f"{'yes' if q['limitReachable'] else 'no'} |"
            )
    warnings = capacity_warnings(config)
    if warnings:
        lines += [""] + [f"- {w}" for w in warnings]
    return "\n".join(lines) + "\n"
