"""EFA for multi-node training: the AWS EFA device plugin, and a reference NCCL all-reduce test.

The EKS GPU AMIs ship the EFA host software but not the device plugin; without the plugin no
pod can request ``vpc.amazonaws.com/efa``. The chart's DaemonSet tolerates nothing but
``CriticalAddonsOnly`` by default, so it would skip tainted GPU nodes: here it tolerates the
GPU and EFA taints and runs only on this stack's EFA nodes (the pool's ``<domain>/efa`` label).

``nccl_test_manifest`` renders a Kubeflow ``MPIJob`` running ``all_reduce_perf`` across two or
more nodes of an EFA pool, requesting every GPU, EFA interface and the hugepages of each node.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from . import catalog, versions
from .naming import TYPE_PREFIX
from .nodepool import (
    EFA_RESOURCE,
    GPU_RESOURCE,
    NodePool,
    NodePoolSpec,
    pool_specs,
    taint_tolerations,
)
from .spec import SpecError, derived, require_instance, required_problem, set_derived

if TYPE_CHECKING:
    from .cluster import EksCluster

NAMESPACE = "kube-system"
# NCCL, aws-ofi-nccl, libfabric/EFA and nccl-tests in one image, published by AWS (pinned).
NCCL_TESTS_IMAGE = (
    "public.ecr.aws/hpc-cloud/nccl-tests:cuda13.0.2-efa1.48.0-ofiv1.19.0-ncclv2.30.4-1-testsv2.18.3"
)
MPI_OPERATOR_VERSION = "v0.6.0"
MPIJOB_API = "kubeflow.org/v2beta1"
NCCL_ENV = {
    "FI_PROVIDER": "efa",
    "FI_EFA_USE_DEVICE_RDMA": "1",
    "FI_EFA_FORK_SAFE": "1",
    "FI_HMEM_CUDA_USE_DMABUF": "1",
    "NCCL_NET_PLUGIN": "ofi",
    "NCCL_DEBUG": "INFO",
    "NCCL_SOCKET_IFNAME": "^docker,lo,veth",
}


def device_plugin_values(
    *,
    efa_label_key: str,
    instance_types: Sequence[str],
    extra_tolerations: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """Helm values for ``aws-efa-k8s-device-plugin`` (keys exist in chart 0.5.30's defaults).

    ``extra_tolerations``: for taints the EFA pools add beyond the GPU and EFA ones.
    """
    return {
        "supportedInstanceLabels": {
            "keys": ["node.kubernetes.io/instance-type"],
            "values": sorted(set(instance_types)),
        },
        "nodeSelector": {efa_label_key: "true"},
        "tolerations": [
            {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
            {"key": EFA_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
            *(dict(t) for t in extra_tolerations),
        ],
    }


def nccl_test_manifest(
    pool: NodePoolSpec,
    *,
    instance_type: str,
    label_domain: str,
    nodes: int = 2,
    namespace: str = "default",
    image: str = NCCL_TESTS_IMAGE,
) -> dict[str, Any]:
    """An MPIJob running NCCL ``all_reduce_perf`` over ``nodes`` nodes of an EFA pool.

    Each worker takes a whole node: all its GPUs, all its EFA interfaces and the hugepages the
    node reserves. Pass criteria: the launcher log shows ``NET/OFI Selected provider is efa``
    and a bus bandwidth in line with the instance type.
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

    return {
        "apiVersion": MPIJOB_API,
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "slotsPerWorker": it.gpu_count,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 4},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [
                                {
                                    "name": "launcher",
                                    "image": image,
                                    "env": env(),
                                    "command": mpirun[:1],
                                    "args": mpirun[1:],
                                    "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
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


@dataclass(frozen=True, kw_only=True)
class EfaDevicePluginArgs:
    """Inputs of ``EfaDevicePlugin``.

    ``cluster`` (the ``EksCluster`` component) gives the Kubernetes provider, the EFA node
    label (``<labelDomain>/efa``) and the dependency on the system node group; ``node_pools``
    (``NodePool`` components or their specs) give the EFA instance types and
    ``extra_tolerations`` (every taint of the EFA pools beyond the GPU and EFA ones, which the
    plugin always tolerates). Explicit arguments win over derived ones; ``depends_on`` adds to
    them. Without them, ``efa_label_key``, ``k8s_provider`` and ``instance_types`` are required.
    """

    cluster: "EksCluster | None" = None
    node_pools: Sequence[NodePool | NodePoolSpec] = ()
    efa_label_key: str | None = derived("cluster")
    instance_types: Sequence[str] | None = derived("node_pools")
    k8s_provider: k8s.Provider | None = derived("cluster")
    extra_tolerations: Sequence[Mapping[str, str]] | None = derived("node_pools")
    depends_on: Sequence[pulumi.Resource] = ()

    def __post_init__(self) -> None:
        from .cluster import EksCluster

        problems = []
        if self.cluster is not None:
            problems += require_instance(self, "cluster", EksCluster)
        if isinstance(self.cluster, EksCluster):
            cluster = self.cluster
            if self.k8s_provider is None:
                set_derived(self, "k8s_provider", cluster.provider)
            if self.efa_label_key is None:
                set_derived(self, "efa_label_key", f"{cluster.spec.label_domain}/efa")
            after = [cluster.system_node_group]
            set_derived(
                self,
                "depends_on",
                [*after, *(d for d in self.depends_on if not any(d is a for a in after))],
            )
        pools, pool_problems = pool_specs(self)
        problems += pool_problems
        efa_pools = [p for p in pools if p.kind == "efa"]
        if self.node_pools and not pool_problems and not efa_pools:
            problems.append(
                (
                    ("node_pools",),
                    "lists no efa pool; the EFA device plugin runs on the nodes of efa pools only",
                )
            )
        if self.instance_types is None and efa_pools:
            set_derived(self, "instance_types", [t for p in efa_pools for t in p.efa_types])
        if self.extra_tolerations is None:
            set_derived(
                self,
                "extra_tolerations",
                taint_tolerations(efa_pools, (GPU_RESOURCE, EFA_RESOURCE)),
            )
        for name in ("efa_label_key", "k8s_provider"):
            if getattr(self, name) is None:
                problems.append(required_problem(name, "EksCluster", "cluster"))
        if self.instance_types is None and not self.node_pools:
            problems.append(
                (
                    ("instance_types",),
                    "is required; pass the efa NodePool components as node_pools, or set "
                    "instance_types",
                )
            )
        if problems:
            raise SpecError(type(self).__name__, problems)


class EfaDevicePlugin(pulumi.ComponentResource):
    """The AWS EFA Kubernetes device plugin, on this stack's EFA nodes only."""

    release_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: EfaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(f"{TYPE_PREFIX}EfaDevicePlugin", name, None, opts)
        chart = versions.EFA_DEVICE_PLUGIN
        release = k8s.helm.v3.Release(
            f"{name}-chart",
            name=chart.name,
            chart=chart.name,
            version=chart.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart.repository),
            namespace=NAMESPACE,
            values=device_plugin_values(
                efa_label_key=args.efa_label_key or "",
                instance_types=args.instance_types or (),
                extra_tolerations=args.extra_tolerations or (),
            ),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
            ),
        )
        self.release_name = release.name
        self.register_outputs({"release_name": self.release_name})
