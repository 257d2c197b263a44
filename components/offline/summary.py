"""Summarising a render: the cluster, the program's warnings, resources per component (each
counted once), the node pool rows, the Helm releases, as the console summary (``summary``) and
as the pull-request comment (``markdown_summary``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import REFUSED_BY_UP, up_refusals
from . import mocks
from .write import helm_releases, kubernetes_objects


def refusal_header(count: int) -> str:
    """The heading of the problems ``pulumi up`` refuses (the warnings ending in
    ``errors.REFUSED_BY_UP``): ``pulumi preview`` passes with them, ``pulumi up`` does not."""
    return (
        f"**`pulumi up` refuses this stack: {count} problem(s)** "
        "(`pulumi preview` only warns about them):"
    )


def component_counts(recording: mocks.Recording) -> dict[str, int]:
    """For each component (``Type name``), how many resources it holds itself: every resource
    is counted once, under its nearest component ancestor (a resource parented to a custom
    resource, such as an access policy association under its access entry, goes to that
    resource's component); a resource with no recorded component ancestor (the program's
    top-level component) under ``Stack``. The counts add up to the number of resources."""
    by_urn = {r.urn: r for r in recording.resources}
    counts: Counter[str] = Counter()
    for r in recording.resources:
        parent = by_urn.get(r.parent)
        while parent is not None and parent.custom:
            parent = by_urn.get(parent.parent)
        key = "Stack" if parent is None else f"{parent.type.rsplit(':', 1)[-1]} {parent.name}"
        counts[key] += 1
    return dict(counts)


CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"
CLUSTER_VIEW_POLICY = "AmazonEKSViewPolicy"
# validate.rbac.GROUP (not imported: the summary stays free of the validation package).
VALIDATE_GROUP = "eks-gpu-platform-validate"


def cluster_lines(recording: mocks.Recording) -> list[str]:
    """The cluster a reviewer checks first: Kubernetes version, endpoint exposure, who
    administers it, the network and the system node group (empty without an EKS cluster)."""
    clusters = recording.of_type("eks:index:Cluster") or recording.of_type(
        "aws:eks/cluster:Cluster"
    )
    if len(clusters) != 1:
        return []
    cluster = clusters[0].inputs
    lines = [f"- Kubernetes: {cluster.get('version') or 'EKS default'} (`{cluster.get('name')}`)"]
    public, private = cluster.get("endpointPublicAccess"), cluster.get("endpointPrivateAccess")
    cidrs = ", ".join(cluster.get("publicAccessCidrs") or []) or "0.0.0.0/0 (EKS default)"
    exposure = [f"public from {cidrs}"] if public else []
    exposure += ["private (in the VPC)"] if private else []
    lines.append(f"- Endpoint: {' and '.join(exposure) or 'none'}")
    policies: dict[str, list[str]] = {}
    for assoc in recording.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation"):
        policy = str(assoc.inputs.get("policyArn", "")).rsplit("/", 1)[-1]
        policies.setdefault(policy, []).append(str(assoc.inputs.get("principalArn")))
    for label, policy in (("Admins", CLUSTER_ADMIN_POLICY), ("Viewers", CLUSTER_VIEW_POLICY)):
        principals = sorted(policies.get(policy, []))
        lines.append(f"- {label}: " + (", ".join(f"`{p}`" for p in principals) or "none"))
    # validation.principal: an entry in the validation's group, no access policy.
    validators = sorted(
        str(e.inputs.get("principalArn"))
        for e in recording.of_type("aws:eks/accessEntry:AccessEntry")
        if VALIDATE_GROUP in (e.inputs.get("kubernetesGroups") or [])
    )
    if validators:
        lines.append(
            "- Validation: "
            + ", ".join(f"`{p}`" for p in validators)
            + f" (group `{VALIDATE_GROUP}`, its own ClusterRole, no access policy)"
        )
    addons = recording.of_type("aws:eks/addon:Addon")
    if addons:  # offline, a version not pinned reads "resolved at deploy for <minor>"
        lines.append(
            "- EKS add-ons: "
            + ", ".join(
                f"{a.inputs.get('addonName')} {a.inputs.get('addonVersion') or 'EKS default'}"
                for a in sorted(addons, key=lambda a: str(a.inputs.get("addonName")))
            )
        )
    vpcs = recording.of_type("aws:ec2/vpc:Vpc")
    if len(vpcs) == 1:
        zones = sorted(
            {s.inputs.get("availabilityZone") for s in recording.of_type("aws:ec2/subnet:Subnet")}
            - {None}
        )
        lines.append(f"- VPC: new, {vpcs[0].inputs.get('cidrBlock')} in {', '.join(zones)}")
        nats = len(recording.of_type("aws:ec2/natGateway:NatGateway"))
        nat = (
            "none"
            if not nats
            else f"one gateway per zone ({nats})"
            if nats == len(zones) > 1
            else "one gateway for all zones"
            if nats == 1
            else f"{nats} gateways"
        )
        lines.append(f"- NAT: {nat}")
    else:
        lines.append(f"- VPC: existing `{cluster.get('vpcId')}` (its routing and NAT are its own)")
    for group in recording.of_type("aws:eks/nodeGroup:NodeGroup"):
        scaling = group.inputs.get("scalingConfig") or {}
        lines.append(
            f"- System node group: {', '.join(group.inputs.get('instanceTypes') or [])}, "
            f"{str(group.inputs.get('capacityType', 'ON_DEMAND')).lower().replace('_', '-')}, "
            f"{_num(scaling.get('minSize'))}-{_num(scaling.get('maxSize'))} nodes "
            f"({_num(scaling.get('desiredSize'))} at creation), {group.inputs.get('amiType')}"
        )
    return lines


def _num(value: Any) -> Any:
    """Numbers cross the mock engine as doubles (``3.0``): as the real engine hands them on."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


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
    warnings: list[str] | None = None,
) -> str:
    """The render as a pull-request comment: the cluster, the warnings (``warnings``, else the
    program's), policies, counts, node pools, a component diagram."""
    if warnings is None:
        warnings = recording.warnings
    refused = up_refusals(warnings)
    warnings = [w for w in warnings if not w.endswith(REFUSED_BY_UP)]
    lines = [f"### `{stack}`: {len(recording.resources)} resources", ""]
    if refused:
        lines += [refusal_header(len(refused)), "", *[f"- {r}" for r in refused], ""]
    if recording.notices:
        lines += [f"- {notice}" for notice in recording.notices] + [""]
    if pack is not None:
        if policy_lines:
            lines += ["Policy violations:", ""] + [f"- `{line}`" for line in policy_lines] + [""]
        elif refused:
            lines += ["Policy pack: no violations; `pulumi up` still refuses this stack (above)."]
            lines += [""]
        else:
            lines += ["Policy pack: no violations.", ""]
    if cluster := cluster_lines(recording):
        lines += ["#### Cluster", "", *cluster, ""]
    if warnings:
        lines += ["#### Warnings", "", *[f"- {w}" for w in warnings], ""]
    counts = component_counts(recording)
    lines += ["| Component | Resources |", "|---|---:|"]
    for component, n in sorted(counts.items()):
        lines.append(f"| {component} | {n} |")
    lines.append(f"| **Total** | {sum(counts.values())} |")
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
    counts_by = component_counts(recording)
    for component, n in sorted(counts_by.items()):
        lines.append(f"  {component:<48} {n:>4}")
    lines.append(f"  {'Total':<48} {sum(counts_by.values()):>4}")
    lines.append("Helm releases:")
    for release in helm_releases(recording):
        lines.append(
            f"  {release['name']:<28} {release['chart']} {release['version']} "
            f"-> {release['namespace']}"
        )
    return "\n".join(lines)
