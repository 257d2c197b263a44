"""What a GPU node advertises, and the NodeOverlays that tell Karpenter (friction point 1).

Pure: a pool spec and the GPU Operator's settings in, plain data and dicts out; no Pulumi.

How the three systems count a GPU node (see README, "Friction points"):

- The device plugin advertises ``nvidia.com/gpu`` = GPUs x replicas on a time-sliced node
  (NVIDIA/k8s-device-plugin v0.20.0 README L421-422, ``renameByDefault: false``, which is what
  ``gpu_operator.values.time_slicing_config`` writes), the number of MIG devices under MIG
  strategy ``single`` (``internal/rm/rm.go`` L116-117), and ``nvidia.com/mig-<profile>`` per
  profile under ``mixed`` (``rm.go`` L140-146), MIG GPUs then not being ``nvidia.com/gpu``
  (``internal/rm/device_map.go`` L122-124).
- Karpenter (kubernetes-sigs/karpenter v1.15.0) charges a NodePool with each initialized node's
  ``Node.Status.Capacity`` and, before initialization, the NodeClaim's capacity, which is the
  instance type's with NodeOverlays applied (``pkg/controllers/state/statenode.go`` L458-474
  ``Capacity()``; aws/karpenter-provider-aws v1.15.0 ``pkg/cloudprovider/cloudprovider.go``
  L163-171, L541). It launches an instance type only while usage plus the type's capacity
  stays within every limited resource (``pkg/controllers/provisioning/scheduling/scheduler.go``
  L737-756 and L1097-1114 ``filterByRemainingResources``).
- KAI (v0.16.8) charges a queue 1 GPU per ``nvidia.com/gpu`` and the g-count of the profile per
  ``nvidia.com/mig-<g>g.<mem>gb`` (``pkg/scheduler/api/common_info/resources/mig.go`` L13-15,
  ``resource_info/gpu_resource_requirment.go`` L184-192).

So a time-sliced or MIG pool gets a ``NodeOverlay`` per instance type setting what its nodes will
advertise (an overlay's capacity replaces the instance type's value per key:
``pkg/cloudprovider/types.go`` L313-316 ``lo.Assign``), and its NodePool limits in the same
units: ``gpus x per_gpu``, ``gpus`` being whole nodes of physical GPUs.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .. import versions
from .units import GPU_RESOURCE, MIG_RESOURCE_PREFIX

if TYPE_CHECKING:  # read by attribute: the budget imports no capability package
    from ..nodepool.spec import NodePoolSpec

# Above the default weight (0) of any overlay a cluster admin adds: for the same resource the
# higher weight wins (kubernetes-sigs/karpenter v1.15.0 pkg/controllers/nodeoverlay/store.go
# L201-207); equal weights on the same resource conflict and neither applies (L214-237). The
# platform's own overlays never overlap: each selects one pool and one instance type.
GPU_OVERLAY_WEIGHT = 100

Mode = Literal["whole", "time-sliced", "mig-single", "mig-mixed", "dra"]


def mig_g_count(profile: str) -> int:
    """KAI's charge for one MIG device of ``profile`` (``3g.40gb`` -> 3 GPUs)."""
    return int(profile.split("g.", 1)[0])


@dataclass(frozen=True)
class TypeCapacity:
    """One instance type of a pool, as its nodes advertise it once initialized."""

    name: str
    family: str
    gpus: int
    advertised: Mapping[str, int]
    """Device-plugin resources of one node (``nvidia.com/gpu``, ``nvidia.com/mig-*``)."""

    @property
    def units(self) -> int:
        """KAI queue GPU units one node offers: 1 per ``nvidia.com/gpu``, g per MIG device."""
        return sum(
            n * (mig_g_count(r.removeprefix(MIG_RESOURCE_PREFIX)) if r != GPU_RESOURCE else 1)
            for r, n in self.advertised.items()
        )


