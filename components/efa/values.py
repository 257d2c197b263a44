"""Helm values of the AWS EFA Kubernetes device plugin chart (``device_plugin_values``).

Pure: plain data in, dict out.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from ..nodepool import EFA_RESOURCE, GPU_RESOURCE


def device_plugin_values(
    *,
    efa_label_key: str,
    instance_types: Sequence[str],
    extra_tolerations: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """Helm values for ``aws-efa-k8s-device-plugin`` (keys exist in chart 0.5.30's defaults).

    ``extra_tolerations``: for taints the EFA pools add beyond the GPU and EFA ones.
    """
    return {
        "supportedInstanceLabels": {
            "keys": ["node.kubernetes.io/instance-type"],
            "values": sorted(set(instance_types)),
        },
        "nodeSelector": {efa_label_key: "true"},
        "tolerations": [
            {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
            {"key": EFA_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
            *(dict(t) for t in extra_tolerations),
        ],
    }
