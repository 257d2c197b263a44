"""Workload templates for KAI on one pool (friction points 2 and 4): the fractional-GPU Pod and
the notebook Pod on one GPU slice here; the gang-scheduled training Job and its headless Service
(``training``), the inference Deployment, its Service and ServiceAccount (``inference``),
re-exported. Every pod meets Pod Security "restricted" (``podsecurity``). Pure builders, dicts
out.
"""

from collections.abc import Sequence

from .constants import (
    APP_LABEL,
    DEFAULT_FRACTIONAL_CONTAINER,
    GPU_FRACTION_ANNOTATION,
    GPU_MEMORY_ANNOTATION,
    GPU_RESOURCE,
    GPU_TOLERATION,
    QUEUE_LABEL,
    SCHEDULER_NAME,
)
from .inference import (
    inference_deployment_template,
    inference_service_account_template,
    inference_service_template,
)
from .network import (
    inference_network_policy_template,
    isolated_pod_network_policy_template,
    training_network_policy_template,
)
from .parts import (
    check_quantities,
    check_workload,
    container,
    pod_annotations,
    pool_node_affinity,
    resources,
)
from .podsecurity import WRITABLE_HOME, restricted_pod_security_context
from .training import (
    gang_node_affinity,
    gang_placement,
    torchrun_command,
    training_job_template,
    training_script_config_map,
    training_service_template,
)

__all__ = [
    "fractional_pod_template",
    "gang_node_affinity",
    "gang_placement",
    "inference_deployment_template",
    "inference_network_policy_template",
    "inference_service_account_template",
    "inference_service_template",
    "isolated_pod_network_policy_template",
    "notebook_pod_template",
    "torchrun_command",
    "training_job_template",
    "training_network_policy_template",
    "training_script_config_map",
    "training_service_template",
]


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
    cpu: str,
    memory: str,
) -> dict:
    """A ``v1`` Pod asking KAI for part of a GPU (``gpu-fraction`` or ``gpu-memory``).

    The pod requests no ``nvidia.com/gpu``, so nothing adds the GPU toleration or steers it to a
    GPU pool: both are explicit here, and KAI's scaling pods copy them so that Karpenter
    provisions the right pool (FACTS §8.2, row 2). Requires ``global.gpuSharing``. ``cpu`` and
    ``memory`` are requested (memory also as the limit); the pod meets Pod Security "restricted"
    and mounts no API token.
    """
    check_workload(
        "fractional_pod_template", name=name, namespace=namespace, queue=queue, pool=pool
    )
    check_quantities("fractional_pod_template", cpu=cpu, memory=memory)
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
    annotations.update(pod_annotations(priority_class, None))
    main = container(
        DEFAULT_FRACTIONAL_CONTAINER,
        image,
        command=command,
        env=[WRITABLE_HOME],
        resources=resources(cpu=cpu, memory=memory),
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {APP_LABEL: name, QUEUE_LABEL: queue},
            "annotations": annotations,
        },
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            "priorityClassName": priority_class,
            "automountServiceAccountToken": False,
            "securityContext": restricted_pod_security_context(),
            "affinity": {"nodeAffinity": pool_node_affinity(pool_label_key, pool)},
            "tolerations": [dict(GPU_TOLERATION)],
            "containers": [main],
        },
    }


def notebook_pod_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    image: str,
    command: Sequence[str] = (),
    resource: str = GPU_RESOURCE,
    priority_class: str = "build",
    cpu: str,
    memory: str,
) -> dict:
    """A ``v1`` Pod on one device of ``resource`` on ``pool``: one time-slicing replica or one
    MIG device under the ``single`` strategy (``nvidia.com/gpu``), or one ``nvidia.com/mig-<p>``
    device under ``mixed``; a whole GPU on a pool that is not sliced.

    The GPU toleration and the pool's node affinity are explicit, as in
    ``fractional_pod_template``. ``priority_class`` defaults to ``build``, the class KAI gives a
    notebook (``NOTEBOOK_FALLBACK_CLASS``); the pod meets Pod Security "restricted" and mounts
    no API token. Extended resources need limits equal to requests."""
    check_workload("notebook_pod_template", name=name, namespace=namespace, queue=queue, pool=pool)
    check_quantities("notebook_pod_template", cpu=cpu, memory=memory)
    main = container(
        DEFAULT_FRACTIONAL_CONTAINER,
        image,
        command=command,
        env=[WRITABLE_HOME],
        resources={
            "requests": {"cpu": cpu, "memory": memory, resource: "1"},
            "limits": {"memory": memory, resource: "1"},
        },
    )
    metadata = {
        "name": name,
        "namespace": namespace,
        "labels": {APP_LABEL: name, QUEUE_LABEL: queue},
    }
    if annotations := pod_annotations(priority_class, None):
        metadata["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            "priorityClassName": priority_class,
            "automountServiceAccountToken": False,
            "securityContext": restricted_pod_security_context(),
            "affinity": {"nodeAffinity": pool_node_affinity(pool_label_key, pool)},
            "tolerations": [dict(GPU_TOLERATION)],
            "containers": [main],
        },
    }
