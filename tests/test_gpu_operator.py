"""Tests for ``eks_gpu_platform.gpu_operator``: values, MIG and time-slicing, spec, component."""

import re

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml
from crd_validation import reference_dir
from values_check import load_defaults, merge, unknown_keys

from eks_gpu_platform import gpu_operator as go
from eks_gpu_platform import versions
from eks_gpu_platform.spec import SpecError, load_spec

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
    # under the parent's ``node-feature-discovery`` key (reference/README.md).
    parent = load_defaults(reference_dir() / "gpu-operator" / "chart-values-v26.7.0.yaml")
    nfd = load_defaults(reference_dir() / "gpu-operator" / "nfd-chart-values-0.19.0.yaml")
    return merge(parent, {"node-feature-discovery": nfd})


def values(**spec_fields) -> dict:
    return go.gpu_operator_values(
        spec=go.GpuOperatorSpec(**spec_fields),
        drivers_preinstalled=True,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
    )


# --- values ------------------------------------------------------------------------------------


def test_values_for_eks_amis_exactly():
    out = values()
    mig_yaml = out["migManager"]["config"]["data"].pop("config.yaml")
    assert yaml.safe_load(mig_yaml) == go.mig_parted_config()
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
    out = go.gpu_operator_values(
        spec=go.GpuOperatorSpec(),
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
        "shared-4": go.time_slicing_config(4),
        "shared-8": go.time_slicing_config(8),
    }
    assert out["mig"] == {"strategy": "mixed"}


def test_service_monitor_on_with_the_prometheus_release_label():
    out = values(service_monitor=True, prometheus_release="prometheus")
    assert out["dcgmExporter"] == {
        "enabled": True,
        "serviceMonitor": {"enabled": True, "additionalLabels": {"release": "prometheus"}},
    }


def test_extra_gpu_pool_taints_are_tolerated_by_operands_and_nfd_worker():
    out = go.gpu_operator_values(
        spec=go.GpuOperatorSpec(),
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
    out = go.gpu_operator_values(
        spec=go.GpuOperatorSpec(**spec_fields),
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


# --- MIG ---------------------------------------------------------------------------------------

A100_40 = ["0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"]
GPUS_80 = [
    "0x20B210DE",
    "0x20B510DE",
    "0x20F310DE",
    "0x20F510DE",
    "0x233010DE",
    "0x233110DE",
    "0x232210DE",
    "0x232410DE",
]
H200 = ["0x233510DE", "0x233B10DE"]


def entry(device_filter: list[str], devices: dict) -> dict:
    return {
        "device-filter": device_filter,
        "devices": "all",
        "mig-enabled": True,
        "mig-devices": devices,
    }


def test_mig_profile_names():
    assert go.MIG_PROFILE_NAMES == (
        "all-disabled",
        "all-balanced",
        "all-1g.5gb",
        "all-1g.10gb",
        "all-1g.18gb",
        "all-1g.20gb",
        "all-1g.35gb",
        "all-2g.10gb",
        "all-2g.20gb",
        "all-2g.35gb",
        "all-3g.20gb",
        "all-3g.40gb",
        "all-3g.71gb",
        "all-4g.20gb",
        "all-4g.40gb",
        "all-4g.71gb",
        "all-7g.40gb",
        "all-7g.80gb",
        "all-7g.141gb",
    )


def test_mig_parted_config_entries():
    config = go.mig_parted_config()
    assert config["version"] == "v1"
    configs = config["mig-configs"]
    assert configs["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    # Same layouts and device ids as NVIDIA/gpu-operator's default mig-parted config.
    assert configs["all-balanced"] == [
        entry(A100_40, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}),
        entry(GPUS_80, {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
        entry(H200, {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}),
    ]
    assert configs["all-1g.10gb"] == [
        entry(A100_40, {"1g.10gb": 4}),
        entry(GPUS_80, {"1g.10gb": 7}),
    ]
    assert configs["all-3g.40gb"] == [entry(GPUS_80, {"3g.40gb": 2})]
    assert configs["all-7g.141gb"] == [entry(H200, {"7g.141gb": 1})]
    assert configs["all-1g.5gb"] == [entry(A100_40, {"1g.5gb": 7})]


def test_every_mig_layout_fits_on_seven_slices():
    for name, entries in go.mig_parted_config()["mig-configs"].items():
        for item in entries:
            slices = sum(
                int(profile.split("g.")[0]) * count
                for profile, count in item.get("mig-devices", {}).items()
            )
            assert slices <= 7, name


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        (
            "p4d",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.5gb",
                "all-1g.10gb",
                "all-2g.10gb",
                "all-3g.20gb",
                "all-4g.20gb",
                "all-7g.40gb",
            ),
        ),
        (
            "p5",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.10gb",
                "all-1g.20gb",
                "all-2g.20gb",
                "all-3g.40gb",
                "all-4g.40gb",
                "all-7g.80gb",
            ),
        ),
        (
            "p5en",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.18gb",
                "all-1g.35gb",
                "all-2g.35gb",
                "all-3g.71gb",
                "all-4g.71gb",
                "all-7g.141gb",
            ),
        ),
        ("g6e", ()),
    ],
)
def test_mig_profiles_for_family(family, expected):
    assert go.mig_profiles_for_family(family) == expected


