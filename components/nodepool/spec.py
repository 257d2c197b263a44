"""``NodePoolSpec``: one pool of Karpenter capacity, validated, with its derived settings."""

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .. import catalog, catalog_cpu
from ..budget.nodepools import gpu_limit_shortfall, type_share_problems
from ..checks import KAI_SHARD_LABEL, check_duration, check_label_value, check_qualified_key
from ..spec import Problem, Spec, check_pattern, check_range, did_you_mean, doc, show
from .constants import (
    CAPACITY_PRIORITY,
    DEFAULT_CPU_POOL_NAME,
    DEFAULT_CPU_ROOT_VOLUME_GIB,
    DEFAULT_PREEMPTIBLE_EXPIRE_AFTER,
    DEFAULT_PREEMPTIBLE_GRACE,
    DEFAULT_STABLE_EXPIRE_AFTER,
    DEFAULT_STABLE_GRACE,
    EBS_ONLY_GPU_ROOT_IOPS,
    EBS_ONLY_GPU_ROOT_THROUGHPUT,
    EBS_ONLY_GPU_ROOT_VOLUME_GIB,
    EFA_RESOURCE,
    GP3_BASE_IOPS,
    GP3_BASE_THROUGHPUT,
    GP3_IOPS_PER_GIB,
    GP3_MIBPS_PER_IOPS,
    GPU_RESOURCE,
    INSTANCE_STORE_ROOT_VOLUME_GIB,
    LABEL_VALUE_TEXT,
    MIG_DISABLED_PROFILE,
    MIN_EXPIRE_AFTER,
    MIN_TERMINATION_GRACE,
    NAME_PATTERN,
    PREEMPTIBLE_BUDGETS,
    STABLE_BUDGETS,
    ZONE_PATTERN,
)
from .dra import dra_pool_problems
from .parts import (
    AmiSpec,
    BudgetSpec,
    CapacityReservationSpec,
    DisruptionSpec,
    KubeletSpec,
    LimitsSpec,
    RootVolumeSpec,
    TaintSpec,
    article,
)
from .placement import placement_group_problems
from .reservations import reservation_problems
from .userdata import pre_pull_problems


