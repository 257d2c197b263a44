"""Which admins get an access entry from this stack: the deploying identity, whether the cluster
exists, and for an existing one which admins already have an entry the stack did not create,
resolved with synchronous invokes before ``EksCluster`` declares anything (cluster/access.py
says why nothing is guessed from a tag or from who deploys)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
from pulumi_aws._utilities import get_invoke_opts_defaults as aws_invoke_defaults

from ..errors import refused_by_up
from ..spec import SpecError
from .access import (
    CLUSTER_TAG,
    admin_entry_key,
    admin_principal_arn,
    cluster_missing,
    duplicate_admins,
    entry_missing,
    is_deployer,
    needs_session_context,
    owned_entry,
)
from .principals import check_principals
from .spec import ClusterSpec


@dataclass(frozen=True)
class AdminAccess:
    """Plain values ``EksCluster`` resolves before it declares the cluster (None when there are
    no admins, or the identity is unknown in preview). ``exists``: a cluster of that name
    exists (None: unknown)."""

    partition: str | None = None
    account: str | None = None
    deployer: str | None = None
    exists: bool | None = None
    # Each configured principal -> the ARN its access entry uses (principals.py: IAM's own ARN,
    # path included; the deployer's exact ARN). Empty when not looked up.
    principals: Mapping[str, str] = field(default_factory=dict)

    def arn_of(self, principal: str) -> str:
        """The ARN of a configured principal's access entry (needs ``account``)."""
        found = self.principals.get(principal)
        return found or admin_principal_arn(principal, self.partition or "aws", self.account or "")