def test_p4de_and_p5_share_the_80gb_profiles():
    assert go.mig_profiles_for_family("p4de") == go.mig_profiles_for_family("p5")


def test_time_slicing_config():
    assert go.time_slicing_config(4) == {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }


# --- spec --------------------------------------------------------------------------------------


def test_spec_defaults():
    spec = go.GpuOperatorSpec()
    assert (spec.enabled, spec.service_monitor, spec.prometheus_release) == (
        True,
        False,
        "kube-prometheus-stack",
    )
    assert (spec.mig_strategy, dict(spec.time_slicing)) == ("single", {})


def test_spec_from_config():
    spec = load_spec(
        go.GpuOperatorSpec,
        {"serviceMonitor": True, "migStrategy": "mixed", "timeSlicing": {"shared-4": 4}},
        "gpuOperator",
    )
    assert spec == go.GpuOperatorSpec(
        service_monitor=True, mig_strategy="mixed", time_slicing={"shared-4": 4}
    )


BAD_CONFIG = [
    (
        {"migStrategy": "mix"},
        "gpuOperator.migStrategy: 'mix' is not allowed; expected one of none, single, mixed; "
        "did you mean 'mixed'?",
    ),
    (
        {"timeSlicing": {"default": 4}},
        "gpuOperator.timeSlicing: 'default' is reserved for the configuration without sharing; "
        "choose another name",
    ),
    (
        {"timeSlicing": {"Shared_4": 4}},
        "gpuOperator.timeSlicing: 'Shared_4' is not a valid configuration name; expected 1-63 "
        "lowercase letters, digits or '-', starting and ending with a letter or digit (it "
        "becomes the value of the node label nvidia.com/device-plugin.config)",
    ),
    (
        {"timeSlicing": {"shared-1": 1}},
        "gpuOperator.timeSlicing: replicas of 'shared-1' is 1; expected a number from 2 to 48",
    ),
    (
        {"timeSlicing": {"shared-64": 64}},
        "gpuOperator.timeSlicing: replicas of 'shared-64' is 64; expected a number from 2 to 48",
    ),
    ({"timeSlicing": {"half": 2.5}}, "gpuOperator.timeSlicing.half: 2.5 is not an integer"),
    (
        {"prometheusRelease": "-prom"},
        "gpuOperator.prometheusRelease: '-prom' is not a label value; expected 1-63 letters, "
        "digits, '-', '_' or '.', starting and ending with a letter or digit",
    ),
    (
        {"serviceMonitors": True},
        "gpuOperator.serviceMonitors: unknown key; did you mean 'serviceMonitor'?; allowed keys "
        "are enabled, migStrategy, prometheusRelease, serviceMonitor, timeSlicing",
    ),
]