@dataclass(frozen=True, kw_only=True)
class NodePoolSpec(Spec):
    """One pool of Karpenter capacity (see README, "Node pools")."""

    name: str = doc(text="Pool name: NodePool/EC2NodeClass name and the pool label's value.")
    kind: Literal["gpu", "efa", "cpu"] = doc("gpu", "gpu, efa (multi-node training) or cpu.")
    gpus: tuple[str, ...] = doc((), "GPU names (l4, l40s, a10g, a100, h100, h200, b200, ...).")
    instance_families: tuple[str, ...] = doc((), "Instance families, e.g. g6e, p5.")
    instance_types: tuple[str, ...] = doc((), "Exact instance types, e.g. p5.48xlarge.")
    capacity_types: tuple[Literal["reserved", "spot", "on-demand"], ...] = doc(
        ("on-demand",), "In fallback order; Karpenter tries reserved, then spot, then on-demand."
    )
    preemptible: bool = doc(
        False, "Workloads here may be preempted: spot allowed, consolidation when underutilized."
    )
    limits: LimitsSpec = doc(LimitsSpec(), "Caps: gpus, cpu, memory.")
    disruption: DisruptionSpec = doc(DisruptionSpec(), "Consolidation and budgets.")
    expire_after: str | None = doc(
        None,
        f"Node lifetime; default {DEFAULT_PREEMPTIBLE_EXPIRE_AFTER} if preemptible, else "
        f"{DEFAULT_STABLE_EXPIRE_AFTER}; 'Never' allowed.",
    )
    termination_grace_period: str | None = doc(
        None,
        f"Max drain time; default {DEFAULT_PREEMPTIBLE_GRACE} if preemptible, else "
        f"{DEFAULT_STABLE_GRACE}.",
    )
    weight: int | None = doc(None, "1-100; higher pools are tried first.")
    labels: Mapping[str, str] = doc(text="Extra node labels.", default_factory=dict)
    taints: tuple[TaintSpec, ...] = doc((), "Extra taints (GPU pools always get nvidia.com/gpu).")
    root_volume: RootVolumeSpec = doc(RootVolumeSpec(), "Root volume size and performance.")
    ami: AmiSpec = doc(AmiSpec(), "AMI family and pinned version.")
    kubelet: KubeletSpec = doc(KubeletSpec(), "maxPods, systemReserved, kubeReserved.")
    zone: str | None = doc(None, "The single AZ of an EFA pool (required for efa).")
    capacity_reservations: tuple[CapacityReservationSpec, ...] = doc(
        (), "ODCRs / Capacity Blocks to use (with 'reserved' in capacityTypes)."
    )
    placement_group: str | None = doc(
        None,
        "An existing cluster placement group (name, or id pg-...) for an efa pool, instead of a "
        "new one: capacity reservations created in a placement group serve only that group.",
    )
    mig_profile: str | None = doc(None, "GPU Operator MIG profile (label nvidia.com/mig.config).")
    time_slicing: str | None = doc(
        None, "GPU Operator time-slicing config (label nvidia.com/device-plugin.config)."
    )
    dra: bool = doc(
        False,
        "Alpha: GPUs through DRA (NVIDIA DRA driver, gpu.nvidia.com claims) instead of the device "
        "plugin; needs Karpenter 1.15 and Kubernetes 1.34 (docs/dra-pools.md).",
    )
    pre_pull_images: tuple[str, ...] = doc(
        (), "Images (pinned tag or digest) pulled at every node start; al2023 pools, at most 10."
    )
    type_shares: Mapping[str, int] = doc(
        text="EFA pools: GPUs (whole nodes) of the budget per instance type; a NodePool (one per "
        "EFA layout) gets at most the sum of its types' shares. Default: the first layout in "
        "instanceTypes order gets the whole budget (see docs/friction-points.md).",
        default_factory=dict,
    )

    # -- derived ---------------------------------------------------------------------------

    @property
    def is_gpu(self) -> bool:
        return self.kind in ("gpu", "efa")

    @functools.cached_property  # read many times per pool; the spec is frozen
    def catalog_types(self) -> tuple[catalog.InstanceType, ...]:
        """The catalogued GPU types this pool may launch (GPU and EFA pools)."""
        if not self.is_gpu:
            return ()
        selected = catalog.instance_types_for(
            self.gpus, self.instance_families, self.instance_types
        )
        if self.kind == "efa":
            selected = tuple(t for t in selected if t.efa_capable)
        return selected

    @property
    def mig_startup_taint(self) -> bool:
        """Whether the pool's nodes start with ``MIG_PENDING_TAINT``: a GPU pool whose MIG
        profile changes what its nodes advertise. Before the MIG manager applies it, the device
        plugin advertises the physical GPUs, and Karpenter would initialize the node and charge
        that capacity (review F6). ``all-disabled`` advertises whole GPUs from the start."""
        return self.is_gpu and self.mig_profile not in (None, MIG_DISABLED_PROFILE)

    @property
    def efa_types(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.catalog_types) if self.kind == "efa" else ()

    @property
    def root_volume_settings(self) -> tuple[int, int, int]:
        """Root volume size (GiB), IOPS and throughput (MiB/s), defaults applied: a GPU pool
        whose every type has instance store (containerd and the kubelet on its RAID0) gets a
        small root at gp3's baseline, one with a type without instance store a root that holds
        its images (constants.py says why); a CPU pool 100 GiB at the baseline. Each of
        ``rootVolume.sizeGib``, ``iops`` and ``throughput`` overrides its default."""
        rv = self.root_volume
        if not self.is_gpu:
            defaults = (DEFAULT_CPU_ROOT_VOLUME_GIB, GP3_BASE_IOPS, GP3_BASE_THROUGHPUT)
        elif self.instance_store:
            defaults = (INSTANCE_STORE_ROOT_VOLUME_GIB, GP3_BASE_IOPS, GP3_BASE_THROUGHPUT)
        else:
            defaults = (
                EBS_ONLY_GPU_ROOT_VOLUME_GIB,
                EBS_ONLY_GPU_ROOT_IOPS,
                EBS_ONLY_GPU_ROOT_THROUGHPUT,
            )
        size, iops, throughput = defaults
        return rv.size_gib or size, rv.iops or iops, rv.throughput or throughput

    @property
    def instance_store(self) -> bool:
        """Every type the pool may launch has local NVMe instance store (a GPU pool; False for
        a pool that selects no catalogued type). An unknown GPU, family or type counts as
        instance store here: ``_selection_problems`` reports it."""
        try:
            types = self.catalog_types
        except ValueError:
            return True
        return bool(types) and all(t.instance_store for t in types)

    @property
    def consolidation_policy(self) -> str:
        default = "WhenEmptyOrUnderutilized" if self.preemptible else "WhenEmpty"
        return self.disruption.consolidation_policy or default

    @property
    def budgets(self) -> list[dict[str, Any]]:
        if self.disruption.budgets is not None:
            return [b.manifest() for b in self.disruption.budgets]
        defaults = PREEMPTIBLE_BUDGETS if self.preemptible else STABLE_BUDGETS
        return [BudgetSpec(**b).manifest() for b in defaults]

    @property
    def expiry(self) -> str:
        default = (
            DEFAULT_PREEMPTIBLE_EXPIRE_AFTER if self.preemptible else DEFAULT_STABLE_EXPIRE_AFTER
        )
        return self.expire_after or default

    @property
    def grace(self) -> str:
        default = DEFAULT_PREEMPTIBLE_GRACE if self.preemptible else DEFAULT_STABLE_GRACE
        return self.termination_grace_period or default

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_pattern(
            self.name, NAME_PATTERN, "a pool name; expected 1-42 lowercase letters, digits or '-'"
        ):
            out.append((("name",), msg))
        out += self._capacity_problems()
        selection = self._selection_problems()
        out += selection
        if not selection:
            out += type_share_problems(self)
            out += reservation_problems(self)
        out += self._volume_problems()
        if self.expire_after is not None and (
            msg := check_duration(
                self.expire_after,
                MIN_EXPIRE_AFTER,
                never=True,
                why="nodes would expire while (or soon after) they start",
            )
        ):
            out.append((("expire_after",), msg))
        if self.termination_grace_period is not None and (
            msg := check_duration(
                self.termination_grace_period,
                MIN_TERMINATION_GRACE,
                why="pods would be killed without a chance to drain",
            )
        ):
            out.append((("termination_grace_period",), msg))
        if self.weight is not None and (msg := check_range(self.weight, 1, 100)):
            out.append((("weight",), msg))
        for key, value in self.labels.items():
            if key == KAI_SHARD_LABEL:
                out.append(
                    (
                        ("labels",),
                        f"{show(key)} is KAI Scheduler's shard label; setting it on a pool moves "
                        "its nodes into another scheduling shard",
                    )
                )
            elif msg := check_qualified_key(key, "label key"):
                out.append((("labels",), msg))
            elif check_label_value(value):
                out.append(
                    (
                        ("labels",),
                        f"the value {show(value)} of {show(key)} is not {LABEL_VALUE_TEXT}",
                    )
                )
        for i, taint in enumerate(self.taints):
            if taint.key in (GPU_RESOURCE, EFA_RESOURCE):
                out.append(
                    (("taints", i, "key"), f"{show(taint.key)} is added automatically; remove it")
                )
        if self.kind == "efa":
            if self.zone is None:
                out.append(
                    (
                        ("zone",),
                        "is required for an efa pool: EFA nodes share one AZ and one cluster "
                        "placement group",
                    )
                )
        elif self.zone is not None:
            out.append((("zone",), f"only applies to efa pools; this pool is {self.kind!r}"))
        if self.zone is not None and (
            msg := check_pattern(self.zone, ZONE_PATTERN, "an availability zone like 'us-west-2a'")
        ):
            out.append((("zone",), msg))
        out += placement_group_problems(self.placement_group, self.kind)
        if not self.is_gpu:
            for name in ("mig_profile", "time_slicing"):
                if getattr(self, name) is not None:
                    out.append(((name,), "only applies to gpu and efa pools; this pool is 'cpu'"))
            if self.limits.gpus is not None:
                out.append((("limits", "gpus"), "only applies to gpu and efa pools"))
        if self.mig_profile is not None and self.time_slicing is not None:
            out.append((("time_slicing",), "cannot be combined with migProfile on the same pool"))
        out += pre_pull_problems(self.pre_pull_images, self.ami.family)
        out += dra_pool_problems(self, selection_ok=not selection)
        return out

    def _volume_problems(self) -> list[Problem]:
        """gp3's ratios, on the values the volume really gets (defaults included)."""
        size, iops, throughput = self.root_volume_settings
        out: list[Problem] = []
        if iops > GP3_IOPS_PER_GIB * size:
            out.append(
                (
                    ("root_volume",),
                    f"{iops} IOPS on {size} GiB exceeds gp3's {GP3_IOPS_PER_GIB} IOPS per GiB; "
                    f"raise sizeGib to at least {-(-iops // GP3_IOPS_PER_GIB)} or lower iops",
                )
            )
        if throughput > iops * GP3_MIBPS_PER_IOPS:
            out.append(
                (
                    ("root_volume",),
                    f"{throughput} MiB/s with {iops} IOPS exceeds gp3's {GP3_MIBPS_PER_IOPS} MiB/s "
                    f"per IOPS; raise iops to at least {int(throughput / GP3_MIBPS_PER_IOPS)} or "
                    "lower throughput",
                )
            )
        return out

    def _capacity_problems(self) -> list[Problem]:
        out: list[Problem] = []
        types = self.capacity_types
        if not types:
            out.append(
                (("capacity_types",), "is empty; list at least one of reserved, spot, on-demand")
            )
            return out
        if len(set(types)) != len(types):
            out.append((("capacity_types",), f"{show(list(types))} lists a capacity type twice"))
        elif list(types) != sorted(types, key=CAPACITY_PRIORITY.index):
            ordered = sorted(types, key=CAPACITY_PRIORITY.index)
            out.append(
                (
                    ("capacity_types",),
                    f"{show(list(types))} cannot be honoured: within a NodePool Karpenter tries "
                    f"reserved, then spot, then on-demand; write {show(ordered)}, or use a second "
                    "pool with a lower weight for the fallback",
                )
            )
        if "spot" in types and not self.preemptible:
            out.append(
                (
                    ("capacity_types",),
                    "includes 'spot' but the pool is not preemptible; spot reclaims nodes at two "
                    "minutes' notice, so set preemptible: true or drop 'spot'",
                )
            )
        if "reserved" in types and not self.capacity_reservations:
            out.append(
                (
                    ("capacity_types",),
                    "includes 'reserved' but capacityReservations is empty; select the "
                    "reservations or Capacity Blocks by id or tags",
                )
            )
        if self.capacity_reservations and "reserved" not in types:
            out.append(
                (
                    ("capacity_reservations",),
                    "is set but capacityTypes lacks 'reserved'; add it (first) to use them",
                )
            )
        if not self.preemptible and self.disruption.consolidation_policy not in (None, "WhenEmpty"):
            out.append(
                (
                    ("disruption", "consolidation_policy"),
                    f"{show(self.disruption.consolidation_policy)} moves running pods; a "
                    "non-preemptible pool consolidates only WhenEmpty",
                )
            )
        return out

    def _selection_problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.kind == "cpu":
            if self.gpus:
                out.append((("gpus",), "a cpu pool selects no GPUs; use kind: gpu"))
            for i, family in enumerate(self.instance_families):
                if catalog.is_gpu_family(family):
                    out.append(
                        (
                            ("instance_families", i),
                            f"{show(family)} is a GPU family; GPU capacity belongs in a gpu pool",
                        )
                    )
                elif not catalog_cpu.is_cpu_family(family):
                    out.append(
                        (
                            ("instance_families", i),
                            f"{show(family)} is not an instance family Karpenter knows"
                            + did_you_mean(family, catalog_cpu.CPU_FAMILIES),
                        )
                    )
            for i, itype in enumerate(self.instance_types):
                if not re.fullmatch(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$", itype):
                    out.append(
                        (
                            ("instance_types", i),
                            f"{show(itype)} is not an instance type such as 'm7i.xlarge'",
                        )
                    )
                elif itype in catalog.INSTANCE_TYPES or catalog.is_gpu_family(itype.split(".")[0]):
                    out.append(
                        (
                            ("instance_types", i),
                            f"{show(itype)} has GPUs; GPU capacity belongs in a gpu pool",
                        )
                    )
                elif msg := catalog_cpu.cpu_type_problem(itype):
                    out.append((("instance_types", i), msg))
            return out
        for i, gpu in enumerate(self.gpus):
            if gpu not in catalog.GPU_NAMES:
                out.append(
                    (
                        ("gpus", i),
                        f"{show(gpu)} is not a known NVIDIA GPU; expected one of "
                        + ", ".join(sorted(catalog.GPU_NAMES))
                        + did_you_mean(gpu, sorted(catalog.GPU_NAMES)),
                    )
                )
        for i, family in enumerate(self.instance_families):
            # Exact: the NodePool requirement carries the value as written, and Karpenter's
            # instance-family label is lower case ('G6' would match no type).
            if family not in catalog.GPU_FAMILIES:
                out.append(
                    (
                        ("instance_families", i),
                        f"{show(family)} is not a GPU family; expected one of "
                        + ", ".join(sorted(catalog.GPU_FAMILIES))
                        + did_you_mean(family, sorted(catalog.GPU_FAMILIES)),
                    )
                )
        for i, itype in enumerate(self.instance_types):
            if itype not in catalog.INSTANCE_TYPES:
                out.append(
                    (
                        ("instance_types", i),
                        f"{show(itype)} is not a known NVIDIA GPU instance type"
                        + did_you_mean(itype, catalog.INSTANCE_TYPES),
                    )
                )
            elif self.kind == "efa" and not catalog.INSTANCE_TYPES[itype].efa_capable:
                out.append(
                    (
                        ("instance_types", i),
                        f"{show(itype)} has no EFA; EFA-capable types: "
                        + ", ".join(catalog.efa_instance_types()),
                    )
                )
        if out:
            return out
        if not (self.gpus or self.instance_families or self.instance_types):
            out.append(
                (
                    ("gpus",),
                    f"{article(self.kind)} {self.kind} pool must select GPUs: set gpus, "
                    "instanceFamilies or "
                    "instanceTypes",
                )
            )
        elif not self.catalog_types:
            what = "EFA-capable " if self.kind == "efa" else ""
            out.append(
                (
                    ("instance_types" if self.instance_types else "gpus",),
                    f"no {what}instance type matches gpus {show(list(self.gpus))}, "
                    f"instanceFamilies {show(list(self.instance_families))} and instanceTypes "
                    f"{show(list(self.instance_types))} together",
                )
            )
        elif self.limits.gpus is not None and (short := self.gpu_limit_shortfall(self.limits.gpus)):
            out.append(
                (("limits", "gpus"), f"{self.limits.gpus} {short}; raise it or select fewer types")
            )
        return out

    def gpu_limit_shortfall(self, limit: int) -> str | None:
        """Why ``limit`` GPUs could never launch a node of this pool (None when they can).

        An EFA pool splits its limit over one NodePool per EFA layout, greedily
        (``budget.nodepools``): some NodePool must hold a whole node; a GPU pool must hold its
        smallest node.
        """
        return gpu_limit_shortfall(self, limit)


def default_cpu_pool(*, spot: bool = True) -> NodePoolSpec:
    """The general-purpose pool every stack gets when it defines no cpu pool of its own.

    Spot, then on-demand; on-demand only when ``spot`` is false (without Karpenter's
    interruption queue, spot nodes would not be drained before EC2 reclaims them).
    """
    return NodePoolSpec(
        name=DEFAULT_CPU_POOL_NAME,
        kind="cpu",
        capacity_types=("spot", "on-demand") if spot else ("on-demand",),
        preemptible=True,
        limits=LimitsSpec(cpu="256", memory="1024Gi"),
    )
