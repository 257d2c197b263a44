"""Queue CPU and memory against the GPU budget (issue 30 point 8, review L5).

Pure (no Pulumi): queue specs, the capacity plan and the template's pods in, plain data out.

KAI admits a job only if, for its queue and every ancestor, none of its CPU, memory or GPU
requests would pass the queue's ``limit`` (kai-scheduler v0.16.8 ``pkg/scheduler/plugins/
proportion/capacity_policy/max_allowed_check.go`` L19-46, the loop over ``ParentQueue``, and
L51-65, the loop over ``rs.AllResources`` = CPU, Memory, GPU: ``resource_share/
resource_quantities.go`` L20); a non-preemptible job, in addition, only if none would pass the
queue's ``quota`` (``quota_check.go`` L35-56 and L61-77). Units: a queue's CPU in millicores
against the pods' millicores (``resource_info/resource_requirment.go`` L50), its memory in MB of
10^6 bytes (``proportion.go`` L49, L339-342) against the pods' bytes; the config's cores and GiB
render to those (``scheduler.manifests``), so the checks here compare cores and GiB. KAI counts a
pod's requests as the sum of its containers' with its init containers' peak
(``pod_info/pod_info.go`` L388-403).

The budget buys GPUs for a queue (``queues``, ``plan``) whatever its CPU and memory allow, and
Karpenter provisions for the pods KAI refuses (they are ``PodScheduled=False/Unschedulable``,
see ``queues``). So a queue whose CPU or memory limit cannot hold the pods that would use its
GPUs buys GPUs it never uses. What one pod needs is the platform's workload template of the queue
(``TEMPLATE_*`` below, which ``offline.examples`` renders; ``template_pod``):

- *one node*: the template's pods that fill one node of a pool (the pool's smallest node; the
  training template's one pod per node), at most the queue's GPU budget there. A finite
  ``cpu``/``memory`` ``limit`` of the queue or an ancestor below it, or a finite ``quota``
  below it where the template's pods are non-preemptible, is a configuration error
  (``resource_problems``): KAI refuses the template's pods, so every GPU bought for them sits idle;
- *the budget*: the template's pods on every GPU unit the budget gives the leaves under that
  queue (their cut shares, ``queues.capped_shares``). A bound below it is a warning
  (``resource_warnings``): a judgement, since the queue's own workloads may ask less per GPU,
  and the leaves under an ancestor use their whole budgets at once only when all are flooded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..spec import Problem, show
from .capacity import PoolCapacity, mig_g_count
from .queues import PoolRouting
from .units import EPSILON, MIG_RESOURCE_PREFIX, UNLIMITED, _num, ancestors

if TYPE_CHECKING:  # read by attribute: the budget imports no capability package
    from ..scheduler.spec import QueueSpec
    from .plan import QueuePlan

# The workload templates' requests (offline.examples renders them; KAI charges requests).
# Training off EFA, per GPU: small enough for the smallest GPU instance (g6.xlarge: 4 vCPU,
# 16 GiB) to hold one.
CPU_PER_GPU = 2
MEMORY_GIB_PER_GPU = 8
# Training on EFA: one pod per whole node (p5/p5e: 192 vCPU, 2 TiB).
EFA_CPU, EFA_MEMORY = "32", "256Gi"
# Inference: one GPU per pod; a notebook: one slice, half a GPU or one GPU per pod.
INFERENCE_CPU, INFERENCE_MEMORY = "2", "8Gi"
NOTEBOOK_CPU, NOTEBOOK_MEMORY = "1", "4Gi"
# Half a GPU per notebook on a pool of whole GPUs with KAI GPU sharing (offline.examples).
NOTEBOOK_GPU_FRACTION = 0.5

RESOURCES = ("cpu", "memory")
UNIT = {"cpu": "cores", "memory": "GiB"}
KEYS = ("limit", "quota")


def _gib(quantity: str) -> float:
    return float(quantity.removesuffix("Gi"))


@dataclass(frozen=True)
class TemplatePod:
    """One pod of a queue's workload template on one pool: the KAI GPU units it requests, its
    CPU (cores) and memory (GiB) requests, and whether KAI treats it as preemptible."""

    units: float
    cpu: float
    memory: float
    preemptible: bool
    per_node: int = 0
    """Pods of it one node holds (0: as many as the node's GPU units over ``units``)."""

    def amount(self, resource: str) -> float:
        return self.cpu if resource == "cpu" else self.memory


def template_pod(
    kind: str, *, efa: bool, preemptible: bool, capacity: PoolCapacity, gpu_sharing: bool
) -> TemplatePod:
    """The pod ``offline.examples`` renders for a queue of workload ``kind`` on a pool.

    Training: one pod of the pool's smallest node's GPUs (``CPU_PER_GPU``/``MEMORY_GIB_PER_GPU``
    each; on EFA ``EFA_CPU``/``EFA_MEMORY`` a node), priority ``train`` on a preemptible pool
    else ``build``. Inference: one GPU, ``inference`` (non-preemptible). Notebook: a slice (one
    time-sliced replica or MIG device under ``single``, the smallest MIG device under
    ``mixed``), else half a GPU with GPU sharing or one GPU, ``build-preemptible`` on a
    preemptible pool else ``build``. KAI's classes: ``train`` 50 and ``build-preemptible`` are
    preemptible, ``build`` 100 and ``inference`` 125 are not (priority >= 100,
    ``pkg/common/podgroup/preemptible.go`` L10-26)."""
    if kind == "training":
        gpus = capacity.node_gpus
        if efa:
            return TemplatePod(gpus, float(EFA_CPU), _gib(EFA_MEMORY), preemptible, 1)
        return TemplatePod(gpus, CPU_PER_GPU * gpus, MEMORY_GIB_PER_GPU * gpus, preemptible, 1)
    if kind == "inference":
        return TemplatePod(1, float(INFERENCE_CPU), _gib(INFERENCE_MEMORY), False)
    if capacity.mode in ("time-sliced", "mig-single"):
        units: float = 1
    elif capacity.mode == "mig-mixed":
        units = min(mig_g_count(r.removeprefix(MIG_RESOURCE_PREFIX)) for r in capacity.per_gpu)
    else:
        units = NOTEBOOK_GPU_FRACTION if gpu_sharing else 1
    return TemplatePod(units, float(NOTEBOOK_CPU), _gib(NOTEBOOK_MEMORY), preemptible)


@dataclass(frozen=True)
class Need:
    """What one leaf's template needs on one pool: its pod, the GPU units the budget gives the
    leaf there, and the GPU units one node of the pool offers."""

    leaf: str
    pool: str
    pod: TemplatePod
    budget_units: float
    node_units: float

    def one_node(self, resource: str) -> float:
        """The resource of the pods that fill one node, at most the leaf's budget (one pod at
        least)."""
        if self.pod.per_node:
            pods = float(self.pod.per_node)
        else:
            room = min(self.node_units, self.budget_units)
            pods = max(1.0, math.floor(room / self.pod.units + EPSILON))
        return pods * self.pod.amount(resource)

    def budget(self, resource: str) -> float:
        """The resource of the pods on every GPU unit of the leaf's budget on the pool."""
        return self.budget_units / self.pod.units * self.pod.amount(resource)


def needs(
    plans: Sequence[QueuePlan],
    pools: Mapping[str, PoolRouting],
    limits: Mapping[str, int],
    pods: Mapping[tuple[str, str], TemplatePod],
) -> list[Need]:
    """Every (leaf, GPU pool) the budget buys for and its template runs a pod on: ``pods``
    keyed by (leaf, pool); ``limits``: the pools' budgets (physical GPUs)."""
    out = []
    for plan in plans:
        for pool, share in plan.shares.items():
            pod = pods.get((plan.name, pool))
            routing = pools[pool]
            units = share if share is not None else limits[pool] * routing.slices_per_gpu
            if pod is None or units <= EPSILON:
                continue
            node = routing.node_gpus * routing.slices_per_gpu
            out.append(Need(plan.name, pool, pod, units, node))
    return out


@dataclass(frozen=True)
class Bound:
    """A finite ``cpu``/``memory`` ``limit`` or ``quota`` of a queue, and the needs under it
    (for a quota, those of non-preemptible pods only)."""

    index: int
    queue: str
    resource: str
    key: str
    value: float
    under: tuple[Need, ...]

    def one_node(self) -> Need | None:
        """The need whose one node asks the most of the resource, if above the bound."""
        worst = max(self.under, key=lambda n: n.one_node(self.resource), default=None)
        if worst is None or worst.one_node(self.resource) <= self.value + EPSILON:
            return None
        return worst

    def budget(self) -> float:
        return sum(n.budget(self.resource) for n in self.under)

    def holds_budget(self) -> bool:
        return self.budget() <= self.value + EPSILON


def bounds(queues: Sequence[QueueSpec], all_needs: Sequence[Need]) -> list[Bound]:
    """Every finite CPU/memory limit and quota with a need under it, in the queues' order."""
    by_name = {q.name: q for q in queues}
    lineage = {
        n.leaf: {n.leaf} | {a.name for a in ancestors(by_name[n.leaf], queues)} for n in all_needs
    }
    out = []
    for i, queue in enumerate(queues):
        for resource in RESOURCES:
            spec = getattr(queue, resource)
            for key in KEYS:
                value = getattr(spec, key)
                if value == UNLIMITED:
                    continue
                under = tuple(
                    n
                    for n in all_needs
                    if queue.name in lineage[n.leaf] and (key == "limit" or not n.pod.preemptible)
                )
                if under:
                    out.append(Bound(i, queue.name, resource, key, float(value), under))
    return out


def _of(bound: Bound, leaf: str) -> str:
    if bound.queue == leaf:
        return f"queue {show(leaf)}"
    return f"queue {show(bound.queue)} (an ancestor of {show(leaf)})"


def _why(key: str) -> str:
    if key == "limit":
        return (
            "KAI refuses a job when any of its CPU, memory or GPU requests would pass the limit "
            "of its queue or of an ancestor"
        )
    return (
        "KAI refuses a non-preemptible job when any of its CPU, memory or GPU requests would "
        "pass the quota of its queue or of an ancestor"
    )


def resource_problems(all_bounds: Sequence[Bound], kinds: Mapping[str, str]) -> list[Problem]:
    """Each CPU/memory limit or quota that cannot hold one node of the template's pods (paths
    relative to ``scheduler``)."""
    out: list[Problem] = []
    for b in all_bounds:
        need = b.one_node()
        if need is None:
            continue
        unit = UNIT[b.resource]
        amount = need.one_node(b.resource)
        pods = _num(round(amount / need.pod.amount(b.resource), 6))
        per = _num(need.pod.amount(b.resource))
        out.append(
            (
                ("queues", b.index, b.resource, b.key),
                f"{_num(b.value)} {unit} of {_of(b, need.leaf)} cannot hold one node of pool "
                f"{show(need.pool)} for the {kinds.get(need.leaf, 'workload')} template of "
                f"{show(need.leaf)}: {pods} pod(s) x {per} {unit} = {_num(round(amount, 6))} "
                f"{unit}; {_why(b.key)}, so the GPUs Karpenter buys for them stay idle; raise "
                f"{b.resource}.{b.key} to at least {_num(round(amount, 6))}, or -1",
            )
        )
    return out


def resource_warnings(all_bounds: Sequence[Bound]) -> list[str]:
    """Each CPU/memory limit or quota below what the template's pods on its leaves' whole GPU
    budget request (those of ``resource_problems`` left out)."""
    out = []
    for b in all_bounds:
        if b.one_node() is not None or b.holds_budget():
            continue
        unit = UNIT[b.resource]
        parts = "; ".join(
            f"{show(n.leaf)} {_num(round(n.budget_units, 6))} GPU units on {show(n.pool)} x "
            f"{_num(round(n.pod.amount(b.resource) / n.pod.units, 6))}"
            for n in b.under
        )
        need = _num(round(b.budget(), 6))
        out.append(
            f"warning: scheduler.queues[{b.index}]({b.queue}).{b.resource}.{b.key} is "
            f"{_num(b.value)} {unit}, below the {need} {unit} the workload templates' pods "
            f"request on the GPU budget under it ({parts} {unit} per GPU unit): {_why(b.key)}, "
            f"so GPUs Karpenter buys for them can stay idle; raise it to {need} (or -1), or "
            "lower the queues' GPU budget"
        )
    return out


def resource_document(
    queues: Sequence[QueueSpec], all_needs: Sequence[Need], all_bounds: Sequence[Bound]
) -> list[dict]:
    """``capacity.json``'s ``queueResources``: per leaf queue the template's pod per pool and,
    per resource, what one node and the GPU budget need and each bound over it."""
    out = []
    for queue in queues:
        mine = [n for n in all_needs if n.leaf == queue.name]
        if not mine:
            continue
        entry: dict = {
            "name": queue.name,
            "pods": {
                n.pool: {
                    "gpuUnits": _num(n.pod.units),
                    "cpu": _num(n.pod.cpu),
                    "memoryGiB": _num(n.pod.memory),
                    "preemptible": n.pod.preemptible,
                    "budgetGpuUnits": _num(round(n.budget_units, 6)),
                }
                for n in mine
            },
        }
        for resource in RESOURCES:
            over = [
                b for b in all_bounds if b.resource == resource and any(n in mine for n in b.under)
            ]
            entry[resource] = {
                "oneNode": _num(round(max(n.one_node(resource) for n in mine), 6)),
                "budget": _num(round(sum(n.budget(resource) for n in mine), 6)),
                "bounds": [
                    {
                        "queue": b.queue,
                        "key": b.key,
                        "value": _num(b.value),
                        "oneNode": _num(round(max(n.one_node(resource) for n in b.under), 6)),
                        "budget": _num(round(b.budget(), 6)),
                        "holdsOneNode": b.one_node() is None,
                        "holdsBudget": b.holds_budget(),
                    }
                    for b in over
                ],
                "reachable": all(b.holds_budget() for b in over),
            }
        out.append(entry)
    return out


def resource_lines(entries: Sequence[Mapping]) -> list[str]:
    """``queueResources`` as lines of ``summary.md`` and ``plan.md``: per leaf queue and
    resource, what its GPU budget's and one node's template pods request, and each bound over
    it (``below`` where it does not hold the budget, ``below one node`` where not even that)."""
    out = []
    for entry in entries:
        parts = []
        for resource in RESOURCES:
            r = entry[resource]
            unit = UNIT[resource]
            bounds_text = ", ".join(
                f"{b['queue']}.{resource}.{b['key']} {b['value']}"
                + (
                    ""
                    if b["holdsBudget"]
                    else " (below)"
                    if b["holdsOneNode"]
                    else " (below one node)"
                )
                for b in r["bounds"]
            )
            within = f" within {bounds_text}" if bounds_text else ", unbounded"
            parts.append(
                f"{resource} {r['budget']} {unit} for its GPU budget ({r['oneNode']} for one "
                f"node){within}"
            )
        out.append(f"queue {entry['name']}: " + "; ".join(parts))
    return out
