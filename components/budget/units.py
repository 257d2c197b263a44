"""The units of the GPU budget and the queue-tree facts every budget module reads.

A leaf: imports nothing of the project, so ``scheduler`` and ``nodepool`` can take these from here.
"""

from collections.abc import Iterable
from typing import Any

GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
UNLIMITED = -1
# The most GPUs one pool's NodePools may be given (limits.gpus, NodePoolArgs.gpu_limit).
MAX_POOL_GPUS = 100000
"""A queue's ``gpu.quota`` / ``gpu.limit`` of -1: no bound (KAI's convention)."""
EPSILON = 1e-9


def _num(value: float) -> int | float:
    """A whole float as an int (``4.0`` -> ``4``), for manifests and messages."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def leaf_queue_names(queues: Iterable[Any]) -> set[str]:
    """Names of the queues no other queue names as its parent."""
    queues = list(queues)
    parents = {q.parent for q in queues if q.parent}
    return {q.name for q in queues if q.name not in parents}


def ancestors(queue: Any, queues: Iterable[Any]) -> list[Any]:
    """The queue's ancestors, nearest first (its parent, the parent's parent, ...). Stops at a
    name that is not a queue or at a loop (the scheduler spec reports both)."""
    by_name = {q.name: q for q in queues}
    out: list[Any] = []
    seen = {queue.name}
    parent = queue.parent
    while parent and parent in by_name and parent not in seen:
        seen.add(parent)
        out.append(by_name[parent])
        parent = by_name[parent].parent
    return out
