"""A model of Karpenter v1.14.1's NodePool limit accounting, for the capacity tests.

Every rule here is Karpenter's, at the pinned version (kubernetes-sigs/karpenter v1.14.1 and
aws/karpenter-provider-aws v1.14.1):

- An instance type's capacity has ``nvidia.com/gpu`` = its NVIDIA GPU count
  (aws ``pkg/providers/instancetype/types.go`` L342), with the NodeOverlays that match it
  applied when the ``NodeOverlay`` gate is on: highest weight first, per resource key the first
  overlay wins (``pkg/controllers/nodeoverlay/store.go`` L199-205); an overlay's value REPLACES
  the type's (``pkg/cloudprovider/types.go`` L313-316 ``lo.Assign``); two overlays of equal
  weight setting the same key conflict and the later one is not applied (``store.go``
  L212-235). Overlays match on the NodePool's template labels and the type's labels
  (``pkg/controllers/nodeoverlay/controller.go`` L231-245).
- A NodePool's usage is the sum of its nodes' ``StateNode.Capacity()``: the NodeClaim's
  capacity (the launched type's, overlays applied, zeros dropped) until the node is
  initialized, then ``Node.Status.Capacity``, what the device plugin advertises
  (``pkg/controllers/state/statenode.go`` L359-375; ``cluster.go`` L794-826). Nodes marked for
  deletion count zero (``cluster.go`` L803).
- The scheduler starts from the limits, subtracts every active node's capacity and each new
  NodeClaim's (``scheduling/scheduler.go`` L183-185, L786, L835-842), and keeps an instance type
  only while its capacity of every limited resource is at most what remains
  (``filterByRemainingResources``, L1068-1085): usage + candidate <= limit.

The pod side is kube-scheduler's: a pod binds to a node with enough free allocatable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eks_gpu_platform import catalog

GPU = "nvidia.com/gpu"

Resources = dict[str, int]


def overlaid_capacity(
    instance_type: str,
    nodepool: Mapping[str, Any],
    overlays: Sequence[Mapping[str, Any]],
    gate: bool = True,
) -> Resources:
    """The type's capacity as Karpenter's simulation sees it for this NodePool."""
    capacity: Resources = {GPU: catalog.INSTANCE_TYPES[instance_type].gpu_count}
    if not gate:
        return capacity
    labels = dict(nodepool["spec"]["template"]["metadata"].get("labels", {}))
    labels["karpenter.sh/nodepool"] = nodepool["metadata"]["name"]
    labels["node.kubernetes.io/instance-type"] = instance_type
    matching = [
        o
        for o in overlays
        if all(
            r["operator"] == "In" and labels.get(r["key"]) in r["values"]
            for r in o["spec"]["requirements"]
        )
    ]
    # Higher weight first; equal weights in reverse name order (nodeoverlay.go L130-139).
    matching.sort(key=lambda o: (-o["spec"].get("weight", 0), o["metadata"]["name"]))
    set_by: dict[str, int] = {}
    update: Resources = {}
    for o in matching:
        weight = o["spec"].get("weight", 0)
        # Only GPU resources are modelled (hugepages and the like are quantities, not counts).
        values = {
            k: int(v)
            for k, v in o["spec"].get("capacity", {}).items()
            if k.startswith("nvidia.com/")
        }
        if any(k in set_by and set_by[k] == weight for k in values):
            continue  # Conflict: not applied
        for key, value in values.items():
            if key not in update:
                update[key] = value
                set_by[key] = weight
    return {**capacity, **update}


def fits(request: Mapping[str, int], free: Mapping[str, int]) -> bool:
    return all(free.get(r, 0) >= n for r, n in request.items())


@dataclass
class Node:
    instance_type: str
    advertised: Resources
    free: Resources
    initialized: bool = True
    deleting: bool = False


@dataclass
class NodePoolModel:
    """One Karpenter NodePool, its instance types and the nodes it launched."""

    manifest: Mapping[str, Any]
    instance_types: Sequence[str]
    overlays: Sequence[Mapping[str, Any]] = ()
    advertised: Callable[[str], Resources] = lambda t: {GPU: catalog.INSTANCE_TYPES[t].gpu_count}
    gate: bool = True
    nodes: list[Node] = field(default_factory=list)

    @property
    def limits(self) -> Resources:
        raw = self.manifest["spec"].get("limits", {})
        return {r: int(v) for r, v in raw.items() if r.startswith("nvidia.com/")}

    def capacity(self, instance_type: str) -> Resources:
        return overlaid_capacity(instance_type, self.manifest, self.overlays, self.gate)

    def usage(self) -> Resources:
        total: Resources = {}
        for node in self.nodes:
            if node.deleting:
                continue
            counted = node.advertised if node.initialized else self.capacity(node.instance_type)
            for r, n in counted.items():
                total[r] = total.get(r, 0) + n
        return total

    def provision(self, pods: Sequence[Mapping[str, int]], rounds: int = 100) -> list[dict]:
        """Bind what fits, let Karpenter launch for the rest, initialize, repeat. Returns the
        pods left pending.

        Binding is first fit in node order, and a new NodeClaim takes a pod when the pod fits
        what the claim has left. Free room only shrinks within a pass, so a node or claim that
        did not fit a pod cannot fit a later pod with the same requests: each pass resumes the
        search for such a pod where the last one stopped (the same first fit, without scanning
        the full nodes again; requests are never negative)."""
        pending = [dict(p) for p in pods]
        capacity = {t: self.capacity(t) for t in self.instance_types}
        for _ in range(rounds):
            still = []
            live = [n for n in self.nodes if not n.deleting]
            start: dict[tuple, int] = {}
            for pod in pending:
                shape = tuple(sorted(pod.items()))
                i = start.get(shape, 0)
                while i < len(live) and not fits(pod, live[i].free):
                    i += 1
                start[shape] = i
                if i == len(live):
                    still.append(pod)
                    continue
                for r, n in pod.items():
                    live[i].free[r] = live[i].free.get(r, 0) - n
            pending = still
            if not pending:
                break
            usage = self.usage()
            remaining = {r: v - usage.get(r, 0) for r, v in self.limits.items()}
            claims: list[tuple[str, Resources]] = []
            claim_start: dict[tuple, int] = {}
            for pod in pending:
                shape = tuple(sorted(pod.items()))
                i = claim_start.get(shape, 0)
                while i < len(claims) and not fits(pod, claims[i][1]):
                    i += 1
                claim_start[shape] = i
                if i < len(claims):
                    for r, n in pod.items():
                        claims[i][1][r] -= n
                    continue
                if any(v <= 0 for v in remaining.values()):
                    continue  # "node limits have been exhausted for nodepool"
                viable = [
                    t
                    for t in self.instance_types
                    if fits(pod, capacity[t])
                    and all(capacity[t].get(r, 0) <= v for r, v in remaining.items())
                ]
                if not viable:
                    continue  # "all available instance types exceed limits for nodepool"
                chosen = min(viable, key=lambda t: (catalog.INSTANCE_TYPES[t].gpu_count, t))
                for r in remaining:
                    remaining[r] -= capacity[chosen].get(r, 0)
                free = dict(capacity[chosen])
                for r, n in pod.items():
                    free[r] -= n
                claims.append((chosen, free))
            if not claims:
                break
            for chosen, _ in claims:
                advertised = self.advertised(chosen)
                self.nodes.append(Node(chosen, dict(advertised), dict(advertised)))
        return pending

    def bought(self, units: Callable[[Resources], float]) -> float:
        """KAI units of the nodes bought (not being deleted)."""
        return sum(units(n.advertised) for n in self.nodes if not n.deleting)


def kai_units(resources: Mapping[str, int]) -> float:
    """KAI's charge (kai-scheduler v0.16.8 resources/mig.go L13-15): 1 per nvidia.com/gpu, the
    g-count per nvidia.com/mig-<g>g.<mem>gb."""
    total = 0.0
    for r, n in resources.items():
        if r == GPU:
            total += n
        elif r.startswith("nvidia.com/mig-"):
            total += int(r.removeprefix("nvidia.com/mig-").split("g.", 1)[0]) * n
    return total
