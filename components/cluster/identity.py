"""Who EKS already made a cluster admin: the deploying identity and the cluster's creator,
resolved with synchronous invokes before ``EksCluster`` declares anything (cluster/access.py
says why the creator, not the deployer, has EKS's bootstrap access entry)."""

from dataclasses import dataclass

import pulumi
from pulumi_aws._utilities import get_invoke_opts_defaults as aws_invoke_defaults

from ..spec import SpecError
from .access import (
    CREATOR_TAG,
    admin_principal_arn,
    cluster_missing,
    creator_from_tags,
    duplicate_admins,
    is_deployer,
    needs_session_context,
    principal_identity,
)
from .spec import ClusterSpec


@dataclass(frozen=True)
class AdminIdentity:
    """Plain values ``EksCluster`` resolves before it declares the cluster (all None when there
    are no admins, or the identity is unknown in preview): ``creator`` is the principal EKS
    made an admin, ``tag`` the ``CREATOR_TAG`` value to declare (None: leave the tag alone)."""

    partition: str | None = None
    account: str | None = None
    deployer: str | None = None
    creator: str | None = None
    tag: str | None = None


def plain_invoke(component: pulumi.Resource, token: str, args: dict[str, str]) -> dict:
    """A synchronous invoke through the component's AWS provider, as a plain dict; empty when
    the engine answers unknown or the provider gives nothing.

    Which access entries exist must be known when the program registers them, in preview
    too, so these are synchronous (pulumi/runtime/invoke.py ``invoke``: it awaits the
    result). Invokes run in preview: with a provider created by this program, the engine
    configures it during preview under the unknown ID and serves invokes from it
    (pulumi/pulumi pkg/resource/deploy/providers/registry.go L947-965, v3.259.0). When its
    configuration is unknown the engine answers unknown (invoke.py L368-369: ``InvokeResult(
    None, is_known=False)``) or the provider an empty map; the typed SDK functions would
    then fail (``pulumi.get(None, ...)``), so the raw invoke, with pulumi-aws's own defaults
    (its plugin version: pulumi_aws/_utilities.py ``get_invoke_opts_defaults``)."""
    opts = pulumi.InvokeOptions.merge(aws_invoke_defaults(), pulumi.InvokeOptions(parent=component))
    result = pulumi.runtime.invoke(token, args, opts=opts)
    return dict(result.value or {}) if result.is_known else {}


def resolve_identity(component: pulumi.Resource, spec: ClusterSpec) -> AdminIdentity:
    """The partition, account, deploying principal and cluster creator, as plain values.

    The deployer: ``sts:GetCallerIdentity``, and for an assumed-role session its role
    (``iam.getSessionContext``: "IAM source role ARN if `arn` corresponds to an STS assumed
    role", pulumi_aws/iam/get_session_context.py). The creator: the deployer when no cluster
    has the name yet; else the cluster's ``CREATOR_TAG``; a cluster created before the tag
    existed falls back to the deployer with a warning. Identity unknown (a provider
    configured from other resources' outputs, in preview): a warning in preview, a
    ``SpecError`` in ``pulumi up``."""
    if not spec.admins:
        return AdminIdentity()
    partition = plain_invoke(component, "aws:index/getPartition:getPartition", {}).get("partition")
    caller = plain_invoke(component, "aws:index/getCallerIdentity:getCallerIdentity", {})
    account, deployer = caller.get("accountId"), caller.get("arn")
    if deployer and needs_session_context(deployer):
        context = plain_invoke(
            component, "aws:iam/getSessionContext:getSessionContext", {"arn": deployer}
        )
        deployer = context.get("issuerArn")
    if not (partition and account and deployer):
        message = (
            "cluster.admins: the deploying identity is unknown (sts:GetCallerIdentity "
            "through this component's AWS provider answered nothing; is the provider "
            "configured from other resources' outputs?), so the admin EKS bootstrapped "
            "cannot be left out"
        )
        if not pulumi.runtime.is_dry_run():
            raise SpecError.from_lines([message])
        pulumi.log.warn(message + "; the preview shows an entry for every admin", component)
        return AdminIdentity()
    if pairs := duplicate_admins(spec.admins, account):
        raise SpecError.from_lines(
            [
                f"cluster.admins[{later}]: {spec.admins[later]!r} names the same IAM principal "
                f"as admins[{first}] {spec.admins[first]!r} (a short form is in the deploying "
                f"account {account}); list it once"
                for first, later in pairs
            ]
        )
    try:
        found = plain_invoke(component, "aws:eks/getCluster:getCluster", {"name": spec.name})
    except Exception as error:  # the provider's "not found" only: cluster_missing
        if not cluster_missing(error):
            raise
        found = None
    if found is None:  # a new cluster: this deployer creates it
        return AdminIdentity(partition, account, deployer, deployer, tag=deployer)
    if not found:  # unknown in preview (plain_invoke)
        pulumi.log.warn(
            f"cluster {spec.name}: its tags are unknown in this preview; the creator is "
            f"taken to be the deploying identity {deployer}",
            component,
        )
        return AdminIdentity(partition, account, deployer, deployer)
    if creator := creator_from_tags(found.get("tags")):
        if principal_identity(creator) is None:
            pulumi.log.warn(
                f"cluster {spec.name}: its tag {CREATOR_TAG}={creator} is not an IAM role or "
                "user ARN, so no admin is recognised as its creator; set it to the creator's "
                "role ARN",
                component,
            )
        elif not is_deployer(deployer, creator) and not any(
            isinstance(a, str) and is_deployer(admin_principal_arn(a, partition, account), deployer)
            for a in spec.admins
        ):
            pulumi.log.warn(
                f"the deploying identity {deployer} neither created cluster {spec.name} "
                f"({creator}) nor is in cluster.admins: unless an access entry made elsewhere "
                "lets it in, EKS refuses its Kubernetes steps (Unauthorized)",
                component,
            )
        return AdminIdentity(partition, account, deployer, creator, tag=creator)
    pulumi.log.warn(
        f"cluster {spec.name} exists but has no tag {CREATOR_TAG} (created before the tag "
        "was recorded): the identity deploying now "
        f"({deployer}) is taken to be its creator, whose access entry EKS made. If another "
        "principal created it, tag the cluster with "
        f"{CREATOR_TAG}=<creator ARN> (aws eks tag-resource --resource-arn "
        f"{found.get('arn')} --tags {CREATOR_TAG}=<creator ARN>) before the next "
        "`pulumi up`; the program then keeps that tag",
        component,
    )
    return AdminIdentity(partition, account, deployer, deployer)
