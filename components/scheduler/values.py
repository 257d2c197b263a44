"""Helm values for the ``kai-scheduler`` chart (pure builder: plain data in, dict out)."""

from collections.abc import Mapping, Sequence

from .constants import KAI_SHARD_LABEL_KEY
from .spec import SchedulerSpec


def kai_values(
    *,
    spec: SchedulerSpec,
    system_node_selector: Mapping[str, str],
    system_tolerations: Sequence[Mapping[str, str]],
    pool_label_key: str,
    system_namespace_labels: Mapping[str, str] | None = None,
) -> dict:
    """Helm values for the ``kai-scheduler`` chart v0.17.0 (every key exists in its defaults).

    ``global.nodePoolLabelKey`` stays unset: KAI's default shard then schedules on every node
    without ``kai.scheduler/node-pool``, which is all of them. ``pool_label_key`` (the project's
    pool label) is checked not to be that shard key, which would hide the pools' nodes.
    The published chart's ``global.registry`` is already ``ghcr.io/kai-scheduler/kai-scheduler``
    (the release workflow rewrites the repository default), so it is not set here.
    ``system_namespace_labels`` (Pod Security, ``guardrails.system_namespace_labels``) label the
    two namespaces the chart creates: the GPU reservation pods' (``global.resourceReservation.
    namespaceLabels``) and, with cluster autoscaling, the scaling pods' (``nodescaleadjuster.
    labels``); kai-scheduler v0.17.0 deployments/kai-scheduler/templates/services/
    resourcereservation-namespace.yaml L14-17 (created while ``global.resourceReservation.
    createNamespace``, new in v0.17.0 and true by default, L5) and scalingpod-namespace.yaml.

    ``global.blockNvidiaVisibleDevices`` is always on (chart default false, ``values.yaml:16``):
    the container toolkit honours ``NVIDIA_VISIBLE_DEVICES`` from unprivileged pods, so without
    it a pod can name every GPU of its node whatever KAI allocated. At v0.17.0 the chart copies
    the value into the Config CR (``deployments/kai-scheduler/templates/_helpers.tpl:247``,
    ``spec.admission.blockNvidiaVisibleDevices``); the operator then starts the admission
    webhook with ``--block-nvidia-visible-devices=true``
    (``pkg/operator/operands/admission/resources.go:405-407``), which registers the
    ``deviceaccess`` plugin (``cmd/admission/main.go:54-56``): it rejects a container setting
    ``NVIDIA_VISIBLE_DEVICES`` to anything but ``void``/``none`` (or from ``valueFrom``) and sets
    it to ``void`` on containers requesting no GPU, the GPU-fraction container exempt
    (``pkg/admission/webhook/v1alpha2/deviceaccess/device_access.go:30-78,101-108``). The
    webhook only sees pods whose ``schedulerName`` is KAI's (``resources.go:205-211``).
    """
    if pool_label_key == KAI_SHARD_LABEL_KEY:
        raise ValueError(
            f"kai_values: pool_label_key {pool_label_key!r} is KAI's scheduling-shard key; nodes "
            "carrying it without a matching SchedulingShard are invisible to the default shard; "
            "use a label in your own domain, e.g. 'example.com/pool'"
        )
    values: dict = {
        "global": {
            "gpuSharing": spec.gpu_sharing,
            "blockNvidiaVisibleDevices": True,
            "clusterAutoscaling": spec.cluster_autoscaling,
            "nodeSelector": dict(system_node_selector),
            "tolerations": [dict(t) for t in system_tolerations],
        },
        "defaultPriorityClasses": {"enabled": False},
        "defaultQueue": {"createDefaultQueue": False},
    }
    if system_namespace_labels:
        labels = dict(system_namespace_labels)
        values["global"]["resourceReservation"] = {"namespaceLabels": labels}
        if spec.cluster_autoscaling:
            values["nodescaleadjuster"] = {"labels": dict(labels)}
    return values
