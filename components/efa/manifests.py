"""The reference NCCL all-reduce test: ``nccl_test_manifest`` renders a Kubeflow ``MPIJob``
running ``all_reduce_perf`` across two or more nodes of an EFA pool, and its pinned image and
environment.

Pure: plain data in, dict out.
"""

from typing import Any

from .. import catalog
from ..nodepool import EFA_RESOURCE, GPU_RESOURCE, NodePoolSpec
from ..scheduler.podsecurity import BASELINE, RUNTIME_DEFAULT_SECCOMP

# NCCL, aws-ofi-nccl, libfabric/EFA and nccl-tests in one image, published by AWS (pinned).
NCCL_TESTS_IMAGE = (
    "public.ecr.aws/hpc-cloud/nccl-tests:cuda13.0.2-efa1.48.0-ofiv1.19.0-ncclv2.30.4-1-testsv2.18.3"
)
MPI_OPERATOR_VERSION = "v0.6.0"
MPIJOB_API = "kubeflow.org/v2beta1"
# Pod Security: "baseline", not "restricted". mpi-operator v0.6.0 mounts the job's SSH keys at
# ``sshAuthMountPath``, default ``/root/.ssh`` (pkg/apis/kubeflow/v2beta1/types.go:189-192), and
# starts ``/usr/sbin/sshd -De`` in a worker that sets no command
# (pkg/controller/mpi_job_controller.go:1442-1444); the launcher's mpirun reaches the workers
# over SSH as root. sshd as root chroots and changes user for privilege separation (SYS_CHROOT,
# SETUID, SETGID), signals that unprivileged child (KILL) and writes login records (AUDIT_WRITE):
# all in the baseline level's allowed capabilities; everything else is dropped.
NCCL_NAMESPACE = "nccl-tests"
NCCL_POD_SECURITY = BASELINE
NCCL_POD_SECURITY_REASON = (
    "mpi-operator v0.6.0 runs sshd as root on the workers (keys in /root/.ssh) and mpirun as "
    "root on the launcher; sshd adds AUDIT_WRITE, KILL, SETGID, SETUID, SYS_CHROOT"
)
SSHD_CAPABILITIES = ("AUDIT_WRITE", "KILL", "SETGID", "SETUID", "SYS_CHROOT")
ROOT_UID = 0
LAUNCHER_RESOURCES = {"cpu": "1", "memory": "2Gi"}
NCCL_ENV = {
    "FI_PROVIDER": "efa",
    "FI_EFA_USE_DEVICE_RDMA": "1",
    "FI_EFA_FORK_SAFE": "1",
    "FI_HMEM_CUDA_USE_DMABUF": "1",
    "NCCL_NET_PLUGIN": "ofi",
    "NCCL_DEBUG": "INFO",
    "NCCL_SOCKET_IFNAME": "^docker,lo,veth",
}


def nccl_test_manifest(
    pool: NodePoolSpec,
    *,
    instance_type: str,
    label_domain: str,
    nodes: int = 2,
    namespace: str = NCCL_NAMESPACE,
    image: str = NCCL_TESTS_IMAGE,
) -> dict[str, Any]:
    """An MPIJob running NCCL ``all_reduce_perf`` over ``nodes`` nodes of an EFA pool.

    Each worker takes a whole node: all its GPUs, all its EFA interfaces and the hugepages the
    node reserves. Pass criteria: the launcher log shows ``NET/OFI Selected provider is efa``
    and a bus bandwidth in line with the instance type. Pods meet Pod Security "baseline" (see
    ``NCCL_POD_SECURITY_REASON``): root, no privilege escalation, the runtime's seccomp profile,
    every capability dropped but sshd's; neither pod mounts an API token.
    """
    if pool.kind != "efa":
        raise ValueError(
            f"nccl_test_manifest: pool {pool.name!r} is a {pool.kind} pool; the NCCL test needs "
            "an efa pool"
        )
    if instance_type not in pool.efa_types:
        raise ValueError(
            f"nccl_test_manifest: {instance_type!r} is not an instance type of EFA pool "
            f"{pool.name!r}; expected one of {', '.join(pool.efa_types)}"
        )
    it = catalog.INSTANCE_TYPES[instance_type]
    if nodes < 2:
        raise ValueError(f"nccl_test_manifest: nodes={nodes}; an EFA test needs at least 2 nodes")
    name = f"nccl-allreduce-{pool.name}"
    pool_label = f"{label_domain}/pool"
    resources = {
        GPU_RESOURCE: str(it.gpu_count),
        EFA_RESOURCE: str(it.efa_interfaces),
        "hugepages-2Mi": catalog.hugepages_2mi_for(instance_type),
        "memory": "32Gi",
        "cpu": "16",
    }
    mpirun = [
        "/opt/amazon/openmpi/bin/mpirun",
        "--allow-run-as-root",
        "--tag-output",
        "-np",
        str(nodes * it.gpu_count),
        "-bind-to",
        "none",
        "-map-by",
        "slot",
        "-x",
        "PATH",
        "-x",
        "LD_LIBRARY_PATH",
        *[arg for key in NCCL_ENV for arg in ("-x", key)],
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
    ]

    def env() -> list[dict[str, str]]:
        return [{"name": k, "value": v} for k, v in NCCL_ENV.items()]

    def security_context(add: tuple[str, ...] = ()) -> dict[str, Any]:
        capabilities: dict[str, list[str]] = {"drop": ["ALL"]}
        if add:
            capabilities["add"] = list(add)
        return {
            "allowPrivilegeEscalation": False,
            "capabilities": capabilities,
            "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
        }

    pod_security = {"runAsUser": ROOT_UID, "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP)}

    return {
        "apiVersion": MPIJOB_API,
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "slotsPerWorker": it.gpu_count,
            # kubeflow/mpi-operator v0.6.0 creates the launcher Job at once unless asked to wait
            # for every worker pod to be Ready (pkg/controller/mpi_job_controller.go:661-662;
            # default AtStartup, pkg/apis/kubeflow/v2beta1/default.go:71-73; field
            # types.go:194-197). The workers wait minutes for Karpenter to launch the EFA nodes,
            # and an mpirun started before them fails and restarts until backoffLimit ends the
            # run (restarts count under restartPolicy OnFailure: kubernetes v1.36.3
            # pkg/controller/job/job_controller.go:1690-1712).
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 4},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "automountServiceAccountToken": False,
                            "securityContext": dict(pod_security),
                            "containers": [
                                {
                                    "name": "launcher",
                                    "image": image,
                                    "env": env(),
                                    "command": mpirun[:1],
                                    "args": mpirun[1:],
                                    "resources": {
                                        "requests": dict(LAUNCHER_RESOURCES),
                                        "limits": {"memory": LAUNCHER_RESOURCES["memory"]},
                                    },
                                    "securityContext": security_context(),
                                }
                            ],
                        }
                    },
                },
                "Worker": {
                    "replicas": nodes,
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {
                            "automountServiceAccountToken": False,
                            "securityContext": dict(pod_security),
                            "nodeSelector": {
                                pool_label: pool.name,
                                "node.kubernetes.io/instance-type": instance_type,
                            },
                            "tolerations": [
                                {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
                                {"key": EFA_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
                                *(
                                    {"key": t.key, "operator": "Exists", "effect": t.effect}
                                    for t in pool.taints
                                ),
                            ],
                            "containers": [
                                {
                                    "name": "worker",
                                    "image": image,
                                    "env": env(),
                                    "resources": {
                                        "requests": dict(resources),
                                        "limits": dict(resources),
                                    },
                                    "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
                                    "securityContext": security_context(SSHD_CAPABILITIES),
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
