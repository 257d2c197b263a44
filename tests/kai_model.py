"""A model of KAI scheduler v0.16.8's admission limits, fed from rendered Queue manifests.

kai-scheduler/KAI-Scheduler v0.16.8, ``pkg/scheduler/plugins/proportion/capacity_policy/``:

- ``max_allowed_check.go`` L16-66: a job is refused when, for the job's queue or ANY ancestor
  (the loop on ``ParentQueue`` at L19), a resource with a limit (``MaxAllowed`` not -1) would
  exceed it: ``MaxAllowed < Allocated + requested``.
- ``quota_check.go`` L26-78: a non-preemptible job is refused when, for its queue or any
  ancestor, ``Deserved`` (the quota; -1 unlimited) ``< AllocatedNotPreemptible + requested``.

Both loop over ``rs.AllResources`` = CPU, Memory, GPU in that order
(``resource_share/resource_quantities.go`` L20; ``max_allowed_check.go`` L52, ``quota_check.go``
L64), skip a resource the job does not request (L57-60, L69-72) and refuse on the first that
does not fit, naming it; the limit check runs before the quota check (``capacity_policy.go``
L33, L60-66). Units, as KAI compares them: GPU units; CPU in millicores, the Queue's as
written and the pods' ``MilliValue`` (``api/resource_info/resource_requirment.go`` L50);
memory in bytes, the Queue's MB times 10^6 (``proportion.go`` L49, L339-342). A job is admitted
whole (a gang is one job), its requests the sum of its pods'.

Both hold at v0.17.0, the pin: ``max_allowed_check.go`` has no diff, and ``quota_check.go``
differs only in ``Schedulable()`` returning a shared result (L17-21), the same function at
L23-75 (docs/kai-scheduler.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

UNLIMITED = -1


# KAI's resource names and its loop order (resource_quantities.go L12-20).
RESOURCES = ("CPU", "Memory", "GPU")
MB = 1000 * 1000  # proportion.go L49: the Queue's memory in MB of 10^6 bytes


@dataclass
class Queue:
    name: str
    parent: str | None
    quota: float
    limit: float
    allocated: float = 0.0
    allocated_non_preemptible: float = 0.0
    cpu_quota: float = UNLIMITED
    cpu_limit: float = UNLIMITED
    memory_quota: float = UNLIMITED
    memory_limit: float = UNLIMITED
    used: dict[str, float] = field(default_factory=dict)
    used_non_preemptible: dict[str, float] = field(default_factory=dict)

    def bound(self, resource: str, key: str) -> float:
        """``MaxAllowed`` (key "limit") or ``Deserved`` ("quota") of ``resource`` in KAI's units
        (proportion.go L334-347: memory x 10^6, -1 stays -1 through math.Max)."""
        value = {
            ("CPU", "limit"): self.cpu_limit,
            ("CPU", "quota"): self.cpu_quota,
            ("Memory", "limit"): self.memory_limit,
            ("Memory", "quota"): self.memory_quota,
            ("GPU", "limit"): self.limit,
            ("GPU", "quota"): self.quota,
        }[(resource, key)]
        if resource == "Memory" and value != UNLIMITED:
            return value * MB
        return value

    def allocated_of(self, resource: str, non_preemptible: bool) -> float:
        if resource == "GPU":
            return self.allocated_non_preemptible if non_preemptible else self.allocated
        used = self.used_non_preemptible if non_preemptible else self.used
        return used.get(resource, 0.0)


@dataclass
class Kai:
    queues: dict[str, Queue] = field(default_factory=dict)

    @classmethod
    def of_manifests(cls, queues: Mapping[str, Mapping[str, Any]]) -> Kai:
        out = {}
        for name, q in queues.items():
            res = q["spec"]["resources"]
            gpu, cpu, memory = res["gpu"], res.get("cpu", {}), res.get("memory", {})
            out[name] = Queue(
                name,
                q["spec"].get("parentQueue"),
                gpu["quota"],
                gpu["limit"],
                cpu_quota=cpu.get("quota", UNLIMITED),
                cpu_limit=cpu.get("limit", UNLIMITED),
                memory_quota=memory.get("quota", UNLIMITED),
                memory_limit=memory.get("limit", UNLIMITED),
            )
        return cls(out)

    def ancestry(self, queue: str) -> list[Queue]:
        out = []
        name: str | None = queue
        while name is not None and name in self.queues:
            out.append(self.queues[name])
            name = self.queues[name].parent
        return out

    def refusal(
        self,
        queue: str,
        gpus: float,
        *,
        preemptible: bool = True,
        millicpu: float = 0.0,
        memory_bytes: float = 0.0,
    ) -> str | None:
        """Why the job would be refused (KAI's reason, the queue and, when it is not the GPU,
        the resource), or None."""
        requested = {"CPU": millicpu, "Memory": memory_bytes, "GPU": gpus}
        checks = [("limit", "OverLimit", False)]
        if not preemptible:
            checks.append(("quota", "NonPreemptibleOverQuota", True))
        for key, reason, non_preemptible in checks:
            for q in self.ancestry(queue):
                for resource in RESOURCES:
                    bound, want = q.bound(resource, key), requested[resource]
                    if bound == UNLIMITED or want == 0:
                        continue
                    if bound < q.allocated_of(resource, non_preemptible) + want:
                        what = "" if resource == "GPU" else f" ({resource})"
                        return f"{reason}: queue {q.name!r}{what}"
        return None

    def admit(
        self,
        queue: str,
        gpus: float,
        *,
        preemptible: bool = True,
        millicpu: float = 0.0,
        memory_bytes: float = 0.0,
    ) -> bool:
        if (
            self.refusal(
                queue, gpus, preemptible=preemptible, millicpu=millicpu, memory_bytes=memory_bytes
            )
            is not None
        ):
            return False
        for q in self.ancestry(queue):
            q.allocated += gpus
            for resource, amount in (("CPU", millicpu), ("Memory", memory_bytes)):
                q.used[resource] = q.used.get(resource, 0.0) + amount
                if not preemptible:
                    q.used_non_preemptible[resource] = (
                        q.used_non_preemptible.get(resource, 0.0) + amount
                    )
            if not preemptible:
                q.allocated_non_preemptible += gpus
        return True

    def admissible(self, jobs: Mapping[str, tuple[float, int, bool]]) -> dict[str, float]:
        """Offer each leaf queue's jobs (GPUs per job, job count, preemptible) round-robin, one
        job per queue at a time; returns the GPUs admitted per queue."""
        pending = {q: n for q, (_, n, _) in jobs.items()}
        admitted = dict.fromkeys(jobs, 0.0)
        progress = True
        while progress:
            progress = False
            for q, (size, _, preemptible) in jobs.items():
                if pending[q] and self.admit(q, size, preemptible=preemptible):
                    pending[q] -= 1
                    admitted[q] += size
                    progress = True
        return admitted


def kai_units(resources: Mapping[str, int]) -> float:
    """KAI's charge (kai-scheduler v0.16.8 ``pkg/scheduler/api/common_info/resources/mig.go``
    L13-15, applied by ``pkg/scheduler/api/resource_info/gpu_resource_requirment.go`` L185):
    1 per nvidia.com/gpu, the g-count per nvidia.com/mig-<g>g.<mem>gb."""
    total = 0.0
    for r, n in resources.items():
        if r == "nvidia.com/gpu":
            total += n
        elif r.startswith("nvidia.com/mig-"):
            total += int(r.removeprefix("nvidia.com/mig-").split("g.", 1)[0]) * n
    return total
