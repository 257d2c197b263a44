"""A ResourceQuota per queue namespace: the GPU backstop that holds without the scheduler.

KAI enforces a queue's ``gpu.limit`` only for pods it schedules; a pod under another scheduler
(or with ``spec.nodeName``) is not counted. The API server's quota admission counts every pod
of the namespace, whatever its scheduler, so a ``ResourceQuota`` capping the GPU requests of a
queue's namespace at the queue's limit bounds what a bypass can take.

- Extended resources take only the ``requests.`` prefix in a quota ("As overcommit is not
  allowed for extended resources, it makes no sense to specify both requests and limits for the
  same extended resource in a quota. So for extended resources, only quota items with prefix
  ``requests.`` are allowed", https://kubernetes.io/docs/concepts/policy/resource-quotas/,
  "Resource quota for extended resources"; kubernetes v1.36.3
  ``pkg/quota/v1/evaluator/core/pods.go`` ``isExtendedResourceNameForQuota`` L84-93).
- Units as KAI charges the queue: 1 per ``nvidia.com/gpu`` (whole GPUs, time-slices and MIG
  ``single`` devices alike: what the node advertises), ``g`` per ``nvidia.com/mig-<g>g.<mem>gb``
  (kai-scheduler v0.16.8 ``pkg/scheduler/api/common_info/resources/mig.go`` L13-15, as
  ``budget.capacity.mig_g_count``). A quota counts devices, so each MIG resource is capped at
  ``floor(limit / g)`` devices: what the limit would admit of that profile alone (the quota cannot
  add up several profiles; KAI still does for the pods it schedules).
- The limit is the smallest finite ``gpu.limit`` of the queue and its ancestors (KAI checks every
  ancestor's limit: v0.16.8 ``pkg/scheduler/plugins/proportion/capacity_policy/
  max_allowed_check.go``), rounded down to whole devices (a pod requests whole
  ``nvidia.com/gpu``; a limit of 2.5 admits 2 whole GPUs and a half one through a fraction).
- A queue whose limit is unlimited (-1, itself and every ancestor) gets no quota: there is no
  budget to back up.
- GPU fractions do not touch the quota: a KAI fraction pod asks for its share with the
  ``gpu-fraction`` annotation and requests no ``nvidia.com/gpu`` (v0.16.8
  ``pkg/common/constants/constants.go`` L56); the GPU it shares is held by a resource-reservation
  pod that requests ``nvidia.com/gpu: 1`` in KAI's own namespace ``kai-resource-reservation``
  (``pkg/binder/binding/resourcereservation/resource_reservation.go`` L434-438, L527-533), never
  in a queue namespace. The platform's system pods run in their own namespaces too.
- Pods that request no GPU are untouched: quota admission demands explicit requests only for
  ``cpu`` and ``memory`` (kubernetes v1.36.3 ``pkg/quota/v1/evaluator/core/pods.go``
  ``Constraints`` L147-151, ``validationSet``).
- The quota is enforced once kube-controller-manager's resourcequota controller has filled its
  ``status.hard``: admission matches a pod against ``Status.Hard`` (k8s.io/apiserver v0.36.3
  ``pkg/admission/plugin/resourcequota/controller.go`` L468-475). A bare API server (the
  conformance suite's) admits the object and enforces nothing.
- ``vpc.amazonaws.com/efa`` is not capped: KAI's queues budget no EFA, and the interfaces come
  with the GPU nodes whose GPUs this quota already bounds.
"""

from __future__ import annotations

import math
from typing import Any

from ..budget.capacity import GPU_RESOURCE, MIG_RESOURCE_PREFIX, mig_g_count
from ..budget.stack import capacity_of
from ..budget.units import ancestors, leaf_queue_names
from ..nodepool.dra import dra_device_quota

QUOTA_NAME = "gpu-budget"
UNLIMITED = -1
REQUESTS = "requests."


def queue_gpu_limit(queue: Any, queues: Any) -> float | None:
    """The smallest finite ``gpu.limit`` of ``queue`` and its ancestors; None if all unlimited."""
    limits = [q.gpu.limit for q in [queue, *ancestors(queue, queues)] if q.gpu.limit != UNLIMITED]
    return min(limits) if limits else None


def queue_gpu_resources(queue: Any, config: Any) -> list[str]:
    """The GPU resources the queue's pools advertise (``nvidia.com/gpu``, ``nvidia.com/mig-*``),
    sorted; ``nvidia.com/gpu`` always (a pod may ask for it on any GPU pool)."""
    pools = {p.name: p for p in config.pools if p.is_gpu}
    out = {GPU_RESOURCE}
    for name in queue.node_pools:
        if name in pools:
            out |= set(capacity_of(pools[name], config.gpu_operator).per_gpu)
    return sorted(out)


def _hard(resource: str, limit: float) -> str:
    per = 1 if resource == GPU_RESOURCE else mig_g_count(resource.removeprefix(MIG_RESOURCE_PREFIX))
    return str(math.floor(limit / per + 1e-9))


def resource_quota_manifests(config: Any) -> list[dict[str, Any]]:
    """One ``ResourceQuota`` named ``QUOTA_NAME`` per leaf queue with a finite GPU limit, in its
    workload namespace; none when the scheduler is off."""
    scheduler = config.scheduler
    if not scheduler.enabled:
        return []
    leaves = leaf_queue_names(scheduler.queues)
    out = []
    for queue in scheduler.queues:
        if queue.name not in leaves:
            continue
        limit = queue_gpu_limit(queue, scheduler.queues)
        if limit is None:
            continue
        hard = {f"{REQUESTS}{r}": _hard(r, limit) for r in queue_gpu_resources(queue, config)}
        routed = [p for p in config.pools if p.name in queue.node_pools]
        hard.update(dra_device_quota(routed, limit))  # DRA pools' claims (nodepool/dra.py)
        out.append(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": QUOTA_NAME, "namespace": queue.workload_namespace},
                "spec": {"hard": hard},
            }
        )
    return out
