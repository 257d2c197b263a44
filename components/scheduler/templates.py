"""Workload templates for KAI on one pool (friction points 2 and 4): a gang-scheduled training
Job, an inference Deployment and a fractional-GPU Pod (pure builders, dicts out).
"""

import re
from collections.abc import Sequence

from .constants import (
    APP_LABEL,
    BATCH_MIN_MEMBER_ANNOTATION,
    DEFAULT_FRACTIONAL_CONTAINER,
    DEFAULT_INFERENCE_CONTAINER,
    DEFAULT_TRAINING_CONTAINER,
    DNS_LABEL,
    DNS_LABEL_TEXT,
    DO_NOT_DISRUPT_ANNOTATION,
    EFA_RESOURCE,
    EFA_TOLERATION,
    GPU_FRACTION_ANNOTATION,
    GPU_MEMORY_ANNOTATION,
    GPU_RESOURCE,
    GPU_TOLERATION,
    HUGEPAGES_2MI_RESOURCE,
    JOB_NAME_LABEL,
    NON_PREEMPTIBLE_CLASSES,
    QUEUE_LABEL,
    SCHEDULER_NAME,
    ZONE_LABEL,
)


def _pool_node_affinity(pool_label_key: str, pool: str) -> dict:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": pool_label_key, "operator": "In", "values": [pool]}]}
            ]
        }
    }


def _pod_annotations(priority_class: str, do_not_disrupt: str | None) -> dict[str, str]:
    if priority_class in NON_PREEMPTIBLE_CLASSES:
        return {DO_NOT_DISRUPT_ANNOTATION: "true"}
    if do_not_disrupt is not None:
        return {DO_NOT_DISRUPT_ANNOTATION: do_not_disrupt}
    return {}


def _resources(
    gpus: int, efa: int, hugepages_2mi: str | None, cpu: str | None, memory: str | None
) -> dict:
    amounts: dict[str, str] = {}
    if cpu is not None:
        amounts["cpu"] = cpu
    if memory is not None:
        amounts["memory"] = memory
    if gpus:
        amounts[GPU_RESOURCE] = str(gpus)
    if efa:
        amounts[EFA_RESOURCE] = str(efa)
    if hugepages_2mi is not None:
        amounts[HUGEPAGES_2MI_RESOURCE] = hugepages_2mi
    return {"requests": amounts, "limits": dict(amounts)}


def _check_workload(function: str, name: str, queue: str, pool: str) -> None:
    for what, value in (("name", name), ("queue", queue), ("pool", pool)):
        if not re.fullmatch(DNS_LABEL, value):
            raise ValueError(f"{function}: {what} {value!r} is not a DNS label ({DNS_LABEL_TEXT})")


def training_job_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    replicas: int,
    gpus_per_pod: int,
    image: str,
    command: Sequence[str],
    priority_class: str = "train",
    efa_per_pod: int = 0,
    hugepages_2mi: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    do_not_disrupt: str | None = None,
) -> dict:
    """A gang-scheduled multi-pod training ``batch/v1`` Job (Indexed) for KAI on one pool.

    KAI gangs it (``kai.scheduler/batch-min-member`` = replicas on the Job); required node
    affinity on the pool label keeps it in one pool; required pod affinity on the pool label and
    on the zone, selecting the Job's own pods (``batch.kubernetes.io/job-name``, set by the Job
    controller), keeps every pod in the same pool and AZ, which Karpenter honours even while the
    pool has no nodes. Non-preemptible classes get ``karpenter.sh/do-not-disrupt: "true"``;
    ``do_not_disrupt`` (e.g. ``"4h"``) protects a preemptible job for a while. Hugepages need
    a ``cpu`` or ``memory`` request (Kubernetes rejects hugepages alone).
    """
    _check_workload("training_job_template", name, queue, pool)
    if replicas < 1:
        raise ValueError(f"training_job_template: replicas {replicas} must be at least 1")
    if gpus_per_pod < 1:
        raise ValueError(f"training_job_template: gpus_per_pod {gpus_per_pod} must be at least 1")
    if efa_per_pod < 0:
        raise ValueError(f"training_job_template: efa_per_pod {efa_per_pod} must not be negative")
    if hugepages_2mi is not None and cpu is None and memory is None:
        raise ValueError(
            f"training_job_template: hugepages_2mi {hugepages_2mi!r} needs a cpu or memory "
            "request as well"
        )
    own_pods = {"matchLabels": {JOB_NAME_LABEL: name}}
    tolerations = [dict(GPU_TOLERATION)]
    if efa_per_pod:
        tolerations.append(dict(EFA_TOLERATION))
    pod_metadata: dict = {"labels": {QUEUE_LABEL: queue}}
    if annotations := _pod_annotations(priority_class, do_not_disrupt):
        pod_metadata["annotations"] = annotations
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue},
            "annotations": {BATCH_MIN_MEMBER_ANNOTATION: str(replicas)},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": replicas,
            "parallelism": replicas,
            "template": {
                "metadata": pod_metadata,
                "spec": {
                    "schedulerName": SCHEDULER_NAME,
                    "priorityClassName": priority_class,
                    "restartPolicy": "Never",
                    "affinity": {
                        "nodeAffinity": _pool_node_affinity(pool_label_key, pool),
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": own_pods, "topologyKey": pool_label_key},
                                {"labelSelector": own_pods, "topologyKey": ZONE_LABEL},
                            ]
                        },
                    },
                    "tolerations": tolerations,
                    "containers": [
                        {
                            "name": DEFAULT_TRAINING_CONTAINER,
                            "image": image,
                            "command": list(command),
                            "resources": _resources(
                                gpus_per_pod, efa_per_pod, hugepages_2mi, cpu, memory
                            ),
                        }
                    ],
                },
            },
        },
    }


