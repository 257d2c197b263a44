"""The capacity plan of a render: ``capacity.json`` and its section of ``summary.md``.

``capacity.json``'s fields are described where they are computed, ``budget.report``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..budget import capacity_document as budget_document
from ..budget import cost_lines, resource_lines
from ..config import PlatformConfig
from ..gang_checks import stack_gangs


def capacity_document(config: PlatformConfig) -> dict[str, Any]:
    """``capacity.json``'s content (``budget.report``) and ``gangs``: per queue routed to a GPU
    pool, where its gangs run and why (``budget.gangs.GangChoice.as_json``)."""
    document = budget_document(
        config.pools,
        config.gpu_operator,
        config.scheduler,
        kinds=config.workload_kinds,
        region=config.region,
        system_node_group=config.system_node_group,
        cpu_pools=[p.name for p in config.node_pools if p.kind == "cpu"],
    )
    document["gangs"] = {q: c.as_json() for q, c in stack_gangs(config).items()}
    return document


def write_capacity(
    config: PlatformConfig, out: Path, document: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Write ``out/capacity.json``; returns its content. ``document``: ``capacity_document(config)``
    when the caller has it already (the command line computes it once for this and the summary)."""
    if document is None:
        document = capacity_document(config)
    (out / "capacity.json").write_text(json.dumps(document, indent=2) + "\n")
    return document


def limit_note(q: dict[str, Any]) -> str:
    """Why a queue's "Limit reachable" is no (issue 28, point 13): no limit at all, pools'
    budgets that hold less than it (``budget.plan``: ``limitReachable``), or an ancestor's
    ``gpu.limit`` split in proportion among the queues under it (review L6: a design choice of
    the budget, ``budget.queues``; KAI lets any leaf use all of an ancestor's free limit,
    kai-scheduler v0.16.8 ``max_allowed_check.go`` L19-45)."""
    if q["limit"] == -1:
        return f"queue {q['name']}: limit not reachable: it has no gpu.limit (-1), nothing to reach"
    cut = [a for a in q["ancestors"] if "limit" in a["cutBy"]]
    if cut:
        names = ", ".join(f"{a['name']} ({a['gpuLimit']})" for a in cut)
        return (
            f"queue {q['name']}: limit not reachable: Karpenter can buy at most "
            f"{q['purchasableMax']} GPU units for it (the budgets of {', '.join(q['pools'])}), "
            f"below its gpu.limit {q['limit']}, because the gpu.limit of {names} is split among "
            "the queues under it in proportion (a design choice: KAI lets any one of them use "
            "all of the ancestor's free limit, kai-scheduler v0.16.8 max_allowed_check.go "
            "L19-45, but pools sized for that would together buy more than the ancestor "
            "admits); its pods beyond the budget stay pending even when its siblings are idle "
            "(raise the ancestor's gpu.limit, or lower gpu.limit to the budget)"
        )
    return (
        f"queue {q['name']}: limit not reachable: Karpenter can buy at most "
        f"{q['purchasableMax']} GPU units for it (the budgets of {', '.join(q['pools'])}), below "
        f"its gpu.limit {q['limit']}; KAI admits its pods up to the limit, and those beyond "
        "what the pools hold stay pending (raise the pools' limits.gpus, or lower gpu.limit)"
    )


def capacity_markdown(config: PlatformConfig, document: dict[str, Any] | None = None) -> str:
    """The capacity plan's section of ``summary.md``; ``document`` as for ``write_capacity``."""
    if document is None:
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
    notes = []
    for q in document["queues"]:
        cuts = []
        for key, field in (("quota", "gpuQuota"), ("limit", "gpuLimit")):
            cut = [a for a in q["ancestors"] if key in a["cutBy"]]
            if cut:
                cuts.append(
                    f"the gpu.{key} of "
                    + ", ".join(f"{a['name']} ({a[field]})" for a in cut)
                    + (" (its non-preemptible pools)" if key == "quota" else "")
                )
        if cuts:
            notes.append(
                f"queue {q['name']}: its pools' budgets are cut to "
                + " and ".join(cuts)
                + f"; effective limit {q['effectiveLimit']}"
            )
        if not q["limitReachable"]:
            notes.append(limit_note(q))
        if len(q["pools"]) > 1:
            notes.append(
                f"queue {q['name']}: quota reachable per pool "
                + ", ".join(f"{p} {v}" for p, v in q["reachablePerPool"].items())
                + " (pods pinned to one pool see only its part)"
            )
        if "largestGang" in q:
            notes.append(f"queue {q['name']}: largest gang {q['largestGang']} GPUs")
    notes += resource_lines(document["queueResources"])
    lines += [""] + [f"- {n}" for n in notes] if notes else []
    lines += ["", *cost_lines(document["cost"])]
    warnings = document["warnings"]
    if warnings:
        lines += [""] + [f"- {w}" for w in warnings]
    return "\n".join(lines) + "\n"