@pytest.mark.parametrize(("raw", "message"), BAD_CONFIG)
def test_bad_config(raw, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(go.GpuOperatorSpec, raw, "gpuOperator")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"time_slicing": {"shared-4": 1}},
            "GpuOperatorSpec.time_slicing: replicas of 'shared-4' is 1; expected a number from "
            "2 to 48",
        ),
        (
            {"time_slicing": {"shared-4": True}},
            "GpuOperatorSpec.time_slicing.shared-4: true is not an integer",
        ),
        (
            {"mig_strategy": "all"},
            "GpuOperatorSpec.mig_strategy: 'all' is not allowed; expected one of none, single, "
            "mixed",
        ),
    ],
)
def test_bad_spec_from_python(fields, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        go.GpuOperatorSpec(**fields)


# --- component ---------------------------------------------------------------------------------

TYPE = "eks-gpu-platform:index:GpuOperator"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"


def make_operator(spec: go.GpuOperatorSpec | None = None) -> None:
    provider = k8s.Provider("k8s", kubeconfig="{}")
    marker = k8s.core.v1.ConfigMap("marker", opts=pulumi.ResourceOptions(provider=provider))
    go.GpuOperator(
        "gpu",
        go.GpuOperatorArgs(
            spec=spec or go.GpuOperatorSpec(),
            drivers_preinstalled=True,
            k8s_provider=provider,
            system_node_selector=SYSTEM_SELECTOR,
            system_tolerations=SYSTEM_TOLERATIONS,
            gpu_tolerations=[EFA_TOLERATION],
            depends_on=[marker],
        ),
    )


def test_component_children(run_program):
    recording = run_program(make_operator)
    component = next(r for r in recording.resources if r.type == TYPE)
    children = recording.children_of(component.urn)
    assert sorted((r.type, r.name) for r in children) == [
        (NAMESPACE_TYPE, "gpu-namespace"),
        (RELEASE_TYPE, "gpu-chart"),
    ]
    namespace = next(r for r in children if r.type == NAMESPACE_TYPE)
    release = next(r for r in children if r.type == RELEASE_TYPE)
    marker = next(r for r in recording.resources if r.name == "marker")
    assert namespace.inputs["metadata"] == {
        "name": "gpu-operator",
        "labels": {
            "pod-security.kubernetes.io/enforce": "privileged",
            "pod-security.kubernetes.io/audit": "privileged",
            "pod-security.kubernetes.io/warn": "privileged",
        },
    }
    assert marker.urn in namespace.dependencies
    assert {namespace.urn, marker.urn} <= set(release.dependencies)
    assert namespace.provider.startswith(
        next(r.urn for r in recording.resources if r.name == "k8s")
    )
    expected_values = go.gpu_operator_values(
        spec=go.GpuOperatorSpec(),
        drivers_preinstalled=True,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        gpu_tolerations=[EFA_TOLERATION],
    )
    inputs = release.inputs
    assert inputs["name"] == "gpu-operator"
    assert inputs["chart"] == versions.GPU_OPERATOR.name == "gpu-operator"
    assert inputs["version"] == versions.GPU_OPERATOR.version
    assert inputs["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert inputs["namespace"] == "gpu-operator"
    assert inputs["values"] == expected_values
    assert component.registered_outputs == {
        "namespace": "gpu-operator",
        "release_name": "gpu-operator",
    }


def test_disabled_spec_is_rejected(run_program):
    def program():
        make_operator(go.GpuOperatorSpec(enabled=False))

    with pytest.raises(SpecError) as err:
        run_program(program)
    assert err.value.lines == [
        "GpuOperatorArgs.spec.enabled: is false; leave the GpuOperator component out instead of "
        "creating it"
    ]


@pytest.mark.parametrize(
    ("profile", "family", "devices"),
    [
        ("all-disabled", "p5", 1),
        ("all-1g.10gb", "p5", 7),
        ("all-1g.10gb", "p4d", 4),
        ("all-1g.18gb", "p5en", 7),
        ("all-7g.80gb", "p4de", 1),
    ],
)
def test_mig_devices_per_gpu(profile, family, devices):
    assert go.mig_devices_per_gpu(profile, family) == devices


@pytest.mark.parametrize(
    ("profile", "family", "message"),
    [
        (
            "all-balanced",
            "p4d",
            "MIG profile 'all-balanced' mixes 1g.5gb, 2g.10gb, 3g.20gb; migStrategy single "
            "advertises one size only, so it needs migStrategy mixed",
        ),
        ("all-1g.18gb", "p5", "MIG profile 'all-1g.18gb' does not apply to p5 GPUs"),
        ("all-1g.10gb", "g6", "MIG profile 'all-1g.10gb' does not apply to g6 GPUs"),
    ],
)
def test_mig_devices_per_gpu_errors(profile, family, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        go.mig_devices_per_gpu(profile, family)
