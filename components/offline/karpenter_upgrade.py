"""What the plan says when the Karpenter chart moves to another minor: the planned steps of a
known upgrade (docs/karpenter-upgrade.md), one headline bullet. Pure: rows in, text out.

Each known upgrade is written down from the releases read at their tags:

- 1.14 -> 1.15 (aws/karpenter-provider-aws v1.14.1 and v1.15.0/v1.15.1, kubernetes-sigs/karpenter
  v1.14.1 and v1.15.0, read from the Go module proxy's zips): the CRDs (``pkg/apis/crds``) make
  a NodePool's ``consolidateAfter`` optional with a ``0s`` default, add the ``Unhealthy``
  disruption reason, and give the EC2NodeClass ``enclaveOptions`` and an open ``kubelet``; the
  EC2NodeClass hash version moves v5 -> v6 (``pkg/apis/v1/ec2nodeclass.go`` L551), which the
  hash controller answers by re-hashing the NodeClaims that are not drifted already, not by
  drifting them (``pkg/controllers/nodeclass/hash/controller.go`` L54-62, L84-110); the
  NodePool hash version stays v3 (core ``pkg/apis/v1/nodepool.go`` L338); the reference
  CloudFormation adds ``ec2:RebootInstances`` to ``AllowScopedDeletion`` (v1.15 docs
  ``reference/cloudformation.md``), used only with the alpha ``rebootForRepair`` gate
  (``pkg/operator/options/options.go`` L78, off by default).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import versions

RELEASE = "kubernetes:helm.sh/v3:Release"

KNOWN_UPGRADES: dict[tuple[str, str], str] = {
    ("1.14", "1.15"): (
        "a planned upgrade (docs/karpenter-upgrade.md): the `karpenter-crd` release goes first "
        "(NodePool `consolidateAfter` becomes optional, defaulted to `0s`; the `Unhealthy` "
        "disruption reason; EC2NodeClass `enclaveOptions` and an open `kubelet`), then the "
        "controller, whose IAM policy gains `ec2:RebootInstances` (used only with the alpha "
        "`rebootForRepair` gate, off). No node rolls from the upgrade itself: the EC2NodeClass "
        "hash version moves v5 -> v6 and Karpenter re-hashes the NodeClaims instead of "
        "drifting them"
    ),
}


def _minor(version: Any) -> str | None:
    parts = str(version or "").strip("\"'`").lstrip("v").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else None


def upgrade_lines(
    rows: Sequence[Mapping[str, Any]], charts: Mapping[str, str | None], short: Any
) -> list[str]:
    """One bullet per Karpenter controller release whose chart moves across a known minor
    upgrade. ``charts`` maps a row's URN to its release's chart; ``short`` shortens a URN."""
    out = []
    for r in rows:
        if r["type"] != RELEASE or r["action"] != "update" or "version" not in r["changed"]:
            continue
        if charts.get(r["urn"]) != versions.KARPENTER.reference:
            continue
        _, old, new = next(f for f in r["fields"] if f[0] == "version")
        note = KNOWN_UPGRADES.get((_minor(old), _minor(new)))
        if note:
            out.append(f"- **Karpenter {old} -> {new}** (`{short(r['urn'])}`): {note}.")
    return out
