"""The ``GpuOperator`` component: ``GpuOperatorArgs`` (what it derives from the cluster and the
node pools, and what the pools need from the operator) and the namespace plus Helm release."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from .. import versions
from ..naming import TYPE_PREFIX
from ..nodepool import (
    AMI_SHIPS_NVIDIA_DRIVER,
    EFA_RESOURCE,
    NodePool,
    NodePoolSpec,
    pool_capacity,
    pool_specs,
    taint_tolerations,
)
from ..spec import (
    Problem,
    SpecError,
    depend_on_first,
    derive_unset,
    derived,
    disabled_problems,
    missing_problems,
    require_instance,
    set_derived,
    show,
)
from .mig import mig_layout
from .mig_ready import mig_ready_admission, mig_ready_daemonset, mig_ready_rbac
from .mig_replace import mig_replace_admission, mig_replace_rbac
from .spec import NAMESPACE, RELEASE_NAME, GpuOperatorSpec, mig_ready_deadline_seconds
from .values import gpu_operator_values


def mig_ready_pools(
    pools: Sequence[NodePoolSpec], spec: GpuOperatorSpec
) -> dict[str, dict[str, dict[str, int]]]:
    """Per pool with a MIG startup taint, per instance type, what its nodes advertise once the
    MIG manager has applied the layout (``pool_capacity``, the numbers of its NodeOverlays)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for pool in pools:
        if not pool.mig_startup_taint or spec.mig_strategy not in ("single", "mixed"):
            continue
        assert pool.mig_profile is not None
        layouts = {t.family: mig_layout(pool.mig_profile, t.family) for t in pool.catalog_types}
        capacity = pool_capacity(pool, mig_strategy=spec.mig_strategy, mig_layouts=layouts)
        out[pool.name] = {t.name: dict(t.advertised) for t in capacity.types}
    return out


if TYPE_CHECKING:  # cluster imports config, which imports this package
    from ..cluster import EksCluster

# Pod Security of the operator's namespace: enforce "privileged", because its operands run
# privileged with hostPath mounts (NVIDIA/gpu-operator v26.7.0 assets/state-device-plugin/
# 0500_daemonset.yaml L33, assets/state-dcgm-exporter/0800_daemonset.yaml L34,
# assets/gpu-feature-discovery/0500_daemonset.yaml L34: ``privileged: true``); audit and warn at
# "restricted", as on every namespace of the project (scheduler/podsecurity.py), so each such
# pod is recorded in the audit log and an unexpected one stands out. Unpinned versions: this
# component does not know the cluster's minor, and "privileged" has no version-dependent rules.
PRIVILEGED_NAMESPACE_LABELS = {
    "pod-security.kubernetes.io/enforce": "privileged",
    "pod-security.kubernetes.io/audit": "restricted",
    "pod-security.kubernetes.io/warn": "restricted",
}
EFA_TOLERATION = {"key": EFA_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}


