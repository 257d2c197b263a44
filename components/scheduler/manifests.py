"""Pure builders of the scheduler's Kubernetes objects: queues, priority classes and the queue
namespaces, with the selector the admission bindings match them by (plain data in, dicts out).
The admission policies are built in ``disruption_policies``, ``tenancy_policies`` and
``guardrails``.
"""

from collections.abc import Sequence

from .. import versions
from .constants import (
    BYTES_PER_GIB,
    BYTES_PER_MB,
    MILLICORES_PER_CORE,
    NAMESPACE_NAME_LABEL,
    PRIORITY_CLASSES,
    QUEUE_NAMESPACE_LABEL_SUFFIX,
    SYSTEM_NAMESPACES,
    UNLIMITED,
    _num,
)
from .podsecurity import RESTRICTED, namespace_manifest
from .spec import QueueResourceSpec, QueueSpec, leaf_queue_names


def _cpu(value: float) -> int | float:
    return UNLIMITED if value == UNLIMITED else _num(round(value * MILLICORES_PER_CORE, 3))


def _memory(value: float) -> int | float:
    return UNLIMITED if value == UNLIMITED else _num(round(value * BYTES_PER_GIB / BYTES_PER_MB, 6))


def _resource(spec: QueueResourceSpec, convert) -> dict:
    return {
        "quota": convert(spec.quota),
        "limit": convert(spec.limit),
        "overQuotaWeight": _num(spec.over_quota_weight),
    }


def queue_manifest(queue: QueueSpec, *, label_domain: str | None = None) -> dict:
    """The ``scheduling.run.ai/v2`` Queue: all nine numbers explicit, in the CRD's units.

    With ``label_domain``, a leaf queue records the node pools it routes to in the annotation
    ``<label_domain>/node-pools``, and its explicit ``poolShares`` in ``<label_domain>/
    pool-shares`` (``pool=share,...``), both read by the policy pack's GPU-limit check.
    """
    spec: dict = {}
    if queue.display_name is not None:
        spec["displayName"] = queue.display_name
    if queue.parent is not None:
        spec["parentQueue"] = queue.parent
    if queue.priority is not None:
        spec["priority"] = queue.priority
    spec["resources"] = {
        "cpu": _resource(queue.cpu, _cpu),
        "gpu": _resource(queue.gpu, _num),
        "memory": _resource(queue.memory, _memory),
    }
    metadata: dict = {"name": queue.name}
    if label_domain is not None and queue.node_pools:
        metadata["annotations"] = {f"{label_domain}/node-pools": ",".join(queue.node_pools)}
        if queue.pool_shares:
            metadata["annotations"][f"{label_domain}/pool-shares"] = ",".join(
                f"{pool}={_num(share)}" for pool, share in queue.pool_shares.items()
            )
    return {
        "apiVersion": versions.KAI_QUEUE_API,
        "kind": "Queue",
        "metadata": metadata,
        "spec": spec,
    }


def queues_parents_first(queues: Sequence[QueueSpec]) -> list[QueueSpec]:
    """The queues ordered so that every parent comes before its children (stable otherwise)."""
    by_name = {q.name: q for q in queues}
    done: list[QueueSpec] = []
    seen: set[str] = set()

    def visit(queue: QueueSpec, path: tuple[str, ...]) -> None:
        if queue.name in seen or queue.name in path:
            return
        if queue.parent in by_name:
            visit(by_name[queue.parent], (*path, queue.name))
        seen.add(queue.name)
        done.append(queue)

    for queue in queues:
        visit(queue, ())
    return done


def priority_class_manifests() -> list[dict]:
    """KAI's four priority classes, exactly as the chart's templates define them."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        for name, value in PRIORITY_CLASSES.items()
    ]


def queue_namespace_selector(label_domain: str) -> dict:
    """The bindings' ``matchResources.namespaceSelector``: the platform's queue namespaces
    (label ``<label_domain>/queue``), never a system namespace even if mislabelled."""
    return {
        "matchExpressions": [
            {"key": f"{label_domain}/{QUEUE_NAMESPACE_LABEL_SUFFIX}", "operator": "Exists"},
            {
                "key": NAMESPACE_NAME_LABEL,
                "operator": "NotIn",
                "values": list(SYSTEM_NAMESPACES),
            },
        ]
    }


def queue_namespace_manifests(
    queues: Sequence[QueueSpec], *, label_domain: str, kubernetes_version: str
) -> list[dict]:
    """The ``v1`` Namespace of every leaf queue (``QueueSpec.workload_namespace``), in queue
    order: Pod Security "restricted" (``podsecurity.namespace_manifest``) and the label
    ``<label_domain>/queue: <queue>`` the admission bindings select. Other builders may add
    objects into these namespaces beside them."""
    leaves = leaf_queue_names(queues)
    out = []
    for queue in queues:
        if queue.name not in leaves:
            continue
        manifest = namespace_manifest(queue.workload_namespace, RESTRICTED, kubernetes_version)
        manifest["metadata"]["labels"][f"{label_domain}/{QUEUE_NAMESPACE_LABEL_SUFFIX}"] = (
            queue.name
        )
        out.append(manifest)
    return out
