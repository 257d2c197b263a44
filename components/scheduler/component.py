"""KAI Scheduler, its queues and priority classes, and the Karpenter friction-point mitigations.

The component installs the ``kai-scheduler`` chart (``versions.KAI_SCHEDULER``) on the system
node group with GPU sharing and cluster autoscaling on, and lets Pulumi own what the chart would
otherwise create once and forget: the four priority classes (``train`` 50, ``build-preemptible``
75, ``build`` 100, ``inference`` 125) and the queues (``scheduling.run.ai/v2`` Queue, all nine
numbers explicit). The Run:ai x Karpenter friction points (FACTS §8.2) are handled here:

1. Over-quota pods trigger scale-up: ``pool_gpu_limits`` sizes each GPU pool's
   ``nvidia.com/gpu`` limit from the queues routed to it, and ``routing_problems`` reports
   routings that would leave a pool unbounded, unused or stuck at zero.
2. GPU fractions are invisible to Karpenter: ``global.gpuSharing`` and
   ``global.clusterAutoscaling`` (node-scale-adjuster); ``fractional_pod_template`` carries the
   GPU toleration and the pool affinity explicitly, because the pod requests no GPU.
3. Karpenter disrupts non-preemptible work: ``disruption_admission_policy`` adds (Kubernetes
   1.36+, MutatingAdmissionPolicy v1) or requires (older, ValidatingAdmissionPolicy v1)
   ``karpenter.sh/do-not-disrupt: "true"`` on pods of the non-preemptible priority classes.
4. Gangs spread across pools: ``training_job_template`` pins a gang to one pool and one zone
   (node affinity on the pool label, pod affinity on the pool label and the zone).

Units in configuration are human ones; the Queue CRD's are rendered: cpu in cores (rendered as
millicores, x1000), memory in GiB (rendered in MB = 10^6 bytes, x1073.741824), gpu in devices.
-1 means unlimited (quota) or no limit (limit) and is rendered as -1.
"""

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from .. import versions
from ..naming import TYPE_PREFIX
from ..spec import (
    Problem,
    Spec,
    SpecError,
    check_pattern,
    derived,
    did_you_mean,
    doc,
    require_instance,
    required_problem,
    set_derived,
    show,
)

if TYPE_CHECKING:  # cluster and gpu_operator import config, which imports this module
    from ..cluster import EksCluster
    from ..gpu_operator import GpuOperator

NAMESPACE = "kai-scheduler"
RELEASE_NAME = "kai-scheduler"
SCHEDULER_NAME = "kai-scheduler"
QUEUE_LABEL = "kai.scheduler/queue"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
PRIORITY_CLASS_LABEL = "priorityClassName"
BATCH_MIN_MEMBER_ANNOTATION = "kai.scheduler/batch-min-member"
GPU_FRACTION_ANNOTATION = "gpu-fraction"
GPU_MEMORY_ANNOTATION = "gpu-memory"
DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"
# KAI's scheduling-shard key (FACTS §7.5): never the project's pool label.
KAI_SHARD_LABEL_KEY = "kai.scheduler/node-pool"
ZONE_LABEL = "topology.kubernetes.io/zone"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"  # set on every Job pod by the Job controller
APP_LABEL = "app.kubernetes.io/name"
GPU_RESOURCE = "nvidia.com/gpu"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
HUGEPAGES_2MI_RESOURCE = "hugepages-2Mi"
GPU_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": EFA_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
# The chart's templates/priorityclasses/*.yaml: name and value only (no description,
# preemptionPolicy left at PreemptLowerPriority, not global default).
PRIORITY_CLASSES = {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}
# KAI treats priority >= 100 as non-preemptible: in-quota only, never preempted.
NON_PREEMPTIBLE_PRIORITY = 100
NON_PREEMPTIBLE_CLASSES = tuple(n for n, v in PRIORITY_CLASSES.items() if v >= 100)
UNLIMITED = -1
MILLICORES_PER_CORE = 1000
BYTES_PER_GIB = 1024**3
BYTES_PER_MB = 1000**2
ADMISSION_API = "admissionregistration.k8s.io/v1"
# MutatingAdmissionPolicy is GA (admissionregistration.k8s.io/v1, on by default) from Kubernetes
# 1.36 (KEP-3962: alpha 1.32, beta 1.34, stable 1.36); ValidatingAdmissionPolicy v1 since 1.30.
MUTATING_ADMISSION_POLICY_GA = (1, 36)
DISRUPTION_POLICY_NAME = "kai-non-preemptible-do-not-disrupt"
DNS_LABEL = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
DNS_LABEL_TEXT = "1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"
DEFAULT_TRAINING_CONTAINER = "trainer"
DEFAULT_INFERENCE_CONTAINER = "server"
DEFAULT_FRACTIONAL_CONTAINER = "main"


