"""Which changes roll nodes, and why, in the plan.

Karpenter objects whose change drifts nodes are marked as rolling them: any EC2NodeClass spec
change (its static fields are hashed, ``spec.kubelet`` as its JSON, its selectors resolved:
karpenter-provider-aws v1.15.0 pkg/apis/v1/ec2nodeclass.go L546-567, kubeletconfiguration.go
L86-91, pkg/cloudprovider/drift.go L181-195), every EC2NodeClass selecting its AMI by alias when
the cluster's Kubernetes minor changes (the alias resolves with the cluster's current version:
v1.15.0 pkg/providers/amifamily/ami.go L83-104, al2023.go L48-89, bottlerocket.go L44-52; "If
you upgrade your Kubernetes cluster while using this alias type, Karpenter *will* automatically
drift your nodes", website/content/en/docs/tasks/managing-amis.md), and a NodePool's
``spec.template``; and the system nodes roll when their launch template or the node group's
version changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import mocks
from .plan_state import CLUSTER, NODECLASS, NODEPOOL
from .snapshot import REPLACE_INPUTS


def rolls_nodes(reg: mocks.Registration, old: mocks.Registration, changed: list[str]) -> bool:
    """Whether applying the change replaces running nodes."""
    if reg.type == NODECLASS:
        return "spec" in changed
    if reg.type == NODEPOOL:
        # Karpenter's static drift hashes spec.template without its requirements (kubernetes-
        # sigs/karpenter v1.15.0 pkg/apis/v1/nodepool.go L238 `hash:"ignore"`, Hash L340-345;
        # pkg/controllers/nodeclaim/disruption/drift.go areStaticFieldsDrifted L156-170): every
        # node of the pool drifts. A requirements change alone drifts only the nodes whose
        # labels no longer satisfy them (areRequirementsDrifted L172-182): requirements_drift.
        return _template(reg, drop_requirements=True) != _template(old, drop_requirements=True)
    if reg.type == "aws:eks/nodeGroup:NodeGroup":
        # A replaced group (any ForceNew input) brings new nodes as much as a new version does.
        rolling = {"launchTemplate", "version", "releaseVersion", "amiType"}
        return bool((rolling | set(REPLACE_INPUTS[reg.type])) & set(changed))
    if reg.type == "aws:ec2/launchTemplate:LaunchTemplate":
        return bool(set(changed) - {"tags", "description"})
    return False


def _template(reg: mocks.Registration, drop_requirements: bool = False) -> Any:
    template = (reg.inputs.get("spec") or {}).get("template")
    if not drop_requirements or not isinstance(template, dict):
        return template
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return template
    return {**template, "spec": {k: v for k, v in spec.items() if k != "requirements"}}


def requirements_drift(reg: mocks.Registration, old: mocks.Registration) -> bool:
    """A NodePool whose template changed only in its requirements: Karpenter drifts the nodes
    whose labels no longer satisfy the new requirements, not the others (``rolls_nodes``)."""
    return (
        reg.type == NODEPOOL
        and _template(reg) != _template(old)
        and _template(reg, drop_requirements=True) == _template(old, drop_requirements=True)
    )


def roll_reason(reg: mocks.Registration, row: Mapping[str, Any]) -> str:
    """Why a row rolls nodes, in a reviewer's words: what changed that Karpenter (or the node
    group) replaces nodes for."""
    paths = [f[0] for f in row.get("fields", ())]
    if row.get("minorDrift"):
        return row["minorDrift"]
    if reg.type == NODECLASS:
        kinds = []
        if any(p.startswith(("spec.amiSelectorTerms", "spec.amiFamily")) for p in paths):
            kinds.append("AMI")
        if any(p.startswith("spec.userData") for p in paths):
            kinds.append("user data")
        if any(
            not p.startswith(("spec.amiSelectorTerms", "spec.amiFamily", "spec.userData"))
            for p in paths
        ):
            kinds.append("node class")
        return " and ".join(kinds) + " change" if kinds else "node class change"
    if reg.type == NODEPOOL:
        return "NodePool template change"
    if reg.type == "aws:eks/nodeGroup:NodeGroup":
        if row["action"] == "replace":
            return "node group replaced (" + ", ".join(row.get("replacedBy", ())) + ")"
        named = {
            "version": "Kubernetes minor",
            "releaseVersion": "AMI release",
            "amiType": "AMI type",
            "launchTemplate": "launch template",
        }
        return " and ".join(named[k] for k in named if k in row["changed"]) + " change"
    if reg.type == "aws:ec2/launchTemplate:LaunchTemplate":
        return "launch template change"
    return "change"


def minor_change(old: mocks.Recording, new: mocks.Recording) -> tuple[str, str] | None:
    """The cluster's Kubernetes minor before and after, when it changes."""
    before = [r.inputs.get("version") for r in old.of_type(CLUSTER)]
    after = [r.inputs.get("version") for r in new.of_type(CLUSTER)]
    if len(before) == len(after) == 1 and before[0] and after[0] and before != after:
        return before[0], after[0]
    return None


def ami_alias(reg: mocks.Registration) -> str | None:
    """The alias an EC2NodeClass selects its AMI by, if any."""
    terms = (reg.inputs.get("spec") or {}).get("amiSelectorTerms") or []
    return next((t["alias"] for t in terms if isinstance(t, dict) and t.get("alias")), None)
