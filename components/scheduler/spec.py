"""Validated input specs of the ``scheduler`` configuration key: queues and their resources."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..budget.preemption import MAX_PREEMPTION_DELAY_SECONDS
from ..budget.units import leaf_queue_names as leaf_queue_names
from ..spec import (
    Problem,
    Spec,
    check_pattern,
    did_you_mean,
    doc,
    show,
)
from ..tenants.checks import queue_tenant_problems, scheduler_tenant_problems
from .constants import (
    BUILTIN_PRIORITY_CLASSES,
    DNS_LABEL,
    DNS_LABEL_TEXT,
    HIGHEST_USER_DEFINABLE_PRIORITY,
    PRIORITY_CLASSES,
    RESERVED_NAMESPACES,
    UNLIMITED,
    _num,
)

# A PriorityClass name is a DNS subdomain (kubernetes v1.36.3 pkg/apis/scheduling/validation).
DNS_SUBDOMAIN = r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

# An availability zone name (the NodePool spec's ZONE_PATTERN; scheduler does not import nodepool).
GANG_ZONE_PATTERN = r"^[a-z]{2}(-gov)?-[a-z]+-[0-9][a-z]$"

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
    pool_shares: Mapping[str, float] = doc(
        text="GPUs of the queue's budget each of its GPU pools gets, when it routes to several "
        "(default: an even split; see docs/friction-points.md).",
        default_factory=dict,
    )
    namespace: str | None = doc(
        None,
        "Namespace of a leaf queue's workloads (default: the queue's name); the scheduler "
        "creates it with Pod Security restricted and the label <labelDomain>/queue, which the "
        "do-not-disrupt admission policies select.",
    )
    gang_zone: str | None = doc(
        None,
        "Zone the queue's gang training template pins when its pool spans several zones or "
        "types (default: the pool's zone for efa, else the reserved type's reservation zone, "
        "else the VPC's first zone).",
    )
    gang_instance_type: str | None = doc(
        None,
        "Instance type the gang training template pins when its pool has several zones or types "
        "(default: a reservation's type, else the first in instanceTypes, whose NodePool's "
        "budget holds a node; see capacity.json gangs).",
    )
    inference_clients: tuple[str, ...] = doc(
        (),
        "Namespaces whose pods may call the queue's inference template (Triton's ports, through "
        "its NetworkPolicy); the queue's own namespace always may, no other by default.",
    )
    tenants: tuple[str, ...] = doc(
        (),
        "IAM principals of the leaf queue's tenants (the forms cluster.admins takes: full ARNs, "
        "or 'role/NAME' / 'user/NAME'): each gets an EKS access entry with AmazonEKSEditPolicy "
        "scoped to this queue's namespace only (docs/security.md, Tenants).",
    )
    workload_kind: Literal["training", "inference", "notebook"] | None = doc(
        None,
        "What the leaf queue runs, which picks its example template: training (a gang-scheduled "
        "Job), inference (a Triton Deployment) or notebook (one pod on a slice of a GPU). "
        "Default from the queue's GPU pools: training if one is efa; else from the first: "
        "notebook if it is time-sliced, training if it is preemptible or selects only training "
        "GPUs (a100, h100, h200, b200, b300), else inference.",
    )

    preemption_delay_seconds: int | None = doc(
        None,
        "Seconds the queue's workload templates wait before they may evict others (KAI v0.17.0 "
        "kai.scheduler/preemption-delay), from 0 (no delay) to 900 (Karpenter's registration "
        "timeout). Default on queues that share a pool with preemptible work: Karpenter's batch "
        "window plus the pool's estimated node start (docs/kai-scheduler.md); only such queues "
        "may set it.",
    )
    priority_classes: tuple[str, ...] | None = doc(
        None,
        "Priority classes the queue's pods and workloads may name (spec.priorityClassName, the "
        "priorityClassName label); the tenancy policy refuses any other. Default by "
        "workloadKind: training train, build-preemptible, build; inference inference, build, "
        "build-preemptible, train; notebook build, build-preemptible, train; without the "
        "classes of value 100 or more (non-preemptible) when every GPU pool of the queue is "
        "preemptible.",
    )

    @property
    def workload_namespace(self) -> str:
        """The namespace the queue's workload templates run in: ``namespace`` or the name."""
        return self.namespace if self.namespace is not None else self.name

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_pattern(self.name, DNS_LABEL, f"a queue name; expected {DNS_LABEL_TEXT}"):
            out.append((("name",), msg))
        if self.namespace is None and self.name in RESERVED_NAMESPACES:
            out.append(
                (
                    ("namespace",),
                    f"is unset, so the queue's namespace would be its name {show(self.name)}, "
                    "which is reserved; set namespace to one of its own",
                )
            )
        if self.namespace is not None:
            if msg := check_pattern(
                self.namespace, DNS_LABEL, f"a namespace name; expected {DNS_LABEL_TEXT}"
            ):
                out.append((("namespace",), msg))
            elif self.namespace in RESERVED_NAMESPACES:
                out.append(
                    (
                        ("namespace",),
                        f"{show(self.namespace)} is reserved; workloads need a namespace of "
                        "their own whose labels enforce Pod Security (default: the queue's name)",
                    )
                )
        if self.gang_zone is not None and (
            msg := check_pattern(
                self.gang_zone, GANG_ZONE_PATTERN, "an availability zone like 'us-west-2a'"
            )
        ):
            out.append((("gang_zone",), msg))
        for i, client in enumerate(self.inference_clients):
            if msg := check_pattern(
                client, DNS_LABEL, f"a namespace name; expected {DNS_LABEL_TEXT}"
            ):
                out.append((("inference_clients", i), msg))
        if len(set(self.inference_clients)) != len(self.inference_clients):
            out.append((("inference_clients",), "lists the same namespace twice"))
        out += queue_tenant_problems(self.tenants)
        if (delay := self.preemption_delay_seconds) is not None and (
            isinstance(delay, bool)
            or not isinstance(delay, int)
            or not 0 <= delay <= MAX_PREEMPTION_DELAY_SECONDS
        ):
            out.append(
                (
                    ("preemption_delay_seconds",),
                    f"{show(delay)} is not allowed; expected whole seconds from 0 (no delay) to "
                    f"{MAX_PREEMPTION_DELAY_SECONDS} (Karpenter's node registration timeout)",
                )
            )
        if self.parent is not None and self.parent == self.name:
            out.append((("parent",), f"{show(self.parent)} is the queue itself"))
        for i, pool in enumerate(self.node_pools):
            if msg := check_pattern(
                pool, DNS_LABEL, f"a node pool name; expected {DNS_LABEL_TEXT}"
            ):
                out.append((("node_pools", i), msg))
        if len(set(self.node_pools)) != len(self.node_pools):
            out.append((("node_pools",), "lists the same pool twice"))
        for pool, share in self.pool_shares.items():
            if pool not in self.node_pools:
                out.append(
                    (
                        ("pool_shares",),
                        f"{show(pool)} is not one of the queue's nodePools "
                        f"({', '.join(self.node_pools) or 'none'})",
                    )
                )
            elif share < 0:
                out.append(
                    (("pool_shares",), f"the share of {show(pool)} is {_num(share)}; expected 0 up")
                )
        return out


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
    priority_classes: Mapping[str, int] = doc(
        text="PriorityClasses you create yourself (name -> value), so that the do-not-disrupt "
        "policies know a class named by a pod's priorityClassName label (a label naming any "
        "other class is treated as KAI treats a missing class: the kind's default).",
        default_factory=dict,
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        for name, value in self.priority_classes.items():
            if msg := check_pattern(name, DNS_SUBDOMAIN, "a PriorityClass name"):
                out.append((("priority_classes",), msg))
            elif name in PRIORITY_CLASSES or name in BUILTIN_PRIORITY_CLASSES:
                out.append(
                    (
                        ("priority_classes",),
                        f"{show(name)} is already known (KAI's classes "
                        f"{', '.join(PRIORITY_CLASSES)} and the built-in "
                        f"{', '.join(BUILTIN_PRIORITY_CLASSES)}); list only classes you create",
                    )
                )
            elif (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not -HIGHEST_USER_DEFINABLE_PRIORITY <= value <= HIGHEST_USER_DEFINABLE_PRIORITY
            ):
                out.append(
                    (
                        ("priority_classes",),
                        f"the value of {show(name)} is {show(value)}; expected a whole number "
                        f"from -{HIGHEST_USER_DEFINABLE_PRIORITY} to "
                        f"{HIGHEST_USER_DEFINABLE_PRIORITY} (a PriorityClass's value)",
                    )
                )
        namespaces: dict[str, int] = {}
        for i, queue in enumerate(self.queues):
            if queue.name not in leaf_queue_names(self.queues):
                if queue.namespace is not None:
                    out.append(
                        (
                            ("queues", i, "namespace"),
                            f"is set, but {show(queue.name)} is a parent queue; only leaf queues "
                            "take workloads and get a namespace",
                        )
                    )
                continue
            ns = queue.workload_namespace
            if ns in namespaces:
                out.append(
                    (
                        ("queues", i, "namespace"),
                        f"{show(ns)} is already the namespace of queue "
                        f"{show(self.queues[namespaces[ns]].name)}; each queue needs its own",
                    )
                )
            else:
                namespaces[ns] = i
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
        out += scheduler_tenant_problems(self.queues, leaves)
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
