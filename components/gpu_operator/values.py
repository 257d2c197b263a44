"""Helm values of the ``gpu-operator`` chart: ``gpu_operator_values``, the device-plugin
configurations (``time_slicing_config``, ``no_sharing_config``) and the toleration helpers.

Pure: plain data in, dict out. Every values key exists in the chart's v26.7.0 defaults (or, under
``node-feature-discovery``, in the NFD subchart's defaults).
"""

from collections.abc import Iterable, Mapping, Sequence

import yaml

from .mig import mig_parted_config
from .spec import (
    DEVICE_PLUGIN_CONFIG_NAME,
    GPU_RESOURCE,
    MIG_CONFIG_KEY,
    MIG_CONFIG_NAME,
    MIG_DISABLED,
    NO_SHARING_CONFIG,
    GpuOperatorSpec,
)

# The chart's defaults for these lists; values replace lists, so ours start from them.
GPU_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}
OPERATOR_NODE_SELECTOR = {"kubernetes.io/os": "linux"}


def time_slicing_config(replicas: int) -> dict:
    """A device-plugin configuration advertising each GPU as ``replicas`` ``nvidia.com/gpu``."""
    return {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "resources": [{"name": GPU_RESOURCE, "replicas": replicas}],
            }
        },
    }


def no_sharing_config(mig_strategy: str) -> dict:
    """The device-plugin configuration of unlabelled nodes: whole GPUs, the cluster MIG strategy."""
    return {"version": "v1", "flags": {"migStrategy": mig_strategy}}


# PyYAML's libyaml emitter where PyYAML has it: it writes each document ``_yaml`` is given (the
# mig-parted configuration, ``no_sharing_config`` of every MIG strategy, ``time_slicing_config``
# of every allowed replica count: plain keys, short plain strings, ints and booleans) byte for
# byte as the pure-Python ``safe_dump`` did (tests/gpu_operator/test_values_yaml.py compares the
# two), about 4x faster on the 6 KB mig-parted document every render writes.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _yaml(data: dict) -> str:
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, default_flow_style=False)


def _tolerations(*groups: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """The tolerations of every group in order, without exact duplicates."""
    out: list[dict[str, str]] = []
    for group in groups:
        for toleration in group:
            item = dict(toleration)
            if item not in out:
                out.append(item)
    return out


def gpu_operator_values(
    *,
    spec: GpuOperatorSpec,
    drivers_preinstalled: bool,
    system_node_selector: Mapping[str, str],
    system_tolerations: Sequence[Mapping[str, str]],
    gpu_tolerations: Sequence[Mapping[str, str]] = (),
) -> dict:
    """Helm values for the ``gpu-operator`` chart v26.7.0.

    ``drivers_preinstalled`` is true for the EKS NVIDIA AMIs (AL2023, Bottlerocket): the
    operator then deploys neither driver nor toolkit. ``gpu_tolerations`` are the GPU pools'
    taints beyond ``nvidia.com/gpu`` (e.g. ``vpc.amazonaws.com/efa`` on EFA pools): the operand
    DaemonSets and the NFD worker must tolerate every one of them.
    """
    system = dict(system_node_selector)
    system_tol = _tolerations(system_tolerations)
    device_plugin: dict = {"enabled": True}
    if spec.time_slicing:
        data = {NO_SHARING_CONFIG: _yaml(no_sharing_config(spec.mig_strategy))}
        for name, replicas in spec.time_slicing.items():
            data[name] = _yaml(time_slicing_config(replicas))
        device_plugin["config"] = {
            "create": True,
            "name": DEVICE_PLUGIN_CONFIG_NAME,
            "default": NO_SHARING_CONFIG,
            "data": data,
        }
    return {
        "cdi": {"enabled": True, "nriPluginEnabled": False},
        "daemonsets": {"tolerations": _tolerations([GPU_TOLERATION], gpu_tolerations)},
        "operator": {
            "nodeSelector": {**OPERATOR_NODE_SELECTOR, **system},
            "tolerations": system_tol,
        },
        "driver": {"enabled": not drivers_preinstalled},
        "toolkit": {"enabled": not drivers_preinstalled},
        "devicePlugin": device_plugin,
        "gfd": {"enabled": True},
        "mig": {"strategy": spec.mig_strategy},
        "migManager": {
            "enabled": True,
            # MIG mode changes on cloud VMs need a reboot (NVIDIA GPU Operator MIG guide, "In a
            # cloud service provider (CSP) environment ... WITH_REBOOT ... true"; mig-parted
            # v0.15.0 cmd/nvidia-mig-manager/main.go L200-206, reconfigure.go L184-195). The
            # chart's values no longer set it (v26.7.0 values.yaml L370-377: env: []). A node
            # whose MIG mode is already right is not rebooted.
            "env": [{"name": "WITH_REBOOT", "value": "true"}],
            "config": {
                "create": True,
                "name": MIG_CONFIG_NAME,
                "default": MIG_DISABLED,
                "data": {MIG_CONFIG_KEY: _yaml(mig_parted_config())},
            },
        },
        "dcgmExporter": {
            "enabled": True,
            "serviceMonitor": {
                "enabled": spec.service_monitor,
                "additionalLabels": {"release": spec.prometheus_release},
            },
        },
        "nfd": {"enabled": True},
        "node-feature-discovery": {
            "master": {"nodeSelector": dict(system), "tolerations": list(system_tol)},
            "gc": {"nodeSelector": dict(system), "tolerations": list(system_tol)},
            "worker": {
                "tolerations": _tolerations(
                    [CONTROL_PLANE_TOLERATION, GPU_TOLERATION], gpu_tolerations
                )
            },
        },
    }
