"""Tenants stay inside their queue (issue 29, points 1-4): pure data and the per-queue facts the
tenancy admission policies read (``tenancy_policies``).

What identifies a queue's tenants: their namespace, which the platform labels
``<labelDomain>/queue: <queue>`` (``manifests.queue_namespace_manifests``); the policies read that
label from ``namespaceObject`` (ValidatingAdmissionPolicy v1, Kubernetes 1.30+), so a tenant who can
only write inside the namespace cannot change it.

Which classes a queue may use (``allowed_priority_classes``): ``scheduler.queues[].priorityClasses``
when set, else by the queue's workload kind (``DEFAULT_CLASSES``); a queue whose GPU pools are all
preemptible (spot, ``preemptible: true``) runs preemptible work only: no class of value 100 or more
(KAI: non-preemptible, kai-scheduler v0.16.8 pkg/common/podgroup/preemptible.go L10-26), since its
nodes may go at any time and the pools' budgets count its ``gpu.limit``, not its quota.

Which pools a queue reaches (``PoolAccess``): each pool's name (the node label ``<labelDomain>/
pool``), its Karpenter NodePool names (``karpenter.sh/nodepool``, which Karpenter puts on every
node: kubernetes-sigs/karpenter v1.15.0 pkg/apis/v1/labels.go NodePoolLabelKey) and its
NoSchedule/NoExecute taints (``nodepool.manifests.pool_taints``); the queues routed to it come from
``scheduler.queues[].nodePools`` (the budget's routing). A pool routed to other queues only is
*forbidden* to a queue; a pool routed to it, or to none (shared), is not.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..spec import Problem, show
from .constants import BUILTIN_PRIORITY_CLASSES, NON_PREEMPTIBLE_PRIORITY, PRIORITY_CLASSES
from .spec import QueueSpec, leaf_queue_names

# The classes a queue may use by default, by its workload kind (``PlatformConfig.workload_kinds``),
# as the shipped templates use them (offline/examples.py: training ``train``, or ``build`` on a
# non-preemptible pool; inference ``inference``; notebooks ``build-preemptible``/``build``): KAI's
# four (PRIORITY_CLASSES). Every kind may use the preemptible ``train`` and ``build-preemptible``;
# the kinds differ in the non-preemptible classes. A leaf queue routed to no GPU pool (no kind)
# may use all four.
DEFAULT_CLASSES: Mapping[str | None, tuple[str, ...]] = {
    "training": ("train", "build-preemptible", "build"),
    "inference": ("inference", "build", "build-preemptible", "train"),
    "notebook": ("build", "build-preemptible", "train"),
    None: ("train", "build-preemptible", "build", "inference"),
}


@dataclass(frozen=True, kw_only=True)
class PoolAccess:
    """One node pool as the tenancy policies see it (plain data)."""

    name: str
    nodepools: tuple[str, ...]
    taints: tuple[Mapping[str, str], ...]
    queues: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class QueueTenancy:
    """One leaf queue as the tenancy policies see it: its namespace, the priority classes it may
    use, whether it may run non-preemptible work, and its pools."""

    queue: str
    namespace: str
    classes: tuple[str, ...]
    non_preemptible: bool
    pools: tuple[str, ...]


def preemptible_only(queue: QueueSpec, preemptible: Mapping[str, bool]) -> bool:
    """Whether every GPU pool the queue routes to is preemptible (``preemptible``: pool name ->
    preemptible, GPU pools only); false for a queue with no GPU pool."""
    routed = [preemptible[n] for n in queue.node_pools if n in preemptible]
    return bool(routed) and all(routed)


def class_values(extra: Mapping[str, int] | None = None) -> dict[str, int]:
    """Every class a queue may list: KAI's four and ``scheduler.priorityClasses`` (never the
    API server's system classes, which outrank every tenant pod)."""
    return {**PRIORITY_CLASSES, **dict(extra or {})}


