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
Karpenter objects whose change drifts nodes are marked as rolling them: any EC2NodeClass spec
change (its static fields are hashed, its selectors resolved: karpenter-provider-aws
pkg/apis/v1/ec2nodeclass.go L591-611, pkg/cloudprovider/drift.go L181-195, v1.14.1), every
EC2NodeClass selecting its AMI by alias when the cluster's Kubernetes minor changes (the alias
resolves with the cluster's current version: pkg/providers/amifamily/ami.go L83-104, al2023.go
L39-80, bottlerocket.go L44-52; "If you upgrade your Kubernetes cluster while using this alias
type, Karpenter *will* automatically drift your nodes", website/content/en/docs/tasks/
managing-amis.md), and a NodePool's ``spec.template``; and the system nodes roll when their
launch template or the node group's version changes. Add-on rows name the version change.
``waits`` (in plan.json, and plan.md) are the longest waits the change makes ``pulumi up``
sit through: a NodePool or EC2NodeClass deleted or replaced waits up to its delete timeout
(terminationGracePeriod + 20 minutes), a minor upgrade up to the update timeouts of its chain
(each step's recorded ``customTimeouts``: ``upgrade_steps``); ``python -m
eks_gpu_platform.offline.plan gate`` refuses a plan whose total is above a CI job's budget.

``plan.md`` is for a reviewer: a "No changes" plan is one line; otherwise the counts, then the
destructive and disruptive changes with what they cost (``headline``: a cluster or VPC/subnet
replaced or deleted, a Kubernetes minor upgrade, NodePools, queues and namespaces deleted,
nodes rolling and why), the waits, every changed resource with its changed fields and their old
and new values (``fields.field_changes``: dotted paths, secrets masked, long values cut), and,
only when the plan deletes something, the order ``pulumi up`` deletes those resources in
(``teardown.delete_order`` of the old render, kept to them). ``teardown.md`` beside it holds the
order ``pulumi destroy`` deletes the whole new render in.

``write_plan(previous_dir, out)`` writes ``plan.json``, ``plan.md`` and ``teardown.md`` into
``out``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..budget import cost_lines, resource_lines
from ..cluster.spec import DEFAULT_SYSTEM_MAX_SIZE
from ..cluster.timeouts import (
    ADDON_DEFAULT_MINUTES,
    CONTROL_PLANE_UPDATE_MINUTES,
    NODE_GROUP_DEFAULT_MINUTES,
    minor_upgrade_steps,
)
from . import karpenter_upgrade, mocks
from .fields import code, field_changes, show
from .snapshot import REPLACE_INPUTS, alias_urns, engine_urns
from .teardown import delete_order

ACTIONS = ("create", "update", "replace", "delete", "same")
# Inputs the provider fills with a generated name when they are not given (pulumi-aws
# provider/resource_overrides.go AutoName fields): setting one explicitly means
# delete-before-replace.
AUTONAMED: dict[str, str] = {
    "aws:eks/nodeGroup:NodeGroup": "nodeGroupName",
    "aws:iam/role:Role": "name",
    "aws:iam/policy:Policy": "name",
    "aws:sqs/queue:Queue": "name",
    "aws:cloudwatch/eventRule:EventRule": "name",
    "aws:ec2/placementGroup:PlacementGroup": "name",
    "aws:ec2/launchTemplate:LaunchTemplate": "name",
}
# A Kubernetes object is replaced when its identity changes (pulumi-kubernetes provider Diff:
# metadata.name/namespace, apiVersion group and kind force replacement).
KUBERNETES_IDENTITY = ("apiVersion", "kind")
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
CLUSTER = "eks:index:Cluster"
ADDON = "aws:eks/addon:Addon"
# Inputs of a stateful resource that ``snapshot.REPLACE_INPUTS`` guards but whose change is no
# replacement: the provider plans an in-place update that AWS refuses or never applies, so
# ``pulumi up`` fails (or leaves the old value) instead of recreating the resource. The plan
# reports them as refused, and a replacement does not carry on through them.
# - ``vpcId``: pulumi-eks gives it to the cluster security group only (nodejs/eks/cluster/
#   cluster.ts, ``eksClusterSecurityGroup``); the aws:eks/cluster:Cluster gets the new group and
#   subnets in ``vpcConfig``, whose ``subnetIds`` and ``securityGroupIds`` are not ForceNew
#   (hashicorp/terraform-provider-aws internal/service/eks/cluster.go, ``vpc_config``; updated
#   through UpdateClusterConfig, ``resourceClusterUpdate``), and EKS takes only subnets "in the
#   same VPC as the original subnets" (EKS User Guide, network-reqs.adoc, "VPC requirements and
#   considerations"): a cluster cannot move to another VPC.
# - ``encryptionConfigKeyArn``: ``encryption_config`` forces a new cluster only when it is
#   removed (cluster.go ``CustomizeDiff``, ``ForceNewIfChange``); the update associates a key
#   only when there was none, so another key is never applied (``resourceClusterUpdate``).
REFUSED_INPUTS: dict[str, dict[str, str]] = {
    CLUSTER: {
        "vpcId": (
            "EKS keeps a cluster in the VPC it was created in, so `pulumi up` fails at the "
            "cluster's update (its subnets must stay in the original VPC); to move, create a "
            "new cluster (a new `cluster.name`) and move the workloads"
        ),
        "encryptionConfigKeyArn": (
            "EKS cannot change a cluster's secrets encryption key, and the provider only "
            "associates a key with a cluster that has none: the update never applies it"
        ),
    },
}
# A minor upgrade's chain (cluster/timeouts.py): the control plane, then vpc-cni, kube-proxy and
# eks-pod-identity-agent together, then the system node group's roll, then coredns, each up to
# the update timeout the render records on it (its ``customTimeouts``, else the provider's
# default). ``MINOR_UPGRADE_STEPS``: the chain of a default system node group.
MINOR_UPGRADE_STEPS = minor_upgrade_steps(DEFAULT_SYSTEM_MAX_SIZE)
MINOR_UPGRADE_MINUTES = sum(m for _, m in MINOR_UPGRADE_STEPS)
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def registrations(resources: Sequence[Mapping[str, Any]]) -> list[mocks.Registration]:
    """``resources.json`` entries as recorded registrations (what the snapshot helpers take)."""
    return [
        mocks.Registration(
            type=r["type"],
            name=r["name"],
            urn=r["urn"],
            parent=r.get("parent") or "",
            custom=bool(r.get("custom", True)),
            inputs=dict(r.get("inputs") or {}),
            outputs={},
            id="",
            dependencies=list(r.get("dependencies") or []),
            property_dependencies={
                k: list(v) for k, v in (r.get("propertyDependencies") or {}).items()
            },
            provider=r.get("provider") or "",
            protect=bool(r.get("protect")),
            ignore_changes=list(r.get("ignoreChanges") or []),
            replace_on_changes=list(r.get("replaceOnChanges") or []),
            delete_before_replace=bool(r.get("deleteBeforeReplace")),
            version="",
            aliases=list(r.get("aliases") or []),
        )
        for r in resources
    ]


def remote_children(resources: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The access entries pulumi-eks creates inside an ``eks:index:Cluster`` from its
    ``accessEntries`` input (the mocks do not run the remote component): an
    ``aws.eks.AccessEntry`` ``<cluster>-<key>`` per entry and an ``AccessPolicyAssociation``
    ``<cluster>-<key>-<policy>`` under it (pulumi/pulumi-eks nodejs/eks/cluster/
    authenticationMode.ts ``createAccessEntries``, v4.3.0), so a render from before issue 11's
    move shows them, and the plan matches them to their aliased successors."""
    out: list[dict[str, Any]] = []
    for r in resources:
        entries = (r.get("inputs") or {}).get("accessEntries")
        if r["type"] != "eks:index:Cluster" or not isinstance(entries, dict):
            continue
        head = r["urn"].rsplit("::", 1)[0]
        cluster = (r.get("inputs") or {}).get("name")
        for key, entry in sorted(entries.items()):
            name = f"{r['name']}-{key}"
            urn = f"{head}$aws:eks/accessEntry:AccessEntry::{name}"
            inputs = {"clusterName": cluster, "principalArn": entry.get("principalArn")}
            inputs["type"] = entry.get("type")
            out.append(
                {
                    "type": "aws:eks/accessEntry:AccessEntry",
                    "name": name,
                    "urn": urn,
                    "parent": r["urn"],
                    "custom": True,
                    "inputs": inputs,
                }
            )
            for policy, assoc in sorted((entry.get("accessPolicies") or {}).items()):
                out.append(
                    {
                        "type": "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
                        "name": f"{name}-{policy}",
                        "urn": f"{head}$aws:eks/accessEntry:AccessEntry"
                        f"$aws:eks/accessPolicyAssociation:AccessPolicyAssociation::{name}-{policy}",
                        "parent": urn,
                        "custom": True,
                        "inputs": {
                            "clusterName": cluster,
                            "principalArn": entry.get("principalArn"),
                            "policyArn": assoc.get("policyArn"),
                            "accessScope": assoc.get("accessScope"),
                        },
                    }
                )
    return out


def _recording(resources: Sequence[Mapping[str, Any]]) -> mocks.Recording:
    return mocks.Recording(resources=registrations([*resources, *remote_children(resources)]))


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


def replacing_keys(
    reg: mocks.Registration, old: mocks.Registration, changed: list[str]
) -> list[str]:
    """The changed keys that force a replacement."""
    keys = _replace_keys(reg)
    if reg.type.startswith("kubernetes:") and reg.type != "kubernetes:helm.sh/v3:Release":
        keys |= set(KUBERNETES_IDENTITY)
        before = (
            (old.inputs.get("metadata") or {})
            if isinstance(old.inputs.get("metadata"), dict)
            else {}
        )
        after = (
            (reg.inputs.get("metadata") or {})
            if isinstance(reg.inputs.get("metadata"), dict)
            else {}
        )
        if any(before.get(k) != after.get(k) for k in ("name", "namespace")):
            keys.add("metadata")
    if reg.type == "kubernetes:helm.sh/v3:Release":
        keys |= {"name", "namespace"}
    return [k for k in changed if k in keys or "*" in reg.replace_on_changes]


def _replace_keys(reg: mocks.Registration) -> set[str]:
    """The provider's replace-on-change inputs and the resource's ``replaceOnChanges``, less
    the inputs whose change is refused rather than replaced (``REFUSED_INPUTS``)."""
    keys = set(REPLACE_INPUTS.get(reg.type, ())) | set(reg.replace_on_changes)
    return keys - set(REFUSED_INPUTS.get(reg.type, {}))


def delete_before_replace(reg: mocks.Registration) -> bool:
    """The resource option, else the bridge's rule for an explicitly set auto-named input."""
    return reg.delete_before_replace or AUTONAMED.get(reg.type, "\0") in reg.inputs


def rolls_nodes(reg: mocks.Registration, old: mocks.Registration, changed: list[str]) -> bool:
    """Whether applying the change replaces running nodes."""
    if reg.type == NODECLASS:
        return "spec" in changed
    if reg.type == NODEPOOL:
        # Karpenter's static drift hashes spec.template without its requirements (kubernetes-
        # sigs/karpenter v1.14.1 pkg/apis/v1/nodepool.go L234 `hash:"ignore"`, Hash L336-341;
        # pkg/controllers/nodeclaim/disruption/drift.go areStaticFieldsDrifted L154-168): every
        # node of the pool drifts. A requirements change alone drifts only the nodes whose
        # labels no longer satisfy them (areRequirementsDrifted L170-180): requirements_drift.
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
            if minor is None and str(row["version"][1]).startswith(mocks.RESOLVED_AT_DEPLOY):
                # Offline the installed version is unknown; on the same minor `up` keeps it
                # (cluster/addon_versions.py), so no version moves.
                row["versionKept"] = True
        rows.append(row)
    _cascade(rows, new_rec, new_urns, old_by)
    for urn, reg in old_by.items():
        if urn not in matched:
            rows.append({"urn": urn, "type": reg.type, "action": "delete", "changed": []})
    return sorted(rows, key=lambda r: r["urn"])


AFTER_REPLACEMENT = "(new after the replacement)"


def _cascade(
    rows: list[dict[str, Any]],
    new_rec: mocks.Recording,
    new_urns: Mapping[str, str],
    old_by: Mapping[str, mocks.Registration],
) -> None:
    """Replace what a replacement forces: a resource whose replace-on-change input comes from
    a replaced resource (its recorded property dependency) gets a new value there (the new
    resource's id or ARN), so it is replaced too, and so on down. The offline ids stay the same
    across a replacement (the mocks derive them from the name): only the dependency shows it."""
    by_urn = {row["urn"]: row for row in rows}
    regs = {new_urns[r.urn]: r for r in new_rec.resources}
    grew = True
    while grew:
        grew = False
        replaced = {u for u, row in by_urn.items() if row["action"] == "replace"}
        for urn, reg in regs.items():
            row = by_urn[urn]
            if row["action"] not in ("same", "update"):
                continue
            keys = _replace_keys(reg)
            refusing = REFUSED_INPUTS.get(reg.type, {})
            from_replaced = {
                key: sorted({new_urns[d] for d in deps if new_urns.get(d) in replaced})
                for key, deps in sorted(reg.property_dependencies.items())
            }
            previous = old_by[row.get("aliasOf") or urn]
            refused = {
                k: [_short(u) for u in found]
                for k, found in from_replaced.items()
                if found and k in refusing
            }
            refused = {k: v for k, v in refused.items() if row.get("refused", {}).get(k) != v}
            if refused:
                # An update the provider plans and AWS refuses: no replacement follows it.
                fields = row.setdefault("fields", [])
                for key in refused:
                    if not any(f[0] == key or f[0].startswith(key + ".") for f in fields):
                        fields.append([key, show(previous.inputs.get(key)), AFTER_REPLACEMENT])
                fields.sort(key=lambda f: f[0])
                row.update(
                    action="update" if row["action"] == "same" else row["action"],
                    changed=sorted(set(row["changed"]) | set(refused)),
                    refused={**row.get("refused", {}), **refused},
                )
                grew = True
            sources = {
                key: found
                for key, found in from_replaced.items()
                if found and (key in keys or "*" in keys) and key not in refusing
            }
            if not sources:
                continue
            fields = row.setdefault("fields", [])
            for key in sources:
                if not any(f[0] == key or f[0].startswith(key + ".") for f in fields):
                    fields.append([key, show(previous.inputs.get(key)), AFTER_REPLACEMENT])
            fields.sort(key=lambda f: f[0])
            row.update(
                action="replace",
                changed=sorted(set(row["changed"]) | set(sources)),
                replacedBy=sorted(set(row.get("replacedBy", ())) | set(sources)),
                replacedWith={k: [_short(u) for u in v] for k, v in sources.items()},
                deleteBeforeReplace=delete_before_replace(reg),
            )
            grew = True


def _short(urn: str) -> str:
    typ = urn.split("::")[2].rsplit("$", 1)[-1]
    return f"{typ} {urn.rsplit('::', 1)[-1]}"


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
# karpenter pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go L157-165, v1.14.1): the
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
