"""The cluster's access entries (``EksCluster``'s children): one per admin, the break-glass role
and each viewer, each with its cluster-scoped access policy association."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks

from .access import (
    CLUSTER_TAG,
    admin_entry_key,
    admin_policy_arn,
    admin_principal_arn,
)
from .identity import AdminAccess
from .spec import ClusterSpec
from .viewers import viewer_policy_arn

if TYPE_CHECKING:  # the component imports this module
    from .component import EksCluster


def admin_entries(
    component: EksCluster,
    name: str,
    spec: ClusterSpec,
    cluster: eks.Cluster,
    access: AdminAccess,
    partition: pulumi.Output[str],
    account_id: pulumi.Output[str],
    tags: dict[str, str],
) -> tuple[list[aws.eks.AccessEntry], list[aws.eks.AccessPolicyAssociation]]:
    """One access entry (with cluster-admin) per admin, the deployer included, tagged
    ``CLUSTER_TAG`` (how a later run knows the entry is this stack's: identity.py).

    Named after the principal (``admin_entry_key``), so removing or reordering admins leaves
    the others alone. Each entry aliases the name pulumi-eks gave it when the entries were
    the cluster's ``accessEntries`` (``<cluster>-admin-<i>``, a child of the eks.Cluster:
    pulumi/pulumi-eks nodejs/eks/cluster/authenticationMode.ts ``createAccessEntries``);
    its policy association follows through the engine's inherited child alias (its name
    starts with the entry's name: pulumi/pulumi pkg/resource/deploy/step_generator.go
    L590-652, ``inheritedChildAlias``), so existing stacks keep both.
    """
    if not spec.admins:
        return [], []
    policy_arn = partition.apply(admin_policy_arn)
    entry_tags = {**tags, CLUSTER_TAG: spec.name}
    entries, associations = [], []
    for i, admin in enumerate(spec.admins):
        if isinstance(admin, str) and access.account:
            principal: pulumi.Input[str] = access.arn_of(admin)
            key = admin_entry_key(admin)
        elif isinstance(admin, str):  # identity unknown (preview only: resolve_access)
            principal = pulumi.Output.all(partition, account_id).apply(
                lambda a, admin=admin: admin_principal_arn(admin, a[0], a[1])
            )
            key = admin_entry_key(admin)
        else:  # a role created by this program; no name to key by
            principal = pulumi.Output.all(partition, account_id, admin).apply(
                lambda a: admin_principal_arn(a[2], a[0], a[1])
            )
            key = f"admin-{i}"
        entry, association = entry_with_policy(
            component,
            f"{name}-admin-{key}",
            f"{name}-admin-{key}-cluster-admin",
            principal,
            policy_arn,
            entry_tags,
            aliases=[pulumi.Alias(name=f"{name}-eks-admin-{i}", parent=cluster)],
        )
        associations.append(association)
        entries.append(entry)
    return entries, associations


def entry_with_policy(
    component: EksCluster,
    entry_name: str,
    association_name: str,
    principal_arn: pulumi.Input[str],
    policy_arn: pulumi.Input[str],
    tags: dict[str, str],
    aliases: list[pulumi.Alias] | None = None,
) -> tuple[aws.eks.AccessEntry, aws.eks.AccessPolicyAssociation]:
    """One ``STANDARD`` access entry of the cluster and its cluster-scoped policy association
    (a child of the entry, so the association goes before the entry on delete): the admins',
    the viewers' and the break-glass role's entries are all built this way."""
    entry = aws.eks.AccessEntry(
        entry_name,
        cluster_name=component.cluster_name,
        principal_arn=principal_arn,
        type="STANDARD",
        tags=tags,
        opts=pulumi.ResourceOptions(parent=component, aliases=aliases),
    )
    association = aws.eks.AccessPolicyAssociation(
        association_name,
        cluster_name=component.cluster_name,
        principal_arn=entry.principal_arn,
        policy_arn=policy_arn,
        access_scope={"type": "cluster"},
        opts=pulumi.ResourceOptions(parent=entry),
    )
    return entry, association


def break_glass_entry(
    component: EksCluster,
    name: str,
    spec: ClusterSpec,
    access: AdminAccess,
    partition: pulumi.Output[str],
    account_id: pulumi.Output[str],
    tags: dict[str, str],
) -> aws.eks.AccessEntry | None:
    """The break-glass role's access entry with cluster-admin, only when
    ``cluster.breakGlassRole`` is set (README, "Security model": who may assume it and how
    its use is noticed is the role's trust policy and CloudTrail's business, outside this
    stack). Explicit and tagged like the admins' entries (``admin_entries``; an existing
    untagged entry of the role is refused: identity.resolve_access)."""
    role = spec.break_glass_role
    if role is None:
        return None
    entry, _ = entry_with_policy(
        component,
        f"{name}-break-glass",
        f"{name}-break-glass-cluster-admin",
        _principal(role, access, partition, account_id),
        partition.apply(admin_policy_arn),
        {**tags, CLUSTER_TAG: spec.name},
    )
    return entry


def viewer_entries(
    component: EksCluster,
    name: str,
    spec: ClusterSpec,
    access: AdminAccess,
    partition: pulumi.Output[str],
    account_id: pulumi.Output[str],
    tags: dict[str, str],
) -> list[aws.eks.AccessEntry]:
    """One access entry with ``AmazonEKSViewPolicy`` (cluster scope, no Secrets) per viewer,
    e.g. the CI preview role: a plain ``pulumi preview`` needs no Secret (viewers.py says
    why) and may change nothing. The association keeps its ``-admin-view`` name (a stable
    name; the new policy ARN replaces the association in place). Named
    after the principal (``admin_entry_key``) and tagged ``CLUSTER_TAG``, like the admins'
    entries (an existing untagged entry of a viewer is refused: identity.resolve_access)."""
    policy_arn = partition.apply(viewer_policy_arn)
    entries = []
    for i, viewer in enumerate(spec.viewers):
        key = admin_entry_key(viewer) if isinstance(viewer, str) else f"viewer-{i}"
        entry, _ = entry_with_policy(
            component,
            f"{name}-viewer-{key}",
            f"{name}-viewer-{key}-admin-view",
            _principal(viewer, access, partition, account_id),
            policy_arn,
            {**tags, CLUSTER_TAG: spec.name},
        )
        entries.append(entry)
    return entries


def _principal(
    principal: pulumi.Input[str],
    access: AdminAccess,
    partition: pulumi.Output[str],
    account_id: pulumi.Output[str],
) -> pulumi.Input[str]:
    """The full ARN of a viewer or the break-glass role, as ``admin_entries`` builds an
    admin's: plain once ``resolve_access`` knows the account, else an output."""
    if isinstance(principal, str) and access.account:
        return access.arn_of(principal)
    return pulumi.Output.all(partition, account_id, principal).apply(
        lambda a: admin_principal_arn(a[2], a[0], a[1])
    )
