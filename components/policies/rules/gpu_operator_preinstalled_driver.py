"""The GPU Operator leaves driver and toolkit to AMIs that ship them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import (
    EC2NODECLASS,
    GPU_OPERATOR_CHART,
    NODEPOOL,
    ami_aliases,
    is_nvidia_gpu_pool,
    node_class_name,
    object_name,
    of_type,
    release_name,
    releases_of_chart,
)
from ._props import dig, is_false, show, show_list

# AMI families whose EKS NVIDIA variants ship the NVIDIA driver and container toolkit.
DRIVER_AMI_FAMILIES = ("al2023", "bottlerocket")
OPERANDS = (("driver", "NVIDIA driver"), ("toolkit", "NVIDIA container toolkit"))


def _ships_driver(nodeclass: Mapping[str, Any]) -> bool:
    aliases = ami_aliases(nodeclass)
    return bool(aliases) and all(
        alias is not None and alias.split("@", 1)[0].lower() in DRIVER_AMI_FAMILIES
        for alias in aliases
    )


def _gpu_node_classes(resources: Sequence[StackResource]) -> list[StackResource]:
    """The classes GPU NodePools launch from; every class when no NodePool is a GPU pool."""
    classes = of_type(resources, EC2NODECLASS)
    used = {
        node_class_name(p.props)
        for p in of_type(resources, NODEPOOL)
        if is_nvidia_gpu_pool(p.props)
    }
    gpu = [c for c in classes if object_name(c.props) in used]
    return gpu or classes


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    operators = releases_of_chart(resources, GPU_OPERATOR_CHART)
    classes = _gpu_node_classes(resources)
    if not operators or not classes or not all(_ships_driver(c.props) for c in classes):
        return []
    names = show_list(sorted(object_name(c.props) for c in classes))
    out: list[str] = []
    for release in operators:
        for key, what in OPERANDS:
            enabled = dig(release.props, "values", key, "enabled")
            if is_false(enabled):
                continue
            shown = "not set (the chart defaults to true)" if enabled is None else show(enabled)
            out.append(
                Finding(
                    f'GPU Operator release "{release_name(release)}" has values.{key}.enabled '
                    f"{shown}, but every GPU EC2NodeClass ({names}) uses an AL2023 or "
                    f"Bottlerocket AMI alias whose NVIDIA AMI already ships the {what}; set "
                    f"{key}.enabled: false",
                    release.urn,
                )
            )
    return out


RULE = Rule(
    name="gpu-operator-preinstalled-driver",
    description=(
        "When every GPU EC2NodeClass uses an al2023@ or bottlerocket@ alias, the GPU Operator "
        "must not install the driver or the container toolkit: those EKS NVIDIA AMIs ship both, "
        "and a second driver fights the AMI's for the GPUs."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="high",
    check_stack=check_stack,
)
