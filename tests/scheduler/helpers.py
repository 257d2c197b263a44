"""Shared by the scheduler tests: the pool label, the system nodes' selector and tolerations,
and small builders of queue specs."""

from eks_gpu_platform.scheduler.spec import QueueResourceSpec, QueueSpec

POOL_LABEL = "eks-gpu-platform.io/pool"
SYSTEM_SELECTOR = {POOL_LABEL: "system"}
SYSTEM_TOLERATIONS = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]


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
