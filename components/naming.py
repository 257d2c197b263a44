"""Names shared by every component: type tokens, well-known tags and labels, IAM name limits."""

import hashlib

PACKAGE = "eks-gpu-platform"
# This repository's Pulumi project (Pulumi.yaml ``name``): its stack files' config namespace.
PROJECT = "eks-gpu-platform"
TYPE_PREFIX = f"{PACKAGE}:index:"

# Karpenter selects subnets and security groups carrying this tag (value: the cluster name).
DISCOVERY_TAG = "karpenter.sh/discovery"

IAM_ROLE_NAME_MAX = 64
IAM_POLICY_NAME_MAX = 128
SQS_QUEUE_NAME_MAX = 80


def bounded_name(prefix: str, cluster_name: str, limit: int) -> str:
    """``prefix + cluster_name``, shortened with a stable hash when it exceeds ``limit``.

    Upstream names (``KarpenterNodeRole-<cluster>``) overflow IAM's limits for long cluster
    names; the hash keeps shortened names unique and the same on every run.
    """
    full = f"{prefix}{cluster_name}"
    if len(full) <= limit:
        return full
    digest = hashlib.sha256(cluster_name.encode()).hexdigest()[:8]
    keep = limit - len(prefix) - len(digest) - 1
    return f"{prefix}{cluster_name[:keep]}-{digest}"