def plain_invoke(
    component: pulumi.Resource,
    token: str,
    args: dict[str, str],
    provider: pulumi.ProviderResource | None = None,
) -> dict:
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
    (its plugin version: pulumi_aws/_utilities.py ``get_invoke_opts_defaults``). ``provider``:
    the AWS provider to use when it is not the component's (``GpuPlatform``'s own, for a
    region given in code)."""
    opts = pulumi.InvokeOptions.merge(
        aws_invoke_defaults(), pulumi.InvokeOptions(parent=component, provider=provider)
    )
    result = pulumi.runtime.invoke(token, args, opts=opts)
    return dict(result.value or {}) if result.is_known else {}


def resolve_access(
    component: pulumi.Resource,
    name: str,
    spec: ClusterSpec,
    provider: pulumi.ProviderResource | None = None,
    extra_principals: Sequence[tuple[str, str]] = (),
) -> AdminAccess:
    """The partition, account and deploying principal, and the admins' existing entries.
    ``extra_principals``: other (config key, principal) pairs to find in IAM with the admins
    (the queues' tenants, ``tenants.access.tenant_principal_keys``); their ARNs join
    ``AdminAccess.principals``.

    The deployer: ``sts:GetCallerIdentity``, and for an assumed-role session its role
    (``iam.getSessionContext``: "IAM source role ARN if `arn` corresponds to an STS assumed
    role", pulumi_aws/iam/get_session_context.py). It must be one of ``cluster.admins``, or
    (an existing cluster) hold an entry of its own: with the bootstrap permission off nothing
    else lets its Kubernetes steps in.

    A new cluster (``aws:eks/getCluster`` finds none): every admin gets an entry. An existing
    one: each admin's entry is looked up (``aws:eks/getAccessEntry``); none, or one carrying
    ``CLUSTER_TAG`` (this stack's), and the admin gets its entry; one without the tag cannot be
    told apart (EKS's bootstrap entry of the creator, one made by hand, or one an old version of
    this program created untagged) and is refused with the way out for each case.

    Every configured principal is looked up in IAM first (principals.py); the entries use the
    ARNs IAM answers. An unlisted deployer whose entry this stack owns would lose it at the end
    of this `up` (the engine deletes the entry no longer declared): refused (issue 28, point 5).

    What cannot be decided (identity or lookups unknown: a provider configured from other
    resources' outputs, in preview) is a warning in preview and a ``SpecError`` in ``pulumi
    up``; every problem is reported at once."""
    if not spec.admins:
        return AdminAccess()
    up = not pulumi.runtime.is_dry_run()

    def invoke(token: str, args: dict[str, str]) -> dict:
        return plain_invoke(component, token, args, provider)

    partition = invoke("aws:index/getPartition:getPartition", {}).get("partition")
    caller = invoke("aws:index/getCallerIdentity:getCallerIdentity", {})
    account, deployer = caller.get("accountId"), caller.get("arn")
    if deployer and needs_session_context(deployer):
        context = invoke("aws:iam/getSessionContext:getSessionContext", {"arn": deployer})
        deployer = context.get("issuerArn")
    if not (partition and account and deployer):
        message = (
            "cluster.admins: the deploying identity is unknown (sts:GetCallerIdentity "
            "through this component's AWS provider answered nothing; is the provider "
            "configured from other resources' outputs?), so whether it is an admin and which "
            "admins already have an access entry cannot be checked"
        )
        if up:
            raise SpecError.from_lines([message])
        pulumi.log.warn(message + "; the preview shows an entry for every admin", component)
        return AdminAccess()
    if pairs := duplicate_admins(spec.admins, account):
        raise SpecError.from_lines(
            [
                f"cluster.admins[{later}]: {spec.admins[later]!r} names the same IAM principal "
                f"as admins[{first}] {spec.admins[first]!r} (a short form is in the deploying "
                f"account {account}); list it once"
                for first, later in pairs
            ]
        )
    if lines := _shared_entry_lines(spec, account):
        raise SpecError.from_lines(lines)
    checked = check_principals(spec, partition, account, deployer, invoke, extra_principals)
    for note in checked.notes:
        pulumi.log.info(note, component)
    if checked.problems and not up:
        # A missing principal does not depend on who runs the preview: refused there too, so
        # a pull request's preview fails as its deploy would (issue 28, point 1's rule).
        raise SpecError.from_lines(checked.problems)
    problems: list[str] = [*checked.problems, *checked.failures]
    arns = dict(checked.arns)
    known = {i: arns.get(a) or admin_principal_arn(a, partition, account) for i, a in _admins(spec)}
    deployer_listed = any(is_deployer(arn, deployer) for arn in known.values())
    try:
        found = invoke("aws:eks/getCluster:getCluster", {"name": spec.name})
    except Exception as error:  # the provider's "not found" only: cluster_missing
        if not cluster_missing(error):
            raise SpecError.from_lines(
                [
                    f"cluster.name: looking up cluster {spec.name} failed "
                    f"({str(error).strip()}); the deploying identity needs eks:DescribeCluster"
                ]
            ) from None
        found = None
    if found is None:  # a new cluster: nobody has access but the admins listed
        if not deployer_listed:
            problems.append(
                f"cluster.admins: the deploying identity {deployer} is not listed; EKS's "
                "bootstrap admin entry for the cluster's creator is off (no access is guessed), "
                "so its Kubernetes steps would be refused (Unauthorized); add it to "
                "cluster.admins"
            )
        return _decide(
            component, problems, up, AdminAccess(partition, account, deployer, False, arns)
        )
    if not found:  # unknown in preview (plain_invoke)
        pulumi.log.warn(
            f"cluster {spec.name}: whether it exists is unknown in this preview; an entry is "
            "shown for every admin",
            component,
        )
        if problems:
            return _decide(
                component, problems, up, AdminAccess(partition, account, deployer, None, arns)
            )
        return AdminAccess(partition, account, deployer, None, arns)
    for i, arn in known.items():
        problem = _existing_entry_problem(component, name, spec, i, arn, provider)
        if problem:
            problems.append(problem)
    for key, principal, resource in _other_entries(name, spec):
        arn = arns.get(principal) or admin_principal_arn(principal, partition, account)
        problem = _entry_problem(component, spec, key, arn, resource, provider)
        if problem:
            problems.append(problem)
    if not deployer_listed:
        entry = _lookup_entry(component, spec.name, deployer, "the deploying identity", provider)
        if entry is None:
            problems.append(
                f"cluster.admins: the deploying identity {deployer} is not listed and has no "
                f"access entry on cluster {spec.name}, so its Kubernetes steps would be refused "
                "(Unauthorized); add it to cluster.admins"
            )
        elif owned_entry(entry.get("tags"), spec.name) and not _other_key_of(spec, deployer):
            problems.append(lockout_line(spec.name, deployer))
    return _decide(component, problems, up, AdminAccess(partition, account, deployer, True, arns))


def lockout_line(cluster: str, deployer: str) -> str:
    """Point 5: the unlisted deployer's entry is this stack's, so this `up` deletes it."""
    return (
        f"cluster.admins: the deploying identity {deployer} is not listed, but its access entry "
        f"on cluster {cluster} is this stack's (tag {CLUSTER_TAG}={cluster}): this `pulumi up` "
        "would delete it and lock the deployer out of the cluster; put it back in "
        "cluster.admins, or run this change as another admin that stays listed"
    )


def _admins(spec: ClusterSpec) -> list[tuple[int, str]]:
    return [(i, a) for i, a in enumerate(spec.admins) if isinstance(a, str)]


def _other_key_of(spec: ClusterSpec, deployer: str) -> bool:
    """Whether the deployer keeps an entry as a viewer or the break-glass role."""
    others = [v for v in spec.viewers if isinstance(v, str)]
    if isinstance(spec.break_glass_role, str):
        others.append(spec.break_glass_role)
    account = deployer.split(":")[4] if deployer.count(":") >= 5 else ""
    return any(
        is_deployer(admin_principal_arn(o, deployer.split(":")[1], account), deployer)
        for o in others
    )


def _decide(
    component: pulumi.Resource, problems: list[str], up: bool, access: AdminAccess
) -> AdminAccess:
    if problems and up:
        raise SpecError.from_lines(problems)
    for problem in problems:
        pulumi.log.warn(refused_by_up(problem), component)
    return access


def _lookup_entry(
    component: pulumi.Resource,
    cluster: str,
    principal: str,
    what: str,
    provider: pulumi.ProviderResource | None = None,
) -> dict | None:
    """The principal's access entry (``aws:eks/getAccessEntry``), None when it has none, ``{}``
    when unknown in preview; any other failure is a ``SpecError`` naming ``what``."""
    try:
        return plain_invoke(
            component,
            "aws:eks/getAccessEntry:getAccessEntry",
            {"clusterName": cluster, "principalArn": principal},
            provider,
        )
    except Exception as error:  # the provider's "not found" only: entry_missing
        if entry_missing(error):
            return None
        raise SpecError.from_lines(
            [
                f"{what}: looking up the access entry of {principal} on cluster {cluster} "
                f"failed ({str(error).strip()}); the deploying identity needs "
                "eks:DescribeAccessEntry"
            ]
        ) from None


def _other_entries(name: str, spec: ClusterSpec) -> list[tuple[str, str, str]]:
    """``(config key, principal, resource name)`` of the viewers' and the break-glass role's
    entries (``access_entries.viewer_entries``/``break_glass_entry``): explicit entries, tagged
    and checked like the admins'."""
    out = [
        (f"cluster.viewers[{i}]", v, f"{name}-viewer-{admin_entry_key(v)}")
        for i, v in enumerate(spec.viewers)
        if isinstance(v, str)
    ]
    if spec.break_glass_role is not None:
        out.append(("cluster.breakGlassRole", spec.break_glass_role, f"{name}-break-glass"))
    return out


def _shared_entry_lines(spec: ClusterSpec, account: str) -> list[str]:
    """A principal has one access entry (EKS: a second ``CreateAccessEntry`` fails with 409
    ResourceInUseException), so admins, viewers and the break-glass role name different
    principals; here with the deploying account known, so a short form and the full ARN in
    that account are one principal (``ClusterSpec`` checks what it can without it). Two
    admins naming one principal are reported above."""
    keyed = [(f"admins[{i}]", a) for i, a in enumerate(spec.admins)]
    keyed += [(f"viewers[{i}]", v) for i, v in enumerate(spec.viewers)]
    if spec.break_glass_role is not None:
        keyed.append(("breakGlassRole", spec.break_glass_role))
    lines = []
    for first, later in duplicate_admins([p for _, p in keyed], account):
        (key1, p1), (key2, p2) = keyed[first], keyed[later]
        if key1.startswith("admins[") and key2.startswith("admins["):
            continue
        lines.append(
            f"cluster.{key2}: {p2!r} names the same IAM principal as {key1} {p1!r} (a short "
            f"form is in the deploying account {account}); a principal has one access entry, "
            "list it under one key"
        )
    return lines


def _existing_entry_problem(
    component: pulumi.Resource,
    name: str,
    spec: ClusterSpec,
    index: int,
    principal: str,
    provider: pulumi.ProviderResource | None = None,
) -> str | None:
    """Why ``admins[index]`` (``principal``) of an existing cluster cannot get its entry, or
    None."""
    return _entry_problem(
        component,
        spec,
        f"cluster.admins[{index}]",
        principal,
        f"{name}-admin-{admin_entry_key(spec.admins[index])}",
        provider,
    )


def _entry_problem(
    component: pulumi.Resource,
    spec: ClusterSpec,
    key: str,
    principal: str,
    resource: str,
    provider: pulumi.ProviderResource | None = None,
) -> str | None:
    """Why the principal configured at ``key`` cannot get its entry ``resource`` on an existing
    cluster, or None."""
    entry = _lookup_entry(component, spec.name, principal, key, provider)
    if entry is None or owned_entry(entry.get("tags"), spec.name):
        return None
    if not entry:
        return (
            f"{key}: whether {principal} already has an access entry on cluster {spec.name} is "
            "unknown in this preview"
        )
    arn = entry.get("accessEntryArn") or principal
    return (
        f"{key}: {principal} already has an access entry on cluster {spec.name} ({arn}) "
        f"without this stack's tag {CLUSTER_TAG}={spec.name}, so whether this stack created it "
        "cannot be decided (a second entry fails with 409 ResourceInUseException). If "
        f"`pulumi stack --show-urns` lists the AccessEntry {resource}, tag it: `aws eks "
        f"tag-resource --resource-arn {arn} --tags {CLUSTER_TAG}={spec.name}`. Otherwise "
        "(EKS's bootstrap entry for the cluster's creator, or one made by hand) delete it and "
        "the next `pulumi up` creates the stack's own before any Kubernetes step: `aws eks "
        f"delete-access-entry --cluster-name {spec.name} --principal-arn {principal}`"
    )