def inference_deployment_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    replicas: int,
    gpus_per_pod: int,
    image: str,
    command: Sequence[str] = (),
    cpu: str | None = None,
    memory: str | None = None,
    priority_class: str = "inference",
) -> dict:
    """An inference ``apps/v1`` Deployment for KAI on one pool, protected from consolidation.

    Priority ``inference`` (non-preemptible, in-quota only) and the pod annotation
    ``karpenter.sh/do-not-disrupt: "true"``; required node affinity on the pool label and the
    GPU toleration. Replicas are independent servers, not a gang, so they are not tied to one
    zone (no pod affinity), which keeps the service up when a zone fails.
    """
    _check_workload("inference_deployment_template", name, queue, pool)
    if replicas < 1:
        raise ValueError(f"inference_deployment_template: replicas {replicas} must be at least 1")
    if gpus_per_pod < 1:
        raise ValueError(
            f"inference_deployment_template: gpus_per_pod {gpus_per_pod} must be at least 1"
        )
    container: dict = {"name": DEFAULT_INFERENCE_CONTAINER, "image": image}
    if command:
        container["command"] = list(command)
    container["resources"] = _resources(gpus_per_pod, 0, None, cpu, memory)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {APP_LABEL: name}},
            "template": {
                "metadata": {
                    "labels": {APP_LABEL: name, QUEUE_LABEL: queue},
                    "annotations": {DO_NOT_DISRUPT_ANNOTATION: "true"},
                },
                "spec": {
                    "schedulerName": SCHEDULER_NAME,
                    "priorityClassName": priority_class,
                    "affinity": {"nodeAffinity": _pool_node_affinity(pool_label_key, pool)},
                    "tolerations": [dict(GPU_TOLERATION)],
                    "containers": [container],
                },
            },
        },
    }


def fractional_pod_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    image: str,
    command: Sequence[str] = (),
    gpu_fraction: float | None = None,
    gpu_memory_mib: int | None = None,
    priority_class: str = "train",
    cpu: str | None = None,
    memory: str | None = None,
) -> dict:
    """A ``v1`` Pod asking KAI for part of a GPU (``gpu-fraction`` or ``gpu-memory``).

    The pod requests no ``nvidia.com/gpu``, so nothing adds the GPU toleration or steers it to a
    GPU pool: both are explicit here, and KAI's scaling pods copy them so that Karpenter
    provisions the right pool (FACTS §8.2, row 2). Requires ``global.gpuSharing``.
    """
    _check_workload("fractional_pod_template", name, queue, pool)
    if (gpu_fraction is None) == (gpu_memory_mib is None):
        raise ValueError("fractional_pod_template: set exactly one of gpu_fraction, gpu_memory_mib")
    if gpu_fraction is not None and not 0 < gpu_fraction < 1:
        raise ValueError(
            f"fractional_pod_template: gpu_fraction {gpu_fraction} must be between 0 and 1 "
            "(exclusive); request whole GPUs with nvidia.com/gpu"
        )
    if gpu_memory_mib is not None and gpu_memory_mib < 1:
        raise ValueError(
            f"fractional_pod_template: gpu_memory_mib {gpu_memory_mib} must be at least 1"
        )
    annotations = (
        {GPU_FRACTION_ANNOTATION: str(gpu_fraction)}
        if gpu_fraction is not None
        else {GPU_MEMORY_ANNOTATION: str(gpu_memory_mib)}
    )
    annotations.update(_pod_annotations(priority_class, None))
    container: dict = {"name": DEFAULT_FRACTIONAL_CONTAINER, "image": image}
    if command:
        container["command"] = list(command)
    if cpu is not None or memory is not None:
        container["resources"] = _resources(0, 0, None, cpu, memory)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue},
            "annotations": annotations,
        },
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            "priorityClassName": priority_class,
            "affinity": {"nodeAffinity": _pool_node_affinity(pool_label_key, pool)},
            "tolerations": [dict(GPU_TOLERATION)],
            "containers": [container],
        },
    }
