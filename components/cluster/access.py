"""Cluster admin access: the admins' principal ARNs, the stable names of their access entries,
the deploying identity EKS already made an admin, and the EKS access policy they are granted.
Pure: built from the partition, the account and the caller's identity.

Why the deployer is left out: pulumi-eks 4.4.0 creates the cluster with
``bootstrapClusterCreatorAdminPermissions: true`` whenever an authentication mode is set
(pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts L733-741 at v4.3.0 == 4.4.0; no Python input
turns it off, pulumi_eks/cluster.py), so EKS itself gives the creating identity an access entry
with cluster-admin. A second entry for the same principal fails with ``409
ResourceInUseException`` (pulumi/pulumi-eks#2373).
"""

import re

ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"
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
    """Whether an admin's full ARN names the deploying identity (role or user)."""
    if not deployer_arn:
        return False
    admin, deployer = principal_identity(principal_arn), principal_identity(deployer_arn)
    return admin is not None and admin == deployer
