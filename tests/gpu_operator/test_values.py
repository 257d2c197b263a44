"""Tests for ``eks_gpu_platform.gpu_operator.values``: the chart values, time-slicing."""

import pytest
import yaml
from upstream_facts import charts
from values_check import unknown_keys

from eks_gpu_platform.gpu_operator.mig import mig_parted_config
from eks_gpu_platform.gpu_operator.spec import GpuOperatorSpec
from eks_gpu_platform.gpu_operator.values import gpu_operator_values, time_slicing_config

SYSTEM_SELECTOR = {"eks-gpu-platform.io/pool": "system"}
SYSTEM_TOLERATIONS = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}


@pytest.fixture(scope="module")
def chart_defaults() -> dict:
    # gpu-operator v26.7.0 bundles the node-feature-discovery 0.19.0 subchart; its values sit
    # under the parent's ``node-feature-discovery`` key, where the parent's own values override
    # the subchart's (tests/upstream_facts/charts.py).
    return charts.defaults_tree(charts.NFD, charts.GPU_OPERATOR)


def values(**spec_fields) -> dict:
    return gpu_operator_values(
        spec=GpuOperatorSpec(**spec_fields),
        drivers_preinstalled=True,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
    )


# --- values ------------------------------------------------------------------------------------


def test_values_for_eks_amis_exactly():
    out = values()
    mig_yaml = out["migManager"]["config"]["data"].pop("config.yaml")
    assert yaml.safe_load(mig_yaml) == mig_parted_config()
    assert out == {
        "cdi": {"enabled": True, "nriPluginEnabled": False},
        "daemonsets": {"tolerations": [GPU_TOLERATION]},
        "operator": {
            "nodeSelector": {"kubernetes.io/os": "linux", **SYSTEM_SELECTOR},
            "tolerations": SYSTEM_TOLERATIONS,
        },
        "driver": {"enabled": False},
        "toolkit": {"enabled": False},
        "devicePlugin": {"enabled": True},
        "gfd": {"enabled": True},
        "mig": {"strategy": "single"},
        "migManager": {
            "enabled": True,
            "env": [{"name": "WITH_REBOOT", "value": "true"}],
            "config": {
                "create": True,
                "name": "eks-gpu-platform-mig-parted-config",
                "default": "all-disabled",
                "data": {},
            },
        },
        "dcgmExporter": {
            "enabled": True,
            "serviceMonitor": {
                "enabled": False,
                "additionalLabels": {"release": "kube-prometheus-stack"},
            },
        },
        "nfd": {"enabled": True},
        "node-feature-discovery": {
            "master": {"nodeSelector": SYSTEM_SELECTOR, "tolerations": SYSTEM_TOLERATIONS},
            "gc": {"nodeSelector": SYSTEM_SELECTOR, "tolerations": SYSTEM_TOLERATIONS},
            "worker": {"tolerations": [CONTROL_PLANE_TOLERATION, GPU_TOLERATION]},
        },
    }


def test_values_install_driver_and_toolkit_without_eks_amis():
    out = gpu_operator_values(
        spec=GpuOperatorSpec(),
        drivers_preinstalled=False,
        system_node_selector={},
        system_tolerations=[],
    )
    assert out["driver"] == {"enabled": True}
    assert out["toolkit"] == {"enabled": True}
    assert out["operator"]["nodeSelector"] == {"kubernetes.io/os": "linux"}


def test_time_slicing_configs_and_a_no_sharing_default():
    out = values(time_slicing={"shared-4": 4, "shared-8": 8}, mig_strategy="mixed")
    config = out["devicePlugin"]["config"]
    data = {key: yaml.safe_load(text) for key, text in config.pop("data").items()}
    assert config == {
        "create": True,
        "name": "eks-gpu-platform-device-plugin-config",
        "default": "default",
    }
    assert data == {
        "default": {"version": "v1", "flags": {"migStrategy": "mixed"}},
        "shared-4": time_slicing_config(4),
        "shared-8": time_slicing_config(8),
    }
    assert out["mig"] == {"strategy": "mixed"}


def test_service_monitor_on_with_the_prometheus_release_label():
    out = values(service_monitor=True, prometheus_release="prometheus")
    assert out["dcgmExporter"] == {
        "enabled": True,
        "serviceMonitor": {"enabled": True, "additionalLabels": {"release": "prometheus"}},
    }


def test_extra_gpu_pool_taints_are_tolerated_by_operands_and_nfd_worker():
    out = gpu_operator_values(
        spec=GpuOperatorSpec(),
        drivers_preinstalled=True,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        gpu_tolerations=[EFA_TOLERATION, GPU_TOLERATION],
    )
    assert out["daemonsets"]["tolerations"] == [GPU_TOLERATION, EFA_TOLERATION]
    assert out["node-feature-discovery"]["worker"]["tolerations"] == [
        CONTROL_PLANE_TOLERATION,
        GPU_TOLERATION,
        EFA_TOLERATION,
    ]


@pytest.mark.parametrize(
    "spec_fields",
    [
        {},
        {"time_slicing": {"shared-4": 4}, "service_monitor": True, "mig_strategy": "mixed"},
    ],
)
def test_every_values_key_exists_in_the_chart(chart_defaults, spec_fields):
    out = gpu_operator_values(
        spec=GpuOperatorSpec(**spec_fields),
        drivers_preinstalled=True,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        gpu_tolerations=[EFA_TOLERATION],
    )
    assert unknown_keys(out, chart_defaults) == []


def test_values_keep_the_chart_contracts(chart_defaults):
    """Key names the operator reads: the MIG ConfigMap key and the RuntimeClass KAI expects."""
    out = values()
    assert list(out["migManager"]["config"]["data"]) == ["config.yaml"]
    assert chart_defaults["operator"]["runtimeClass"] == "nvidia"
    assert chart_defaults["dcgm"]["enabled"] is False


def test_the_parent_chart_s_nfd_worker_tolerations_win_over_the_subchart_s(chart_defaults):
    """Ours keep the parent's two (control plane, GPU) and add the pools' extra taints."""
    worker = chart_defaults["node-feature-discovery"]["worker"]
    assert worker["tolerations"] == [CONTROL_PLANE_TOLERATION, GPU_TOLERATION]
    assert values()["node-feature-discovery"]["worker"]["tolerations"] == worker["tolerations"]


# --- unknown_keys ------------------------------------------------------------------------------

DEFAULTS = {
    "a": {"b": 1, "c": {"d": 2}},
    "empty": {},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "list": [{"x": 1}],
    "nothing": None,
}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"a": {"b": 2}}, []),
        ({"a": {"b": 2, "typo": 1}}, ["a.typo"]),
        ({"a": {"c": {"d": 3, "e": 4}}}, ["a.c.e"]),
        ({"top": 1}, ["top"]),
        ({"empty": {"anything": {"deep": 1}}}, []),
        ({"nodeSelector": {"my/label": "x"}}, []),
        ({"list": [{"y": 2}]}, []),
        ({"nothing": {"free": 1}}, []),
        ({"a": {"b": {"map": "where a scalar was"}}}, []),
    ],
)
def test_unknown_keys(given, expected):
    assert unknown_keys(given, DEFAULTS) == expected


def test_time_slicing_config():
    assert time_slicing_config(4) == {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }
