"""A model of KAI scheduler v0.16.8's admission limits, fed from rendered Queue manifests.

kai-scheduler/KAI-Scheduler v0.16.8, ``pkg/scheduler/plugins/proportion/capacity_policy/``:

- ``max_allowed_check.go`` L16-66: a job is refused when, for the job's queue or ANY ancestor
  (the loop on ``ParentQueue`` at L19), a resource with a limit (``MaxAllowed`` not -1) would
  exceed it: ``MaxAllowed < Allocated + requested``.
- ``quota_check.go`` L26-78: a non-preemptible job is refused when, for its queue or any
  ancestor, ``Deserved`` (the quota; -1 unlimited) ``< AllocatedNotPreemptible + requested``.

Both hold at v0.17.0, the pin: ``max_allowed_check.go`` has no diff, and ``quota_check.go``
differs only in ``Schedulable()`` returning a shared result (L17-21), the same function at
L23-75 (docs/kai-scheduler.md).

Only the ``gpu`` resource is modelled (the capacity tests' pods ask for GPUs); a job is one
unit of GPUs admitted whole (a gang is one job).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

UNLIMITED = -1


@dataclass
class Queue:
    name: str
    parent: str | None
    quota: float
    limit: float
    allocated: float = 0.0
    allocated_non_preemptible: float = 0.0


@dataclass
class Kai:
    queues: dict[str, Queue] = field(default_factory=dict)

    @classmethod
    def of_manifests(cls, queues: Mapping[str, Mapping[str, Any]]) -> Kai:
        out = {}
        for name, q in queues.items():
            gpu = q["spec"]["resources"]["gpu"]
            out[name] = Queue(name, q["spec"].get("parentQueue"), gpu["quota"], gpu["limit"])
        return cls(out)

    def ancestry(self, queue: str) -> list[Queue]:
        out = []
        name: str | None = queue
        while name is not None and name in self.queues:
            out.append(self.queues[name])
            name = self.queues[name].parent
        return out

    def refusal(self, queue: str, gpus: float, *, preemptible: bool = True) -> str | None:
        """Why the job would be refused (KAI's reason), or None."""
        for q in self.ancestry(queue):
            if q.limit != UNLIMITED and q.limit < q.allocated + gpus:
                return f"OverLimit: queue {q.name!r}"
        if not preemptible:
            for q in self.ancestry(queue):
                if q.quota != UNLIMITED and q.quota < q.allocated_non_preemptible + gpus:
                    return f"NonPreemptibleOverQuota: queue {q.name!r}"
        return None

    def admit(self, queue: str, gpus: float, *, preemptible: bool = True) -> bool:
        if self.refusal(queue, gpus, preemptible=preemptible) is not None:
            return False
        for q in self.ancestry(queue):
            q.allocated += gpus
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
