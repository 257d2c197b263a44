"""The controller workloads a render deploys (``expected_controllers``): per Helm release, by
its chart, the Deployments and DaemonSets the chart (for KAI, its operator) runs, named as the
chart's templates name them; then every Deployment and DaemonSet of ``manifests/``. Pure: plain
data in, names out. The ``deployment`` phase's ``controllers-ready`` waits for each to roll out;
the conformance suite's ``vconf`` seeds its API server with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .core import Render


@dataclass(frozen=True)
class Controller:
    """A workload a controller of the render runs: a Deployment or DaemonSet by namespace and
    name, the Helm release (or ``manifests``) that makes it, and where its name comes from."""

    kind: str
    namespace: str
    name: str
    release: str
    source: str

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


def helm_fullname(release: str, chart: str, values: Mapping[str, Any]) -> str:
    """The ``<chart>.fullname`` helper of the Helm starter template, which the Karpenter, NFD
    and EFA device plugin charts use unchanged (aws/karpenter-provider-aws v1.15.0
    charts/karpenter/templates/_helpers.tpl L13-24; NVIDIA/gpu-operator v26.7.0
    deployments/gpu-operator/charts/node-feature-discovery/templates/_helpers.tpl L14-25;
    aws/eks-charts stable/aws-efa-k8s-device-plugin/templates/_helpers.tpl L13-24 at chart
    v0.5.30, commit 5239609)."""
    if values.get("fullnameOverride"):
        return str(values["fullnameOverride"])[:63].rstrip("-")
    name = values.get("nameOverride") or chart
    if name in release:
        return release[:63].rstrip("-")
    return f"{release}-{name}"[:63].rstrip("-")


def _enabled(values: Mapping[str, Any], path: str, default: bool) -> bool:
    node: Any = values
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return bool(node)


_KAI = "kai-scheduler/KAI-Scheduler v0.17.0"
# The operands the KAI operator starts, in the order it reconciles them (pkg/operator/controller/
# config_controller.go L52-61, the same file at v0.16.8: no operand was added in v0.17.0):
# (Deployment name, the chart value that enables it, its chart default, the source of the
# name). The names are the operands' defaultResourceName /
# deploymentName constants; the chart's kai-config template (deployments/kai-scheduler/
# templates/_helpers.tpl) sets each operand's service.enabled from the value named. Prometheus
# (prometheus.enabled, default false: values.yaml L308-310) and the NUMA placement exporter (only
# with the numa plugin in a shard) are not started by this platform's values.
_KAI_OPERANDS = (
    (
        "pod-grouper",
        "podgrouper.enabled",
        True,
        "pkg/operator/operands/pod_grouper/resources.go L20",
    ),
    ("binder", "binder.enabled", True, "pkg/operator/operands/binder/resources.go L33"),
    (
        "queue-controller",
        "queuecontroller.enabled",
        True,
        "pkg/operator/operands/queue_controller/resources.go L28",
    ),
    (
        "podgroup-controller",
        "podgroupcontroller.enabled",
        True,
        "pkg/operator/operands/pod_group_controller/resources.go L27",
    ),
    (
        "node-scale-adjuster",
        "global.clusterAutoscaling",
        False,
        "pkg/operator/operands/node_scale_adjuster/resources.go L23; enabled by "
        "global.clusterAutoscaling (templates/_helpers.tpl L260-262, default false: "
        "values.yaml L22)",
    ),
    ("admission", "admission.enabled", True, "pkg/operator/operands/admission/resources.go L28"),
)


def _karpenter(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    return [
        Controller(
            "Deployment",
            spec["namespace"],
            helm_fullname(release, "karpenter", values),
            release,
            "aws/karpenter-provider-aws v1.15.0 charts/karpenter/templates/deployment.yaml L3-6 "
            "(karpenter.fullname)",
        )
    ]


def _kai(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    namespace = spec["namespace"]
    out = [
        Controller(
            "Deployment",
            namespace,
            "kai-operator",
            release,
            f"{_KAI} deployments/kai-scheduler/templates/services/operator.yaml L5-8",
        )
    ]
    # The operator deploys its operands into the Config's spec.namespace, the release's
    # namespace (templates/_helpers.tpl L59).
    for name, value, default, source in _KAI_OPERANDS:
        if _enabled(values, value, default):
            out.append(Controller("Deployment", namespace, name, release, f"{_KAI} {source}"))
    # One scheduler per SchedulingShard, "<schedulerName>-<shard>" (pkg/operator/operands/
    # scheduler/resources_for_shard.go L394-396); the scheduler name defaults to kai-scheduler
    # (pkg/apis/kai/v1/global.go L125, pkg/common/constants/constants.go L21); the chart makes
    # the shard "default" (templates/default-shard.yaml L4-8, defaultShard.enabled values.yaml
    # L188-189).
    if _enabled(values, "scheduler.enabled", True) and _enabled(
        values, "defaultShard.enabled", True
    ):
        out.append(
            Controller(
                "Deployment",
                namespace,
                "kai-scheduler-default",
                release,
                f"{_KAI} pkg/operator/operands/scheduler/resources_for_shard.go L394-396 "
                "(shard default, templates/default-shard.yaml L8)",
            )
        )
    return out


def _gpu_operator(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    namespace = spec["namespace"]
    out = [
        Controller(
            "Deployment",
            namespace,
            "gpu-operator",
            release,
            "NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/templates/operator.yaml L2-5",
        )
    ]
    # The node-feature-discovery subchart 0.19.0 (Chart.yaml: condition nfd.enabled, default
    # true: values.yaml L8-9), named by its fullname helper from the parent's release.
    if _enabled(values, "nfd.enabled", True):
        nfd = values.get("node-feature-discovery") or {}
        nfd_ns = nfd.get("namespaceOverride") or namespace
        base = helm_fullname(release, "node-feature-discovery", nfd)
        where = "NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/charts/node-feature-discovery"
        for kind, suffix, key, template in (
            ("Deployment", "master", "master.enable", "master.yaml L1-6"),
            ("Deployment", "gc", "gc.enable", "nfd-gc.yaml L1-6"),
            ("DaemonSet", "worker", "worker.enable", "worker.yaml L1-6"),
        ):
            if _enabled(nfd, key, True):
                out.append(
                    Controller(
                        kind, nfd_ns, f"{base}-{suffix}", release, f"{where}/templates/{template}"
                    )
                )
    return out


def _efa(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    return [
        Controller(
            "DaemonSet",
            spec["namespace"],
            helm_fullname(release, "aws-efa-k8s-device-plugin", values),
            release,
            "aws/eks-charts stable/aws-efa-k8s-device-plugin/templates/daemonset.yaml L2-4 "
            "(chart v0.5.30, commit 5239609)",
        )
    ]


_CHARTS = {
    "karpenter": _karpenter,
    "kai-scheduler": _kai,
    "gpu-operator": _gpu_operator,
    "aws-efa-k8s-device-plugin": _efa,
}


def expected_controllers(render: Render) -> list[Controller]:
    """The workloads of the controllers ``render`` deploys, in order: per Helm release (by its
    chart: Karpenter, KAI with the operands its operator starts, the GPU Operator with NFD, the
    EFA device plugin), then every Deployment and DaemonSet of ``manifests/`` (the MIG-ready
    remover where a MIG pool deploys it). Pure: plain data in, names out."""
    out: list[Controller] = []
    for chart, build in _CHARTS.items():
        for release, spec in render.helm.items():
            if spec.get("chart") == chart:
                out.extend(build(release, spec))
    for manifest in render.manifests:
        if manifest.get("kind") in ("Deployment", "DaemonSet"):
            meta = manifest["metadata"]
            out.append(
                Controller(
                    manifest["kind"],
                    meta.get("namespace", "default"),
                    meta["name"],
                    "manifests",
                    "the render's manifests/",
                )
            )
    return out
