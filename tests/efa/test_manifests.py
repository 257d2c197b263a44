"""Tests for ``eks_gpu_platform.efa.manifests``: the NCCL all-reduce MPIJob."""

import pytest

from eks_gpu_platform import nodepool as np
from eks_gpu_platform.efa.manifests import nccl_test_manifest
from eks_gpu_platform.spec import load_value

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}
IMAGE = (
    "public.ecr.aws/hpc-cloud/nccl-tests:cuda13.0.2-efa1.48.0-ofiv1.19.0-ncclv2.30.4-1-testsv2.18.3"
)
ENV = [
    {"name": "FI_PROVIDER", "value": "efa"},
    {"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"},
    {"name": "FI_EFA_FORK_SAFE", "value": "1"},
    {"name": "FI_HMEM_CUDA_USE_DMABUF", "value": "1"},
    {"name": "NCCL_NET_PLUGIN", "value": "ofi"},
    {"name": "NCCL_DEBUG", "value": "INFO"},
    {"name": "NCCL_SOCKET_IFNAME", "value": "^docker,lo,veth"},
]


def pool(raw: dict | None = None) -> np.NodePoolSpec:
    return load_value(
        np.NodePoolSpec,
        raw
        or {
            "name": "train",
            "kind": "efa",
            "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"],
            "zone": "us-east-1a",
        },
        "nodePools[0]",
    )


# --- NCCL test ---------------------------------------------------------------------------------


# mpi-operator v0.6.0 runs sshd and mpirun as root: Pod Security "baseline" (see manifests.py).
ROOT_POD = {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}}


def test_nccl_test_manifest_for_p5_exactly():
    resources = {
        "nvidia.com/gpu": "8",
        "vpc.amazonaws.com/efa": "32",
        "hugepages-2Mi": "5120Mi",
        "memory": "32Gi",
        "cpu": "16",
    }
    assert nccl_test_manifest(pool(), instance_type="p5.48xlarge", label_domain="example.com") == {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "nccl-allreduce-train", "namespace": "nccl-tests"},
        "spec": {
            "slotsPerWorker": 8,
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 4},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "automountServiceAccountToken": False,
                            "securityContext": ROOT_POD,
                            "containers": [
                                {
                                    "name": "launcher",
                                    "image": IMAGE,
                                    "env": ENV,
                                    "command": ["/opt/amazon/openmpi/bin/mpirun"],
                                    "args": [
                                        "--allow-run-as-root",
                                        "--tag-output",
                                        "-np",
                                        "16",
                                        "-bind-to",
                                        "none",
                                        "-map-by",
                                        "slot",
                                        "-x",
                                        "PATH",
                                        "-x",
                                        "LD_LIBRARY_PATH",
                                        "-x",
                                        "FI_PROVIDER",
                                        "-x",
                                        "FI_EFA_USE_DEVICE_RDMA",
                                        "-x",
                                        "FI_EFA_FORK_SAFE",
                                        "-x",
                                        "FI_HMEM_CUDA_USE_DMABUF",
                                        "-x",
                                        "NCCL_NET_PLUGIN",
                                        "-x",
                                        "NCCL_DEBUG",
                                        "-x",
                                        "NCCL_SOCKET_IFNAME",
                                        "--mca",
                                        "pml",
                                        "^ucx",
                                        "--mca",
                                        "btl",
                                        "tcp,self",
                                        "--mca",
                                        "btl_tcp_if_exclude",
                                        "lo,docker0,veth_def_agent",
                                        "/opt/nccl-tests/build/all_reduce_perf",
                                        "-b",
                                        "8",
                                        "-e",
                                        "8G",
                                        "-f",
                                        "2",
                                        "-g",
                                        "1",
                                        "-c",
                                        "1",
                                        "-n",
                                        "100",
                                    ],
                                    "resources": {
                                        "requests": {"cpu": "1", "memory": "2Gi"},
                                        "limits": {"memory": "2Gi"},
                                    },
                                    "securityContext": {
                                        "allowPrivilegeEscalation": False,
                                        "capabilities": {"drop": ["ALL"]},
                                        "seccompProfile": {"type": "RuntimeDefault"},
                                    },
                                }
                            ],
                        }
                    },
                },
                "Worker": {
                    "replicas": 2,
                    "template": {
                        "metadata": {"labels": {"app": "nccl-allreduce-train"}},
                        "spec": {
                            "automountServiceAccountToken": False,
                            "securityContext": ROOT_POD,
                            "nodeSelector": {
                                "example.com/pool": "train",
                                "node.kubernetes.io/instance-type": "p5.48xlarge",
                            },
                            "tolerations": [GPU_TOLERATION, EFA_TOLERATION],
                            "containers": [
                                {
                                    "name": "worker",
                                    "image": IMAGE,
                                    "env": ENV,
                                    "resources": {"requests": resources, "limits": resources},
                                    "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
                                    "securityContext": {
                                        "allowPrivilegeEscalation": False,
                                        "capabilities": {
                                            "drop": ["ALL"],
                                            "add": [
                                                "AUDIT_WRITE",
                                                "KILL",
                                                "SETGID",
                                                "SETUID",
                                                "SYS_CHROOT",
                                            ],
                                        },
                                        "seccompProfile": {"type": "RuntimeDefault"},
                                    },
                                }
                            ],
                            "volumes": [
                                {
                                    "name": "shm",
                                    "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"},
                                }
                            ],
                        },
                    },
                },
            },
        },
    }


