"""The offline plan: what ``pulumi up`` would do to a stack, from two renders.

``plan(old, new)`` compares a previous render's ``resources.json`` with the new one and gives one
row per URN of either render: ``create``, ``update``, ``replace``, ``delete`` or ``same``, with the
input keys that differ. Following the engine:
- a resource is matched to its old self by URN, or through its aliases (``snapshot.alias_urns``,
  the engine's alias and inherited-child-alias rules);
- ``ignoreChanges`` inputs do not count;
- a change replaces when an input in the provider's replace-on-change table changes
  (``snapshot.REPLACE_INPUTS``, the ForceNew fields; a Kubernetes object's name, namespace,
  apiVersion or kind), or an input listed in the resource's ``replaceOnChanges``, or when such an
  input comes from a replaced resource (its recorded ``propertyDependencies``: the new
  resource's id differs, although the offline ids do not, ``_cascade``);
- a replacement deletes first when the resource says ``deleteBeforeReplace``, or when an
  auto-named input was set explicitly (the terraform bridge's rule: pulumi-terraform-bridge
  pkg/tfbridge/provider.go L1275-1276, schema.go L193-240, v3.136.0); otherwise the new one is
  created before the old one is deleted.
Rows that roll nodes say why (``plan_rolls``), and add-on rows name the version change.

The plan's concepts live in modules of their own: ``plan_state`` (a render read back as the
engine's state), ``plan_replace`` (what replaces a resource, ``_cascade``: what a replacement
forces), ``plan_rolls`` (which changes roll nodes), ``plan_waits`` (what ``pulumi up`` waits for;
``python -m eks_gpu_platform.offline.plan gate`` refuses a plan whose total is above a CI job's
budget) and ``plan_report`` with ``plan_headline`` (plan.md and teardown.md).

``write_plan(previous_dir, out)`` writes ``plan.json``, ``plan.md`` and ``teardown.md`` into
``out``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .fields import field_changes
from .mock_invokes import RESOLVED_AT_DEPLOY
from .plan_replace import REFUSED_INPUTS, _cascade, delete_before_replace, replacing_keys
from .plan_report import cost_section, markdown, resources_section, teardown_markdown
from .plan_rolls import ami_alias, minor_change, requirements_drift, roll_reason, rolls_nodes
from .plan_state import ADDON, NODECLASS, _recording
from .plan_waits import gate, total_wait, waits
from .snapshot import alias_urns, engine_urns


def changed_keys(
    old: Mapping[str, Any], new: Mapping[str, Any], ignore: Sequence[str]
) -> list[str]:
    """Top-level input keys whose values differ; a nested ignoreChanges path (a.b) masks only
    that path."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key in ignore:
            continue
        before, after = old.get(key), new.get(key)
        nested = [i.split(".", 1)[1] for i in ignore if i.startswith(key + ".")]
        if nested and isinstance(before, dict) and isinstance(after, dict):
            before = _without(before, nested)
            after = _without(after, nested)
        if before != after:
            out.append(key)
    return out


def changed_fields(
    old: Mapping[str, Any], new: Mapping[str, Any], ignore: Sequence[str], keys: Sequence[str]
) -> list[list[str]]:
    """``[path, old, new]`` for every changed field under the changed top-level ``keys``
    (``fields.field_changes``; ignoreChanges paths left out)."""
    out: list[list[str]] = []
    for key in keys:
        before, after = old.get(key), new.get(key)
        nested = [i.split(".", 1)[1] for i in ignore if i.startswith(key + ".")]
        if nested and isinstance(before, dict) and isinstance(after, dict):
            before, after = _without(before, nested), _without(after, nested)
        before_doc = {key: before} if key in old else {}
        after_doc = {key: after} if key in new else {}
        out += [list(change) for change in field_changes(before_doc, after_doc)]
    return out


