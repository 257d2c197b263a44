"""What replaces a resource in the plan, and how: the provider's replace-on-change inputs, a
Kubernetes object's identity, the inputs AWS refuses to change rather than replacing
(``REFUSED_INPUTS``), delete-before-replace, and the replacements a replacement forces through
the recorded property dependencies (``_cascade``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import mocks
from .fields import show
from .plan_state import CLUSTER, _short
from .snapshot import REPLACE_INPUTS

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
