"""The plan's reports: ``plan.md`` and ``teardown.md``.

``plan.md`` is for a reviewer: a "No changes" plan is one line; otherwise the counts, then the
destructive and disruptive changes with what they cost (``headline``: a cluster or VPC/subnet
replaced or deleted, a Kubernetes minor upgrade, NodePools, queues and namespaces deleted,
nodes rolling and why), the waits, every changed resource with its changed fields and their old
and new values (``fields.field_changes``: dotted paths, secrets masked, long values cut), and,
only when the plan deletes something, the order ``pulumi up`` deletes those resources in
(``teardown.delete_order`` of the old render, kept to them). ``teardown.md`` beside it holds the
order ``pulumi destroy`` deletes the whole new render in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..budget import cost_lines, resource_lines
from .fields import code
from .plan_headline import headline
from .plan_state import ACTIONS, _recording, _short, remote_children
from .plan_waits import total_wait, waits
from .snapshot import engine_urns
from .teardown import delete_order

# At most this many fields per resource in plan.md (plan.json has them all).
MAX_FIELDS = 12


def _change_lines(r: Mapping[str, Any]) -> list[str]:
    notes = []
    if r["action"] == "replace":
        notes.append(
            "deletes the old one first"
            if r.get("deleteBeforeReplace")
            else "creates the new one before deleting the old one"
        )
    if r.get("rollsNodes"):
        notes.append("**rolls nodes**")
    if r.get("requirementsDrift"):
        notes.append("rolls the nodes outside the new requirements")
    if r.get("minorDrift"):
        notes.append(r["minorDrift"])
    if r.get("refused"):
        notes.append("**refused by EKS** (" + ", ".join(f"`{k}`" for k in r["refused"]) + ")")
    if r.get("version") and r["action"] == "create":
        notes.append(f"version {r['version'][1]}")
    elif r.get("versionKept"):
        notes.append(
            f"version {r['version'][1]}: on the same minor `pulumi up` keeps the installed one"
        )
    elif r.get("version"):
        notes.append(f"version {r['version'][0]} -> {r['version'][1]}")
    if r.get("aliasOf"):
        notes.append(f"was {_short(r['aliasOf'])} (alias)")
    lines = [f"- {r['action']} `{_short(r['urn'])}`" + (f": {'; '.join(notes)}" if notes else "")]
    fields = r.get("fields", ()) if r["action"] != "create" else ()
    for path, before, after in fields[:MAX_FIELDS]:
        lines.append(f"  - {code(path)}: {code(before)} -> {code(after)}")
    if len(fields) > MAX_FIELDS:
        lines.append(f"  - and {len(fields) - MAX_FIELDS} more fields (plan.json)")
    return lines


def deleted_teardown(
    rows: Sequence[Mapping[str, Any]], old: Sequence[Mapping[str, Any]]
) -> list[list[str]]:
    """The order ``pulumi up`` deletes the plan's deleted resources in: the old render's
    teardown order (the engine schedules an update's deletes as it does a destroy's,
    ``ScheduleDeletes``, see ``teardown``) kept to the deleted resources; engine URNs."""
    deleted = {r["urn"] for r in rows if r["action"] == "delete"}
    if not deleted:
        return []
    resources = [*old, *remote_children(old)]
    urns = engine_urns(_recording(resources))
    steps = [[urns[u] for u in step if urns.get(u) in deleted] for step in delete_order(resources)]
    return [sorted(step) for step in steps if step]


def markdown(
    rows: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    old: Sequence[Mapping[str, Any]] = (),
) -> str:
    counts = {a: sum(1 for r in rows if r["action"] == a) for a in ACTIONS}
    changes = [r for r in rows if r["action"] != "same" or r.get("rollsNodes")]
    if not changes:
        return f"# Plan\n\nNo changes ({counts['same']} resources unchanged).\n"
    lines = [
        "# Plan",
        "",
        ", ".join(f"{counts[a]} to {a}" for a in ACTIONS if a != "same")
        + f", {counts['same']} unchanged",
        "",
    ]
    if top := headline(rows, new, old):
        lines += ["## Destructive and disruptive changes", "", *top, ""]
    if found := waits(rows, old, new):
        lines += [
            "## Waits",
            "",
            f"This change can keep `pulumi up` waiting up to {total_wait(found)} minutes "
            "(the CI job's credentials and timeout must outlast it):",
            "",
            *[f"- `{w['resource']}`: {w['minutes']} minutes ({w['why']})" for w in found],
            "",
        ]
    lines += ["## Changes", ""]
    for r in changes:
        lines += _change_lines(r)
    lines.append("")
    if order := deleted_teardown(rows, old):
        lines += [
            "## Teardown order of the deleted resources",
            "",
            "The order `pulumi up` deletes them in (each step in parallel, after the one before "
            "it; from the recorded dependencies):",
            "",
        ]
        for i, step in enumerate(order, 1):
            lines.append(f"{i}. " + ", ".join(f"`{_short(u)}`" for u in step))
        lines.append("")
    return "\n".join(lines)


def teardown_markdown(resources: Sequence[Mapping[str, Any]]) -> str:
    """The order ``pulumi destroy`` deletes a whole render in (``teardown.md``)."""
    order = delete_order(resources)
    urns = engine_urns(_recording(resources))
    lines = [
        "# Teardown order",
        "",
        "The order `pulumi destroy` deletes this stack in (each step in parallel, after the one "
        "before it; from the recorded dependencies):",
        "",
    ]
    for i, step in enumerate(order, 1):
        lines.append(f"{i}. " + ", ".join(f"`{_short(urns[u])}`" for u in step))
    return "\n".join(lines) + "\n"


def _cost(render_dir: Path) -> dict[str, Any] | None:
    path = render_dir / "capacity.json"
    return json.loads(path.read_text()).get("cost") if path.is_file() else None


def cost_section(previous: Path, out: Path) -> str:
    """plan.md's hourly cost at full budget (issue 28, point 12): the new render's figures
    (``budget.cost``, from its capacity.json) and the stack's total before the change."""
    cost = _cost(out)
    if cost is None:
        return ""
    before = _cost(previous)
    was = before.get("totalHourlyUsd") if before else None
    lines = ["", "## Hourly cost at full budget", "", *cost_lines(cost)]
    if before is None and (previous / "capacity.json").is_file():
        lines.append("- stack before this change: not priced by the version it was rendered with")
    elif before is None:
        lines.append("- before this change: no capacity plan (nothing deployed or no pools)")
    else:
        text = "unknown" if was is None else f"at most ${was:,.4f}/h"
        lines.append(f"- stack before this change: {text}")
    return "\n".join(lines) + "\n"


def resources_section(out: Path) -> str:
    """plan.md's queue CPU and memory (issue 30 point 8): per leaf queue, what its GPU budget's
    template pods request against its and its ancestors' cpu/memory limits and quotas
    (``budget.resources``, from the new render's capacity.json)."""
    path = out / "capacity.json"
    entries = json.loads(path.read_text()).get("queueResources") if path.is_file() else None
    if not entries:
        return ""
    lines = ["", "## Queue CPU and memory", "", *[f"- {n}" for n in resource_lines(entries)]]
    return "\n".join(lines) + "\n"