@pytest.mark.parametrize(
    ("raw_types", "itype", "nodes", "np_", "gpus", "efas"),
    [
        (["p5en.48xlarge"], "p5en.48xlarge", 2, "16", "8", "16"),
        (["p6-b200.48xlarge"], "p6-b200.48xlarge", 4, "32", "8", "8"),
        (["p4d.24xlarge"], "p4d.24xlarge", 3, "24", "8", "4"),
    ],
    ids=["p5en-2", "p6-b200-4", "p4d-3"],
)
def test_nccl_test_sizes_follow_the_instance_type(raw_types, itype, nodes, np_, gpus, efas):
    spec = pool({"name": "t", "kind": "efa", "instanceTypes": raw_types, "zone": "us-east-1a"})
    manifest = nccl_test_manifest(
        spec, instance_type=itype, label_domain="example.com", nodes=nodes, namespace="nccl"
    )
    launcher = manifest["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]
    args = launcher["containers"][0]["args"]
    assert args[args.index("-np") + 1] == np_
    assert manifest["spec"]["slotsPerWorker"] == int(gpus)
    assert manifest["metadata"] == {"name": "nccl-allreduce-t", "namespace": "nccl"}
    assert worker["replicas"] == nodes
    requests = worker["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests["nvidia.com/gpu"] == gpus
    assert requests["vpc.amazonaws.com/efa"] == efas
    assert requests["hugepages-2Mi"] == "5120Mi"


def test_nccl_test_image_can_be_overridden():
    manifest = nccl_test_manifest(
        pool(), instance_type="p5e.48xlarge", label_domain="example.com", image="registry/nccl:1"
    )
    specs = manifest["spec"]["mpiReplicaSpecs"]
    assert specs["Launcher"]["template"]["spec"]["containers"][0]["image"] == "registry/nccl:1"
    assert specs["Worker"]["template"]["spec"]["containers"][0]["image"] == "registry/nccl:1"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"instance_type": "p5en.48xlarge"},
            "nccl_test_manifest: 'p5en.48xlarge' is not an instance type of EFA pool 'train'; "
            "expected one of p5.48xlarge, p5e.48xlarge",
        ),
        (
            {"instance_type": "g6.xlarge"},
            "nccl_test_manifest: 'g6.xlarge' is not an instance type of EFA pool 'train'; "
            "expected one of p5.48xlarge, p5e.48xlarge",
        ),
        (
            {"instance_type": "p5.48xlarge", "nodes": 1},
            "nccl_test_manifest: nodes=1; an EFA test needs at least 2 nodes",
        ),
        (
            {"instance_type": "p5.48xlarge", "nodes": 0},
            "nccl_test_manifest: nodes=0; an EFA test needs at least 2 nodes",
        ),
    ],
    ids=["other-efa-type", "type-without-efa", "one-node", "no-node"],
)
def test_nccl_test_errors(kwargs, message):
    with pytest.raises(ValueError) as err:
        nccl_test_manifest(pool(), label_domain="example.com", **kwargs)
    assert str(err.value) == message


def test_nccl_test_unknown_type_gets_the_same_message():
    with pytest.raises(ValueError) as err:
        nccl_test_manifest(pool(), instance_type="p5.96xlarge", label_domain="example.com")
    assert str(err.value) == (
        "nccl_test_manifest: 'p5.96xlarge' is not an instance type of EFA pool 'train'; "
        "expected one of p5.48xlarge, p5e.48xlarge"
    )


def test_nccl_test_on_a_gpu_pool_says_it_is_not_an_efa_pool():
    gpu_pool = pool({"name": "p", "gpus": ["h100"]})
    with pytest.raises(ValueError) as err:
        nccl_test_manifest(gpu_pool, instance_type="p5.48xlarge", label_domain="example.com")
    assert str(err.value) == (
        "nccl_test_manifest: pool 'p' is a gpu pool; the NCCL test needs an efa pool"
    )


def test_nccl_test_parts_are_independent_objects():
    manifest = nccl_test_manifest(pool(), instance_type="p5.48xlarge", label_domain="x.io")
    specs = manifest["spec"]["mpiReplicaSpecs"]
    launcher = specs["Launcher"]["template"]["spec"]["containers"][0]
    worker = specs["Worker"]["template"]["spec"]["containers"][0]
    assert launcher["env"] is not worker["env"]
    assert worker["resources"]["requests"] is not worker["resources"]["limits"]
