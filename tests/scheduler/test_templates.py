"""Tests for the workload template builders: ``eks_gpu_platform.scheduler.training`` (Indexed
Job, headless Service, script ConfigMap, torchrun), ``inference`` (Triton Deployment, Service,
ServiceAccount) and ``templates`` (fractional Pod).
"""

import re

import pytest
from pod_security import RESTRICTED_CONTAINER, RESTRICTED_POD

from eks_gpu_platform.scheduler.inference import MODEL_FETCH_SCRIPT
from eks_gpu_platform.scheduler.templates import (
    fractional_pod_template,
    inference_deployment_template,
    inference_service_account_template,
    inference_service_template,
    torchrun_command,
    training_job_template,
    training_script_config_map,
    training_service_template,
)

from .helpers import POOL_LABEL

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}
HOME = [{"name": "HOME", "value": "/tmp"}]


def pool_affinity(pool: str) -> dict:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": [pool]}]}
            ]
        }
    }


# --- training: Indexed Job + headless Service + torchrun c10d ----------------------------------


def test_torchrun_command_rendezvous_at_pod_0():
    assert torchrun_command(
        name="llama",
        service="llama-svc",
        namespace="research",
        nodes=4,
        gpus_per_pod=8,
        script=["train.py", "--lr=1"],
    ) == [
        "torchrun",
        "--nnodes=4",
        "--nproc-per-node=8",
        "--node-rank=$(JOB_COMPLETION_INDEX)",
        "--rdzv-id=llama",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=llama-0.llama-svc.research.svc.cluster.local:29400",
        "train.py",
        "--lr=1",
    ]


def test_training_job_template_exactly():
    job = training_job_template(
        name="llama-pretrain",
        namespace="research",
        queue="team-a",
        pool="p5-efa",
        pool_label_key=POOL_LABEL,
        replicas=4,
        gpus_per_pod=8,
        image="nvcr.io/nvidia/pytorch:25.01-py3",
        script=["train.py"],
        script_config_map="llama-script",
        efa_per_pod=32,
        hugepages_2mi="5120Mi",
        cpu="32",
        memory="1000Gi",
        shm_size="64Gi",
    )
    own = {"matchLabels": {"batch.kubernetes.io/job-name": "llama-pretrain"}}
    devices = {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "hugepages-2Mi": "5120Mi"}
    assert job == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "llama-pretrain",
            "namespace": "research",
            "labels": {"kai.scheduler/queue": "team-a"},
            "annotations": {"kai.scheduler/batch-min-member": "4"},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": 4,
            "parallelism": 4,
            "template": {
                "metadata": {"labels": {"kai.scheduler/queue": "team-a"}},
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "priorityClassName": "train",
                    "restartPolicy": "Never",
                    "subdomain": "llama-pretrain",
                    "automountServiceAccountToken": False,
                    "securityContext": RESTRICTED_POD,
                    "affinity": {
                        "nodeAffinity": pool_affinity("p5-efa"),
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": own, "topologyKey": POOL_LABEL},
                                {
                                    "labelSelector": own,
                                    "topologyKey": "topology.kubernetes.io/zone",
                                },
                                {
                                    "labelSelector": own,
                                    "topologyKey": "node.kubernetes.io/instance-type",
                                },
                            ]
                        },
                    },
                    "tolerations": [GPU_TOLERATION, EFA_TOLERATION],
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                            "command": [
                                "torchrun",
                                "--nnodes=4",
                                "--nproc-per-node=8",
                                "--node-rank=$(JOB_COMPLETION_INDEX)",
                                "--rdzv-id=llama-pretrain",
                                "--rdzv-backend=c10d",
                                "--rdzv-endpoint="
                                "llama-pretrain-0.llama-pretrain.research.svc.cluster.local:29400",
                                "train.py",
                            ],
                            "env": HOME,
                            "ports": [{"name": "rendezvous", "containerPort": 29400}],
                            "volumeMounts": [
                                {"name": "shm", "mountPath": "/dev/shm"},
                                {"name": "script", "mountPath": "/workspace", "readOnly": True},
                            ],
                            "workingDir": "/workspace",
                            "resources": {
                                "requests": {"cpu": "32", "memory": "1000Gi", **devices},
                                "limits": {"memory": "1000Gi", **devices},
                            },
                            "securityContext": RESTRICTED_CONTAINER,
                        }
                    ],
                    "volumes": [
                        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                        {"name": "script", "configMap": {"name": "llama-script"}},
                    ],
                },
            },
        },
    }


