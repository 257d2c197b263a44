"""Shared by the scheduler tests: the pool label, the system nodes' selector and tolerations,
and small builders of queue specs."""

from eks_gpu_platform.scheduler.spec import QueueResourceSpec, QueueSpec

POOL_LABEL = "eks-gpu-platform.io/pool"
SYSTEM_SELECTOR = {POOL_LABEL: "system"}
SYSTEM_TOLERATIONS = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
# The namespaces no admission policy of the platform may act in, written out here rather than
# taken from the code: Kubernetes' own (kube-system also holds the EKS add-ons, Karpenter and the
# EFA plugin), KAI's and the namespaces of its reservation and scaling pods (kai-scheduler
# v0.16.8 pkg/common/constants/constants.go L22-24), the GPU Operator's.
SYSTEM_NAMESPACES = [
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "kai-scheduler",
    "kai-resource-reservation",
    "kai-scale-adjust",
    "gpu-operator",
]


def queue_namespace_selector(domain: str) -> dict:
    """The namespace selector every binding of the platform's admission policies must carry:
    the queue namespaces (label ``<domain>/queue``), never a system namespace by name."""
    return {
        "matchExpressions": [
            {"key": f"{domain}/queue", "operator": "Exists"},
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": list(SYSTEM_NAMESPACES),
            },
        ]
    }


def res(quota: float, limit: float, weight: float = 1) -> QueueResourceSpec:
    return QueueResourceSpec(quota=quota, limit=limit, over_quota_weight=weight)


def queue(
    name: str,
    *,
    parent: str | None = None,
    pools: tuple[str, ...] = (),
    gpu: tuple[float, float] = (4, 8),
) -> QueueSpec:
    return QueueSpec(
        name=name,
        parent=parent,
        node_pools=pools,
        gpu=res(*gpu),
        cpu=res(64, -1),
        memory=res(512, -1),
    )
