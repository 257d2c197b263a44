"""Karpenter's chart values (``eks_gpu_platform.karpenter.values``): exact values, and every key
in the pinned chart's defaults."""

import pytest
from upstream_modules import karpenter_file
from values_check import load_defaults, unknown_keys

from eks_gpu_platform import versions
from eks_gpu_platform.karpenter.spec import KarpenterSpec
from eks_gpu_platform.karpenter.values import karpenter_values

from .helpers import SYSTEM_SELECTOR, SYSTEM_TOLERATIONS

# charts/karpenter/values.yaml of github.com/aws/karpenter-provider-aws at the conformance
# suite's version (v1.15.0, tests/conformance/go.mod): byte-identical to v1.15.1's, the chart
# pinned in versions.py (tests/upstream_modules.py says how that was checked).
CHART_VALUES = "charts/karpenter/values.yaml"
DEFAULT_GATES = {
    "nodeRepair": False,
    "nodeOverlay": False,
    "reservedCapacity": True,
    "spotToSpotConsolidation": False,
    "staticCapacity": False,
    "capacityBuffer": False,
}


def test_karpenter_values_pod_identity():
    values = karpenter_values(
        cluster_name="gpu-dev",
        queue_name="Karpenter-gpu-dev",
        spec=KarpenterSpec(),
        node_selector=SYSTEM_SELECTOR,
        tolerations=SYSTEM_TOLERATIONS,
    )
    assert values == {
        "settings": {
            "clusterName": "gpu-dev",
            "interruptionQueue": "Karpenter-gpu-dev",
            "featureGates": DEFAULT_GATES,
        },
        "serviceAccount": {"create": True, "name": "karpenter"},
        "replicas": 2,
        "podDisruptionBudget": {"name": "karpenter", "maxUnavailable": 1},
        "controller": {
            "resources": {
                "requests": {"cpu": "1", "memory": "1Gi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            }
        },
        "nodeSelector": {"kubernetes.io/os": "linux", "eks-gpu-platform.io/system": "true"},
        "tolerations": SYSTEM_TOLERATIONS,
        "logLevel": "info",
    }


def test_karpenter_values_irsa_without_queue_with_gates():
    values = karpenter_values(
        cluster_name="gpu-dev",
        queue_name=None,
        spec=KarpenterSpec(
            auth="irsa",
            interruption_handling=False,
            replicas=3,
            cpu="500m",
            memory="2Gi",
            log_level="debug",
        ),
        node_selector={},
        tolerations=[],
        feature_gates={"nodeOverlay": True},
        irsa_role_arn="arn:aws:iam::111122223333:role/KarpenterController-gpu-dev",
    )
    assert values == {
        "settings": {
            "clusterName": "gpu-dev",
            "interruptionQueue": "",
            "featureGates": {**DEFAULT_GATES, "nodeOverlay": True},
        },
        "serviceAccount": {
            "create": True,
            "name": "karpenter",
            "annotations": {
                "eks.amazonaws.com/role-arn": (
                    "arn:aws:iam::111122223333:role/KarpenterController-gpu-dev"
                )
            },
        },
        "replicas": 3,
        "podDisruptionBudget": {"name": "karpenter", "maxUnavailable": 1},
        "controller": {
            "resources": {
                "requests": {"cpu": "500m", "memory": "2Gi"},
                "limits": {"cpu": "500m", "memory": "2Gi"},
            }
        },
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [],
        "logLevel": "debug",
    }


@pytest.fixture(scope="module")
def chart_defaults() -> dict:
    return load_defaults(karpenter_file(CHART_VALUES))


def test_chart_defaults_are_the_pinned_version(chart_defaults):
    # The values.yaml at a release tag still names the previous release's image (the release
    # workflow bumps it in a later commit; the v1.14.1 tag's says 1.13.0): the v1.15.1 tag's
    # says 1.14.1, and so does v1.15.0's (the module read here: the two files are the same).
    # The published 1.15.1 chart carries its own.
    assert versions.KARPENTER_VERSION == "1.15.1"
    assert chart_defaults["controller"]["image"]["tag"] == "1.14.1"
    # 1.15 adds three alpha gates, all off by default (chart values.yaml at v1.15.1,
    # settings.featureGates): left to the chart, so the render does not change.
    assert chart_defaults["settings"]["featureGates"] == {
        **DEFAULT_GATES,
        "terminateFirstDrift": False,
        "terminateFirstRepair": False,
        "podDeletionCostManagement": False,
    }


def test_unknown_keys_walk(chart_defaults):
    values = {
        "settings": {"clusterName": "x", "clusterNmae": "y", "featureGates": {"nodeRepare": True}},
        "webhook": {"enabled": False},
        "controller": {"resources": {"anything": 1}, "imag": {}},
        "serviceAccount": {"annotations": {"any/key": "v"}},
        "nodeSelector": {"my/label": "x"},
        "tolerations": [{"not": "checked"}],
    }
    assert unknown_keys(values, chart_defaults) == [
        "settings.clusterNmae",
        "settings.featureGates.nodeRepare",
        "webhook",
        "controller.imag",
    ]


@pytest.mark.parametrize(
    "spec",
    [KarpenterSpec(), KarpenterSpec(auth="irsa", interruption_handling=False)],
    ids=["pod-identity", "irsa"],
)
def test_every_value_key_exists_in_the_chart(chart_defaults, spec):
    values = karpenter_values(
        cluster_name="gpu-dev",
        queue_name="Karpenter-gpu-dev",
        spec=spec,
        node_selector=SYSTEM_SELECTOR,
        tolerations=SYSTEM_TOLERATIONS,
        feature_gates={"nodeOverlay": True},
        irsa_role_arn="arn:aws:iam::111122223333:role/x" if spec.auth == "irsa" else None,
    )
    assert unknown_keys(values, chart_defaults) == []
