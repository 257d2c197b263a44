"""Chart defaults the Helm values tests need: every key path our values set, with its default.

Helm ignores a key a chart does not declare, so ``tests/values_check.py``'s ``unknown_keys``
walks our values alongside a chart's defaults. These tables hold, for each chart, the key paths
our values reach (as ``unknown_keys`` descends: a map is compared key by key unless its default
is empty or free-form) with the default there and its line in the chart's ``values.yaml`` at the
pinned version. ``defaults_tree`` turns a table into the nested map ``unknown_keys`` takes.

A path missing from a table is a key the chart does not declare at that version, or one our
values did not set when the table was written: add it after reading the chart at the pin.
``...`` stands for a long default our values replace whole (a list), not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChartDefaults:
    """Defaults of one chart's ``values.yaml``: ``path -> (default, line)`` at ``ref``."""

    repository: str
    ref: str
    path: str
    defaults: dict[str, tuple[Any, int]]
    under: str = ""  # the parent chart's key the values sit under (a subchart's name)


CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

# components/versions.py GPU_OPERATOR: chart v26.7.0.
GPU_OPERATOR = ChartDefaults(
    repository="NVIDIA/gpu-operator",
    ref="v26.7.0",
    path="deployments/gpu-operator/values.yaml",
    defaults={
        "nfd.enabled": (True, 9),
        "cdi.enabled": (True, 16),
        "cdi.nriPluginEnabled": (False, 17),
        "daemonsets.priorityClassName": ("system-node-critical", 44),
        "daemonsets.tolerations": ([GPU_TOLERATION], 45),
        "operator.priorityClassName": ("system-node-critical", 80),
        "operator.runtimeClass": ("nvidia", 81),
        "operator.nodeSelector": ({"kubernetes.io/os": "linux"}, 82),
        "operator.tolerations": ([CONTROL_PLANE_TOLERATION], 90),
        "mig.strategy": ("single", 135),
        "driver.enabled": (True, 138),
        "toolkit.enabled": (True, 230),
        "devicePlugin.enabled": (True, 242),
        "devicePlugin.config.create": (False, 273),
        "devicePlugin.config.name": ("", 275),
        "devicePlugin.config.default": ("", 277),
        "devicePlugin.config.data": ({}, 279),
        "dcgm.enabled": (False, 289),
        "dcgmExporter.enabled": (True, 300),
        "dcgmExporter.serviceMonitor.enabled": (True, 327),
        "dcgmExporter.serviceMonitor.additionalLabels": ({}, 331),
        "gfd.enabled": (True, 360),
        "migManager.enabled": (True, 371),
        "migManager.env": ([], 377),
        "migManager.config.default": ("all-disabled", 420),
        "migManager.config.create": (False, 422),
        "migManager.config.name": ("", 426),
        "migManager.config.data": ({}, 428),
        # The parent's own values for its NFD subchart (L618): they override the subchart's.
        "node-feature-discovery.gc.enable": (True, 621),
        "node-feature-discovery.worker.tolerations": (
            [CONTROL_PLANE_TOLERATION, GPU_TOLERATION],
            631,
        ),
    },
)

# The node-feature-discovery 0.19.0 subchart gpu-operator v26.7.0 bundles (from
# kubernetes-sigs/node-feature-discovery deployment/helm/node-feature-discovery/values.yaml);
# its values sit under the parent's ``node-feature-discovery`` key.
NFD = ChartDefaults(
    repository="NVIDIA/gpu-operator",
    ref="v26.7.0",
    path="deployments/gpu-operator/charts/node-feature-discovery/values.yaml",
    under="node-feature-discovery",
    defaults={
        "master.nodeSelector": ({}, 227),
        "master.tolerations": ([CONTROL_PLANE_TOLERATION], 231),
        "worker.tolerations": ([], 776),
        "gc.nodeSelector": ({}, 1182),
        "gc.tolerations": ([], 1186),
    },
)

# components/versions.py EFA_DEVICE_PLUGIN: chart 0.5.30 (app v0.5.20), aws/eks-charts has no
# per-chart tags: the commit that made 0.5.30.
EFA_DEVICE_PLUGIN = ChartDefaults(
    repository="aws/eks-charts",
    ref="bfe91c4b9257c80f754ad4b3d6a9a3c239b2b8ec",
    path="stable/aws-efa-k8s-device-plugin/values.yaml",
    defaults={
        "supportedInstanceLabels.keys": (["node.kubernetes.io/instance-type"], 11),
        "supportedInstanceLabels.values": (..., 13),  # the EFA instance types, L14-322
        "nodeSelector": ({}, 328),
        "tolerations": ([], 332),
    },
)


def default(chart: ChartDefaults, path: str) -> Any:
    """The chart's default at the dotted ``path`` (``KeyError``: not in the table)."""
    return chart.defaults[path][0]


def defaults_tree(*charts: ChartDefaults) -> dict[str, Any]:
    """The tables as one nested map (a subchart's under its key), for ``unknown_keys``."""
    tree: dict[str, Any] = {}
    for chart in charts:
        for path, (value, _) in chart.defaults.items():
            *parents, leaf = ([chart.under] if chart.under else []) + path.split(".")
            node = tree
            for key in parents:
                node = node.setdefault(key, {})
            node[leaf] = value
    return tree
