"""Tests for ``eks_gpu_platform.scheduler.templates``: training, inference and fractional
workload templates.
"""

import re

import pytest

from eks_gpu_platform.scheduler.templates import (
    fractional_pod_template,
    inference_deployment_template,
    training_job_template,
)

from .helpers import POOL_LABEL

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}


# --- friction points 2 and 4: workload templates -------------------------------------------------


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
        command=["torchrun", "train.py"],
        efa_per_pod=32,
        hugepages_2mi="5120Mi",
        memory="1000Gi",
    )
    own = {"matchLabels": {"batch.kubernetes.io/job-name": "llama-pretrain"}}
    resources = {
        "memory": "1000Gi",
        "nvidia.com/gpu": "8",
        "vpc.amazonaws.com/efa": "32",
        "hugepages-2Mi": "5120Mi",
    }
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
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": POOL_LABEL,
                                                "operator": "In",
                                                "values": ["p5-efa"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        },
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": own, "topologyKey": POOL_LABEL},
                                {
                                    "labelSelector": own,
                                    "topologyKey": "topology.kubernetes.io/zone",
                                },
                            ]
                        },
                    },
                    "tolerations": [GPU_TOLERATION, EFA_TOLERATION],
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                            "command": ["torchrun", "train.py"],
                            "resources": {"requests": resources, "limits": resources},
                        }
                    ],
                },
            },
        },
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
        "command": ["run"],
    }
    return training_job_template(**{**fields, **overrides})


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
    assert template["spec"]["tolerations"] == [GPU_TOLERATION]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"replicas": 0}, "training_job_template: replicas 0 must be at least 1"),
        ({"gpus_per_pod": 0}, "training_job_template: gpus_per_pod 0 must be at least 1"),
        ({"efa_per_pod": -1}, "training_job_template: efa_per_pod -1 must not be negative"),
        (
            {"hugepages_2mi": "1Gi"},
            "training_job_template: hugepages_2mi '1Gi' needs a cpu or memory request as well",
        ),
        (
            {"name": "Job_1"},
            "training_job_template: name 'Job_1' is not a DNS label (1-63 lowercase letters, "
            "digits or '-', starting and ending with a letter or digit)",
        ),
    ],
)
def test_training_job_rejects(overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        job(**overrides)


def test_inference_deployment_template_exactly():
    deployment = inference_deployment_template(
        name="chat",
        namespace="serving",
        queue="inference",
        pool="gpu-od",
        pool_label_key=POOL_LABEL,
        replicas=3,
        gpus_per_pod=1,
        image="vllm/vllm-openai:v0.9.0",
        cpu="8",
        memory="64Gi",
    )
    resources = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}
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
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": POOL_LABEL,
                                                "operator": "In",
                                                "values": ["gpu-od"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": [GPU_TOLERATION],
                    "containers": [
                        {
                            "name": "server",
                            "image": "vllm/vllm-openai:v0.9.0",
                            "resources": {"requests": resources, "limits": resources},
                        }
                    ],
                },
            },
        },
    }


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
    )
    assert manifest == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "notebook",
            "namespace": "dev",
            "labels": {"kai.scheduler/queue": "team-a"},
            "annotations": {"gpu-fraction": "0.5"},
        },
        "spec": {
            "schedulerName": "kai-scheduler",
            "priorityClassName": "train",
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": POOL_LABEL, "operator": "In", "values": ["gpu-spot"]}
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [GPU_TOLERATION],
            "containers": [
                {
                    "name": "main",
                    "image": "jupyter/base",
                    "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}},
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
    )
    assert manifest["metadata"]["annotations"] == {
        "gpu-memory": "2000",
        "karpenter.sh/do-not-disrupt": "true",
    }
    assert manifest["spec"]["containers"] == [
        {"name": "main", "image": "img", "command": ["sleep", "infinity"]}
    ]


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
            **fields,
        )
