"""The one GPU-pool detector every rule uses: can this NodePool launch an NVIDIA GPU node?

A NodePool launches whatever instance types satisfy all of its requirements (Karpenter v1
``spec.template.spec.requirements``: ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``,
``Lt``, and ``Gte``/``Lte``; karpenter-provider-aws v1.14 docs concepts/nodepools.md
"Requirements" and reference/instance-types.md for the well-known labels). So the question is
answered against the catalogue of NVIDIA GPU instance types (``catalog.py``, from Karpenter's
generated instance-type reference): a pool is a GPU pool when at least one catalogued type
carries labels its requirements accept. It does not matter which label selects the GPU
(``instance-gpu-name``, ``instance-type`` ``p5.48xlarge``, ``instance-family`` ``g6e``,
``instance-category`` ``p``) or whether nothing restricts the type at all (then Karpenter may
launch a GPU type for any pod that asks for one). A ``nvidia.com/gpu`` limit marks a GPU pool
too. Requirements on labels the catalogue does not model (zones, capacity type, os, custom
labels) do not narrow the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ... import catalog
from ._props import dig, mapping, sequence

GPU_RESOURCE = "nvidia.com/gpu"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
FAMILY = "karpenter.k8s.aws/instance-family"
CATEGORY = "karpenter.k8s.aws/instance-category"
GENERATION = "karpenter.k8s.aws/instance-generation"
SIZE = "karpenter.k8s.aws/instance-size"
GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
GPU_MANUFACTURER = "karpenter.k8s.aws/instance-gpu-manufacturer"
GPU_MEMORY = "karpenter.k8s.aws/instance-gpu-memory"
ARCH = "kubernetes.io/arch"
# Every EC2 p-family instance carries NVIDIA GPUs (p2 ... p6): types the catalogue does not list
# (older or newer than Karpenter v1.14's reference) are recognised by their family's category.
NVIDIA_CATEGORIES = ("p",)
_FAMILY = re.compile(r"^([a-z]+)([0-9]+)")


def _labels(t: catalog.InstanceType) -> dict[str, str]:
    match = _FAMILY.match(t.family)
    category, generation = (match.group(1), match.group(2)) if match else ("", "")
    return {
        INSTANCE_TYPE: t.name,
        FAMILY: t.family,
        CATEGORY: category,
        GENERATION: generation,
        SIZE: t.size,
        GPU_NAME: t.gpu_name,
        GPU_COUNT: str(t.gpu_count),
        GPU_MANUFACTURER: "nvidia",
        GPU_MEMORY: str(t.gpu_memory_mib),
        ARCH: t.kubernetes_arch,
    }


_CATALOGUE = tuple(_labels(t) for t in catalog.INSTANCE_TYPES.values() if t.gpu_count > 0)


def _extra_candidates(reqs: Iterable[tuple[str, str, tuple[str, ...]]]) -> list[dict[str, str]]:
    """Types named by ``In`` on instance-type/family that the catalogue lacks but whose category
    is NVIDIA-only (``p3.2xlarge``): only the labels their name gives are known."""
    out = []
    for key, operator, values in reqs:
        if operator != "In" or key not in (INSTANCE_TYPE, FAMILY):
            continue
        for value in values:
            family = value.split(".", 1)[0]
            match = _FAMILY.match(family)
            if match and match.group(1) in NVIDIA_CATEGORIES:
                labels = {FAMILY: family, CATEGORY: match.group(1), GENERATION: match.group(2)}
                labels[GPU_MANUFACTURER] = "nvidia"
                if key == INSTANCE_TYPE:
                    labels[INSTANCE_TYPE] = value
                out.append(labels)
    return out


def _integer(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def _accepts(operator: str, values: tuple[str, ...], label: str | None) -> bool | None:
    """Whether a node with ``label`` (``None``: the label is absent) satisfies the requirement;
    ``None`` when the operator is unknown (treated as not narrowing)."""
    if operator == "In":
        return label is not None and label in values
    if operator == "NotIn":
        return label is None or label not in values
    if operator == "Exists":
        return label is not None
    if operator == "DoesNotExist":
        return label is None
    if operator in ("Gt", "Lt", "Gte", "Lte"):
        have = _integer(label) if label is not None else None
        bound = _integer(values[0]) if values else None
        if have is None or bound is None:
            return False
        return {
            "Gt": have > bound,
            "Lt": have < bound,
            "Gte": have >= bound,
            "Lte": have <= bound,
        }[operator]
    return None


def _requirements(nodepool: Mapping[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    out = []
    for req in sequence(dig(nodepool, "spec", "template", "spec", "requirements")):
        req = mapping(req)
        key, operator = req.get("key"), req.get("operator")
        if isinstance(key, str) and isinstance(operator, str):
            out.append((key, operator, tuple(str(v) for v in sequence(req.get("values")))))
    return out


def gpu_types_allowed(nodepool: Mapping[str, Any]) -> list[str]:
    """The catalogued NVIDIA GPU instance types the NodePool's requirements accept (names; a
    type outside the catalogue shows as its family or instance type)."""
    reqs = _requirements(nodepool)
    out = []
    for labels in (*_CATALOGUE, *_extra_candidates(reqs)):
        modelled = [r for r in reqs if r[0] in labels]
        if all(_accepts(op, values, labels.get(key)) is not False for key, op, values in modelled):
            out.append(labels.get(INSTANCE_TYPE) or labels[FAMILY])
    return out


def is_nvidia_gpu_pool(nodepool: Mapping[str, Any]) -> bool:
    """A NodePool that can launch NVIDIA GPU nodes: it caps ``nvidia.com/gpu``, or some NVIDIA
    GPU instance type satisfies all of its requirements."""
    if GPU_RESOURCE in mapping(dig(nodepool, "spec", "limits")):
        return True
    return bool(gpu_types_allowed(nodepool))
