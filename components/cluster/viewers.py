"""Read-only cluster access: the EKS access policy granted to ``cluster.viewers``. Pure.

``AmazonEKSAdminViewPolicy`` lists and reads every Kubernetes resource, Secrets included, and
changes none ("access-policy-permissions",
https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html). The narrower
``AmazonEKSViewPolicy`` cannot read Secrets, where Helm keeps each release's state
(helm/helm pkg/storage/driver/secrets.go, the default driver), and ``pulumi preview`` of a
``kubernetes:helm.sh/v3:Release`` loads that state to diff the release.
"""

VIEWER_POLICY = "AmazonEKSAdminViewPolicy"


def viewer_policy_arn(partition: str) -> str:
    """The EKS access policy granting read-only access to the whole cluster."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{VIEWER_POLICY}"
