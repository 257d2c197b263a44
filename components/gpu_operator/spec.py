"""The GPU Operator's input spec (configuration key ``gpuOperator``) and its constants: names,
node labels, MIG strategies and the time-slicing bounds the spec checks."""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..catalog_mig import MIG_DISABLED as MIG_DISABLED  # its home: the MIG geometry
from ..checks import check_duration, duration_seconds
from ..spec import Problem, Spec, check_one_of, check_pattern, doc, show

NAMESPACE = "gpu-operator"
RELEASE_NAME = "gpu-operator"
GPU_RESOURCE = "nvidia.com/gpu"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
# ConfigMaps the chart creates from our data; not the operator's own "default-mig-parted-config".
MIG_CONFIG_NAME = "eks-gpu-platform-mig-parted-config"
DEVICE_PLUGIN_CONFIG_NAME = "eks-gpu-platform-device-plugin-config"
# mig-manager reads its configuration from this ConfigMap key (chart values comment).
MIG_CONFIG_KEY = "config.yaml"
# The device-plugin configuration of nodes without the nvidia.com/device-plugin.config label.
NO_SHARING_CONFIG = "default"
MIG_STRATEGIES = ("none", "single", "mixed")
DEFAULT_MIG_STRATEGY = "single"
DEFAULT_PROMETHEUS_RELEASE = "kube-prometheus-stack"
MIN_TIME_SLICING_REPLICAS = 2
MAX_TIME_SLICING_REPLICAS = 48
CONFIG_NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
LABEL_VALUE_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$"
# How long a MIG node may keep its startup taint before the remover replaces it (issue 30.2). The
# floor covers what a healthy node does in that time: boot, join, pull the operator's images, and
# the MIG manager's reconfiguration with its reboot on cloud instances (WITH_REBOOT, FACTS §0);
# the ceiling keeps a stuck node from holding a p4d/p5 for more than a day.
DEFAULT_MIG_READY_DEADLINE = "45m"
DEFAULT_MIG_READY_DEADLINE_SECONDS = 2700
MIN_MIG_READY_DEADLINE_SECONDS = 900
MAX_MIG_READY_DEADLINE_SECONDS = 86400


# ---------------------------------------------------------------------------------------------
# Spec (configuration key ``gpuOperator``)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GpuOperatorSpec(Spec):
    """The NVIDIA GPU Operator: monitoring, MIG strategy and time-slicing configurations."""

    enabled: bool = doc(True, "Install the GPU Operator (needed by GPU pools and by KAI).")
    external_device_plugin: bool = doc(
        False,
        "With enabled: false, the cluster brings its own NVIDIA device plugin (without one, GPU "
        "nodes advertise no nvidia.com/gpu and GPU pods never schedule).",
    )
    service_monitor: bool = doc(
        False,
        "Prometheus (Operator) is present: create the DCGM exporter's ServiceMonitor.",
    )
    prometheus_release: str = doc(
        DEFAULT_PROMETHEUS_RELEASE,
        "Value of the ServiceMonitor's 'release' label, which Prometheus selects on.",
    )
    mig_strategy: Literal["none", "single", "mixed"] = doc(
        DEFAULT_MIG_STRATEGY,
        "How MIG devices are advertised: single (as nvidia.com/gpu), mixed "
        "(nvidia.com/mig-<profile>) or none.",
    )
    mig_ready_deadline: str = doc(
        DEFAULT_MIG_READY_DEADLINE,
        "How long a node of a MIG pool may wait for its layout (startup taint on) before the "
        "MIG startup remover deletes its NodeClaim so Karpenter replaces it (15m-24h).",
    )
    time_slicing: Mapping[str, int] = doc(
        text="Named time-slicing configurations: name -> replicas per GPU (2-48); a pool "
        "selects one with timeSlicing. 'default' (no sharing) is reserved.",
        default_factory=dict,
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_one_of(self.mig_strategy, MIG_STRATEGIES):
            out.append((("mig_strategy",), msg))
        if msg := check_pattern(
            self.prometheus_release,
            LABEL_VALUE_PATTERN,
            "a label value; expected 1-63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit",
        ):
            out.append((("prometheus_release",), msg))
        if msg := check_duration(
            self.mig_ready_deadline,
            MIN_MIG_READY_DEADLINE_SECONDS,
            why="a healthy MIG node needs that long to boot, reconfigure and reboot",
        ):
            out.append((("mig_ready_deadline",), msg))
        elif (duration_seconds(self.mig_ready_deadline) or 0) > MAX_MIG_READY_DEADLINE_SECONDS:
            out.append(
                (
                    ("mig_ready_deadline",),
                    f"{show(self.mig_ready_deadline)} is longer than 24h; a stuck MIG node would "
                    "be billed that long before it is replaced",
                )
            )
        for name, replicas in self.time_slicing.items():
            if name == NO_SHARING_CONFIG:
                out.append(
                    (
                        ("time_slicing",),
                        f"{show(name)} is reserved for the configuration without sharing; "
                        "choose another name",
                    )
                )
            elif not re.fullmatch(CONFIG_NAME_PATTERN, name):
                out.append(
                    (
                        ("time_slicing",),
                        f"{show(name)} is not a valid configuration name; expected 1-63 lowercase "
                        "letters, digits or '-', starting and ending with a letter or digit "
                        f"(it becomes the value of the node label {DEVICE_PLUGIN_CONFIG_LABEL})",
                    )
                )
            # Types (an integer, not a boolean) are checked before _problems runs (spec.py).
            if not MIN_TIME_SLICING_REPLICAS <= replicas <= MAX_TIME_SLICING_REPLICAS:
                out.append(
                    (
                        ("time_slicing",),
                        f"replicas of {show(name)} is {replicas}; expected a number from "
                        f"{MIN_TIME_SLICING_REPLICAS} to {MAX_TIME_SLICING_REPLICAS}",
                    )
                )
        return out


def mig_ready_deadline_seconds(spec: GpuOperatorSpec) -> int:
    """``spec.mig_ready_deadline`` in seconds (validated by the spec)."""
    return duration_seconds(spec.mig_ready_deadline) or DEFAULT_MIG_READY_DEADLINE_SECONDS