@dataclass(frozen=True, kw_only=True)
class GpuOperatorArgs:
    """Inputs of ``GpuOperator``.

    ``cluster`` (the ``EksCluster`` component) gives the Kubernetes provider, the system nodes'
    selector and tolerations (the operator, NFD master and NFD garbage collector run there) and
    the dependency on the system node group. ``node_pools`` (``NodePool`` components or their
    specs) give ``gpu_tolerations`` (every taint of those pools beyond ``nvidia.com/gpu``) and
    ``drivers_preinstalled`` (every GPU pool runs an EKS NVIDIA AMI, driver and toolkit
    included), and are checked against the spec's time-slicing configurations and MIG strategy.
    Explicit arguments win over derived ones; ``depends_on`` adds to them.

    Without ``node_pools`` the operand DaemonSets tolerate ``nvidia.com/gpu`` and
    ``vpc.amazonaws.com/efa``, the taints ``NodePool`` gives GPU and EFA nodes (a pool's own
    extra taints need ``node_pools`` or ``gpu_tolerations``), and ``drivers_preinstalled`` is
    true, as it is for every AMI family a ``NodePool`` can use. Without ``cluster``,
    ``k8s_provider`` and ``system_node_selector`` are required; ``system_tolerations`` defaults
    to the system nodes' ``CriticalAddonsOnly`` taint.
    """

    spec: GpuOperatorSpec = GpuOperatorSpec()
    cluster: "EksCluster | None" = None
    node_pools: Sequence[NodePool | NodePoolSpec] = ()
    k8s_provider: k8s.Provider | None = derived("cluster")
    system_node_selector: Mapping[str, str] | None = derived("cluster")
    system_tolerations: Sequence[Mapping[str, str]] | None = derived("cluster")
    drivers_preinstalled: bool | None = derived("node_pools")
    gpu_tolerations: Sequence[Mapping[str, str]] | None = derived("node_pools")
    mig_ready: Mapping[str, Mapping[str, Mapping[str, int]]] | None = derived("node_pools")
    label_domain: str | None = derived("cluster")
    depends_on: Sequence[pulumi.Resource] = ()

    def __post_init__(self) -> None:
        from ..cluster import EksCluster, system_tolerations

        problems = require_instance(self, "spec", GpuOperatorSpec)
        if not problems:
            problems += disabled_problems(self, "GpuOperator")
        cluster = self.cluster
        if cluster is not None:
            problems += require_instance(self, "cluster", EksCluster)
        if isinstance(cluster, EksCluster):
            derive_unset(
                self,
                {
                    "k8s_provider": cluster.provider,
                    "system_node_selector": dict(cluster.system_node_selector),
                    "system_tolerations": list(cluster.system_tolerations),
                },
            )
            depend_on_first(self, [cluster.system_node_group])
            derive_unset(self, {"label_domain": cluster.spec.label_domain})
        derive_unset(self, {"system_tolerations": system_tolerations()})
        problems += missing_problems(
            self, ("k8s_provider", "system_node_selector"), "EksCluster", "cluster"
        )
        pools, pool_problems = pool_specs(self)
        problems += pool_problems
        gpu_pools = [p for p in pools if p.is_gpu]
        if self.gpu_tolerations is None:
            set_derived(
                self,
                "gpu_tolerations",
                taint_tolerations(gpu_pools) if self.node_pools else [EFA_TOLERATION],
            )
        if self.drivers_preinstalled is None:
            set_derived(
                self,
                "drivers_preinstalled",
                all(AMI_SHIPS_NVIDIA_DRIVER[p.ami.family] for p in gpu_pools),
            )
        if not problems:
            problems += self._pool_problems(pools)
        if not problems and self.mig_ready is None:
            set_derived(self, "mig_ready", mig_ready_pools(gpu_pools, self.spec))
        if self.mig_ready and self.label_domain is None:
            problems.append(
                (
                    ("label_domain",),
                    f"is required with MIG pools ({', '.join(sorted(self.mig_ready))}): the MIG "
                    "startup remover selects their nodes by <label domain>/pool; pass the "
                    "EksCluster component as cluster, or set label_domain",
                )
            )
        if problems:
            raise SpecError(type(self).__name__, problems)

    def _pool_problems(self, pools: Sequence[NodePoolSpec]) -> list[Problem]:
        """What the operator must provide for the pools: their time-slicing configurations
        and, for a MIG profile, a MIG strategy."""
        out: list[Problem] = []
        names = sorted(self.spec.time_slicing)
        for i, pool in enumerate(pools):
            if pool.time_slicing is not None and pool.time_slicing not in names:
                out.append(
                    (
                        ("node_pools", i),
                        f"pool {show(pool.name)} selects time-slicing configuration "
                        f"{show(pool.time_slicing)}, which spec.time_slicing does not define; "
                        f"expected one of {', '.join(names) or '(none defined)'}",
                    )
                )
            if pool.mig_profile is not None and self.spec.mig_strategy == "none":
                out.append(
                    (
                        ("node_pools", i),
                        f"pool {show(pool.name)} selects MIG profile {show(pool.mig_profile)}, "
                        "but spec.mig_strategy is 'none'; use single or mixed",
                    )
                )
        return out