def _num(value: float) -> int | float:
    """A whole float as an int (``4.0`` -> ``4``), for manifests and messages."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# ---------------------------------------------------------------------------------------------
# Specs (configuration key ``scheduler``)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class QueueResourceSpec(Spec):
    """Quota, limit and over-quota weight of one resource of a queue (all three required).

    ``quota``: guaranteed amount; -1 unlimited, 0 no guarantee. ``limit``: the most the queue
    may use; -1 no limit. A limit of 0 is rejected: it admits nothing, so the queue's pods stay
    pending as Unschedulable and Karpenter keeps scaling up for them. With both finite, the
    limit must be at least the quota.
    """

    quota: float = doc(text="Guaranteed amount; -1 unlimited, 0 no guarantee.")
    limit: float = doc(text="Most the queue may use; -1 no limit; 0 is not allowed.")
    over_quota_weight: float = doc(
        text="Share of idle capacity beyond quota, relative to sibling queues (0: none)."
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        for name in ("quota", "limit"):
            value = getattr(self, name)
            if value != UNLIMITED and value < 0:
                out.append(
                    (
                        (name,),
                        f"{_num(value)} is not allowed; expected -1 (unlimited) or a number "
                        "from 0 up",
                    )
                )
        if self.limit == 0:
            out.append(
                (
                    ("limit",),
                    "0 admits nothing: the queue's pods would stay pending and Karpenter would "
                    "keep scaling up for them; use -1 for no limit or a positive number",
                )
            )
        if self.over_quota_weight < 0:
            out.append(
                (
                    ("over_quota_weight",),
                    f"{_num(self.over_quota_weight)} is negative; expected a number from 0 up",
                )
            )
        if self.quota == UNLIMITED and self.limit > 0:
            out.append(
                (
                    ("quota",),
                    f"is -1 (unlimited) but limit is {_num(self.limit)}; set a quota up to the "
                    "limit, or limit -1",
                )
            )
        if self.quota >= 0 and self.limit > 0 and self.limit < self.quota:
            out.append((("limit",), f"{_num(self.limit)} is below quota {_num(self.quota)}"))
        return out


@dataclass(frozen=True, kw_only=True)
class QueueSpec(Spec):
    """One KAI queue. Only leaf queues (no children) take workloads; they route to node pools."""

    name: str = doc(text="Queue name; pods select it with the label kai.scheduler/queue.")
    gpu: QueueResourceSpec = doc(text="GPUs, in devices (fractions allowed).")
    cpu: QueueResourceSpec = doc(text="CPU, in cores (rendered as millicores).")
    memory: QueueResourceSpec = doc(
        text="Memory, in GiB (rendered in MB of 10^6 bytes: 1 GiB = 1073.741824 MB)."
    )
    parent: str | None = doc(None, "Parent queue; a parent must not list nodePools.")
    display_name: str | None = doc(None, "Name shown in KAI tooling.")
    priority: int | None = doc(
        None, "Queue priority (KAI default 100): allocated first, reclaimed last."
    )
    node_pools: tuple[str, ...] = doc(
        (), "Node pools the queue's workloads run on (leaf queues: at least one)."
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_pattern(self.name, DNS_LABEL, f"a queue name; expected {DNS_LABEL_TEXT}"):
            out.append((("name",), msg))
        if self.parent is not None and self.parent == self.name:
            out.append((("parent",), f"{show(self.parent)} is the queue itself"))
        for i, pool in enumerate(self.node_pools):
            if msg := check_pattern(
                pool, DNS_LABEL, f"a node pool name; expected {DNS_LABEL_TEXT}"
            ):
                out.append((("node_pools", i), msg))
        if len(set(self.node_pools)) != len(self.node_pools):
            out.append((("node_pools",), "lists the same pool twice"))
        return out


def leaf_queue_names(queues: Sequence[QueueSpec]) -> set[str]:
    """Names of the queues no other queue names as its parent."""
    parents = {q.parent for q in queues if q.parent}
    return {q.name for q in queues if q.name not in parents}


@dataclass(frozen=True, kw_only=True)
class SchedulerSpec(Spec):
    """The KAI scheduler: queues, GPU sharing and Karpenter-aware autoscaling."""

    enabled: bool = doc(True, "Install KAI Scheduler (needs the GPU Operator).")
    queues: tuple[QueueSpec, ...] = doc(
        (), "Queue tree; at least one leaf queue (with nodePools) when enabled."
    )
    gpu_sharing: bool = doc(True, "GPU fractions (pod annotation gpu-fraction / gpu-memory).")
    cluster_autoscaling: bool = doc(
        True, "Node-scale-adjuster: scaling pods that make Karpenter provision for fractions."
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        by_name: dict[str, int] = {}
        for i, queue in enumerate(self.queues):
            if queue.name in by_name:
                out.append(
                    (
                        ("queues", i, "name"),
                        f"{show(queue.name)} is already the name of queues[{by_name[queue.name]}]",
                    )
                )
            else:
                by_name[queue.name] = i
        for i, queue in enumerate(self.queues):
            if queue.parent is None or queue.parent == queue.name:
                continue
            if queue.parent not in by_name:
                out.append(
                    (
                        ("queues", i, "parent"),
                        f"{show(queue.parent)} is not a queue; expected one of "
                        + ", ".join(sorted(by_name))
                        + did_you_mean(queue.parent, by_name),
                    )
                )
            elif self.queues[by_name[queue.parent]].node_pools:
                out.append(
                    (
                        ("queues", i, "parent"),
                        f"{show(queue.parent)} lists nodePools, so it is a leaf queue and cannot "
                        "be a parent; only leaf queues take workloads, so move its nodePools to "
                        "its children",
                    )
                )
        out += self._cycle_problems(by_name)
        leaves = leaf_queue_names(self.queues)
        for i, queue in enumerate(self.queues):
            if queue.name in leaves and not queue.node_pools:
                out.append(
                    (
                        ("queues", i, "node_pools"),
                        f"is empty, but {show(queue.name)} is a leaf queue; list the node pools "
                        "its workloads run on",
                    )
                )
        if self.enabled and not self.queues:
            out.append(
                (
                    ("queues",),
                    "is empty; define at least one leaf queue with nodePools (workloads can only "
                    "be submitted to leaf queues)",
                )
            )
        elif self.enabled and not leaves:
            out.append((("queues",), "has no leaf queue; every queue is some queue's parent"))
        return out

    def _cycle_problems(self, by_name: Mapping[str, int]) -> list[Problem]:
        out: list[Problem] = []
        reported: set[frozenset[str]] = set()
        for queue in self.queues:
            chain = [queue.name]
            current = queue
            while current.parent is not None and current.parent in by_name:
                if current.parent == current.name:
                    break
                if current.parent in chain:
                    cycle = chain[chain.index(current.parent) :]
                    if frozenset(cycle) not in reported:
                        reported.add(frozenset(cycle))
                        first = min(by_name[n] for n in cycle)
                        start = self.queues[first].name
                        ring = cycle[cycle.index(start) :] + cycle[: cycle.index(start)]
                        out.append(
                            (
                                ("queues", first, "parent"),
                                f"{show(self.queues[first].parent)} closes a cycle: "
                                + " -> ".join([*ring, start]),
                            )
                        )
                    break
                chain.append(current.parent)
                current = self.queues[by_name[current.parent]]
        return out


# ---------------------------------------------------------------------------------------------
# Pure builders: chart values, queues, priority classes
# ---------------------------------------------------------------------------------------------


def kai_values(
    *,
    spec: SchedulerSpec,
    system_node_selector: Mapping[str, str],
    system_tolerations: Sequence[Mapping[str, str]],
    pool_label_key: str,
) -> dict:
    """Helm values for the ``kai-scheduler`` chart v0.16.8 (every key exists in its defaults).

    ``global.nodePoolLabelKey`` stays unset: KAI's default shard then schedules on every node
    without ``kai.scheduler/node-pool``, which is all of them. ``pool_label_key`` (the project's
    pool label) is checked not to be that shard key, which would hide the pools' nodes.
    The published chart's ``global.registry`` is already ``ghcr.io/kai-scheduler/kai-scheduler``
    (the release workflow rewrites the repository default), so it is not set here.
    """
    if pool_label_key == KAI_SHARD_LABEL_KEY:
        raise ValueError(
            f"kai_values: pool_label_key {pool_label_key!r} is KAI's scheduling-shard key; nodes "
            "carrying it without a matching SchedulingShard are invisible to the default shard; "
            "use a label in your own domain, e.g. 'example.com/pool'"
        )
    return {
        "global": {
            "gpuSharing": spec.gpu_sharing,
            "clusterAutoscaling": spec.cluster_autoscaling,
            "nodeSelector": dict(system_node_selector),
            "tolerations": [dict(t) for t in system_tolerations],
        },
        "defaultPriorityClasses": {"enabled": False},
        "defaultQueue": {"createDefaultQueue": False},
    }


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
    ``<label_domain>/node-pools`` (read by the policy pack's GPU-limit check).
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


# ---------------------------------------------------------------------------------------------
# Friction point 1: GPU limits per pool from queue routing
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolRouting:
    """What the queue routing needs to know about one node pool.

    ``preemptible``: sized by the queues' ``gpu.limit`` (over-quota work may run there), else
    by their ``gpu.quota`` (non-preemptible work runs in quota only). ``gpu_cap``: the pool's
    own GPU limit, if configured. ``gpu``: false for CPU pools, which queues may route to but
    which have no GPU limit. ``slices_per_gpu``: a time-sliced pool advertises each physical GPU
    as that many ``nvidia.com/gpu``; queues count those slices, Karpenter counts physical GPUs.
    """

    preemptible: bool
    gpu_cap: int | None
    gpu: bool = True
    slices_per_gpu: int = 1


def _pool_demand(
    queues: Sequence[QueueSpec], leaves: set[str], pool: str, routing: PoolRouting
) -> tuple[float | None, list[int]]:
    """GPUs the leaf queues routed to ``pool`` may use (None: unlimited) and those queues."""
    total = 0.0
    unlimited = False
    feeders = []
    for i, queue in enumerate(queues):
        if queue.name not in leaves or pool not in queue.node_pools:
            continue
        feeders.append(i)
        value = queue.gpu.limit if routing.preemptible else queue.gpu.quota
        if value == UNLIMITED:
            unlimited = True
        else:
            total += value
    return (None if unlimited else total), feeders


def _pool_limit(demand: float | None, cap: int | None, slices_per_gpu: int = 1) -> int | None:
    """Physical GPUs for ``demand`` admitted GPUs (slices on a time-sliced pool), within the cap."""
    if demand is None:
        return cap
    demand = demand / slices_per_gpu
    whole = math.ceil(round(demand, 6))
    return whole if cap is None else min(whole, cap)


def pool_gpu_limits(
    queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]
) -> dict[str, int]:
    """``NodePool.spec.limits["nvidia.com/gpu"]`` for each GPU pool, from the queues routed to it.

    Preemptible pool: the sum of ``gpu.limit`` over the leaf queues routed to it; non-preemptible
    pool: the sum of ``gpu.quota``. Fractions round up to whole GPUs; a queue routed to several
    pools counts in full in each. With the pool's own cap the result is ``min(sum, cap)``; an
    unlimited queue (-1) leaves only the cap. A pool no queue routes to gets 0. Raises
    ``ValueError`` for a pool fed by an unlimited queue without a cap (``routing_problems``
    reports it first).
    """
    leaves = leaf_queue_names(queues)
    out: dict[str, int] = {}
    for name, routing in pools.items():
        if not routing.gpu:
            continue
        demand, _ = _pool_demand(queues, leaves, name, routing)
        limit = _pool_limit(demand, routing.gpu_cap, routing.slices_per_gpu)
        if limit is None:
            raise ValueError(
                f"pool_gpu_limits: node pool {name!r} is fed by a queue with unlimited GPUs and "
                "has no GPU cap; see routing_problems"
            )
        out[name] = limit
    return out


def routing_problems(
    queues: Sequence[QueueSpec], pools: Mapping[str, PoolRouting]
) -> list[Problem]:
    """Routing mistakes, with paths relative to the ``scheduler`` configuration key.

    A queue routed to an unknown pool; a GPU pool no leaf queue routes to; a pool fed by an
    unlimited queue without a GPU cap of its own; a pool whose computed GPU limit is 0.
    """
    out: list[Problem] = []
    leaves = leaf_queue_names(queues)
    for i, queue in enumerate(queues):
        for j, pool in enumerate(queue.node_pools):
            if pool not in pools:
                out.append(
                    (
                        ("queues", i, "node_pools", j),
                        f"{show(pool)} is not a node pool; expected one of "
                        + ", ".join(sorted(pools))
                        + did_you_mean(pool, pools),
                    )
                )
    for name, routing in pools.items():
        if not routing.gpu:
            continue
        demand, feeders = _pool_demand(queues, leaves, name, routing)
        field = "limit" if routing.preemptible else "quota"
        if not feeders:
            out.append(
                (
                    ("queues",),
                    f"no leaf queue routes to GPU node pool {show(name)}; its GPU limit would be "
                    "0, so Karpenter would never provision it; add it to a leaf queue's nodePools",
                )
            )
            continue
        if demand is None and routing.gpu_cap is None:
            for i in feeders:
                if getattr(queues[i].gpu, field) == UNLIMITED:
                    out.append(
                        (
                            ("queues", i, "gpu", field),
                            f"is -1 (unlimited) and the queue routes to node pool {show(name)}, "
                            "which has no GPU cap, so nothing bounds its scale-up; set a finite "
                            f"gpu.{field} or cap the pool's GPUs",
                        )
                    )
            continue
        if _pool_limit(demand, routing.gpu_cap, routing.slices_per_gpu) == 0:
            if routing.gpu_cap == 0:
                reason = "its GPU cap is 0"
            else:
                names = ", ".join(queues[i].name for i in feeders)
                kind = "preemptible" if routing.preemptible else "non-preemptible"
                reason = f"it is {kind}, and gpu.{field} of its queues ({names}) sums to 0"
            out.append(
                (
                    ("queues",),
                    f"the GPU limit of node pool {show(name)} comes to 0 ({reason}), so "
                    "Karpenter would never provision it",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# Friction point 3: do-not-disrupt on non-preemptible pods
# ---------------------------------------------------------------------------------------------


def _kubernetes_minor(version: str) -> tuple[int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"kubernetes_version {version!r} is not a version such as '1.36'")
    return int(match.group(1)), int(match.group(2))


def _cel_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def non_preemptible_expression(priority_classes: Sequence[str]) -> str:
    """CEL: the pod is non-preemptible for KAI.

    The label ``kai.scheduler/preemptibility`` decides when present; otherwise the priority
    class, taken as KAI does from the pod label ``priorityClassName`` before
    ``spec.priorityClassName``. (A ``priorityClassName`` label on the owning workload is not
    visible to pod admission.)
    """
    labels = "object.metadata.labels"
    has_label = f"has({labels}) && '{{key}}' in {labels}"
    return (
        f"({has_label.format(key=PREEMPTIBILITY_LABEL)}) "
        f"? {labels}['{PREEMPTIBILITY_LABEL}'] == 'non-preemptible' "
        f": (({has_label.format(key=PRIORITY_CLASS_LABEL)}) "
        f"? {labels}['{PRIORITY_CLASS_LABEL}'] "
        ": (has(object.spec.priorityClassName) ? object.spec.priorityClassName : '')) "
        f"in {_cel_list(priority_classes)}"
    )


ANNOTATED_EXPRESSION = (
    "has(object.metadata.annotations) && "
    f"'{DO_NOT_DISRUPT_ANNOTATION}' in object.metadata.annotations"
)
NOT_ANNOTATED_EXPRESSION = f"!({ANNOTATED_EXPRESSION})"
APPLY_DO_NOT_DISRUPT_EXPRESSION = (
    f'Object{{metadata: Object.metadata{{annotations: {{"{DO_NOT_DISRUPT_ANNOTATION}": "true"}}}}}}'
)
POD_CREATE_RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    ]
}


def disruption_admission_policy(
    *, kubernetes_version: str, priority_classes: Sequence[str] = NON_PREEMPTIBLE_CLASSES
) -> list[dict]:
    """The admission policy and binding that keep Karpenter off non-preemptible pods' nodes.

    From Kubernetes 1.36 (MutatingAdmissionPolicy GA): a mutating policy that adds
    ``karpenter.sh/do-not-disrupt: "true"`` (an ApplyConfiguration, which also creates a missing
    annotations map) to pods of ``priority_classes`` that do not carry the annotation; an
    explicit value, such as a duration, is left alone. Before 1.36: a validating policy whose
    binding denies such pods without the annotation. Only pod creation is matched.
    """
    non_preemptible = {
        "name": "non-preemptible",
        "expression": non_preemptible_expression(priority_classes),
    }
    if _kubernetes_minor(kubernetes_version) >= MUTATING_ADMISSION_POLICY_GA:
        policy = {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": DISRUPTION_POLICY_NAME},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": POD_CREATE_RULES,
                "matchConditions": [
                    non_preemptible,
                    {"name": "not-annotated", "expression": NOT_ANNOTATED_EXPRESSION},
                ],
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {"expression": APPLY_DO_NOT_DISRUPT_EXPRESSION},
                    }
                ],
            },
        }
        binding = {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": DISRUPTION_POLICY_NAME},
            "spec": {"policyName": DISRUPTION_POLICY_NAME},
        }
        return [policy, binding]
    classes = ", ".join(priority_classes)
    policy = {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": DISRUPTION_POLICY_NAME},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": POD_CREATE_RULES,
            "matchConditions": [non_preemptible],
            "validations": [
                {
                    "expression": ANNOTATED_EXPRESSION,
                    "message": (
                        f"non-preemptible pods (priority class {classes}, or label "
                        f"{PREEMPTIBILITY_LABEL}=non-preemptible) must carry the annotation "
                        f'{DO_NOT_DISRUPT_ANNOTATION}: "true", or Karpenter may consolidate '
                        "their node"
                    ),
                    "reason": "Invalid",
                }
            ],
        },
    }
    binding = {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": DISRUPTION_POLICY_NAME},
        "spec": {"policyName": DISRUPTION_POLICY_NAME, "validationActions": ["Deny"]},
    }
    return [policy, binding]


# ---------------------------------------------------------------------------------------------
# Friction points 2 and 4: workload templates
# ---------------------------------------------------------------------------------------------


def _pool_node_affinity(pool_label_key: str, pool: str) -> dict:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": pool_label_key, "operator": "In", "values": [pool]}]}
            ]
        }
    }


def _pod_annotations(priority_class: str, do_not_disrupt: str | None) -> dict[str, str]:
    if priority_class in NON_PREEMPTIBLE_CLASSES:
        return {DO_NOT_DISRUPT_ANNOTATION: "true"}
    if do_not_disrupt is not None:
        return {DO_NOT_DISRUPT_ANNOTATION: do_not_disrupt}
    return {}


def _resources(
    gpus: int, efa: int, hugepages_2mi: str | None, cpu: str | None, memory: str | None
) -> dict:
    amounts: dict[str, str] = {}
    if cpu is not None:
        amounts["cpu"] = cpu
    if memory is not None:
        amounts["memory"] = memory
    if gpus:
        amounts[GPU_RESOURCE] = str(gpus)
    if efa:
        amounts[EFA_RESOURCE] = str(efa)
    if hugepages_2mi is not None:
        amounts[HUGEPAGES_2MI_RESOURCE] = hugepages_2mi
    return {"requests": amounts, "limits": dict(amounts)}


def _check_workload(function: str, name: str, queue: str, pool: str) -> None:
    for what, value in (("name", name), ("queue", queue), ("pool", pool)):
        if not re.fullmatch(DNS_LABEL, value):
            raise ValueError(f"{function}: {what} {value!r} is not a DNS label ({DNS_LABEL_TEXT})")


def training_job_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    replicas: int,
    gpus_per_pod: int,
    image: str,
    command: Sequence[str],
    priority_class: str = "train",
    efa_per_pod: int = 0,
    hugepages_2mi: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    do_not_disrupt: str | None = None,
) -> dict:
    """A gang-scheduled multi-pod training ``batch/v1`` Job (Indexed) for KAI on one pool.

    KAI gangs it (``kai.scheduler/batch-min-member`` = replicas on the Job); required node
    affinity on the pool label keeps it in one pool; required pod affinity on the pool label and
    on the zone, selecting the Job's own pods (``batch.kubernetes.io/job-name``, set by the Job
    controller), keeps every pod in the same pool and AZ, which Karpenter honours even while the
    pool has no nodes. Non-preemptible classes get ``karpenter.sh/do-not-disrupt: "true"``;
    ``do_not_disrupt`` (e.g. ``"4h"``) protects a preemptible job for a while. Hugepages need
    a ``cpu`` or ``memory`` request (Kubernetes rejects hugepages alone).
    """
    _check_workload("training_job_template", name, queue, pool)
    if replicas < 1:
        raise ValueError(f"training_job_template: replicas {replicas} must be at least 1")
    if gpus_per_pod < 1:
        raise ValueError(f"training_job_template: gpus_per_pod {gpus_per_pod} must be at least 1")
    if efa_per_pod < 0:
        raise ValueError(f"training_job_template: efa_per_pod {efa_per_pod} must not be negative")
    if hugepages_2mi is not None and cpu is None and memory is None:
        raise ValueError(
            f"training_job_template: hugepages_2mi {hugepages_2mi!r} needs a cpu or memory "
            "request as well"
        )
    own_pods = {"matchLabels": {JOB_NAME_LABEL: name}}
    tolerations = [dict(GPU_TOLERATION)]
    if efa_per_pod:
        tolerations.append(dict(EFA_TOLERATION))
    pod_metadata: dict = {"labels": {QUEUE_LABEL: queue}}
    if annotations := _pod_annotations(priority_class, do_not_disrupt):
        pod_metadata["annotations"] = annotations
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue},
            "annotations": {BATCH_MIN_MEMBER_ANNOTATION: str(replicas)},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": replicas,
            "parallelism": replicas,
            "template": {
                "metadata": pod_metadata,
                "spec": {
                    "schedulerName": SCHEDULER_NAME,
                    "priorityClassName": priority_class,
                    "restartPolicy": "Never",
                    "affinity": {
                        "nodeAffinity": _pool_node_affinity(pool_label_key, pool),
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": own_pods, "topologyKey": pool_label_key},
                                {"labelSelector": own_pods, "topologyKey": ZONE_LABEL},
                            ]
                        },
                    },
                    "tolerations": tolerations,
                    "containers": [
                        {
                            "name": DEFAULT_TRAINING_CONTAINER,
                            "image": image,
                            "command": list(command),
                            "resources": _resources(
                                gpus_per_pod, efa_per_pod, hugepages_2mi, cpu, memory
                            ),
                        }
                    ],
                },
            },
        },
    }


def inference_deployment_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    replicas: int,
    gpus_per_pod: int,
    image: str,
    command: Sequence[str] = (),
    cpu: str | None = None,
    memory: str | None = None,
    priority_class: str = "inference",
) -> dict:
    """An inference ``apps/v1`` Deployment for KAI on one pool, protected from consolidation.

    Priority ``inference`` (non-preemptible, in-quota only) and the pod annotation
    ``karpenter.sh/do-not-disrupt: "true"``; required node affinity on the pool label and the
    GPU toleration. Replicas are independent servers, not a gang, so they are not tied to one
    zone (no pod affinity), which keeps the service up when a zone fails.
    """
    _check_workload("inference_deployment_template", name, queue, pool)
    if replicas < 1:
        raise ValueError(f"inference_deployment_template: replicas {replicas} must be at least 1")
    if gpus_per_pod < 1:
        raise ValueError(
            f"inference_deployment_template: gpus_per_pod {gpus_per_pod} must be at least 1"
        )
    container: dict = {"name": DEFAULT_INFERENCE_CONTAINER, "image": image}
    if command:
        container["command"] = list(command)
    container["resources"] = _resources(gpus_per_pod, 0, None, cpu, memory)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {APP_LABEL: name}},
            "template": {
                "metadata": {
                    "labels": {APP_LABEL: name, QUEUE_LABEL: queue},
                    "annotations": {DO_NOT_DISRUPT_ANNOTATION: "true"},
                },
                "spec": {
                    "schedulerName": SCHEDULER_NAME,
                    "priorityClassName": priority_class,
                    "affinity": {"nodeAffinity": _pool_node_affinity(pool_label_key, pool)},
                    "tolerations": [dict(GPU_TOLERATION)],
                    "containers": [container],
                },
            },
        },
    }


def fractional_pod_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    image: str,
    command: Sequence[str] = (),
    gpu_fraction: float | None = None,
    gpu_memory_mib: int | None = None,
    priority_class: str = "train",
    cpu: str | None = None,
    memory: str | None = None,
) -> dict:
    """A ``v1`` Pod asking KAI for part of a GPU (``gpu-fraction`` or ``gpu-memory``).

    The pod requests no ``nvidia.com/gpu``, so nothing adds the GPU toleration or steers it to a
    GPU pool: both are explicit here, and KAI's scaling pods copy them so that Karpenter
    provisions the right pool (FACTS §8.2, row 2). Requires ``global.gpuSharing``.
    """
    _check_workload("fractional_pod_template", name, queue, pool)
    if (gpu_fraction is None) == (gpu_memory_mib is None):
        raise ValueError("fractional_pod_template: set exactly one of gpu_fraction, gpu_memory_mib")
    if gpu_fraction is not None and not 0 < gpu_fraction < 1:
        raise ValueError(
            f"fractional_pod_template: gpu_fraction {gpu_fraction} must be between 0 and 1 "
            "(exclusive); request whole GPUs with nvidia.com/gpu"
        )
    if gpu_memory_mib is not None and gpu_memory_mib < 1:
        raise ValueError(
            f"fractional_pod_template: gpu_memory_mib {gpu_memory_mib} must be at least 1"
        )
    annotations = (
        {GPU_FRACTION_ANNOTATION: str(gpu_fraction)}
        if gpu_fraction is not None
        else {GPU_MEMORY_ANNOTATION: str(gpu_memory_mib)}
    )
    annotations.update(_pod_annotations(priority_class, None))
    container: dict = {"name": DEFAULT_FRACTIONAL_CONTAINER, "image": image}
    if command:
        container["command"] = list(command)
    if cpu is not None or memory is not None:
        container["resources"] = _resources(0, 0, None, cpu, memory)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue},
            "annotations": annotations,
        },
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            "priorityClassName": priority_class,
            "affinity": {"nodeAffinity": _pool_node_affinity(pool_label_key, pool)},
            "tolerations": [dict(GPU_TOLERATION)],
            "containers": [container],
        },
    }


# ---------------------------------------------------------------------------------------------
# Component
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class KaiSchedulerArgs:
    """Inputs of ``KaiScheduler``.

    ``cluster`` (the ``EksCluster`` component) gives the Kubernetes provider, the Kubernetes
    version (it picks the admission policy kind: mutating from 1.36), the project's pool label
    (``<labelDomain>/pool``, checked against KAI's shard key), the system nodes' selector and
    tolerations, and the dependency on the system node group. ``gpu_operator`` (the
    ``GpuOperator`` component) is what KAI needs first: RuntimeClass ``nvidia`` and the GPU
    feature discovery labels. Explicit arguments win over derived ones; ``depends_on`` adds to
    them. Without ``cluster``, ``k8s_provider``, ``kubernetes_version``, ``pool_label_key`` and
    ``system_node_selector`` are required; without ``gpu_operator``, ``depends_on`` must list
    it. ``disruption_policy`` switches the do-not-disrupt admission policy.
    """

    spec: SchedulerSpec
    cluster: "EksCluster | None" = None
    gpu_operator: "GpuOperator | None" = None
    k8s_provider: k8s.Provider | None = derived("cluster")
    kubernetes_version: str | None = derived("cluster")
    pool_label_key: str | None = derived("cluster")
    system_node_selector: Mapping[str, str] | None = derived("cluster")
    system_tolerations: Sequence[Mapping[str, str]] | None = derived("cluster")
    disruption_policy: bool = True
    depends_on: Sequence[pulumi.Resource] = ()

    def __post_init__(self) -> None:
        from ..cluster import EksCluster, system_tolerations
        from ..gpu_operator import GpuOperator

        problems = require_instance(self, "spec", SchedulerSpec)
        if not problems and not self.spec.enabled:
            problems.append(
                (
                    ("spec", "enabled"),
                    "is false; leave the KaiScheduler component out instead of creating it",
                )
            )
        after: list[pulumi.Resource] = []
        if self.cluster is not None:
            problems += require_instance(self, "cluster", EksCluster)
        if isinstance(self.cluster, EksCluster):
            cluster = self.cluster
            for name, value in (
                ("k8s_provider", cluster.provider),
                ("kubernetes_version", cluster.spec.kubernetes_version),
                ("pool_label_key", f"{cluster.spec.label_domain}/pool"),
                ("system_node_selector", dict(cluster.system_node_selector)),
                ("system_tolerations", list(cluster.system_tolerations)),
            ):
                if getattr(self, name) is None:
                    set_derived(self, name, value)
            after.append(cluster.system_node_group)
        if self.gpu_operator is not None:
            problems += require_instance(self, "gpu_operator", GpuOperator)
            after.append(self.gpu_operator)
        elif not self.depends_on:
            problems.append(
                (
                    ("gpu_operator",),
                    "is required; KAI needs the GPU Operator (RuntimeClass nvidia, GPU feature "
                    "discovery labels): pass the GpuOperator component, or list it in depends_on",
                )
            )
        set_derived(
            self,
            "depends_on",
            [*after, *(d for d in self.depends_on if not any(d is a for a in after))],
        )
        if self.system_tolerations is None:
            set_derived(self, "system_tolerations", system_tolerations())
        for name in (
            "k8s_provider",
            "kubernetes_version",
            "pool_label_key",
            "system_node_selector",
        ):
            if getattr(self, name) is None:
                problems.append(required_problem(name, "EksCluster", "cluster"))
        if problems:
            raise SpecError(type(self).__name__, problems)


_ADMISSION_TYPES = {
    "MutatingAdmissionPolicy": (
        "disruption-policy",
        k8s.admissionregistration.v1.MutatingAdmissionPolicy,
    ),
    "MutatingAdmissionPolicyBinding": (
        "disruption-policy-binding",
        k8s.admissionregistration.v1.MutatingAdmissionPolicyBinding,
    ),
    "ValidatingAdmissionPolicy": (
        "disruption-policy",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicy,
    ),
    "ValidatingAdmissionPolicyBinding": (
        "disruption-policy-binding",
        k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding,
    ),
}


class KaiScheduler(pulumi.ComponentResource):
    """KAI Scheduler chart, its priority classes and queues, and the do-not-disrupt policy."""

    namespace: pulumi.Output[str]
    release_name: pulumi.Output[str]
    queue_names: pulumi.Output[list]

    def __init__(
        self, name: str, args: KaiSchedulerArgs, opts: pulumi.ResourceOptions | None = None
    ):
        spec = args.spec
        pool_label_key = args.pool_label_key or ""
        values = kai_values(
            spec=spec,
            system_node_selector=args.system_node_selector or {},
            system_tolerations=args.system_tolerations or (),
            pool_label_key=pool_label_key,
        )
        admission = (
            disruption_admission_policy(kubernetes_version=args.kubernetes_version or "")
            if args.disruption_policy
            else []
        )
        super().__init__(f"{TYPE_PREFIX}KaiScheduler", name, None, opts)
        provider = args.k8s_provider
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAMESPACE),
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=list(args.depends_on)
            ),
        )
        chart = versions.KAI_SCHEDULER
        self.release = k8s.helm.v3.Release(
            f"{name}-chart",
            name=RELEASE_NAME,
            chart=chart.reference,
            version=chart.version,
            namespace=namespace.metadata.name,
            values=values,
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[namespace, *args.depends_on]
            ),
        )
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        for manifest in priority_class_manifests():
            class_name = manifest["metadata"]["name"]
            k8s.scheduling.v1.PriorityClass(
                f"{name}-priority-{class_name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=class_name),
                value=manifest["value"],
                opts=child,
            )
        created: dict[str, k8s.apiextensions.CustomResource] = {}
        for queue in queues_parents_first(spec.queues):
            manifest = queue_manifest(queue, label_domain=pool_label_key.rsplit("/", 1)[0])
            after: list[pulumi.Resource] = [self.release]
            if queue.parent in created:
                after.append(created[queue.parent])
            created[queue.name] = k8s.apiextensions.CustomResource(
                f"{name}-queue-{queue.name}",
                api_version=manifest["apiVersion"],
                kind=manifest["kind"],
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=after),
            )
        previous: list[pulumi.Resource] = []
        for manifest in admission:
            suffix, resource_type = _ADMISSION_TYPES[manifest["kind"]]
            previous = [
                resource_type(
                    f"{name}-{suffix}",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=manifest["metadata"]["name"]),
                    spec=manifest["spec"],
                    opts=pulumi.ResourceOptions(
                        parent=self, provider=provider, depends_on=previous
                    ),
                )
            ]
        self.namespace = namespace.metadata.name
        self.release_name = self.release.name
        self.queue_names = pulumi.Output.from_input([q.name for q in spec.queues])
        self.register_outputs(
            {
                "namespace": self.namespace,
                "release_name": self.release_name,
                "queue_names": self.queue_names,
            }
        )
