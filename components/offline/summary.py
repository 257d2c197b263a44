"""Summarising a render: resources per component, the node pool rows, the Helm releases, as the
console summary (``summary``) and as the pull-request comment (``markdown_summary``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from . import mocks
from .write import helm_releases, kubernetes_objects


def component_counts(recording: mocks.Recording) -> dict[str, int]:
    """For each component (``Type name``), how many resources it holds, descendants included."""
    by_urn = {r.urn: r for r in recording.resources}
    counts: Counter[str] = Counter()
    for r in recording.resources:
        if not r.custom:
            continue
        parent = by_urn.get(r.parent)
        while parent is not None:
            counts[f"{parent.type.rsplit(':', 1)[-1]} {parent.name}"] += 1
            parent = by_urn.get(parent.parent)
    return dict(counts)


def node_pool_rows(recording: mocks.Recording) -> list[dict[str, str]]:
    """One row per Karpenter NodePool: what it launches, on which capacity, with what caps."""
    rows = []
    pools = kubernetes_objects(recording, "NodePool")
    for obj in sorted(pools, key=lambda o: o["metadata"]["name"]):
        spec = obj["spec"]
        template = spec["template"]
        reqs = {r["key"]: r.get("values", []) for r in template["spec"]["requirements"]}
        launches = (
            reqs.get("node.kubernetes.io/instance-type")
            or reqs.get("karpenter.k8s.aws/instance-gpu-name")
            or reqs.get("karpenter.k8s.aws/instance-family")
            or reqs.get("karpenter.k8s.aws/instance-category")
            or []
        )
        labels = template["metadata"].get("labels", {})
        preemptible = next((v for k, v in labels.items() if k.endswith("/preemptible")), "")
        rows.append(
            {
                "NodePool": obj["metadata"]["name"],
                "Launches": ", ".join(launches),
                "Capacity": ", ".join(reqs.get("karpenter.sh/capacity-type", [])),
                "Zone": ", ".join(reqs.get("topology.kubernetes.io/zone", [])) or "any",
                "GPU limit": str(spec.get("limits", {}).get("nvidia.com/gpu", "-")),
                "Preemptible": preemptible,
                "Consolidation": spec["disruption"]["consolidationPolicy"],
                "Expire after": template["spec"].get("expireAfter", ""),
            }
        )
    return rows


def markdown_summary(
    recording: mocks.Recording,
    stack: str,
    policy_lines: list[str] | None = None,
    pack: Any | None = None,
) -> str:
    """The render as a pull-request comment: counts, policies, node pools, a component diagram."""
    lines = [f"### `{stack}`: {len(recording.resources)} resources", ""]
    if recording.notices:
        lines += [f"- {notice}" for notice in recording.notices] + [""]
    if pack is not None:
        if policy_lines:
            lines += ["Policy violations:", ""] + [f"- `{line}`" for line in policy_lines] + [""]
        else:
            lines += ["Policy pack: no violations.", ""]
    lines += ["| Component | Resources |", "|---|---:|"]
    for component, n in sorted(component_counts(recording).items()):
        lines.append(f"| {component} | {n} |")
    rows = node_pool_rows(recording)
    if rows:
        lines += ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(row.values()) + " |" for row in rows]
    lines += ["", "| Helm release | Chart | Version | Namespace |", "|---|---|---|---|"]
    for release in helm_releases(recording):
        lines.append(
            f"| {release['name']} | {release['repository']}/{release['chart']} | "
            f"{release['version']} | {release['namespace']} |"
        )
    lines += ["", "```mermaid", "flowchart LR"]
    by_urn = {r.urn: r for r in recording.resources}
    ids = {}
    for r in sorted(recording.resources, key=lambda r: r.urn):
        if not r.custom:
            ids[r.urn] = f"c{len(ids)}"
            lines.append(f'  {ids[r.urn]}["{r.type.rsplit(":", 1)[-1]}<br/>{r.name}"]')
    for urn, node in ids.items():
        parent = by_urn[urn].parent
        if parent in ids:
            lines.append(f"  {ids[parent]} --> {node}")
    lines += ["```", ""]
    return "\n".join(lines)


def summary(recording: mocks.Recording, counts: dict[str, int], out: Path) -> str:
    lines = [f"Rendered {counts['resources']} resources to {out}"]
    lines.append(
        f"  {counts['manifests']} Kubernetes manifests, {counts['helm']} Helm releases, "
        f"{counts['iam']} IAM documents"
    )
    lines.append("Resources per component:")
    for component, n in sorted(component_counts(recording).items()):
        lines.append(f"  {component:<48} {n:>4}")
    lines.append("Helm releases:")
    for release in helm_releases(recording):
        lines.append(
            f"  {release['name']:<28} {release['chart']} {release['version']} "
            f"-> {release['namespace']}"
        )
    return "\n".join(lines)
