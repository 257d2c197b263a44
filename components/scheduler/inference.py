"""Inference for KAI on one pool (pure builders, dicts out): a Triton ``apps/v1`` Deployment
whose init container copies the model repository from S3 into an ``emptyDir``, with startup,
readiness and liveness probes on Triton's health endpoints, its ClusterIP Service and the
ServiceAccount the init container's AWS credentials are bound to (EKS Pod Identity).

Health endpoints (KServe v2 protocol, served by Triton on its HTTP port 8000):
``GET /v2/health/live`` and ``GET /v2/health/ready``. Triton's own Helm chart probes them as
here, with a startup probe that gives model loading time before the liveness probe starts
(triton-inference-server/server deploy/k8s-onprem/templates/deployment.yaml; ports 8000 http,
8001 grpc, 8002 metrics). Triton answers nothing until its models are loaded, so the startup
probe allows ``STARTUP_SECONDS``.
"""

from collections.abc import Sequence

from .constants import (
    APP_LABEL,
    DEFAULT_INFERENCE_CONTAINER,
    DO_NOT_DISRUPT_ANNOTATION,
    GPU_TOLERATION,
    QUEUE_LABEL,
    SCHEDULER_NAME,
)
from .parts import check_quantities, check_workload, container, pool_node_affinity, resources
from .podsecurity import WRITABLE_HOME, restricted_pod_security_context

MODEL_DIR = "/models"
MODEL_VOLUME = "models"
MODEL_FETCH_CONTAINER = "fetch-model"
LIVE_PATH = "/v2/health/live"
READY_PATH = "/v2/health/ready"
PORTS = (("http", 8000), ("grpc", 8001), ("metrics", 8002))
PROBE_PERIOD_SECONDS = 10
STARTUP_SECONDS = 600
FETCH_CPU = "1"
FETCH_MEMORY = "1Gi"


def _probe(path: str, period: int, failures: int) -> dict:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": period,
        "failureThreshold": failures,
    }


def triton_probes() -> dict:
    """``startupProbe`` (ready, up to ``STARTUP_SECONDS``), ``readinessProbe`` (ready) and
    ``livenessProbe`` (live), as Triton's chart sets them but with a longer start-up."""
    return {
        "startupProbe": _probe(
            READY_PATH, PROBE_PERIOD_SECONDS, STARTUP_SECONDS // PROBE_PERIOD_SECONDS
        ),
        "readinessProbe": _probe(READY_PATH, 5, 3),
        "livenessProbe": _probe(LIVE_PATH, PROBE_PERIOD_SECONDS, 3),
    }


def model_fetch_container(image: str, model_uri: str) -> dict:
    """The init container: ``aws s3 sync <model_uri> /models`` (credentials from the pod's
    ServiceAccount through EKS Pod Identity, which injects its own token volume and needs no
    API token: https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html)."""
    return container(
        MODEL_FETCH_CONTAINER,
        image,
        command=["aws", "s3", "sync", model_uri, MODEL_DIR, "--only-show-errors"],
        env=[WRITABLE_HOME],
        volumeMounts=[{"name": MODEL_VOLUME, "mountPath": MODEL_DIR}],
        resources=resources(cpu=FETCH_CPU, memory=FETCH_MEMORY),
    )


def inference_service_account_template(*, name: str, namespace: str, queue: str) -> dict:
    """The ServiceAccount of the inference pods; it mounts no API token (nothing needs one)."""
    check_workload(
        "inference_service_account_template", name=name, namespace=namespace, queue=queue
    )
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "automountServiceAccountToken": False,
    }


def inference_service_template(*, name: str, namespace: str, queue: str) -> dict:
    """A ClusterIP Service on Triton's HTTP, gRPC and metrics ports (ready pods only)."""
    check_workload("inference_service_template", name=name, namespace=namespace, queue=queue)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "selector": {APP_LABEL: name},
            "ports": [
                {"name": port_name, "port": port, "targetPort": port_name, "protocol": "TCP"}
                for port_name, port in PORTS
            ],
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
    model_uri: str,
    fetch_image: str,
    cpu: str,
    memory: str,
    model_volume_size: str,
    args: Sequence[str] = (),
    priority_class: str = "inference",
) -> dict:
    """A Triton ``apps/v1`` Deployment for KAI on one pool, protected from consolidation.

    Priority ``inference`` (non-preemptible, in-quota only) and the pod annotation
    ``karpenter.sh/do-not-disrupt: "true"``; required node affinity on the pool label and the
    GPU toleration. Replicas are independent servers, not a gang, so they are not tied to one
    zone (no pod affinity), which keeps the service up when a zone fails. The init container
    syncs ``model_uri`` (``s3://bucket/prefix``) into an ``emptyDir`` of ``model_volume_size``
    mounted read-only at ``/models`` for ``tritonserver --model-repository=/models``; ``args``
    are further server flags. Pods meet Pod Security "restricted"; the ServiceAccount ``name``
    (``inference_service_account_template``) carries the S3 access.
    """
    check_workload(
        "inference_deployment_template", name=name, namespace=namespace, queue=queue, pool=pool
    )
    check_quantities(
        "inference_deployment_template",
        cpu=cpu,
        memory=memory,
        model_volume_size=model_volume_size,
    )
    if replicas < 1:
        raise ValueError(f"inference_deployment_template: replicas {replicas} must be at least 1")
    if gpus_per_pod < 1:
        raise ValueError(
            f"inference_deployment_template: gpus_per_pod {gpus_per_pod} must be at least 1"
        )
    if not model_uri.startswith("s3://"):
        raise ValueError(
            f"inference_deployment_template: model_uri {model_uri!r} is not an S3 URI "
            "(s3://bucket/prefix)"
        )
    server = container(
        DEFAULT_INFERENCE_CONTAINER,
        image,
        command=["tritonserver", f"--model-repository={MODEL_DIR}", *args],
        ports=[{"name": port_name, "containerPort": port} for port_name, port in PORTS],
        volumeMounts=[{"name": MODEL_VOLUME, "mountPath": MODEL_DIR, "readOnly": True}],
        **triton_probes(),
        resources=resources(cpu=cpu, memory=memory, gpus=gpus_per_pod),
    )
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
                    "serviceAccountName": name,
                    "automountServiceAccountToken": False,
                    "securityContext": restricted_pod_security_context(),
                    "affinity": {"nodeAffinity": pool_node_affinity(pool_label_key, pool)},
                    "tolerations": [dict(GPU_TOLERATION)],
                    "initContainers": [model_fetch_container(fetch_image, model_uri)],
                    "containers": [server],
                    "volumes": [
                        {"name": MODEL_VOLUME, "emptyDir": {"sizeLimit": model_volume_size}}
                    ],
                },
            },
        },
    }