def test_training_service_is_headless_and_selects_the_jobs_pods():
    assert training_service_template(name="llama", namespace="research", queue="team-a") == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "llama",
            "namespace": "research",
            "labels": {"kai.scheduler/queue": "team-a"},
        },
        "spec": {
            "clusterIP": "None",
            "selector": {"batch.kubernetes.io/job-name": "llama"},
            "publishNotReadyAddresses": True,
            "ports": [
                {"name": "rendezvous", "port": 29400, "targetPort": 29400, "protocol": "TCP"}
            ],
        },
    }


def test_training_script_config_map():
    assert training_script_config_map(
        name="s", namespace="ns", queue="q", files={"train.py": "print(1)\n"}
    ) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "s", "namespace": "ns", "labels": {"kai.scheduler/queue": "q"}},
        "data": {"train.py": "print(1)\n"},
    }


def job(**overrides) -> dict:
    fields = {
        "name": "job",
        "namespace": "ns",
        "queue": "q",
        "pool": "gpu-spot",
        "pool_label_key": POOL_LABEL,
        "replicas": 2,
        "gpus_per_pod": 1,
        "image": "img",
        "script": ["run.py"],
        "cpu": "2",
        "memory": "8Gi",
        "shm_size": "2Gi",
    }
    return training_job_template(**{**fields, **overrides})


def test_training_job_without_script_config_map_or_efa():
    pod = job(service="rdzv")["spec"]["template"]["spec"]
    assert pod["subdomain"] == "rdzv"
    assert pod["tolerations"] == [GPU_TOLERATION]
    (trainer,) = pod["containers"]
    assert "workingDir" not in trainer
    assert trainer["command"][6] == "--rdzv-endpoint=job-0.rdzv.ns.svc.cluster.local:29400"
    assert trainer["volumeMounts"] == [{"name": "shm", "mountPath": "/dev/shm"}]
    assert pod["volumes"] == [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}]
    assert trainer["resources"] == {
        "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
        "limits": {"memory": "8Gi", "nvidia.com/gpu": "1"},
    }


def kubelet_hosts_line(pod: dict, namespace: str, index: int, ip: str) -> str:
    """The line the kubelet writes for the pod itself into its ``/etc/hosts``: kubernetes
    pkg/kubelet/kubelet_pods.go ``GeneratePodHostNameAndDomain`` (domain
    ``<subdomain>.<namespace>.svc.<clusterDomain>``) and ``managedHostsFileContent``
    (``"%s\\t%s.%s\\t%s\\n"``: ip, hostname.domain, hostname); the Job controller names an
    Indexed Job's pod ``<job>-<index>`` (https://kubernetes.io/docs/concepts/workloads/
    controllers/job/#completion-mode)."""
    hostname = f"{pod['job']}-{index}"
    domain = f"{pod['subdomain']}.{namespace}.svc.cluster.local"
    return f"{ip}\t{hostname}.{domain}\t{hostname}\n"


