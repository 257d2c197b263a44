"""Cluster admin access: the admins' principal ARNs, the stable names of their access entries,
which existing entries are this stack's, and the EKS access policy they are granted. Pure:
built from the partition, the account, the caller's identity and what EKS answers.

No creator is guessed (issue 21, point 2). pulumi-eks 4.4.0 creates the cluster with
``bootstrapClusterCreatorAdminPermissions: true`` whenever an authentication mode is set
(pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts L733-741 at v4.3.0; unchanged at HEAD
7bf0c1b, the 4.4.0 line; no Python input turns it off: pulumi/pulumi-eks#2373), so EKS would
give the creating identity an access entry outside the stack. ``EksCluster`` turns that off on
pulumi-eks's child ``aws:eks/cluster:Cluster`` with a ``transforms`` resource option
(``without_bootstrap_admin``) and gives every admin, the deployer included, an entry of its own.

For a cluster that already exists, EKS may still hold an entry the stack did not create (the
old bootstrap entry of its creator, or one made by hand): a second entry for the same principal
fails with ``409 ResourceInUseException``. Each admin's entry is looked up
(``aws:eks/getAccessEntry``); the entries this program creates carry the tag ``CLUSTER_TAG`` =
the cluster name (``owned_entry``), an entry without it cannot be told apart and is refused with
the two ways out (``identity.resolve_access``).

Principals are compared as IAM compares them: "IAM user, group, role, and policy names must be
unique within the account. Names are not distinguished by case"
(https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html, ``RoleName``); the
path is not part of that uniqueness, so ``role/a/X`` and ``role/X`` name the same role.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"
# The tag every resource of the platform carries (GpuPlatform adds it to the stack's tags), and
# every admin access entry of this stack (EksCluster adds it): how an existing entry is known
# to be this stack's.
CLUSTER_TAG = "eks-gpu-platform/cluster"
_ARN = re.compile(r"^arn:[^:]+:(iam|sts)::([0-9]{12}):(.+)$")


def admin_principal_arn(principal: str, partition: str, account_id: str) -> str:
    """A full IAM ARN for an admin given as an ARN or as ``role/NAME`` in this account."""
    if principal.startswith("arn:"):
        return principal
    return f"arn:{partition}:iam::{account_id}:{principal}"


def admin_policy_arn(partition: str) -> str:
    """The EKS access policy granting cluster-admin."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{ADMIN_POLICY}"


def principal_identity(arn: str) -> tuple[str, str, str] | None:
    """``(account, kind, name)`` of an IAM role or user ARN (the path dropped, the name lower
    case: IAM names are unique per account whatever their path, and case-insensitive), or of an
    STS assumed-role session (its role). None for anything else."""
    m = _ARN.match(arn)
    if not m:
        return None
    service, account, resource = m.groups()
    parts = resource.split("/")
    if service == "sts":
        if parts[0] != "assumed-role" or len(parts) < 3:
            return None
        return account, "role", parts[1].lower()
    if parts[0] not in ("role", "user") or len(parts) < 2:
        return None
    return account, parts[0], parts[-1].lower()


def needs_session_context(caller_arn: str) -> bool:
    """An assumed-role session: its role (with its path) comes from ``iam.getSessionContext``."""
    return ":assumed-role/" in caller_arn


def admin_entry_key(principal: str) -> str:
    """A stable, principal-derived key for an admin's access entry: ``role-PlatformAdmin`` for
    ``role/PlatformAdmin`` (the path dropped), ``444455556666-user-alice`` for a full ARN (its
    account kept: the same name may exist in two accounts). Reordering or removing other admins
    never changes it."""
    m = _ARN.match(principal)
    account, resource = (m.group(2), m.group(3)) if m else (None, principal)
    kind, _, rest = resource.partition("/")
    name = rest.rsplit("/", 1)[-1]
    key = f"{kind}-{name}" if account is None else f"{account}-{kind}-{name}"
    return re.sub(r"[^A-Za-z0-9_.@+=,-]", "-", key)


def is_deployer(principal_arn: str, deployer_arn: str | None) -> bool:
    """Whether an admin's full ARN names the same role or user as ``deployer_arn`` (the deploying
    identity, or the cluster's creator)."""
    if not deployer_arn:
        return False
    admin, deployer = principal_identity(principal_arn), principal_identity(deployer_arn)
    return admin is not None and admin == deployer


