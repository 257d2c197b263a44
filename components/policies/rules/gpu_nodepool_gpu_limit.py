"""Every GPU NodePool caps ``nvidia.com/gpu``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._kube import GPU_RESOURCE, NODEPOOL, gpu_limit, is_nvidia_gpu_pool, object_name
from ._props import dig, mapping, number, show

MIG_PREFIX = "nvidia.com/mig-"


def _positive_whole(raw: Any) -> bool:
    value = number(raw)
    return value is not None and value > 0 and value.is_integer()


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if not is_nvidia_gpu_pool(props):
        return []
    name, limit = object_name(props), gpu_limit(props)
    mig = {
        k: v
        for k, v in mapping(dig(props, "spec", "limits")).items()
        if isinstance(k, str) and k.startswith(MIG_PREFIX)
    }
    if limit is None and mig:
        # A MIG pool under the mixed strategy advertises nvidia.com/mig-<profile>, not
        # nvidia.com/gpu (NVIDIA/k8s-device-plugin v0.20.0 internal/rm/rm.go L140-146): its
        # limits cap those (issue 12).
        bad = sorted(k for k, v in mig.items() if not _positive_whole(v))
        return [
            f'NodePool "{name}": spec.limits["{k}"] is {show(mig[k])}; expected a positive '
            "whole number of MIG devices"
            for k in bad
        ]
    if limit is None:
        return [
            f'NodePool "{name}" launches NVIDIA GPU nodes without a spec.limits["{GPU_RESOURCE}"] '
            "cap; pending pods (over-quota KAI pods included) can launch GPUs without bound"
        ]
    if not _positive_whole(limit):
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