@dataclass(frozen=True)
class PoolCapacity:
    """How a pool's nodes are counted: by the device plugin, Karpenter's limits and KAI."""

    pool: str
    mode: Mode
    per_gpu: Mapping[str, int]
    """The NodePool's limits per physical GPU of its budget (smallest over its types)."""
    units_per_gpu: int
    """KAI units one GPU surely offers whatever MIG profile pods pick (sizing)."""
    max_units_per_gpu: int
    """KAI units one GPU offers in all (what Karpenter may buy)."""
    types: tuple[TypeCapacity, ...]

    @property
    def node_gpus(self) -> int:
        """GPUs of the pool's smallest node: limits are whole nodes of it."""
        return min((t.gpus for t in self.types if t.gpus > 0), default=1)

    @property
    def needs_overlay(self) -> bool:
        return self.mode != "whole"

    def limits(self, gpus: int) -> dict[str, str]:
        """The NodePool's ``spec.limits`` GPU entries for a budget of ``gpus`` physical GPUs."""
        return {r: str(gpus * n) for r, n in sorted(self.per_gpu.items())}


def pool_capacity(
    spec: "NodePoolSpec",
    *,
    replicas: int | None = None,
    mig_strategy: str = "single",
    mig_layouts: Mapping[str, Mapping[str, int]] | None = None,
) -> PoolCapacity:
    """The capacity of a GPU or EFA pool.

    ``replicas``: the time-slicing replicas of ``spec.time_slicing`` (GPU Operator
    ``timeSlicing``); ``mig_layouts``: per instance family, the MIG devices one GPU carries under
    ``spec.mig_profile`` (``gpu_operator.mig_layout``); ``mig_strategy``: the operator's.
    """
    types = [t for t in spec.catalog_types if t.gpu_count > 0]
    if getattr(spec, "dra", False):
        # A DRA pool (budget/dra.py): its nodes run no device plugin, so they advertise 0
        # nvidia.com/gpu, where Karpenter's instance types count the GPUs (karpenter-provider-aws
        # v1.15.1 pkg/providers/instancetype/types.go L502, L576-586); its overlays say 0, and
        # Karpenter launches none of its nodes for a pod that requests the device plugin's GPUs
        # (it would never run there). KAI still charges
        # one unit per claimed GPU; the NodePool limit is in cpu (budget/dra.py).
        rows = tuple(TypeCapacity(t.name, t.family, t.gpu_count, {GPU_RESOURCE: 0}) for t in types)
        return PoolCapacity(spec.name, "dra", {GPU_RESOURCE: 1}, 1, 1, rows)
    mode: Mode = "whole"
    if spec.time_slicing and replicas:
        mode = "time-sliced"
    elif spec.mig_profile and mig_layouts and any(mig_layouts.values()):
        mode = "mig-mixed" if mig_strategy == "mixed" else "mig-single"
    rows: list[TypeCapacity] = []
    per_gpu_rows: list[dict[str, int]] = []
    for t in types:
        if mode == "time-sliced":
            per = {GPU_RESOURCE: int(replicas or 1)}
        elif mode == "mig-single":
            per = {GPU_RESOURCE: sum((mig_layouts or {}).get(t.family, {}).values()) or 1}
        elif mode == "mig-mixed":
            layout = (mig_layouts or {}).get(t.family, {})
            per = {f"{MIG_RESOURCE_PREFIX}{p}": n for p, n in sorted(layout.items())}
        else:
            per = {GPU_RESOURCE: 1}
        per_gpu_rows.append(per)
        advertised = {r: n * t.gpu_count for r, n in per.items()}
        if mode == "mig-mixed":
            advertised = {GPU_RESOURCE: 0, **advertised}
        rows.append(TypeCapacity(t.name, t.family, t.gpu_count, advertised))
    keys = sorted({r for per in per_gpu_rows for r in per})
    per_gpu = {r: min(per.get(r, 0) for per in per_gpu_rows) for r in keys} or {GPU_RESOURCE: 1}

    def units(per: Mapping[str, int]) -> list[int]:
        return [
            n * (1 if r == GPU_RESOURCE else mig_g_count(r.removeprefix(MIG_RESOURCE_PREFIX)))
            for r, n in per.items()
        ]

    sizing = min(units(per_gpu), default=1) or 1
    most = sum(units(per_gpu)) if mode == "mig-mixed" else sizing
    return PoolCapacity(spec.name, mode, per_gpu, sizing, most, tuple(rows))


