"""Cluster admin access: the admins' principal ARNs and the EKS access policy they are granted.
Pure: built from the partition and account."""

ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"


def admin_principal_arn(principal: str, partition: str, account_id: str) -> str:
    """A full IAM ARN for an admin given as an ARN or as ``role/NAME`` in this account."""
    if principal.startswith("arn:"):
        return principal
    return f"arn:{partition}:iam::{account_id}:{principal}"


def admin_policy_arn(partition: str) -> str:
    """The EKS access policy granting cluster-admin."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{ADMIN_POLICY}"
