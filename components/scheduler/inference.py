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

import re
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
# The model repository's checksum manifest (``sha256sum`` format), at the top of the prefix.
MODEL_MANIFEST = "SHA256SUMS"
SHA256_PATTERN = r"^[0-9a-f]{64}$"
# The init container's script (issue 22, point 11). The bucket must belong to the account whose
# role the pod runs with (``head-bucket --expected-bucket-owner``: S3 answers 403 for a bucket of
# any other account, https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucket-owner-condition.html),
# which the suggested role policy enforces on every request too (``s3:ResourceAccount``). Then
# the synced files must be exactly those of the manifest, with their checksums, and the manifest
# the one whose sha256 the Deployment names (``MODEL_MANIFEST_SHA256``, from outside the bucket):
# Triton's Python backend runs model.py from the repository, so its content is code. Anything
# else fails the init container, and Triton never starts.
MODEL_FETCH_SCRIPT = rf"""set -eu
if [ -z "${{MODEL_MANIFEST_SHA256}}" ]; then
  echo "fetch-model: MODEL_MANIFEST_SHA256 is empty;" \
    "set it to the sha256 of ${{MODEL_URI}}{MODEL_MANIFEST}" >&2
  exit 1
fi
account="$(aws sts get-caller-identity --query Account --output text)"
aws s3api head-bucket --bucket "${{MODEL_BUCKET}}" --expected-bucket-owner "${{account}}"
aws s3 sync "${{MODEL_URI}}" {MODEL_DIR} --only-show-errors
cd {MODEL_DIR}
echo "${{MODEL_MANIFEST_SHA256}}  {MODEL_MANIFEST}" | sha256sum -c --quiet -
sha256sum -c --strict --quiet {MODEL_MANIFEST}
listed="$(sed -e 's/^[0-9a-f]\{{64\}} [ *]//' -e 's|^\./||' {MODEL_MANIFEST} | sort)"
present="$(find . -type f ! -path './{MODEL_MANIFEST}' | sed -e 's|^\./||' | sort)"
if [ "${{listed}}" != "${{present}}" ]; then
  echo "fetch-model: the files under ${{MODEL_URI}} are not exactly those of {MODEL_MANIFEST}" >&2
  exit 1
fi
"""


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


def model_bucket(model_uri: str) -> str:
    """The bucket of an ``s3://bucket/prefix`` URI."""
    return model_uri.removeprefix("s3://").split("/", 1)[0]


def model_fetch_container(image: str, model_uri: str, manifest_sha256: str) -> dict:
    """The init container: ``MODEL_FETCH_SCRIPT`` (the bucket's owner checked, ``aws s3 sync
    <model_uri> /models``, then the manifest and every checksum), with credentials from the
    pod's ServiceAccount through EKS Pod Identity, which injects its own token volume and needs
    no API token: https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html)."""
    return container(
        MODEL_FETCH_CONTAINER,
        image,
        command=["/bin/sh", "-c", MODEL_FETCH_SCRIPT],
        env=[
            WRITABLE_HOME,
            {"name": "MODEL_URI", "value": model_uri},
            {"name": "MODEL_BUCKET", "value": model_bucket(model_uri)},
            {"name": "MODEL_MANIFEST_SHA256", "value": manifest_sha256},
        ],
        volumeMounts=[{"name": MODEL_VOLUME, "mountPath": MODEL_DIR}],
        resources=resources(cpu=FETCH_CPU, memory=FETCH_MEMORY),
    )


def model_read_policy(*, partition: str, model_uri: str, account_id: str) -> dict:
    """The S3 policy the inference ServiceAccount's role needs: list the prefix and read its
    objects, only in a bucket of ``account_id`` (``s3:ResourceAccount``,
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html
    #condition-keys-resourceaccount): a same-named bucket in another account is refused."""
    bucket = model_bucket(model_uri)
    prefix = model_uri.removeprefix(f"s3://{bucket}").lstrip("/")
    owner = {"StringEquals": {"s3:ResourceAccount": account_id}}
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ListTheModelPrefix",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": f"arn:{partition}:s3:::{bucket}",
                "Condition": {**owner, "StringLike": {"s3:prefix": [f"{prefix}*"]}},
            },
            {
                "Sid": "ReadTheModel",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": f"arn:{partition}:s3:::{bucket}/{prefix}*",
                "Condition": owner,
            },
        ],
    }


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
    model_manifest_sha256: str = "",
    args: Sequence[str] = (),
    priority_class: str = "inference",
) -> dict:
    """A Triton ``apps/v1`` Deployment for KAI on one pool, protected from consolidation.

    Priority ``inference`` (non-preemptible, in-quota only) and the pod annotation
    ``karpenter.sh/do-not-disrupt: "true"``; required node affinity on the pool label and the
    GPU toleration. Replicas are independent servers, not a gang, so they are not tied to one
    zone (no pod affinity), which keeps the service up when a zone fails. The init container
    syncs ``model_uri`` (``s3://bucket/prefix``) into an ``emptyDir`` of ``model_volume_size``
    mounted read-only at ``/models`` for ``tritonserver --model-repository=/models``, once the
    bucket's owner, ``model_manifest_sha256`` (the sha256 of the prefix's ``SHA256SUMS``; empty,
    the init container fails and says so) and every checksum are checked; ``args`` are further
    server flags. Pods meet Pod Security "restricted"; the ServiceAccount ``name``
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
    if model_manifest_sha256 and not re.fullmatch(SHA256_PATTERN, model_manifest_sha256):
        raise ValueError(
            f"inference_deployment_template: model_manifest_sha256 {model_manifest_sha256!r} is "
            "not a sha256 (64 lower-case hex digits)"
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
                    "initContainers": [
                        model_fetch_container(fetch_image, model_uri, model_manifest_sha256)
                    ],
                    "containers": [server],
                    "volumes": [
                        {"name": MODEL_VOLUME, "emptyDir": {"sizeLimit": model_volume_size}}
                    ],
                },
            },
        },
    }
