"""The plan's reading of a render: ``resources.json`` read back as recorded registrations (the
engine's state, with the children pulumi-eks creates inside its remote cluster component), the
resource types the plan singles out, and the short form of a URN it prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import mocks

ACTIONS = ("create", "update", "replace", "delete", "same")
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
CLUSTER = "eks:index:Cluster"
ADDON = "aws:eks/addon:Addon"


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


def _short(urn: str) -> str:
    typ = urn.split("::")[2].rsplit("$", 1)[-1]
    return f"{typ} {urn.rsplit('::', 1)[-1]}"
