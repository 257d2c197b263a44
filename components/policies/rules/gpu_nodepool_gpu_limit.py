"""Every GPU NodePool caps ``nvidia.com/gpu``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._kube import GPU_RESOURCE, NODEPOOL, gpu_limit, is_nvidia_gpu_pool, object_name
from ._props import number, show


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if not is_nvidia_gpu_pool(props):
        return []
    name, limit = object_name(props), gpu_limit(props)
    if limit is None:
        return [
            f'NodePool "{name}" launches NVIDIA GPU nodes without a spec.limits["{GPU_RESOURCE}"] '
            "cap; pending pods (over-quota KAI pods included) can launch GPUs without bound"
        ]
    value = number(limit)
    if value is None or value <= 0 or not value.is_integer():
        return [
            f'NodePool "{name}": spec.limits["{GPU_RESOURCE}"] is {show(limit)}; expected a '
            "positive whole number of GPUs"
        ]
    return []


RULE = Rule(
    name="gpu-nodepool-gpu-limit",
    description=(
        "GPU NodePools must cap nvidia.com/gpu in spec.limits: Karpenter provisions for every "
        "Unschedulable pod, including pods a queue will never admit, so an uncapped pool's "
        "spend is unbounded."
    ),
    enforcement_level=MANDATORY,
    category="cost",
    severity="high",
    resource_checks={NODEPOOL: check},
)