@pytest.mark.parametrize("service", [None, "rdzv"])
def test_rendezvous_host_is_pod_0s_canonical_name_from_its_hosts_file(service):
    # torch/distributed/elastic/rendezvous/utils.py _matches_machine_hostname: the endpoint host
    # matches without DNS when it equals gethostname()'s AI_CANONNAME, which the "files" source
    # answers with the line's canonical_hostname, its first name (hosts(5): "IP_address
    # canonical_hostname [aliases...]"): the FQDN.
    rendered = job(**({"service": service} if service else {}))
    pod = rendered["spec"]["template"]["spec"]
    (trainer,) = pod["containers"]
    endpoint = trainer["command"][6].removeprefix("--rdzv-endpoint=")
    host, port = endpoint.rsplit(":", 1)
    line = kubelet_hosts_line(
        {"job": rendered["metadata"]["name"], "subdomain": pod["subdomain"]},
        rendered["metadata"]["namespace"],
        index=0,
        ip="10.0.0.7",
    )
    canonical_name = line.split("\t")[1]
    assert host == canonical_name == f"job-0.{service or 'job'}.ns.svc.cluster.local"
    assert port == "29400"


def test_training_job_env_follows_home():
    (trainer,) = job(env={"FI_PROVIDER": "efa", "NCCL_DEBUG": "INFO"})["spec"]["template"]["spec"][
        "containers"
    ]
    assert trainer["env"] == [
        {"name": "HOME", "value": "/tmp"},
        {"name": "FI_PROVIDER", "value": "efa"},
        {"name": "NCCL_DEBUG", "value": "INFO"},
    ]
    assert job()["spec"]["template"]["spec"]["containers"][0]["env"] == HOME


