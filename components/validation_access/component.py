"""``ValidationAccess``: the validation run's ClusterRole, its binding to the group, and the
validation principal's EKS access entry in that group.

- The entry is type ``STANDARD`` with ``kubernetesGroups: [GROUP]`` and no access policy
  association: EKS puts the principal in those Kubernetes groups, and what they may do is what
  RBAC binds to them (https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html;
  CreateAccessEntry: "Kubernetes RBAC authorization requires you to create and manage
  Kubernetes Role, ClusterRole, RoleBinding, and ClusterRoleBinding objects", and
  ``kubernetesGroups`` is "The value for name that you've specified for kind: Group as a
  subject in a Kubernetes RoleBinding or ClusterRoleBinding object",
  https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html). So the run
  can do what ``validate.rbac.cluster_role`` lists and nothing else.
- Ordering (``depends_on``; the engine deletes dependents first, FACTS section 0): the binding
  after the role, the entry after the binding; nothing depends on the entry, so ``pulumi
  destroy`` removes the principal's access before its binding and role.
- The ClusterRole's rules: ``validate.rbac.cluster_role`` of the kinds the stack renders
  (``kinds.platform_kinds``), derived from the config, never read from ``build/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from ..cluster.access import CLUSTER_TAG, admin_principal_arn
from ..naming import TYPE_PREFIX
from ..validate.rbac import GROUP, cluster_role, cluster_role_binding
from .kinds import kind_manifests

ACCESS_ENTRY_TYPE = "STANDARD"


@dataclass(frozen=True, kw_only=True)
class ValidationAccessArgs:
    """``principal``: ``validation.principal`` as written; ``principal_arn``: the ARN IAM
    answered in the pre-flight (``AdminAccess.principals``), else built from it as written;
    ``kinds``: ``kinds.kind_manifests`` of the config."""

    cluster_name: str
    cluster: pulumi.Input[str]  # the EKS cluster's name, resolved once the control plane exists
    principal: str
    principal_arn: str | None = None
    kinds: Sequence[Mapping[str, Any]] = ()
    k8s_provider: k8s.Provider | None = None
    tags: Mapping[str, str] = field(default_factory=dict)


class ValidationAccess(pulumi.ComponentResource):
    """``role``, ``binding`` and ``entry``."""

    principal_arn: pulumi.Output[str]
    """The validation principal's ARN (its access entry's)."""

    def __init__(
        self, name: str, args: ValidationAccessArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(f"{TYPE_PREFIX}ValidationAccess", name, None, opts)
        role = cluster_role(args.kinds)
        self.role = k8s.rbac.v1.ClusterRole(
            f"{name}-role",
            metadata=role["metadata"],
            rules=role["rules"],
            opts=pulumi.ResourceOptions(parent=self, provider=args.k8s_provider),
        )
        binding = cluster_role_binding(GROUP)
        self.binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata=binding["metadata"],
            role_ref=binding["roleRef"],
            subjects=binding["subjects"],
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=[self.role]
            ),
        )
        principal: pulumi.Input[str]
        if args.principal_arn:
            principal = args.principal_arn
        else:
            scoped = pulumi.InvokeOutputOptions(parent=self)
            partition = aws.get_partition_output(opts=scoped).partition
            account_id = aws.get_caller_identity_output(opts=scoped).account_id
            principal = pulumi.Output.all(partition, account_id).apply(
                lambda a: admin_principal_arn(args.principal, a[0], a[1])
            )
        self.entry = aws.eks.AccessEntry(
            f"{name}-entry",
            cluster_name=args.cluster,
            principal_arn=principal,
            type=ACCESS_ENTRY_TYPE,
            kubernetes_groups=[GROUP],
            tags={**args.tags, CLUSTER_TAG: args.cluster_name},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.binding]),
        )
        self.principal_arn = self.entry.principal_arn
        self.register_outputs({"principal_arn": self.principal_arn})


def validation_access(
    name: str,
    config: Any,
    cluster: Any,
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
    principal_arns: Mapping[str, str] | None = None,
) -> ValidationAccess | None:
    """The platform's ``ValidationAccess`` (``None`` without ``validation.principal``):
    ``config`` a ``PlatformConfig``, ``cluster`` its ``EksCluster``; ``principal_arns``: the
    pre-flight's ARNs of the principals as written."""
    principal = config.validation.principal
    if principal is None:
        return None
    return ValidationAccess(
        name,
        ValidationAccessArgs(
            cluster_name=config.cluster.name,
            cluster=cluster.cluster_name,
            principal=principal,
            principal_arn=(principal_arns or {}).get(principal),
            kinds=kind_manifests(config),
            k8s_provider=cluster.provider,
            tags=tags,
        ),
        opts=opts,
    )
