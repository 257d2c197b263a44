"""Helm values for the ``dra-driver-nvidia-gpu`` chart (NVIDIA/k8s-dra-driver-gpu v0.4.0,
``deployments/helm/dra-driver-nvidia-gpu/values.yaml``). Pure: data in, dict out.

- ``resources.gpus.enabled`` (values L77-80) is refused by the chart unless
  ``gpuResourcesEnabledOverride`` says the device plugin is off on the driver's nodes
  (``templates/validation.yaml`` L33-42): it is, on every DRA pool node (``nodepool.dra``).
- ComputeDomains (Multi-Node NVLink, GB200) are off: no catalogued type has MNNVL.
- ``nvidiaDriverRoot: /``: the EKS AL2023 NVIDIA AMI installs the driver on the host (values
  L18-23); ``resourceApiVersion`` pinned to ``resource.k8s.io/v1`` (values L44-56) rather than
  Helm's capability probe, which a preview without a cluster cannot answer.
- The kubelet plugin's default affinity (values L288-321: NFD or GPU Operator GPU labels) is
  replaced (Helm replaces lists) by the DRA pools' label, so it runs on their nodes only, and
  tolerates the GPU taint and every other taint of those pools (Helm replaces the default
  ``tolerations`` list, L262-265, too).
"""

from collections.abc import Mapping, Sequence
from typing import Any

NAMESPACE = "dra-driver-nvidia-gpu"
RELEASE_NAME = "dra-driver-nvidia-gpu"
RESOURCE_API = "resource.k8s.io/v1"


def dra_driver_values(
    *,
    dra_label: str,
    tolerations: Sequence[Mapping[str, str]],
) -> dict[str, Any]:
    """The chart's values: GPU allocation on, ComputeDomains off, the kubelet plugin on the nodes
    labelled ``dra_label=true`` (``<domain>/dra``)."""
    return {
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "nvidiaDriverRoot": "/",
        "resourceApiVersion": RESOURCE_API,
        "kubeletPlugin": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": dra_label, "operator": "In", "values": ["true"]}
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [dict(t) for t in tolerations],
        },
    }
