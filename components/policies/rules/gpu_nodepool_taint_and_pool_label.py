"""GPU NodePools carry the ``nvidia.com/gpu`` NoSchedule taint and the pool label."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import LABEL_DOMAIN_SCHEMA, MANDATORY, Rule
from ._kube import (
    GPU_RESOURCE,
    NODEPOOL,
    is_nvidia_gpu_pool,
    label_domain,
    object_name,
    pool_name,
    template_spec,
)
from ._props import mapping, sequence


def _has_gpu_taint(nodepool: Mapping[str, Any]) -> bool:
    return any(
        mapping(t).get("key") == GPU_RESOURCE and mapping(t).get("effect") == "NoSchedule"
        for t in sequence(template_spec(nodepool).get("taints"))
    )


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if not is_nvidia_gpu_pool(props):
        return []
    name, domain = object_name(props), label_domain(props, config)
    out = []
    if not _has_gpu_taint(props):
        out.append(
            f'NodePool "{name}" launches NVIDIA GPU nodes without the nvidia.com/gpu:NoSchedule '
            "taint in spec.template.spec.taints; pods that need no GPU would land on (and keep "
            "alive) GPU nodes"
        )
    if pool_name(props, domain) is None:
        out.append(
            f'NodePool "{name}" has no "{domain}/pool" label in spec.template.metadata.labels; '
            "workloads and queues cannot target the pool before it has nodes"
        )
    return out


RULE = Rule(
    name="gpu-nodepool-taint-and-pool-label",
    description=(
        "NodePools that launch NVIDIA GPU nodes must taint them nvidia.com/gpu:NoSchedule (so "
        "only GPU pods land there) and label them '<domain>/pool' (so gangs, node affinity and "
        "KAI queues can target the pool even while it has no nodes)."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="high",
    resource_checks={NODEPOOL: check},
    config_schema=LABEL_DOMAIN_SCHEMA,
)