@pytest.mark.parametrize(
    ("overrides", "pod_annotations"),
    [
        ({}, None),
        ({"do_not_disrupt": "4h"}, {"karpenter.sh/do-not-disrupt": "4h"}),
        ({"priority_class": "build"}, {"karpenter.sh/do-not-disrupt": "true"}),
        (
            {"priority_class": "build", "do_not_disrupt": "4h"},
            {"karpenter.sh/do-not-disrupt": "true"},
        ),
    ],
)
def test_training_job_disruption_annotations(overrides, pod_annotations):
    template = job(**overrides)["spec"]["template"]
    assert template["metadata"].get("annotations") == pod_annotations


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"replicas": 0}, "training_job_template: replicas 0 must be at least 1"),
        ({"gpus_per_pod": 0}, "training_job_template: gpus_per_pod 0 must be at least 1"),
        ({"efa_per_pod": -1}, "training_job_template: efa_per_pod -1 must not be negative"),
        ({"script": []}, "training_job_template: script is empty; name the training script"),
        (
            {"memory": "8 GB"},
            "training_job_template: memory '8 GB' is not a Kubernetes quantity (e.g. '8', "
            "'500m', '64Gi')",
        ),
        (
            {"name": "Job_1"},
            "training_job_template: name 'Job_1' is not a DNS label (1-63 lowercase letters, "
            "digits or '-', starting and ending with a letter or digit)",
        ),
        (
            {"namespace": "default_ns"},
            "training_job_template: namespace 'default_ns' is not a DNS label",
        ),
    ],
)
def test_training_job_rejects(overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        job(**overrides)


# --- inference: Triton with an S3 init container and health probes ----------------------------


MANIFEST_SHA256 = "0123456789abcdef" * 4


def test_inference_deployment_template_exactly():
    deployment = inference_deployment_template(
        name="chat",
        namespace="serving",
        queue="inference",
        pool="gpu-od",
        pool_label_key=POOL_LABEL,
        replicas=3,
        gpus_per_pod=1,
        image="nvcr.io/nvidia/tritonserver:25.01-py3",
        model_uri="s3://models/chat/",
        fetch_image="public.ecr.aws/aws-cli/aws-cli:2.32.9",
        cpu="8",
        memory="64Gi",
        model_volume_size="50Gi",
        model_manifest_sha256=MANIFEST_SHA256,
        args=["--log-verbose=1"],
    )
    probe = {"periodSeconds": 10, "failureThreshold": 3}
    assert deployment == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "chat",
            "namespace": "serving",
            "labels": {"kai.scheduler/queue": "inference"},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "chat"}},
            "template": {
                "metadata": {
                    "labels": {
                        "app.kubernetes.io/name": "chat",
                        "kai.scheduler/queue": "inference",
                    },
                    "annotations": {"karpenter.sh/do-not-disrupt": "true"},
                },
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "priorityClassName": "inference",
                    "serviceAccountName": "chat",
                    "automountServiceAccountToken": False,
                    "securityContext": RESTRICTED_POD,
                    "affinity": {"nodeAffinity": pool_affinity("gpu-od")},
                    "tolerations": [GPU_TOLERATION],
                    "initContainers": [
                        {
                            "name": "fetch-model",
                            "image": "public.ecr.aws/aws-cli/aws-cli:2.32.9",
                            # Issue 22, point 11: owner, manifest and checksums checked.
                            "command": ["/bin/sh", "-c", MODEL_FETCH_SCRIPT],
                            "env": [
                                *HOME,
                                {"name": "MODEL_URI", "value": "s3://models/chat/"},
                                {"name": "MODEL_BUCKET", "value": "models"},
                                {"name": "MODEL_MANIFEST_SHA256", "value": MANIFEST_SHA256},
                            ],
                            "volumeMounts": [{"name": "models", "mountPath": "/models"}],
                            "resources": {
                                "requests": {"cpu": "1", "memory": "1Gi"},
                                "limits": {"memory": "1Gi"},
                            },
                            "securityContext": RESTRICTED_CONTAINER,
                        }
                    ],
                    "containers": [
                        {
                            "name": "server",
                            "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                            "command": [
                                "tritonserver",
                                "--model-repository=/models",
                                "--log-verbose=1",
                            ],
                            "ports": [
                                {"name": "http", "containerPort": 8000},
                                {"name": "grpc", "containerPort": 8001},
                                {"name": "metrics", "containerPort": 8002},
                            ],
                            "volumeMounts": [
                                {"name": "models", "mountPath": "/models", "readOnly": True}
                            ],
                            "startupProbe": {
                                "httpGet": {"path": "/v2/health/ready", "port": "http"},
                                "periodSeconds": 10,
                                "failureThreshold": 60,
                            },
                            "readinessProbe": {
                                "httpGet": {"path": "/v2/health/ready", "port": "http"},
                                "periodSeconds": 5,
                                "failureThreshold": 3,
                            },
                            "livenessProbe": {
                                "httpGet": {"path": "/v2/health/live", "port": "http"},
                                **probe,
                            },
                            "resources": {
                                "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                                "limits": {"memory": "64Gi", "nvidia.com/gpu": "1"},
                            },
                            "securityContext": RESTRICTED_CONTAINER,
                        }
                    ],
                    "volumes": [{"name": "models", "emptyDir": {"sizeLimit": "50Gi"}}],
                },
            },
        },
    }


def test_inference_service_and_service_account():
    assert inference_service_template(name="chat", namespace="serving", queue="q") == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "chat",
            "namespace": "serving",
            "labels": {"kai.scheduler/queue": "q"},
        },
        "spec": {
            "selector": {"app.kubernetes.io/name": "chat"},
            "ports": [
                {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"},
                {"name": "grpc", "port": 8001, "targetPort": "grpc", "protocol": "TCP"},
                {"name": "metrics", "port": 8002, "targetPort": "metrics", "protocol": "TCP"},
            ],
        },
    }
    assert inference_service_account_template(name="chat", namespace="serving", queue="q") == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": "chat",
            "namespace": "serving",
            "labels": {"kai.scheduler/queue": "q"},
        },
        "automountServiceAccountToken": False,
    }


