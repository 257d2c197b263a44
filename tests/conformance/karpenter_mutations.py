"""The known-bad renders of the Karpenter conformance scenarios (tests/conformance/karpenter).

Each function changes a copied render directory in place and returns False when the mutation
does not apply to it; ``tests/conformance/mutate.py`` runs them beside its own (``MUTATIONS``).

- ``efa-split``: an EFA pool's budget dealt round-robin, one whole node at a time, over one
  NodePool + EC2NodeClass per instance type (the render before the capacity fix: prod's train-efa
  as two NodePools of 32 GPUs): a gang of the queue's quota cannot be placed. A render that
  already has that form (per-type EFA NodePools) is kept as it is.
- ``nodepool-limit-raised``: the first GPU NodePool's ``nvidia.com/gpu`` limit doubled, while
  capacity.json still states the old limit: the flood must stop at a limit capacity.json does not
  promise.
- ``overlay-missing``: the NodeOverlays that set ``nvidia.com/gpu`` for a time-sliced or MIG pool
  removed: Karpenter charges its nodes whole GPUs.
- ``gang-off-reservation``: the gang template of a pool with reserved capacity pins the last
  instance type of its NodePool, not the first (the suite seeds the reservation on the first
  offered: review H3, a gang pinned away from the reservation's type).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import yaml

GPU = "nvidia.com/gpu"
POOL = "eks-gpu-platform.io/pool"
EFA = "eks-gpu-platform.io/efa"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
# GPUs per node of the EFA types the renders use (AWS DescribeInstanceTypes: GpuInfo.Gpus[].Count).
EFA_TYPE_GPUS = {
    "p4d.24xlarge": 8,
    "p4de.24xlarge": 8,
    "p5.48xlarge": 8,
    "p5e.48xlarge": 8,
    "p5en.48xlarge": 8,
    "p6-b200.48xlarge": 8,
    "p6-b300.48xlarge": 8,
}


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _dump(path: Path, doc: dict) -> None:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _manifests(render: Path, kind: str) -> list[tuple[Path, dict]]:
    out = []
    for path in sorted((render / "manifests").glob("*.yaml")):
        doc = _load(path)
        if doc and doc.get("kind") == kind:
            out.append((path, doc))
    return out


def _types(nodepool: dict) -> list[str]:
    for r in nodepool["spec"]["template"]["spec"]["requirements"]:
        if r["key"] == INSTANCE_TYPE and r["operator"] == "In":
            return list(r["values"])
    return []


def _round_robin(total: int, sizes: list[int]) -> list[int]:
    """One whole node at a time, in order, while a node fits (the split before the fix)."""
    shares, left = [0] * len(sizes), total
    while True:
        dealt = False
        for i, size in enumerate(sizes):
            if size <= left:
                shares[i] += size
                left -= size
                dealt = True
        if not dealt:
            return shares


def efa_split(render: Path) -> bool:
    efa = [
        (p, d)
        for p, d in _manifests(render, "NodePool")
        if d["spec"]["template"]["metadata"].get("labels", {}).get(EFA) == "true"
    ]
    if not efa:
        return False
    pools: dict[str, list] = {}
    for p, d in efa:
        pools.setdefault(d["spec"]["template"]["metadata"]["labels"][POOL], []).append((p, d))
    changed = False
    for members in pools.values():
        if len(members) > 1 and all(len(_types(d)) == 1 for _, d in members):
            changed = True  # already the per-type split
            continue
        for path, nodepool in members:
            types = _types(nodepool)
            if len(types) < 2:
                continue
            name = nodepool["metadata"]["name"]
            class_name = nodepool["spec"]["template"]["spec"]["nodeClassRef"]["name"]
            class_path = render / "manifests" / f"ec2nodeclass-{class_name}.yaml"
            nodeclass = _load(class_path)
            limit = int(nodepool["spec"]["limits"][GPU])
            shares = _round_robin(limit, [EFA_TYPE_GPUS[t] for t in types])
            for t, share in zip(types, shares, strict=True):
                slug = f"{name}-{t.replace('.', '-')}"
                np = copy.deepcopy(nodepool)
                np["metadata"]["name"] = slug
                np["spec"]["limits"][GPU] = str(share)
                np["spec"]["template"]["spec"]["nodeClassRef"]["name"] = slug
                for r in np["spec"]["template"]["spec"]["requirements"]:
                    if r["key"] == INSTANCE_TYPE:
                        r["values"] = [t]
                nc = copy.deepcopy(nodeclass)
                nc["metadata"]["name"] = slug
                _dump(render / "manifests" / f"nodepool-{slug}.yaml", np)
                _dump(render / "manifests" / f"ec2nodeclass-{slug}.yaml", nc)
            path.unlink()
            class_path.unlink()
            changed = True
    return changed


def nodepool_limit_raised(render: Path) -> bool:
    for path, nodepool in _manifests(render, "NodePool"):
        limits = nodepool["spec"].get("limits", {})
        if GPU in limits:
            limits[GPU] = str(int(limits[GPU]) * 2)
            _dump(path, nodepool)
            return True
    return False


def overlay_missing(render: Path) -> bool:
    removed = False
    for path, overlay in _manifests(render, "NodeOverlay"):
        if GPU in overlay["spec"].get("capacity", {}):
            path.unlink()
            removed = True
    return removed


def gang_off_reservation(render: Path) -> bool:
    reserved: dict[str, list[str]] = {}
    for _, nodepool in _manifests(render, "NodePool"):
        spec = nodepool["spec"]["template"]["spec"]
        capacity = [r["values"] for r in spec["requirements"] if r["key"] == CAPACITY_TYPE]
        if capacity and "reserved" in capacity[0] and len(_types(nodepool)) > 1:
            reserved[nodepool["spec"]["template"]["metadata"]["labels"][POOL]] = _types(nodepool)
    changed = False
    for path in sorted((render / "examples").glob("training-*.yaml")):
        text = path.read_text()
        header = [line for line in text.splitlines() if line.startswith("#")]
        docs = [d for d in yaml.safe_load_all(text) if d]
        pinned = False
        for doc in docs:
            if doc.get("kind") != "Job":
                continue
            pod = doc["spec"]["template"]["spec"]
            term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            exprs = term["nodeSelectorTerms"][0]["matchExpressions"]
            pool = next((e["values"][0] for e in exprs if e["key"] == POOL), None)
            for e in exprs:
                if pool in reserved and e["key"] == INSTANCE_TYPE:
                    e["values"] = [reserved[pool][-1]]
                    pinned = changed = True
        if pinned:
            body = yaml.safe_dump_all(docs, sort_keys=False, explicit_start=True)
            path.write_text("\n".join(header) + "\n" + body)
    return changed


MUTATIONS: dict[str, Callable[[Path], bool]] = {
    "gang-off-reservation": gang_off_reservation,
    "efa-split": efa_split,
    "nodepool-limit-raised": nodepool_limit_raised,
    "overlay-missing": overlay_missing,
}
