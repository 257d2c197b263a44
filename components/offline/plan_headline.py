"""plan.md's headline: the destructive and disruptive changes of a plan, one bullet each, with
what they cost (a cluster or VPC/subnet replaced or deleted, a change EKS refuses, a Kubernetes
minor upgrade, NodePools, queues and namespaces deleted, nodes rolling and why, a Karpenter
upgrade's steps: ``karpenter_upgrade``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import karpenter_upgrade, mocks
from .fields import code
from .plan_replace import REFUSED_INPUTS
from .plan_state import CLUSTER, NODECLASS, NODEPOOL, _recording, _short
from .snapshot import engine_urns

# What a destructive or disruptive change costs, by resource type (the headline of plan.md).
CLUSTERS = ("eks:index:Cluster", "aws:eks/cluster:Cluster")
NETWORK = {"aws:ec2/vpc:Vpc": "VPC", "aws:ec2/subnet:Subnet": "subnet"}
QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
NAMESPACE = "kubernetes:core/v1:Namespace"
SYSTEM_NODES = ("aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate")
# The engine refuses to replace a resource protected in the state and in the program
# (pulumi/pulumi pkg/resource/deploy/step_generator.go, "unable to replace resource ... as it is
# currently marked for protection"), and to delete one (step.go, DeleteStep.Apply).
PROTECTED = "protected: `pulumi up` refuses this until `protect` is lifted"
CLUSTER_COST = (
    "the cluster and everything on it is recreated: a new control plane (new endpoint and "
    "certificate authority), every node, add-on, Helm release and workload"
)
# A replaced network does not recreate the cluster in it (REFUSED_INPUTS, ``vpcId``): the old
# VPC and subnets stay in use by the cluster and its nodes.
NETWORK_COST = (
    "EKS keeps a cluster in the VPC and the Availability Zones it was created in, so the "
    "cluster's update fails and the old network stays in use"
)
DRIFT_COST = (
    "Karpenter drifts every node of the pool: each is cordoned, drained and replaced, within "
    "the pool's disruption budgets"
)
REQUIREMENTS_DRIFT_COST = (
    "Karpenter drifts only the nodes whose labels no longer satisfy the new requirements "
    "(`RequirementsDrifted`); nodes that still satisfy them stay"
)
# A NodePool owns its NodeClaims (ownerReference with blockOwnerDeletion: kubernetes-sigs/
# karpenter pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go L157-165, v1.15.0): the
# garbage collector deletes them with the pool and their termination drains the nodes.
POOL_DELETE_COST = "its running nodes are drained and terminated, their pods evicted"
# KAI gives a pod group whose queue does not exist a QueueDoesNotExist fit error and never
# schedules it (kai-scheduler pkg/scheduler/cache/cluster_info/cluster_info.go L425-428,
# L454-459, v0.16.8); running pods are not evicted by it.
QUEUE_DELETE_COST = "its pending and new jobs are no longer scheduled (`QueueDoesNotExist`)"
# Deleting a namespace deletes every object in it (kubernetes pkg/controller/namespace/deletion/
# namespaced_resources_deleter.go L98, deleteAllContent L503, v1.36.3).
NAMESPACE_DELETE_COST = "every object in it is deleted with it: its workloads, their pods"


def _object_name(reg: mocks.Registration | None) -> str:
    meta = (reg.inputs.get("metadata") if reg else None) or {}
    return str(meta.get("name") or (reg.name if reg else ""))


def headline(
    rows: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    old: Sequence[Mapping[str, Any]],
) -> list[str]:
    """The destructive and disruptive changes, one bullet each, with what they cost."""
    regs: dict[str, mocks.Registration] = {}
    for resources in (old, new):
        recording = _recording(resources)
        urns = engine_urns(recording)
        regs.update({urns[r.urn]: r for r in recording.resources})
    out: list[tuple[int, str]] = []
    # Grouped: the network's replaced or deleted parts (type, action, because, protected) and
    # the pools rolling for one reason (kind, reason), each one bullet.
    network: dict[tuple[str, str, str, bool], list[str]] = {}
    rolling: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        reg, action, what = regs.get(r["urn"]), r["action"], f"`{_short(r['urn'])}`"
        if r["type"] == CLUSTER and action == "update" and "version" in r["changed"]:
            version = next(f for f in r["fields"] if f[0] == "version")
            out.append(
                (
                    0,
                    f"- **Kubernetes {version[1]} -> {version[2]}** ({what}): the control "
                    "plane, the add-ons and the system nodes are upgraded in turn, and every "
                    "Karpenter node whose AMI alias follows the minor is replaced.",
                )
            )
        for key, sources in (r.get("refused") or {}).items():
            source = (
                f" from the replaced {', '.join(f'`{u}`' for u in sources)}"
                if sources
                else " changed"
            )
            name = (reg.inputs.get("name") if reg else None) or _short(r["urn"])
            out.append(
                (
                    0,
                    f"- **EKS cluster `{name}` cannot take this change** (`{key}`{source}): "
                    f"{what}; "
                    f"{REFUSED_INPUTS[r['type']][key]}.",
                )
            )
        if r.get("requirementsDrift") and action == "update":
            out.append(
                (
                    4,
                    f"- **Nodes may roll** in pool `{_object_name(reg)}` (NodePool requirements"
                    f"{_fields_brief(r)}): {REQUIREMENTS_DRIFT_COST}.",
                )
            )
        if action not in ("replace", "delete") and not r.get("rollsNodes"):
            continue
        protected = bool(reg and reg.protect)
        because = _because(r)
        guard = f"; {PROTECTED}" if protected else ""
        if r["type"] in CLUSTERS:
            cluster = (reg.inputs.get("name") if reg else None) or _short(r["urn"])
            out.append(
                (
                    0,
                    f"- **EKS cluster `{cluster}` {action}d**{because}: {what}; "
                    f"{CLUSTER_COST}{guard}.",
                )
            )
        elif r["type"] in NETWORK and action in ("replace", "delete"):
            network.setdefault((r["type"], action, because, protected), []).append(what)
        elif r["type"] == NODEPOOL and action in ("replace", "delete"):
            out.append(
                (
                    3,
                    f"- **NodePool `{_object_name(reg)}` {action}d**{because}: {POOL_DELETE_COST}"
                    + (" (a new NodePool takes its place)" if action == "replace" else "")
                    + ".",
                )
            )
        elif r["type"] == QUEUE and action in ("replace", "delete"):
            out.append(
                (3, f"- **Queue `{_object_name(reg)}` {action}d**{because}: {QUEUE_DELETE_COST}.")
            )
        elif r["type"] == NAMESPACE and action in ("replace", "delete"):
            out.append(
                (
                    3,
                    f"- **Namespace `{_object_name(reg)}` {action}d**{because}: "
                    f"{NAMESPACE_DELETE_COST}.",
                )
            )
        elif r.get("rollsNodes") and r["type"] in (NODECLASS, NODEPOOL):
            kind = "EC2NodeClass" if r["type"] == NODECLASS else "NodePool"
            reason = f"{kind}: {r['rollReason']}{_fields_brief(r)}"
            rolling.setdefault((kind, reason), []).append(f"`{_object_name(reg)}`")
        elif r.get("rollsNodes") and r["type"] in SYSTEM_NODES:
            out.append(
                (
                    5,
                    f"- **System nodes roll** ({r['rollReason']}: {what}{_fields_brief(r)}): "
                    "the managed node group replaces every system node, rescheduling the "
                    "controllers on them.",
                )
            )
    charts = {urn: reg.inputs.get("chart") for urn, reg in regs.items()}
    out += [(0, line) for line in karpenter_upgrade.upgrade_lines(rows, charts, _short)]
    cluster_gone = any(r["type"] in CLUSTERS and r["action"] in ("replace", "delete") for r in rows)
    cluster_refused = any(r["type"] in CLUSTERS and r.get("refused") for r in rows)
    for (typ, action, because, protected), names in network.items():
        label = NETWORK[typ][0].upper() + NETWORK[typ][1:] + ("s" if len(names) > 1 else "")
        guard = f"; {PROTECTED}" if protected else ""
        cost = (
            "the EKS cluster in the network goes with it (above)"
            if cluster_gone
            else "the EKS cluster in the network cannot move with it (above)"
            if cluster_refused
            else f"an EKS cluster in the network cannot move with it: {NETWORK_COST}"
        )
        out.append(
            (
                1 if typ == "aws:ec2/vpc:Vpc" else 2,
                f"- **{label} {action}d**{because}: {', '.join(names)}; {cost}{guard}.",
            )
        )
    for (_, reason), pools in rolling.items():
        label = "pool" if len(pools) == 1 else "pools"
        out.append((4, f"- **Nodes roll** in {label} {', '.join(pools)} ({reason}): {DRIFT_COST}."))
    return [text for _, text in sorted(out, key=lambda item: item[0])]


def _because(row: Mapping[str, Any]) -> str:
    keys = row.get("replacedBy") or ()
    if not keys:
        return ""
    forced = row.get("replacedWith") or {}
    changed = [f"`{k}`" for k in keys if k not in forced]
    parts = [f"{', '.join(changed)} changed"] if changed else []
    sources = sorted({s for k in keys if k in forced for s in forced[k]})
    if sources:
        inputs = ", ".join(f"`{k}`" for k in keys if k in forced)
        parts.append(f"{inputs} from the replaced {', '.join(f'`{s}`' for s in sources)}")
    return f" ({'; '.join(parts)})"


def _fields_brief(row: Mapping[str, Any], limit: int = 3) -> str:
    paths = [f[0] for f in row.get("fields", ())]
    if not paths:
        return ""
    more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
    return ": " + ", ".join(code(p) for p in paths[:limit]) + more