def allowed_priority_classes(
    queue: QueueSpec,
    kind: str | None,
    preemptible: Mapping[str, bool],
    extra: Mapping[str, int] | None = None,
) -> tuple[str, ...]:
    """The classes the queue's pods and workloads may name (see the module docstring)."""
    if queue.priority_classes is not None:
        return tuple(queue.priority_classes)
    values = class_values(extra)
    classes = DEFAULT_CLASSES.get(kind, DEFAULT_CLASSES[None])
    if preemptible_only(queue, preemptible):
        classes = tuple(c for c in classes if values[c] < NON_PREEMPTIBLE_PRIORITY)
    return classes


def priority_class_problems(
    queues: Sequence[QueueSpec],
    preemptible: Mapping[str, bool],
    extra: Mapping[str, int] | None = None,
) -> list[Problem]:
    """``scheduler.queues[].priorityClasses``: a leaf queue's, non-empty, known classes only
    (KAI's four and ``scheduler.priorityClasses``), listed once, and no class of value 100 or
    more in a queue whose GPU pools are all preemptible. Paths under ``scheduler``."""
    values = class_values(extra)
    leaves = leaf_queue_names(queues)
    out: list[Problem] = []
    for i, queue in enumerate(queues):
        listed = queue.priority_classes
        if listed is None:
            continue
        path = ("queues", i, "priority_classes")
        if queue.name not in leaves:
            out.append(
                (
                    path,
                    f"is set, but {show(queue.name)} is a parent queue; only leaf "
                    "queues take workloads",
                )
            )
            continue
        if not listed:
            out.append(
                (
                    path,
                    f"is empty, so queue {show(queue.name)} could use no class; list "
                    f"some of {', '.join(values)}, or remove it for the default",
                )
            )
        for cls in listed:
            if cls in BUILTIN_PRIORITY_CLASSES:
                out.append(
                    (
                        path,
                        f"queue {show(queue.name)}: {show(cls)} is a system class, "
                        "which outranks every tenant pod; allowed: " + ", ".join(values),
                    )
                )
            elif cls not in values:
                out.append(
                    (
                        path,
                        f"queue {show(queue.name)}: {show(cls)} is not a known "
                        f"priority class; allowed: {', '.join(values)} (list classes "
                        "you create under scheduler.priorityClasses first)",
                    )
                )
            elif values[cls] >= NON_PREEMPTIBLE_PRIORITY and preemptible_only(queue, preemptible):
                allowed = [c for c in values if values[c] < NON_PREEMPTIBLE_PRIORITY]
                out.append(
                    (
                        path,
                        f"queue {show(queue.name)}: {show(cls)} is non-preemptible "
                        f"(value {values[cls]} >= {NON_PREEMPTIBLE_PRIORITY}) but every "
                        "pool of the queue is preemptible; allowed: " + ", ".join(allowed),
                    )
                )
        if len(set(listed)) != len(listed):
            out.append((path, f"queue {show(queue.name)} lists the same class twice"))
    return out


def queue_tenancy(
    queues: Sequence[QueueSpec],
    kinds: Mapping[str, str],
    preemptible: Mapping[str, bool],
    extra: Mapping[str, int] | None = None,
) -> list[QueueTenancy]:
    """Every leaf queue's tenancy facts, in queue order (``kinds``: workload kind by queue;
    ``preemptible``: GPU pool name -> preemptible)."""
    leaves = leaf_queue_names(queues)
    values = class_values(extra)
    out = []
    for queue in queues:
        if queue.name not in leaves:
            continue
        classes = allowed_priority_classes(queue, kinds.get(queue.name), preemptible, extra)
        out.append(
            QueueTenancy(
                queue=queue.name,
                namespace=queue.workload_namespace,
                classes=classes,
                non_preemptible=any(values.get(c, 0) >= NON_PREEMPTIBLE_PRIORITY for c in classes),
                pools=tuple(queue.node_pools),
            )
        )
    return out


def forbidden_pools(queue: QueueTenancy, pools: Sequence[PoolAccess]) -> list[PoolAccess]:
    """The pools routed to other queues and not to ``queue``: its tenants may not reach them."""
    return [p for p in pools if p.queues and queue.queue not in p.queues]
