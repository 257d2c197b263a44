"""Helm values for the ``karpenter`` chart (v1.15.1) and the chart's default feature gates.
Pure: data in, dict out."""

from collections.abc import Mapping, Sequence
from typing import Any

from .spec import SERVICE_ACCOUNT, KarpenterSpec

# Karpenter's feature gates as the chart defaults them (aws/karpenter-provider-aws v1.15.0
# charts/karpenter/values.yaml L243-261, the six gates of the 1.14 chart); the chart's three
# alpha gates new in 1.15 (terminateFirstDrift, terminateFirstRepair, podDeletionCostManagement,
# L262-270), all off, are left to the chart.
DEFAULT_FEATURE_GATES = {
    "nodeRepair": False,
    "nodeOverlay": False,
    "reservedCapacity": True,
    "spotToSpotConsolidation": False,
    "staticCapacity": False,
    "capacityBuffer": False,
}


def karpenter_values(
    *,
    cluster_name: str,
    queue_name: str | None,
    spec: KarpenterSpec,
    node_selector: Mapping[str, str],
    tolerations: Sequence[Mapping[str, str]],
    feature_gates: Mapping[str, bool] | None = None,
    irsa_role_arn: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> dict:
    """Helm values for the ``karpenter`` chart (every key exists in the v1.15.1 defaults)."""
    resources = {"cpu": spec.cpu, "memory": spec.memory}
    service_account: dict[str, Any] = {"create": True, "name": SERVICE_ACCOUNT}
    if irsa_role_arn is not None:
        service_account["annotations"] = {"eks.amazonaws.com/role-arn": irsa_role_arn}
    return {
        "settings": {
            "clusterName": cluster_name,
            "interruptionQueue": queue_name or "",
            "featureGates": {**DEFAULT_FEATURE_GATES, **(feature_gates or {})},
            # e.g. awsFeatureGates.draNVIDIAGPU (Karpenter >= 1.15) for a DRA pool.
            **(settings or {}),
        },
        "serviceAccount": service_account,
        "replicas": spec.replicas,
        "podDisruptionBudget": {"name": "karpenter", "maxUnavailable": 1},
        "controller": {"resources": {"requests": resources, "limits": dict(resources)}},
        "nodeSelector": {"kubernetes.io/os": "linux", **node_selector},
        "tolerations": [dict(t) for t in tolerations],
        "logLevel": spec.log_level,
    }