def _without(value: dict[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    out = dict(value)
    for path in paths:
        head, _, rest = path.partition(".")
        if rest and isinstance(out.get(head), dict):
            out[head] = _without(out[head], [rest])
        else:
            out.pop(head, None)
    return out


def plan(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One row per URN of either render (engine URNs), sorted by URN."""
    old_rec, new_rec = _recording(old), _recording(new)
    old_urns, new_urns = engine_urns(old_rec), engine_urns(new_rec)
    old_by = {old_urns[r.urn]: r for r in old_rec.resources}
    aliases = alias_urns(new_rec)
    matched: set[str] = set()
    rows = []
    minor = minor_change(old_rec, new_rec)
    for reg in new_rec.resources:
        urn = new_urns[reg.urn]
        candidates = [urn, *aliases.get(urn, [])]
        previous_urn = next((c for c in candidates if c in old_by and c not in matched), None)
        row: dict[str, Any] = {"urn": urn, "type": reg.type}
        if previous_urn is None:
            rows.append({**row, "action": "create", "changed": sorted(reg.inputs)})
            if reg.type == ADDON:  # a pin, or "resolved at deploy for <minor>" offline
                rows[-1]["version"] = [None, reg.inputs.get("addonVersion")]
            continue
        matched.add(previous_urn)
        previous = old_by[previous_urn]
        changed = changed_keys(previous.inputs, reg.inputs, reg.ignore_changes)
        replacing = replacing_keys(reg, previous, changed)
        action = "replace" if replacing else "update" if changed else "same"
        row.update(action=action, changed=changed)
        if changed:
            row["fields"] = changed_fields(previous.inputs, reg.inputs, reg.ignore_changes, changed)
        if previous_urn != urn:
            row["aliasOf"] = previous_urn
        if action == "replace":
            row["deleteBeforeReplace"] = delete_before_replace(reg)
            row["replacedBy"] = replacing
        if refused := [k for k in changed if k in REFUSED_INPUTS.get(reg.type, {})]:
            row["refused"] = {k: [] for k in refused}
        if changed and rolls_nodes(reg, previous, changed):
            row["rollsNodes"] = True
        elif changed and requirements_drift(reg, previous):
            row["requirementsDrift"] = True
        if minor and reg.type == NODECLASS and (alias := ami_alias(reg)):
            row["rollsNodes"] = True
            row["minorDrift"] = (
                f"Kubernetes {minor[0]} -> {minor[1]}: {alias} resolves for {minor[1]}"
            )
        if row.get("rollsNodes"):
            row["rollReason"] = roll_reason(reg, row)
        if reg.type == ADDON and "addonVersion" in changed:
            row["version"] = [previous.inputs.get("addonVersion"), reg.inputs.get("addonVersion")]
            if minor is None and str(row["version"][1]).startswith(RESOLVED_AT_DEPLOY):
                # Offline the installed version is unknown; on the same minor `up` keeps it
                # (cluster/addon_versions.py), so no version moves.
                row["versionKept"] = True
        rows.append(row)
    _cascade(rows, new_rec, new_urns, old_by)
    for urn, reg in old_by.items():
        if urn not in matched:
            rows.append({"urn": urn, "type": reg.type, "action": "delete", "changed": []})
    return sorted(rows, key=lambda r: r["urn"])


def write_plan(previous: Path, out: Path) -> list[dict[str, Any]]:
    """Compare ``previous/resources.json`` with ``out/resources.json``; write plan.json,
    plan.md and teardown.md into ``out``."""
    old = json.loads((previous / "resources.json").read_text())
    new = json.loads((out / "resources.json").read_text())
    rows = plan(old, new)
    found = waits(rows, old, new)
    document = {"changes": rows, "waits": found, "longestWaitMinutes": total_wait(found)}
    (out / "plan.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    (out / "plan.md").write_text(
        markdown(rows, new, old) + cost_section(previous, out) + resources_section(out)
    )
    (out / "teardown.md").write_text(teardown_markdown(new))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m eks_gpu_platform.offline.plan gate PLAN_JSON --budget-minutes N``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m eks_gpu_platform.offline.plan")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("gate", help="refuse a plan whose waits exceed the CI budget")
    check.add_argument("plan_json", type=Path)
    check.add_argument("--budget-minutes", type=int, required=True)
    args = parser.parse_args(argv)
    lines = gate(args.plan_json, args.budget_minutes)
    for line in lines:
        print(("error: " if line is lines[0] else "") + line, file=sys.stderr)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
