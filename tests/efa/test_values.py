"""Tests for ``eks_gpu_platform.efa.values``: the device plugin chart values."""

import pytest
from upstream_facts import charts
from values_check import unknown_keys

from eks_gpu_platform import versions
from eks_gpu_platform.efa.values import device_plugin_values

EFA_LABEL = "example.com/efa"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}

# --- device plugin values ----------------------------------------------------------------------


def test_device_plugin_values_exactly():
    values = device_plugin_values(
        efa_label_key=EFA_LABEL,
        instance_types=["p5e.48xlarge", "p5.48xlarge", "p5.48xlarge"],
    )
    assert values == {
        "supportedInstanceLabels": {
            "keys": ["node.kubernetes.io/instance-type"],
            "values": ["p5.48xlarge", "p5e.48xlarge"],
        },
        "nodeSelector": {"example.com/efa": "true"},
        "tolerations": [GPU_TOLERATION, EFA_TOLERATION],
    }


@pytest.fixture(scope="module")
def chart_defaults() -> dict:
    return charts.defaults_tree(charts.EFA_DEVICE_PLUGIN)


def test_every_device_plugin_values_key_exists_in_the_chart(chart_defaults):
    values = device_plugin_values(efa_label_key=EFA_LABEL, instance_types=["p5.48xlarge"])
    assert unknown_keys(values, chart_defaults) == []
    # The chart's affinity matches these label keys; ours must be the same one.
    assert (
        values["supportedInstanceLabels"]["keys"]
        == chart_defaults["supportedInstanceLabels"]["keys"]
    )
    # Lists replace the chart's defaults: the chart tolerates nothing but its hard-coded
    # CriticalAddonsOnly, so without ours it would skip the tainted GPU/EFA nodes.
    assert chart_defaults["tolerations"] == []


def test_unknown_keys_catches_a_typo(chart_defaults):
    assert unknown_keys({"nodeSelectors": {}, "tolerations": []}, chart_defaults) == [
        "nodeSelectors"
    ]


def test_the_chart_version_is_the_reference_one():
    chart = versions.EFA_DEVICE_PLUGIN
    assert (chart.name, chart.repository, chart.version) == (
        "aws-efa-k8s-device-plugin",
        "https://aws.github.io/eks-charts",
        "0.5.30",
    )
