"""``TenantAccess``: the tenants' access entries and the queue namespaces' GPU quotas.

Ordering (``depends_on``; the engine deletes leaves first, FACTS section 0):

- Each ``ResourceQuota`` is created after its queue namespace and through the cluster's
  Kubernetes provider; on destroy it goes before the namespace.
- Each tenant's access entry waits for the cluster (``cluster_name`` carries that dependency)
  and for every quota and namespace of its queues: a tenant gets in only once the backstop is
  there. Nothing depends on a tenant entry, so on destroy the entries (and their associations,
  children of the entry, deleted first) go before the quotas, the namespaces and the cluster:
  tenants lose access before the backstop goes.
- The Kubernetes provider never depends on a tenant entry (it waits only for the admins'
  associations: ``cluster.component``), so a tenant's entry failing or changing never makes
  the provider, or any Kubernetes object, wait or be replaced.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from ..cluster.access import CLUSTER_TAG, admin_principal_arn
from ..naming import TYPE_PREFIX
from .access import ACCESS_ENTRY_TYPE, TenantBinding, edit_policy_arn


@dataclass(frozen=True, kw_only=True)
class TenantAccessArgs:
    """``bindings``: ``access.tenant_bindings`` of the scheduler's queues; ``quotas``:
    ``quota.resource_quota_manifests``; ``namespaces``: each queue namespace's resource by name
    (the quotas and entries wait for them)."""

    cluster_name: str
    cluster: pulumi.Input[str]  # the EKS cluster's name, resolved once the control plane exists
    bindings: Sequence[TenantBinding] = ()
    quotas: Sequence[Mapping[str, Any]] = ()
    k8s_provider: k8s.Provider | None = None
    namespaces: Mapping[str, pulumi.Resource] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    # Each principal as written -> the ARN IAM answered before anything was registered (the
    # pre-flight's ``AdminAccess.principals``: a role with a path gets its path ARN, the form
    # EKS accepts, terraform-aws-modules/terraform-aws-eks#2969); others: built as written.
    principal_arns: Mapping[str, str] = field(default_factory=dict)


class TenantAccess(pulumi.ComponentResource):
    """The tenants' access entries (``entries``, each with its Edit association in
    ``associations``) and the queue namespaces' quotas (``quotas``, by namespace)."""

    principal_arns: pulumi.Output[list[str]]
    """The tenants' principal ARNs, one per access entry."""
    quota_namespaces: pulumi.Output[list[str]]
    """The queue namespaces that got a GPU ResourceQuota."""

    def __init__(
        self, name: str, args: TenantAccessArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(f"{TYPE_PREFIX}TenantAccess", name, None, opts)
        self.quotas: dict[str, k8s.core.v1.ResourceQuota] = {}
        for manifest in args.quotas:
            meta = manifest["metadata"]
            namespace = meta["namespace"]
            after = [args.namespaces[namespace]] if namespace in args.namespaces else []
            self.quotas[namespace] = k8s.core.v1.ResourceQuota(
                f"{name}-quota-{namespace}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=meta["name"], namespace=namespace),
                spec=k8s.core.v1.ResourceQuotaSpecArgs(hard=manifest["spec"]["hard"]),
                opts=pulumi.ResourceOptions(
                    parent=self, provider=args.k8s_provider, depends_on=after
                ),
            )
        self.entries: list[aws.eks.AccessEntry] = []
        self.associations: list[aws.eks.AccessPolicyAssociation] = []
        if args.bindings:
            scoped = pulumi.InvokeOutputOptions(parent=self)
            partition = aws.get_partition_output(opts=scoped).partition
            account_id = aws.get_caller_identity_output(opts=scoped).account_id
            policy_arn = partition.apply(edit_policy_arn)
            tags = {**args.tags, CLUSTER_TAG: args.cluster_name}
            for binding in args.bindings:
                self._entry(name, args, binding, partition, account_id, policy_arn, tags)
        self.principal_arns = pulumi.Output.all(*[e.principal_arn for e in self.entries])
        self.quota_namespaces = pulumi.Output.from_input(list(self.quotas))
        self.register_outputs(
            {"principal_arns": self.principal_arns, "quota_namespaces": self.quota_namespaces}
        )

    def _entry(
        self,
        name: str,
        args: TenantAccessArgs,
        binding: TenantBinding,
        partition: pulumi.Output[str],
        account_id: pulumi.Output[str],
        policy_arn: pulumi.Output[str],
        tags: Mapping[str, str],
    ) -> None:
        after: list[pulumi.Resource] = []
        for namespace in binding.namespaces:
            if namespace in args.namespaces:
                after.append(args.namespaces[namespace])
            if namespace in self.quotas:
                after.append(self.quotas[namespace])
        principal: pulumi.Input[str] = args.principal_arns.get(
            binding.principal
        ) or pulumi.Output.all(partition, account_id).apply(
            lambda a, p=binding.principal: admin_principal_arn(p, a[0], a[1])
        )
        entry = aws.eks.AccessEntry(
            f"{name}-{binding.key}",
            cluster_name=args.cluster,
            principal_arn=principal,
            type=ACCESS_ENTRY_TYPE,
            tags=dict(tags),
            opts=pulumi.ResourceOptions(parent=self, depends_on=after),
        )
        association = aws.eks.AccessPolicyAssociation(
            f"{name}-{binding.key}-edit",
            cluster_name=args.cluster,
            principal_arn=entry.principal_arn,
            policy_arn=policy_arn,
            access_scope=binding.association_scope(),
            opts=pulumi.ResourceOptions(parent=entry),
        )
        self.entries.append(entry)
        self.associations.append(association)


def tenant_access(
    name: str,
    config: Any,
    cluster: Any,
    scheduler: Any,
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
    principal_arns: Mapping[str, str] | None = None,
) -> TenantAccess | None:
    """The platform's ``TenantAccess`` (``None`` when no queue has tenants or a finite GPU
    limit): ``config`` a ``PlatformConfig``, ``cluster`` its ``EksCluster``, ``scheduler`` its
    ``KaiScheduler`` (whose queue namespaces the quotas and entries wait for);
    ``principal_arns``: the pre-flight's ARNs of the principals as written."""
    from .access import tenant_bindings
    from .quota import resource_quota_manifests

    bindings = tenant_bindings(config.scheduler.queues)
    quotas = resource_quota_manifests(config)
    if not bindings and not quotas:
        return None
    namespaces = dict(
        zip(scheduler._queue_namespace_names, scheduler.queue_namespaces, strict=True)
    )
    return TenantAccess(
        name,
        TenantAccessArgs(
            cluster_name=config.cluster.name,
            cluster=cluster.cluster_name,
            bindings=bindings,
            quotas=quotas,
            k8s_provider=cluster.provider,
            namespaces=namespaces,
            tags=tags,
            principal_arns=dict(principal_arns or {}),
        ),
        opts=opts,
    )
