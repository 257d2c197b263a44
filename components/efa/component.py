"""The ``EfaDevicePlugin`` component: ``EfaDevicePluginArgs`` (what it derives from the cluster
and the EFA node pools) and the device plugin's Helm release on this stack's EFA nodes."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from .. import versions
from ..naming import TYPE_PREFIX
from ..nodepool import (
    EFA_RESOURCE,
    GPU_RESOURCE,
    NodePool,
    NodePoolSpec,
    pool_specs,
    taint_tolerations,
)
from ..spec import (
    SpecError,
    depend_on_first,
    derive_unset,
    derived,
    missing_problems,
    require_instance,
    set_derived,
)
from .values import device_plugin_values

if TYPE_CHECKING:
    from ..cluster import EksCluster

NAMESPACE = "kube-system"


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
        from ..cluster import EksCluster

        problems = []
        if self.cluster is not None:
            problems += require_instance(self, "cluster", EksCluster)
        if isinstance(self.cluster, EksCluster):
            cluster = self.cluster
            derive_unset(
                self,
                {
                    "k8s_provider": cluster.provider,
                    "efa_label_key": f"{cluster.spec.label_domain}/efa",
                },
            )
            depend_on_first(self, [cluster.system_node_group])
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
        problems += missing_problems(
            self, ("efa_label_key", "k8s_provider"), "EksCluster", "cluster"
        )
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