def serve(**overrides) -> dict:
    fields = {
        "name": "chat",
        "namespace": "serving",
        "queue": "q",
        "pool": "gpu-od",
        "pool_label_key": POOL_LABEL,
        "replicas": 1,
        "gpus_per_pod": 1,
        "image": "img",
        "model_uri": "s3://b/m/",
        "fetch_image": "aws",
        "cpu": "2",
        "memory": "8Gi",
        "model_volume_size": "20Gi",
    }
    return inference_deployment_template(**{**fields, **overrides})


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"replicas": 0}, "inference_deployment_template: replicas 0 must be at least 1"),
        ({"gpus_per_pod": 0}, "inference_deployment_template: gpus_per_pod 0 must be at least 1"),
        (
            {"model_uri": "/models"},
            "inference_deployment_template: model_uri '/models' is not an S3 URI "
            "(s3://bucket/prefix)",
        ),
        (
            {"model_volume_size": "lots"},
            "inference_deployment_template: model_volume_size 'lots' is not a Kubernetes quantity",
        ),
    ],
)
def test_inference_deployment_rejects(overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        serve(**overrides)


# --- fractional Pod -----------------------------------------------------------------------------


def test_fractional_pod_template_exactly():
    manifest = fractional_pod_template(
        name="notebook",
        namespace="dev",
        queue="team-a",
        pool="gpu-spot",
        pool_label_key=POOL_LABEL,
        image="jupyter/base",
        gpu_fraction=0.5,
        cpu="2",
        memory="4Gi",
    )
    assert manifest == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "notebook",
            "namespace": "dev",
            # app.kubernetes.io/name: what its NetworkPolicy selects (issue 22, point 6).
            "labels": {"app.kubernetes.io/name": "notebook", "kai.scheduler/queue": "team-a"},
            "annotations": {"gpu-fraction": "0.5"},
        },
        "spec": {
            "schedulerName": "kai-scheduler",
            "priorityClassName": "train",
            "automountServiceAccountToken": False,
            "securityContext": RESTRICTED_POD,
            "affinity": {"nodeAffinity": pool_affinity("gpu-spot")},
            "tolerations": [GPU_TOLERATION],
            "containers": [
                {
                    "name": "main",
                    "image": "jupyter/base",
                    "env": HOME,
                    "resources": {
                        "requests": {"cpu": "2", "memory": "4Gi"},
                        "limits": {"memory": "4Gi"},
                    },
                    "securityContext": RESTRICTED_CONTAINER,
                }
            ],
        },
    }


def test_fractional_pod_by_gpu_memory_and_non_preemptible():
    manifest = fractional_pod_template(
        name="nb",
        namespace="dev",
        queue="team-a",
        pool="gpu-spot",
        pool_label_key=POOL_LABEL,
        image="img",
        command=["sleep", "infinity"],
        gpu_memory_mib=2000,
        priority_class="build",
        cpu="1",
        memory="2Gi",
    )
    assert manifest["metadata"]["annotations"] == {
        "gpu-memory": "2000",
        "karpenter.sh/do-not-disrupt": "true",
    }
    assert manifest["spec"]["containers"][0]["command"] == ["sleep", "infinity"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "fractional_pod_template: set exactly one of gpu_fraction, gpu_memory_mib"),
        (
            {"gpu_fraction": 0.5, "gpu_memory_mib": 100},
            "fractional_pod_template: set exactly one of gpu_fraction, gpu_memory_mib",
        ),
        (
            {"gpu_fraction": 1.0},
            "fractional_pod_template: gpu_fraction 1.0 must be between 0 and 1 (exclusive); "
            "request whole GPUs with nvidia.com/gpu",
        ),
        ({"gpu_memory_mib": 0}, "fractional_pod_template: gpu_memory_mib 0 must be at least 1"),
        (
            {"gpu_fraction": 0.5, "cpu": "1 core"},
            "fractional_pod_template: cpu '1 core' is not a Kubernetes quantity",
        ),
    ],
)
def test_fractional_pod_rejects(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        fractional_pod_template(
            name="nb",
            namespace="dev",
            queue="q",
            pool="p",
            pool_label_key=POOL_LABEL,
            image="img",
            **{"cpu": "1", "memory": "1Gi", **fields},
        )
