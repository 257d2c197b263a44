"""What a change makes ``pulumi up`` wait for, and the CI budget it must fit.

``waits`` (in plan.json, and plan.md) are the longest waits the change makes ``pulumi up``
sit through: a NodePool or EC2NodeClass deleted or replaced waits up to its delete timeout
(terminationGracePeriod + 20 minutes), a minor upgrade up to the update timeouts of its chain
(each step's recorded ``customTimeouts``: ``upgrade_steps``); ``python -m
eks_gpu_platform.offline.plan gate`` refuses a plan whose total is above a CI job's budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..cluster.spec import DEFAULT_SYSTEM_MAX_SIZE
from ..cluster.timeouts import (
    ADDON_DEFAULT_MINUTES,
    CONTROL_PLANE_UPDATE_MINUTES,
    NODE_GROUP_DEFAULT_MINUTES,
    minor_upgrade_steps,
)
from .plan_state import ADDON, CLUSTER, NODECLASS, NODEPOOL, _recording, _short
from .snapshot import engine_urns

# A minor upgrade's chain (cluster/timeouts.py): the control plane, then vpc-cni, kube-proxy and
# eks-pod-identity-agent together, then the system node group's roll, then coredns, each up to
# the update timeout the render records on it (its ``customTimeouts``, else the provider's
# default). ``MINOR_UPGRADE_STEPS``: the chain of a default system node group.
MINOR_UPGRADE_STEPS = minor_upgrade_steps(DEFAULT_SYSTEM_MAX_SIZE)
MINOR_UPGRADE_MINUTES = sum(m for _, m in MINOR_UPGRADE_STEPS)
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def minutes(duration: str | None) -> int:
    """A Go duration such as ``48h20m`` in whole minutes (0 when absent)."""
    m = _DURATION.match(duration or "")
    if not duration or not m:
        return 0
    hours, mins, secs = (int(g or 0) for g in m.groups())
    return hours * 60 + mins + (1 if secs else 0)


def upgrade_steps(new: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, int], ...]:
    """A minor upgrade's chain in this render: each step's update timeout as recorded on its
    resources (``customTimeouts.update``), the provider's default where none is set; the
    add-ons before the nodes run in parallel, so the longest of them counts."""

    def update(r: Mapping[str, Any], default: int) -> int:
        return minutes((r.get("customTimeouts") or {}).get("update")) or default

    addons = {
        (r.get("inputs") or {}).get("addonName"): update(r, ADDON_DEFAULT_MINUTES)
        for r in new
        if r.get("type") == ADDON
    }
    groups = [update(r, NODE_GROUP_DEFAULT_MINUTES) for r in new if r.get("type") == NODE_GROUP]
    if not addons and not groups:
        return MINOR_UPGRADE_STEPS
    before = [m for a, m in addons.items() if a != "coredns"]
    return (
        ("control plane", CONTROL_PLANE_UPDATE_MINUTES),
        ("add-ons", max(before, default=0)),
        ("system nodes", max(groups, default=0)),
        ("coredns", addons.get("coredns", 0)),
    )


def waits(
    rows: Sequence[Mapping[str, Any]],
    old: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """What the change makes ``pulumi up`` wait for, longest first: each NodePool or
    EC2NodeClass deleted or replaced (its recorded delete timeout: the engine passes the one in
    the state, pulumi/pulumi pkg/resource/deploy/step.go L695, and pulumi-kubernetes waits for
    the finalizers that long), and a minor upgrade (``upgrade_steps`` of the new render)."""
    timeouts = {
        r["urn"]: (r.get("customTimeouts") or {}).get("delete") for r in old if r.get("urn")
    }
    old_urns = engine_urns(_recording(old))
    by_engine = {old_urns[u]: t for u, t in timeouts.items() if u in old_urns}
    out: list[dict[str, Any]] = []
    for row in rows:
        if row["type"] in (NODEPOOL, NODECLASS) and row["action"] in ("delete", "replace"):
            timeout = by_engine.get(row.get("aliasOf") or row["urn"])
            if minutes(timeout):
                out.append(
                    {
                        "resource": _short(row["urn"]),
                        "minutes": minutes(timeout),
                        "why": f"{row['action']}: waits for its nodes to drain (up to {timeout})",
                    }
                )
        if row["type"] == CLUSTER and "version" in row.get("changed", ()):
            chain = upgrade_steps(new)
            steps = ", ".join(f"{name} {m}m" for name, m in chain)
            out.append(
                {
                    "resource": _short(row["urn"]),
                    "minutes": sum(m for _, m in chain),
                    "why": f"Kubernetes minor upgrade: {steps}, one after another",
                }
            )
    return sorted(out, key=lambda w: (-w["minutes"], w["resource"]))


def total_wait(found: Sequence[Mapping[str, Any]]) -> int:
    """The longest the change can keep ``pulumi up`` waiting: a minor upgrade's chain plus the
    longest pool drain (the drains run in parallel; the upgrade's steps one after another)."""
    upgrade = sum(w["minutes"] for w in found if w["why"].startswith("Kubernetes minor"))
    drains = [w["minutes"] for w in found if not w["why"].startswith("Kubernetes minor")]
    return upgrade + max(drains, default=0)


def gate(plan_json: Path, budget_minutes: int) -> list[str]:
    """Why a plan must not run in CI: its longest wait above the job's budget (empty: fine)."""
    document = json.loads(plan_json.read_text())
    longest = int(document.get("longestWaitMinutes") or 0)
    if longest <= budget_minutes:
        return []
    return [
        f"this change can keep `pulumi up` waiting {longest} minutes, more than the CI job's "
        f"{budget_minutes}-minute budget (its timeout and its AWS session would end first, "
        "leaving pending operations in the state):",
        *[f"  {w['resource']}: {w['minutes']} minutes ({w['why']})" for w in document["waits"]],
        "run this `pulumi up` by hand with credentials that last longer (README, "
        '"Upgrades and tear-down")',
    ]
