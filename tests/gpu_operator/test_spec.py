"""Tests for ``eks_gpu_platform.gpu_operator.spec``: defaults, configuration, bad values."""

import re

import pytest

from eks_gpu_platform.gpu_operator.spec import GpuOperatorSpec
from eks_gpu_platform.spec import SpecError, load_spec


def test_spec_defaults():
    spec = GpuOperatorSpec()
    assert (spec.enabled, spec.service_monitor, spec.prometheus_release) == (
        True,
        False,
        "kube-prometheus-stack",
    )
    assert (spec.mig_strategy, dict(spec.time_slicing)) == ("single", {})


def test_spec_from_config():
    spec = load_spec(
        GpuOperatorSpec,
        {"serviceMonitor": True, "migStrategy": "mixed", "timeSlicing": {"shared-4": 4}},
        "gpuOperator",
    )
    assert spec == GpuOperatorSpec(
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
        "are enabled, externalDevicePlugin, migReadyDeadline, migStrategy, prometheusRelease, "
        "serviceMonitor, timeSlicing",
    ),
    # Issue 30.2: the MIG startup remover's bounded wait.
    (
        {"migReadyDeadline": "10m"},
        "gpuOperator.migReadyDeadline: '10m' is shorter than 15m; a healthy MIG node needs that "
        "long to boot, reconfigure and reboot",
    ),
    (
        {"migReadyDeadline": "45 minutes"},
        "gpuOperator.migReadyDeadline: '45 minutes' is not a duration such as '4h' or '1h30m'",
    ),
    (
        {"migReadyDeadline": "25h"},
        "gpuOperator.migReadyDeadline: '25h' is longer than 24h; a stuck MIG node would be "
        "billed that long before it is replaced",
    ),
]


@pytest.mark.parametrize(
    ("value", "seconds"), [("45m", 2700), ("15m", 900), ("1h30m", 5400), ("24h", 86400)]
)
def test_the_mig_ready_deadline_in_seconds(value, seconds):
    from eks_gpu_platform.gpu_operator.spec import mig_ready_deadline_seconds

    spec = load_spec(GpuOperatorSpec, {"migReadyDeadline": value}, "gpuOperator")
    assert mig_ready_deadline_seconds(spec) == seconds


@pytest.mark.parametrize(("raw", "message"), BAD_CONFIG)
def test_bad_config(raw, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(GpuOperatorSpec, raw, "gpuOperator")


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
        GpuOperatorSpec(**fields)