_MIG_READY_TYPES = {
    "ServiceAccount": ("mig-ready-sa", k8s.core.v1.ServiceAccount),
    "ClusterRole": ("mig-ready-role", k8s.rbac.v1.ClusterRole),
    "ClusterRoleBinding": ("mig-ready-binding", k8s.rbac.v1.ClusterRoleBinding),
    "ValidatingAdmissionPolicy": (
        "mig-ready-policy",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicy,
    ),
    "ValidatingAdmissionPolicyBinding": (
        "mig-ready-policy-binding",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding,
    ),
}


_MIG_REPLACE_TYPES = {
    "Role": ("mig-ready-events-role", k8s.rbac.v1.Role),
    "RoleBinding": ("mig-ready-events-binding", k8s.rbac.v1.RoleBinding),
    "ValidatingAdmissionPolicy": (
        "mig-replace-policy",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicy,
    ),
    "ValidatingAdmissionPolicyBinding": (
        "mig-replace-policy-binding",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding,
    ),
}


class GpuOperator(pulumi.ComponentResource):
    """The NVIDIA GPU Operator chart in its own privileged namespace."""

    namespace: pulumi.Output[str]
    release_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(f"{TYPE_PREFIX}GpuOperator", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAMESPACE, labels=PRIVILEGED_NAMESPACE_LABELS),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
            ),
        )
        values = gpu_operator_values(
            spec=args.spec,
            drivers_preinstalled=bool(args.drivers_preinstalled),
            system_node_selector=args.system_node_selector or {},
            system_tolerations=args.system_tolerations or (),
            gpu_tolerations=args.gpu_tolerations or (),
        )
        chart = versions.GPU_OPERATOR
        self.release = k8s.helm.v3.Release(
            f"{name}-chart",
            name=RELEASE_NAME,
            chart=chart.name,
            version=chart.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart.repository),
            namespace=namespace.metadata.name,
            values=values,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.k8s_provider,
                depends_on=[namespace, *args.depends_on],
            ),
        )
        if args.mig_ready:
            self._mig_ready(name, args, namespace)
        self.namespace = namespace.metadata.name
        self.release_name = self.release.name
        self.register_outputs({"namespace": self.namespace, "release_name": self.release_name})

    def _mig_ready(self, name: str, args: GpuOperatorArgs, namespace: pulumi.Resource) -> None:
        """The MIG startup remover (``mig_ready.py``): its RBAC and admission policy (the
        binding after the policy), then its DaemonSet."""
        opts = pulumi.ResourceOptions(
            parent=self, provider=args.k8s_provider, depends_on=[namespace]
        )
        rbac: list[pulumi.Resource] = []
        pool_label_key = f"{args.label_domain}/pool"
        replace = mig_replace_rbac() + mig_replace_admission(
            pool_label_key=pool_label_key, pools=sorted(args.mig_ready or {})
        )
        for manifest, types in [
            *(
                (m, _MIG_READY_TYPES)
                for m in mig_ready_rbac()
                + mig_ready_admission(
                    pool_label_key=pool_label_key, pools=sorted(args.mig_ready or {})
                )
            ),
            *((m, _MIG_REPLACE_TYPES) for m in replace),
        ]:
            suffix, resource_type = types[manifest["kind"]]
            fields = {
                {"roleRef": "role_ref"}.get(k, k): v
                for k, v in manifest.items()
                if k not in ("apiVersion", "kind")
            }
            after = (
                pulumi.ResourceOptions(depends_on=rbac[-1:])
                if "Binding" in manifest["kind"]
                else None
            )
            rbac.append(
                resource_type(
                    f"{name}-{suffix}", **fields, opts=pulumi.ResourceOptions.merge(opts, after)
                )
            )
        daemonset = mig_ready_daemonset(
            pool_label_key=pool_label_key,
            expected=args.mig_ready or {},
            tolerations=args.gpu_tolerations or (),
            deadline_seconds=mig_ready_deadline_seconds(args.spec),
        )
        k8s.apps.v1.DaemonSet(
            f"{name}-mig-ready",
            metadata=daemonset["metadata"],
            spec=daemonset["spec"],
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=rbac)),
        )
