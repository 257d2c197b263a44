"""The ``KaiScheduler`` component: the chart, its priority classes and queues, and the
do-not-disrupt admission policy, registered from the pure builders.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from .. import versions
from ..naming import TYPE_PREFIX
from ..spec import (
    SpecError,
    depend_on_first,
    derive_unset,
    derived,
    disabled_problems,
    missing_problems,
    require_instance,
)
from .constants import NAMESPACE, RELEASE_NAME
from .disruption_policies import disruption_admission_policy
from .guardrails import (
    KAI_NAMESPACE_LEVEL,
    KAI_WORKLOAD_NAMESPACE_LEVEL,
    system_namespace_labels,
    tenant_toleration_policy,
)
from .manifests import (
    priority_class_manifests,
    queue_manifest,
    queue_namespace_manifests,
    queues_parents_first,
)
from .network import queue_network_policies
from .spec import SchedulerSpec
from .tenancy import PoolAccess, QueueTenancy, queue_tenancy
from .tenancy_policies import tenancy_policies
from .values import kai_values

if TYPE_CHECKING:  # cluster and gpu_operator import config, which imports this module
    from ..cluster import EksCluster
    from ..gpu_operator import GpuOperator


@dataclass(frozen=True, kw_only=True)
class KaiSchedulerArgs:
    """Inputs of ``KaiScheduler``.

    ``cluster`` (the ``EksCluster`` component) gives the Kubernetes provider, the Kubernetes
    version (it picks the admission policy kind: mutating from 1.36), the project's pool label
    (``<labelDomain>/pool``, checked against KAI's shard key), the system nodes' selector and
    tolerations, and the dependency on the system node group. ``gpu_operator`` (the
    ``GpuOperator`` component) is what KAI needs first: RuntimeClass ``nvidia`` and the GPU
    feature discovery labels. Explicit arguments win over derived ones; ``depends_on`` adds to
    them. Without ``cluster``, ``k8s_provider``, ``kubernetes_version``, ``pool_label_key`` and
    ``system_node_selector`` are required; without ``gpu_operator``, ``depends_on`` must list
    it. ``disruption_policy`` switches the do-not-disrupt admission policy;
    ``tenant_guardrails`` the tenant toleration policy (``guardrails.tenant_toleration_policy``,
    on the taints of ``system_tolerations``), every queue namespace's default-deny and DNS
    NetworkPolicies (``network.queue_network_policies``) and the tenancy policies
    (``tenancy_policies.tenancy_policies``) on ``tenant_queues`` (default: from ``spec``, every
    queue with KAI's classes for no workload kind) and ``tenant_pools`` (the pools and the
    queues routed to them; none: no pool rule refuses anything).
    """

    spec: SchedulerSpec
    cluster: "EksCluster | None" = None
    gpu_operator: "GpuOperator | None" = None
    k8s_provider: k8s.Provider | None = derived("cluster")
    kubernetes_version: str | None = derived("cluster")
    pool_label_key: str | None = derived("cluster")
    system_node_selector: Mapping[str, str] | None = derived("cluster")
    system_tolerations: Sequence[Mapping[str, str]] | None = derived("cluster")
    disruption_policy: bool = True
    tenant_guardrails: bool = True
    tenant_queues: Sequence[QueueTenancy] | None = None
    tenant_pools: Sequence[PoolAccess] = ()
    depends_on: Sequence[pulumi.Resource] = ()

    def __post_init__(self) -> None:
        from ..cluster import EksCluster, system_tolerations
        from ..gpu_operator import GpuOperator

        problems = require_instance(self, "spec", SchedulerSpec)
        if not problems:
            problems += disabled_problems(self, "KaiScheduler")
        after: list[pulumi.Resource] = []
        if self.cluster is not None:
            problems += require_instance(self, "cluster", EksCluster)
        if isinstance(self.cluster, EksCluster):
            cluster = self.cluster
            derive_unset(
                self,
                {
                    "k8s_provider": cluster.provider,
                    "kubernetes_version": cluster.spec.kubernetes_version,
                    "pool_label_key": f"{cluster.spec.label_domain}/pool",
                    "system_node_selector": dict(cluster.system_node_selector),
                    "system_tolerations": list(cluster.system_tolerations),
                },
            )
            after.append(cluster.system_node_group)
        if self.gpu_operator is not None:
            problems += require_instance(self, "gpu_operator", GpuOperator)
            after.append(self.gpu_operator)
        elif not self.depends_on:
            problems.append(
                (
                    ("gpu_operator",),
                    "is required; KAI needs the GPU Operator (RuntimeClass nvidia, GPU feature "
                    "discovery labels): pass the GpuOperator component, or list it in depends_on",
                )
            )
        depend_on_first(self, after)
        derive_unset(self, {"system_tolerations": system_tolerations()})
        if self.tenant_guardrails and not any(t.get("key") for t in self.system_tolerations or ()):
            # guardrails.tenant_toleration_policy denies the keys of these tolerations: with
            # none it has nothing to deny (and refuses to build).
            problems.append(
                (
                    ("system_tolerations",),
                    "names no taint key; tenant_guardrails denies tenant pods the system nodes' "
                    "taint keys taken from it (the system node group's: "
                    "[{'key': 'CriticalAddonsOnly', 'operator': 'Exists', 'effect': "
                    "'NoSchedule'}]): list them, or set tenant_guardrails=False",
                )
            )
        problems += missing_problems(
            self,
            ("k8s_provider", "kubernetes_version", "pool_label_key", "system_node_selector"),
            "EksCluster",
            "cluster",
        )
        if problems:
            raise SpecError(type(self).__name__, problems)


_ADMISSION_TYPES = {
    "MutatingAdmissionPolicy": (
        "disruption-policy",
        k8s.admissionregistration.v1.MutatingAdmissionPolicy,
    ),
    "MutatingAdmissionPolicyBinding": (
        "disruption-policy-binding",
        k8s.admissionregistration.v1.MutatingAdmissionPolicyBinding,
    ),
    "ValidatingAdmissionPolicy": (
        "disruption-policy",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicy,
    ),
    "ValidatingAdmissionPolicyBinding": (
        "disruption-policy-binding",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding,
    ),
}


class KaiScheduler(pulumi.ComponentResource):
    """KAI Scheduler chart, its priority classes, queues and queue namespaces, and the
    do-not-disrupt policies."""

    namespace: pulumi.Output[str]
    release_name: pulumi.Output[str]
    queue_names: pulumi.Output[list]

    def __init__(
        self, name: str, args: KaiSchedulerArgs, opts: pulumi.ResourceOptions | None = None
    ):
        spec = args.spec
        pool_label_key = args.pool_label_key or ""
        kubernetes_version = args.kubernetes_version or ""
        values = kai_values(
            spec=spec,
            system_node_selector=args.system_node_selector or {},
            system_tolerations=args.system_tolerations or (),
            pool_label_key=pool_label_key,
            system_namespace_labels=system_namespace_labels(
                KAI_WORKLOAD_NAMESPACE_LEVEL, kubernetes_version
            ),
        )
        label_domain = pool_label_key.rsplit("/", 1)[0]
        admission = (
            disruption_admission_policy(
                kubernetes_version=args.kubernetes_version or "",
                label_domain=label_domain,
                extra_priority_classes=spec.priority_classes,
            )
            if args.disruption_policy
            else []
        )
        queue_namespaces = queue_namespace_manifests(
            spec.queues,
            label_domain=label_domain,
            kubernetes_version=args.kubernetes_version or "",
        )
        super().__init__(f"{TYPE_PREFIX}KaiScheduler", name, None, opts)
        provider = args.k8s_provider
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=NAMESPACE,
                labels=system_namespace_labels(KAI_NAMESPACE_LEVEL, kubernetes_version),
            ),
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=list(args.depends_on)
            ),
        )
        chart = versions.KAI_SCHEDULER
        self.release = k8s.helm.v3.Release(
            f"{name}-chart",
            name=RELEASE_NAME,
            chart=chart.reference,
            version=chart.version,
            namespace=namespace.metadata.name,
            values=values,
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[namespace, *args.depends_on]
            ),
        )
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        for manifest in priority_class_manifests():
            class_name = manifest["metadata"]["name"]
            k8s.scheduling.v1.PriorityClass(
                f"{name}-priority-{class_name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=class_name),
                value=manifest["value"],
                opts=child,
            )
        # The queues' namespaces: created before anything is deployed into them (they need
        # only the cluster); the admission bindings select them by label.
        self._queue_namespace_names = [m["metadata"]["name"] for m in queue_namespaces]
        self.queue_namespaces = [
            k8s.core.v1.Namespace(
                f"{name}-queue-namespace-{manifest['metadata']['name']}",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=manifest["metadata"]["name"], labels=manifest["metadata"]["labels"]
                ),
                opts=pulumi.ResourceOptions(
                    parent=self, provider=provider, depends_on=list(args.depends_on)
                ),
            )
            for manifest in queue_namespaces
        ]
        if args.tenant_guardrails:
            self._tenant_guardrails(name, args, label_domain, provider)
            self._tenancy(name, args, label_domain, provider)
        created: dict[str, k8s.apiextensions.CustomResource] = {}
        for queue in queues_parents_first(spec.queues):
            manifest = queue_manifest(queue, label_domain=label_domain)
            after: list[pulumi.Resource] = [self.release]
            if queue.parent in created:
                after.append(created[queue.parent])
            created[queue.name] = k8s.apiextensions.CustomResource(
                f"{name}-queue-{queue.name}",
                api_version=manifest["apiVersion"],
                kind=manifest["kind"],
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=after),
            )
        previous: list[pulumi.Resource] = []
        for manifest in admission:
            suffix, resource_type = _ADMISSION_TYPES[manifest["kind"]]
            for kind in ("workloads", "cronjobs", "mpijobs"):
                if manifest["metadata"]["name"].endswith(f"-{kind}"):
                    suffix = suffix.replace("policy", f"policy-{kind}", 1)
            previous = [
                resource_type(
                    f"{name}-{suffix}",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=manifest["metadata"]["name"]),
                    spec=manifest["spec"],
                    opts=pulumi.ResourceOptions(
                        parent=self, provider=provider, depends_on=previous
                    ),
                )
            ]
        self.namespace = namespace.metadata.name
        self.release_name = self.release.name
        self.queue_names = pulumi.Output.from_input([q.name for q in spec.queues])
        self.register_outputs(
            {
                "namespace": self.namespace,
                "release_name": self.release_name,
                "queue_names": self.queue_names,
            }
        )

    def _tenant_guardrails(
        self, name: str, args: KaiSchedulerArgs, label_domain: str, provider
    ) -> None:
        """The tenant toleration policy and its binding, and each queue namespace's
        default-deny and DNS NetworkPolicies (created after their namespace)."""
        taint_keys = list(dict.fromkeys(t["key"] for t in args.system_tolerations or ()))
        policy, binding = tenant_toleration_policy(
            label_domain=label_domain, system_taint_keys=taint_keys
        )
        created = k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
            f"{name}-tenant-tolerations-policy",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=policy["metadata"]["name"]),
            spec=policy["spec"],
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
            f"{name}-tenant-tolerations-binding",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=binding["metadata"]["name"]),
            spec=binding["spec"],
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[created]),
        )
        namespaces = dict(zip(self._queue_namespace_names, self.queue_namespaces, strict=True))
        for manifest in queue_network_policies(list(namespaces)):
            namespace = manifest["metadata"]["namespace"]
            k8s.networking.v1.NetworkPolicy(
                f"{name}-netpol-{namespace}-{manifest['metadata']['name']}",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=manifest["metadata"]["name"], namespace=namespace
                ),
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(
                    parent=self, provider=provider, depends_on=[namespaces[namespace]]
                ),
            )

    def _tenancy(self, name: str, args: KaiSchedulerArgs, label_domain: str, provider) -> None:
        """The tenancy policies and bindings (issue 29), each binding after its policy."""
        spec = args.spec
        queues = args.tenant_queues
        if queues is None:
            queues = queue_tenancy(spec.queues, {}, {}, spec.priority_classes)
        policy: pulumi.Resource | None = None
        for manifest in tenancy_policies(
            kubernetes_version=args.kubernetes_version or "",
            label_domain=label_domain,
            queues=queues,
            pools=args.tenant_pools,
            extra_priority_classes=spec.priority_classes,
        ):
            kind = manifest["kind"]
            resource_type = getattr(k8s.admissionregistration.v1, kind)
            suffix = "binding" if kind.endswith("Binding") else "policy"
            created = resource_type(
                f"{name}-{manifest['metadata']['name']}-{suffix}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=manifest["metadata"]["name"]),
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(
                    parent=self,
                    provider=provider,
                    depends_on=[policy] if suffix == "binding" and policy else [],
                ),
            )
            if suffix == "policy":
                policy = created