def uneven_density_problem(capacity: PoolCapacity) -> str | None:
    """A MIG pool whose instance types carry different devices per GPU (``all-1g.10gb``: 4 on an
    A100 40GB of a p4d, 7 on an A100 80GB of a p4de; ``gpu_operator.mig``, from the operator's
    default mig-parted config), or ``None``.

    Its one NodePool limit per resource is ``gpus x per_gpu``, ``per_gpu`` the smallest count, and
    Karpenter launches a type only while usage plus its overlaid capacity stays within the limit
    (kubernetes-sigs/karpenter v1.15.0 ``scheduler.go`` L1097-1114): the denser type gets only a
    share of the GPU budget, none when that is one node of it. Time-sliced and whole-GPU pools
    count the same per GPU on every type.
    """
    if capacity.mode not in ("mig-single", "mig-mixed"):
        return None

    def per_gpu(t: TypeCapacity) -> dict[str, int]:
        return {r: n // t.gpus for r, n in sorted(t.advertised.items()) if n}

    if len({tuple(per_gpu(t).items()) for t in capacity.types}) < 2:
        return None
    details = "; ".join(
        f"{t.name}: "
        + " + ".join(f"{n} {r}" for r, n in sorted(t.advertised.items()) if n)
        + " per node, "
        + " + ".join(str(n) for n in per_gpu(t).values())
        + " per GPU"
        for t in capacity.types
    )
    smallest = ", ".join(f"{n} {r}" for r, n in sorted(capacity.per_gpu.items()))
    denser = [t.name for t in capacity.types if per_gpu(t) != dict(capacity.per_gpu)]
    return (
        f"the pool's instance types carry different MIG devices per GPU ({details}), so one "
        f"NodePool limit cannot hold its GPU budget for all of them: sized at the smallest "
        f"({smallest} per GPU), it leaves {', '.join(denser)} only part of the budget (none "
        "when the budget is one node); select GPUs of one class (one pool per class)"
    )


def gpu_overlay_manifests(
    spec: "NodePoolSpec", capacity: PoolCapacity, *, label_domain: str
) -> list[dict[str, Any]]:
    """One ``NodeOverlay`` per instance type of a time-sliced or MIG pool, setting the GPU
    resources its nodes will advertise, so Karpenter's simulation and its limit accounting
    before initialization see the numbers the device plugin reports after it.

    Requirements select the pool (its label, which is a NodePool template label the overlay
    controller matches: kubernetes-sigs/karpenter v1.15.0 ``pkg/controllers/nodeoverlay/
    controller.go`` L231-245) and the instance type. Needs the ``NodeOverlay`` feature gate.
    """
    if not capacity.needs_overlay:
        return []
    out = []
    for t in capacity.types:
        out.append(
            {
                "apiVersion": versions.NODEOVERLAY_API,
                "kind": "NodeOverlay",
                "metadata": {"name": f"{spec.name}-{t.name.replace('.', '-')}-gpus"},
                "spec": {
                    "weight": GPU_OVERLAY_WEIGHT,
                    "requirements": [
                        {"key": f"{label_domain}/pool", "operator": "In", "values": [spec.name]},
                        {
                            "key": "node.kubernetes.io/instance-type",
                            "operator": "In",
                            "values": [t.name],
                        },
                    ],
                    "capacity": {r: str(n) for r, n in sorted(t.advertised.items())},
                },
            }
        )
    return out
