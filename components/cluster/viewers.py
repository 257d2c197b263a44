"""Read-only cluster access: the EKS access policy granted to ``cluster.viewers``. Pure.

``AmazonEKSViewPolicy`` reads most Kubernetes resources and no Secrets
("access-policy-permissions",
https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html); the broader
``AmazonEKSAdminViewPolicy`` reads every object, Secrets included, which made every viewer (the
pull-request preview role) a reader of every Secret in the cluster (issue 29, point 6).

A plain ``pulumi preview`` does not need the Secrets: pulumi-kubernetes reads a
``kubernetes:helm.sh/v3:Release``'s stored Helm state (the release Secret of helm/helm's
default ``secrets`` storage driver) only in ``Read``, i.e. on ``--refresh`` or an import;
``Check`` and ``Diff`` work on the checkpoint and ``Create``/``Update`` skip Helm in a preview
(pulumi/pulumi-kubernetes 94977969, 2026-07-01, ``provider/pkg/provider/helm_release.go``:
``Read`` L1032-1070 calls ``resourceReleaseLookup`` (L1338, ``action.NewGet``); ``Create`` L989
and ``Update`` L1169 run Helm only ``if !req.GetPreview()``). A ``--refresh`` preview needs
Secret reads (and cluster-scoped kinds ``view`` leaves out): it runs in the deploy job, as the
deploy role (docs/ci.md).
"""

VIEWER_POLICY = "AmazonEKSViewPolicy"


def viewer_policy_arn(partition: str) -> str:
    """The EKS access policy granting read-only access (no Secrets) to the whole cluster."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{VIEWER_POLICY}"