def short_identity(principal: str) -> tuple[str | None, str, str] | None:
    """``(account or None, kind, lower-case name)`` of an admin as configured: a full ARN
    (``principal_identity``) or ``role/NAME`` / ``user/NAME`` in the deploying account (account
    None). None for anything else."""
    if principal.startswith("arn:"):
        return principal_identity(principal)
    kind, _, rest = principal.partition("/")
    if kind not in ("role", "user") or not rest:
        return None
    return None, kind, rest.rsplit("/", 1)[-1].lower()


def duplicate_admins(admins: Sequence[object], account: str | None = None) -> list[tuple[int, int]]:
    """``(first, later)`` index pairs of admins naming the same IAM principal: the same name
    whatever its path or case, and, once ``account`` (the deploying account) is known, a short
    form and the full ARN in that account. Outputs (not plain strings) are skipped."""
    seen: dict[tuple[str | None, str, str], int] = {}
    pairs = []
    for i, admin in enumerate(admins):
        if not isinstance(admin, str) or (ident := short_identity(admin)) is None:
            continue
        if ident[0] is None and account is not None:
            ident = (account, ident[1], ident[2])
        if ident in seen:
            pairs.append((seen[ident], i))
        else:
            seen[ident] = i
    return pairs


def cluster_missing(error: Exception) -> bool:
    """Whether a failed ``aws:eks/getCluster`` invoke means that no cluster has that name.

    The data source reads with ``findClusterByName``, which turns ``ResourceNotFoundException``
    (or the ``ClientException`` "No cluster found for name:") into a ``retry.NotFoundError``
    whose text is "couldn't find resource" (hashicorp/terraform-provider-aws
    internal/service/eks/cluster.go ``findClusterByName``; terraform-plugin-sdk helper/retry
    error.go ``NotFoundError.Error``); the data source fails with "reading EKS Cluster (NAME):
    ..." (cluster_data_source.go), the bridge returns it as the invoke's error
    (pulumi-terraform-bridge pkg/tfbridge/provider.go L1990-1993, v3.136.0) and the SDK raises
    ``Exception("invoke of <token> failed: ...")`` (pulumi/runtime/invoke.py L351-356, 3.272.0).
    Any other failure (throttling, access denied) is not a missing cluster."""
    text = str(error)
    return "reading EKS Cluster" in text and (
        "couldn't find resource" in text
        or "ResourceNotFoundException" in text
        or "No cluster found for name" in text
    )


def entry_missing(error: Exception) -> bool:
    """Whether a failed ``aws:eks/getAccessEntry`` invoke means that the principal has no entry.

    The data source reads with ``findAccessEntryByTwoPartKey``, whose ``ResourceNotFoundException``
    becomes a ``retry.NotFoundError`` ("couldn't find resource"), and fails with "reading EKS
    Access Entry (CLUSTER:PRINCIPAL): ..." (hashicorp/terraform-provider-aws
    internal/service/eks/access_entry_data_source.go ``dataSourceAccessEntryRead``); the bridge
    and the SDK pass it on as ``cluster_missing`` says. Anything else (access denied,
    throttling) is not a missing entry."""
    text = str(error)
    return "reading EKS Access Entry" in text and (
        "couldn't find resource" in text or "ResourceNotFoundException" in text
    )


def owned_entry(tags: Mapping[str, str] | None, cluster_name: str) -> bool:
    """Whether an existing access entry is one this program created: it carries
    ``CLUSTER_TAG`` = the cluster's name (EKS's bootstrap entry and hand-made ones carry no
    tags unless someone adds them)."""
    return (tags or {}).get(CLUSTER_TAG) == cluster_name


def without_bootstrap_admin(props: Mapping[str, Any]) -> dict[str, Any]:
    """``aws:eks/cluster:Cluster`` inputs (wire names, as a transform receives them) with the
    creator's bootstrap admin permission off; the authentication mode pulumi-eks set is kept.

    ``accessConfig.bootstrapClusterCreatorAdminPermissions`` is ForceNew in the provider
    (hashicorp/terraform-provider-aws internal/service/eks/cluster.go, ``access_config``), but
    pulumi-eks registers the cluster with ``ignoreChanges`` on it (cluster.ts L748-755, v4.3.0):
    on an existing cluster the engine keeps the recorded value, so the change neither replaces
    nor updates it, and only a new cluster is created without the bootstrap entry."""
    out = dict(props)
    access = dict(out.get("accessConfig") or {})
    access["bootstrapClusterCreatorAdminPermissions"] = False
    out["accessConfig"] = access
    return out
