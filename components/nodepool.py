"""GPU, EFA and CPU capacity: Karpenter v1 NodePools and EC2NodeClasses from one pool spec.

Every pool in the stack configuration (``nodePools``) becomes one ``NodePool`` component:

- ``gpu`` pools: an EC2NodeClass on the EKS AL2023 NVIDIA AMI (drivers and container toolkit
  preinstalled; Bottlerocket as an option) and a NodePool tainted ``nvidia.com/gpu=true:NoSchedule``
  that requires ``instance-gpu-manufacturer: nvidia`` plus the configured GPU names, families or
  types, labels every node with the project's pool label, and caps ``nvidia.com/gpu``.
- ``efa`` pools (multi-node training): one EC2NodeClass and NodePool per instance type, with every
  EFA interface laid out (``networkInterfaces``), one AZ, a cluster placement group and a security
  group open to itself, hugepages reserved at boot and declared to Karpenter by a NodeOverlay.
- ``cpu`` pools: untainted general-purpose capacity, so nothing non-GPU lands on GPU nodes.

Pure builders (``nodepool_manifest``, ``ec2nodeclass_manifest``, ``nodeoverlay_manifest``,
``hugepages_user_data``) return plain dicts; the component registers them as CustomResources.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from . import catalog, versions
from .naming import DISCOVERY_TAG, TYPE_PREFIX
from .spec import (
    DURATION,
    DURATION_OR_NEVER,
    QUANTITY,
    Problem,
    Spec,
    SpecError,
    check_one_of,
    check_pattern,
    check_range,
    derived,
    doc,
    is_output,
    require_instance,
    required_problem,
    set_derived,
    show,
)

if TYPE_CHECKING:  # cluster and karpenter import config, which imports this module
    from .cluster import EksCluster
    from .karpenter import Karpenter

GPU_RESOURCE = "nvidia.com/gpu"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
GPU_TAINT = {"key": GPU_RESOURCE, "value": "true", "effect": "NoSchedule"}
EFA_TAINT = {"key": EFA_RESOURCE, "value": "true", "effect": "NoSchedule"}
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
# Within one NodePool Karpenter always tries reserved capacity first, then spot, then on-demand.
CAPACITY_PRIORITY = ("reserved", "spot", "on-demand")
POOL_KINDS = ("gpu", "efa", "cpu")
AMI_FAMILIES = {"al2023": "AL2023", "bottlerocket": "Bottlerocket"}
# Both EKS GPU AMI families ship the NVIDIA driver and container toolkit.
AMI_SHIPS_NVIDIA_DRIVER = {"al2023": True, "bottlerocket": True}
DEFAULT_AMI_VERSION = {
    "al2023": versions.AL2023_AMI_ALIAS_VERSION,
    "bottlerocket": versions.BOTTLEROCKET_AMI_ALIAS_VERSION,
}
# gp3 at its maximum: 16,000 IOPS and 1,000 MiB/s; sized for multi-GB CUDA images.
DEFAULT_GPU_ROOT_VOLUME_GIB = 500
DEFAULT_CPU_ROOT_VOLUME_GIB = 100
GP3_MAX_IOPS = 16000
GP3_MAX_THROUGHPUT = 1000
GP3_BASE_IOPS = 3000
GP3_BASE_THROUGHPUT = 125
DEFAULT_CPU_CATEGORIES = ("c", "m", "r")
DEFAULT_CPU_MIN_GENERATION = 5
DEFAULT_CPU_POOL_NAME = "general"
DEFAULT_PREEMPTIBLE_EXPIRE_AFTER = "168h"
DEFAULT_PREEMPTIBLE_GRACE = "4h"
DEFAULT_STABLE_EXPIRE_AFTER = "720h"
DEFAULT_STABLE_GRACE = "48h"
DEFAULT_CONSOLIDATE_AFTER = "5m"
# Non-preemptible pools: at most one node disrupted at a time, and no drift replacements
# during working hours (UTC, Monday to Friday, 08:00-18:00).
STABLE_BUDGETS = (
    {"nodes": "1"},
    {"nodes": "0", "reasons": ("Drifted",), "schedule": "0 8 * * mon-fri", "duration": "10h"},
)
PREEMPTIBLE_BUDGETS = ({"nodes": "10%"},)
BUDGET_REASONS = ("Underutilized", "Empty", "Drifted")
NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$"
ZONE_PATTERN = r"^[a-z]{2}(-gov)?-[a-z]+-[0-9][a-z]$"
RESERVED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws", "kubernetes.io", "k8s.io")
KUBELET_RESERVED_KEYS = ("cpu", "memory", "ephemeral-storage", "pid")
# The NodePool CRD's patterns for label/taint keys and values.
QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
LABEL_VALUE_TEXT = (
    "a label value; expected at most 63 letters, digits, '-', '_' or '.', starting and ending "
    "with a letter or digit"
)
QUALIFIED_NAME_TEXT = "a label or taint key such as 'example.com/dedicated'"
# Graviton families (m7g, c7gn, r8g, ...) run arm64; every other family here runs x86_64.
GRAVITON_FAMILY = re.compile(r"^[a-z]+[0-9]+g[a-z]*$")
# gp3: at most 500 IOPS per GiB and 0.25 MiB/s of throughput per provisioned IOPS.
GP3_IOPS_PER_GIB = 500
GP3_MIBPS_PER_IOPS = 0.25


def article(word: str) -> str:
    """``a`` or ``an`` before ``word``, as it is pronounced in these messages."""
    return "an" if word[:1].lower() in "aeio" else "a"


def family_arch(family: str) -> str:
    """The ``kubernetes.io/arch`` of an instance family: arm64 for Graviton, else amd64."""
    return "arm64" if GRAVITON_FAMILY.match(family) else "amd64"


HUGEPAGE_BYTES = 2 * 1024 * 1024


def _quantity_bytes(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"([0-9]+)(Ki|Mi|Gi|Ti)", quantity)
    if not match:
        raise ValueError(f"not a binary quantity: {quantity!r}")
    return int(match.group(1)) * units[match.group(2)]


# ---------------------------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class BudgetSpec(Spec):
    """A Karpenter disruption budget."""

    nodes: str = doc(text="Nodes that may be disrupted at once: a count or a percentage.")
    reasons: tuple[str, ...] = doc((), "Underutilized, Empty and/or Drifted; empty = all.")
    schedule: str | None = doc(None, "Cron schedule (UTC) when the budget is active.")
    duration: str | None = doc(None, "How long the budget is active after each schedule hit.")

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_pattern(
            self.nodes, r"^((100|[0-9]{1,2})%|[0-9]+)$", "a node count or percentage such as '10%'"
        ):
            out.append((("nodes",), msg))
        for i, reason in enumerate(self.reasons):
            if msg := check_one_of(reason, BUDGET_REASONS):
                out.append((("reasons", i), msg))
        if (self.schedule is None) != (self.duration is None):
            out.append((("schedule",), "and duration must be set together"))
        if self.schedule is not None and not (
            re.fullmatch(r"@(annually|yearly|monthly|weekly|daily|midnight|hourly)", self.schedule)
            or len(self.schedule.split()) == 5
        ):
            out.append(
                (("schedule",), f"{show(self.schedule)} is not a 5-field cron or an @daily macro")
            )
        if self.duration is not None and (
            msg := check_pattern(
                self.duration,
                r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$",
                "a duration in hours and minutes such as '8h' or '1h30m'",
            )
        ):
            out.append((("duration",), msg))
        return out

    def manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nodes": self.nodes}
        if self.reasons:
            out["reasons"] = list(self.reasons)
        if self.schedule is not None:
            out["schedule"] = self.schedule
            out["duration"] = self.duration
        return out


@dataclass(frozen=True, kw_only=True)
class DisruptionSpec(Spec):
    """How Karpenter may disrupt the pool's nodes; defaults depend on ``preemptible``."""

    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"] | None = doc(
        None, "Default: WhenEmptyOrUnderutilized if preemptible, else WhenEmpty."
    )
    consolidate_after: str | None = doc(None, f"Default {DEFAULT_CONSOLIDATE_AFTER}.")
    budgets: tuple[BudgetSpec, ...] | None = doc(
        None,
        "Default: 10% if preemptible; else 1 node, and no drift 08:00-18:00 UTC Mon-Fri.",
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.consolidate_after is not None and (
            msg := check_pattern(self.consolidate_after, DURATION_OR_NEVER, "a duration or 'Never'")
        ):
            out.append((("consolidate_after",), msg))
        if self.budgets is not None and len(self.budgets) > 50:
            out.append((("budgets",), f"has {len(self.budgets)} budgets; at most 50"))
        return out


@dataclass(frozen=True, kw_only=True)
class LimitsSpec(Spec):
    """Caps on what the pool may provision in total."""

    gpus: int | None = doc(None, "nvidia.com/gpu cap (with a scheduler: min of this and queues).")
    cpu: str | None = doc(None, "CPU cap, e.g. '1000'.")
    memory: str | None = doc(None, "Memory cap, e.g. '4000Gi'.")

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.gpus is not None and (msg := check_range(self.gpus, 1, 100000)):
            out.append((("gpus",), msg))
        for name in ("cpu", "memory"):
            value = getattr(self, name)
            if value is not None and (
                msg := check_pattern(value, QUANTITY, "a Kubernetes quantity such as '1000'")
            ):
                out.append(((name,), msg))
        return out


@dataclass(frozen=True, kw_only=True)
class RootVolumeSpec(Spec):
    """The node's root (or, on Bottlerocket, data) volume: encrypted gp3."""

    size_gib: int | None = doc(None, "Default 500 GiB for GPU/EFA pools, 100 GiB for CPU pools.")
    iops: int | None = doc(None, "Default 16000 (gp3 maximum) for GPU/EFA, 3000 for CPU.")
    throughput: int | None = doc(None, "MiB/s; default 1000 (gp3 maximum) for GPU/EFA, 125 CPU.")
    kms_key_id: str | None = doc(
        None, "KMS key for the volume; default the AWS-managed EBS key.", output=True
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.size_gib is not None and (msg := check_range(self.size_gib, 20, 16384)):
            out.append((("size_gib",), msg))
        if self.iops is not None and (msg := check_range(self.iops, GP3_BASE_IOPS, GP3_MAX_IOPS)):
            out.append((("iops",), msg))
        if self.throughput is not None and (
            msg := check_range(self.throughput, GP3_BASE_THROUGHPUT, GP3_MAX_THROUGHPUT)
        ):
            out.append((("throughput",), msg))
        if self.iops is not None and self.size_gib is not None and self.iops > 500 * self.size_gib:
            out.append(
                (
                    ("iops",),
                    f"{self.iops} exceeds gp3's 500 IOPS per GiB for {self.size_gib} GiB",
                )
            )
        return out


@dataclass(frozen=True, kw_only=True)
class AmiSpec(Spec):
    """Which EKS-optimized AMI Karpenter resolves (an alias, pinned)."""

    family: Literal["al2023", "bottlerocket"] = doc("al2023", "AMI family.")
    version: str | None = doc(
        None,
        f"Alias version; default {versions.AL2023_AMI_ALIAS_VERSION} (al2023) / "
        f"{versions.BOTTLEROCKET_AMI_ALIAS_VERSION} (bottlerocket). 'latest' is refused.",
    )

    @property
    def alias(self) -> str:
        return f"{self.family}@{self.version or DEFAULT_AMI_VERSION[self.family]}"

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.version is not None:
            pattern = r"^v[0-9]{8}$" if self.family == "al2023" else r"^v[0-9]+\.[0-9]+\.[0-9]+$"
            example = "v20260903" if self.family == "al2023" else "v1.65.0"
            if self.version == "latest":
                out.append(
                    (
                        ("version",),
                        "'latest' drifts every node on each AMI release; pin a version such "
                        f"as {example!r}",
                    )
                )
            elif msg := check_pattern(
                self.version,
                pattern,
                f"{article(self.family)} {self.family} release like {example!r}",
            ):
                out.append((("version",), msg))
        return out


@dataclass(frozen=True, kw_only=True)
class KubeletSpec(Spec):
    """Kubelet settings Karpenter passes to the node."""

    max_pods: int | None = doc(None, "Pods per node; default from the ENI limits.")
    system_reserved: Mapping[str, str] = doc(
        text="cpu/memory/ephemeral-storage/pid.", default_factory=dict
    )
    kube_reserved: Mapping[str, str] = doc(
        text="cpu/memory/ephemeral-storage/pid.", default_factory=dict
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.max_pods is not None and (msg := check_range(self.max_pods, 1, 737)):
            out.append((("max_pods",), msg))
        for name in ("system_reserved", "kube_reserved"):
            for key, value in getattr(self, name).items():
                if msg := check_one_of(key, KUBELET_RESERVED_KEYS):
                    out.append(((name,), f"key {msg}"))
                elif msg := check_pattern(value, QUANTITY, "a Kubernetes quantity"):
                    out.append(((name,), f"{key}: {msg}"))
        return out

    def manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.max_pods is not None:
            out["maxPods"] = self.max_pods
        if self.system_reserved:
            out["systemReserved"] = dict(self.system_reserved)
        if self.kube_reserved:
            out["kubeReserved"] = dict(self.kube_reserved)
        return out


@dataclass(frozen=True, kw_only=True)
class TaintSpec(Spec):
    """An extra taint on the pool's nodes."""

    key: str = doc(text="Taint key, e.g. 'example.com/dedicated'.")
    value: str | None = doc(None, "Taint value (optional).")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = doc("NoSchedule", "Effect.")

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if len(self.key) > 316 or not re.fullmatch(QUALIFIED_NAME, self.key):
            out.append((("key",), f"{show(self.key)} is not {QUALIFIED_NAME_TEXT}"))
        if self.value is not None and (
            len(self.value) > 63 or not re.fullmatch(LABEL_VALUE, self.value)
        ):
            out.append((("value",), f"{show(self.value)} is not {LABEL_VALUE_TEXT}"))
        return out

    def manifest(self) -> dict[str, str]:
        out = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        return out


@dataclass(frozen=True, kw_only=True)
class CapacityReservationSpec(Spec):
    """Selects On-Demand Capacity Reservations or Capacity Blocks (by id or by tags)."""

    id: str | None = doc(None, "Reservation id, 'cr-...'.", output=True)
    tags: Mapping[str, str] = doc(text="Reservation tags to match.", default_factory=dict)
    owner_id: str | None = doc(None, "Account that owns a shared reservation.", output=True)

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.id is None and not self.tags:
            out.append(((), "needs an id or tags"))
        for key, value in self.tags.items():
            if not key or not value:
                out.append(
                    (
                        ("tags",),
                        f"{show(key)}: {show(value)} has an empty key or value; "
                        "EC2NodeClass selector tags must both be set",
                    )
                )
        if self.id is not None:
            if self.tags or self.owner_id:
                out.append((("id",), "cannot be combined with tags or ownerId"))
            if msg := check_pattern(self.id, r"^cr-[0-9a-z]+$", "a reservation id like 'cr-0123'"):
                out.append((("id",), msg))
        if self.owner_id is not None and (
            msg := check_pattern(self.owner_id, r"^[0-9]{12}$", "a 12-digit account id")
        ):
            out.append((("owner_id",), msg))
        return out

    def manifest(self) -> dict[str, Any]:
        if self.id is not None:
            return {"id": self.id}
        out: dict[str, Any] = {"tags": dict(self.tags)}
        if self.owner_id is not None:
            out["ownerID"] = self.owner_id
        return out


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
    mig_profile: str | None = doc(None, "GPU Operator MIG profile (label nvidia.com/mig.config).")
    time_slicing: str | None = doc(
        None, "GPU Operator time-slicing config (label nvidia.com/device-plugin.config)."
    )

    # -- derived ---------------------------------------------------------------------------

    @property
    def is_gpu(self) -> bool:
        return self.kind in ("gpu", "efa")

    @property
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
    def efa_types(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.catalog_types) if self.kind == "efa" else ()

    @property
    def root_volume_settings(self) -> tuple[int, int, int]:
        """Root volume size (GiB), IOPS and throughput (MiB/s), defaults applied."""
        rv, gpu = self.root_volume, self.is_gpu
        size = rv.size_gib or (DEFAULT_GPU_ROOT_VOLUME_GIB if gpu else DEFAULT_CPU_ROOT_VOLUME_GIB)
        iops = rv.iops or (GP3_MAX_IOPS if gpu else GP3_BASE_IOPS)
        throughput = rv.throughput or (GP3_MAX_THROUGHPUT if gpu else GP3_BASE_THROUGHPUT)
        return size, iops, throughput

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
        out += self._selection_problems()
        out += self._volume_problems()
        if self.expire_after is not None and (
            msg := check_pattern(self.expire_after, DURATION_OR_NEVER, "a duration or 'Never'")
        ):
            out.append((("expire_after",), msg))
        if self.termination_grace_period is not None and (
            msg := check_pattern(self.termination_grace_period, DURATION, "a duration like '4h'")
        ):
            out.append((("termination_grace_period",), msg))
        if self.weight is not None and (msg := check_range(self.weight, 1, 100)):
            out.append((("weight",), msg))
        for key, value in self.labels.items():
            domain = key.split("/", 1)[0] if "/" in key else ""
            if any(domain == d or domain.endswith("." + d) for d in RESERVED_LABEL_DOMAINS):
                out.append(
                    (
                        ("labels",),
                        f"{show(key)} is in a domain Kubernetes or Karpenter reserves; use your "
                        "own label domain",
                    )
                )
            elif len(key) > 316 or not re.fullmatch(QUALIFIED_NAME, key):
                out.append((("labels",), f"{show(key)} is not {QUALIFIED_NAME_TEXT}"))
            elif len(value) > 63 or not re.fullmatch(LABEL_VALUE, value):
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
        if not self.is_gpu:
            for name in ("mig_profile", "time_slicing"):
                if getattr(self, name) is not None:
                    out.append(((name,), "only applies to gpu and efa pools; this pool is 'cpu'"))
            if self.limits.gpus is not None:
                out.append((("limits", "gpus"), "only applies to gpu and efa pools"))
        if self.mig_profile is not None and self.time_slicing is not None:
            out.append((("time_slicing",), "cannot be combined with migProfile on the same pool"))
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
            return out
        for i, gpu in enumerate(self.gpus):
            if gpu not in catalog.GPU_NAMES:
                out.append(
                    (
                        ("gpus", i),
                        f"{show(gpu)} is not a known NVIDIA GPU; expected one of "
                        + ", ".join(sorted(catalog.GPU_NAMES)),
                    )
                )
        for i, family in enumerate(self.instance_families):
            if not catalog.is_gpu_family(family):
                out.append(
                    (
                        ("instance_families", i),
                        f"{show(family)} is not a GPU family; expected one of "
                        + ", ".join(sorted(catalog.GPU_FAMILIES)),
                    )
                )
        for i, itype in enumerate(self.instance_types):
            if itype not in catalog.INSTANCE_TYPES:
                out.append(
                    (
                        ("instance_types", i),
                        f"{show(itype)} is not a known NVIDIA GPU instance type",
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

        An EFA pool shares its limit across one NodePool per instance type, so every share must
        hold a whole node of its type; a GPU pool must hold its smallest node.
        """
        types = [t for t in self.catalog_types if t.gpu_count > 0]
        if not types:
            return None
        if self.kind == "efa":
            shares = split_gpu_limit(limit, self.catalog_types)
            for share, t in zip(shares, self.catalog_types, strict=True):
                if share is not None and share < t.gpu_count:
                    return (
                        f"is split over {len(shares)} instance type(s) and leaves {share} for "
                        f"{t.name}, less than one {t.gpu_count}-GPU node"
                    )
            return None
        smallest = min(types, key=lambda t: (t.gpu_count, t.name))
        if limit < smallest.gpu_count:
            return (
                f"is less than one node of the smallest type ({smallest.name}, "
                f"{smallest.gpu_count} GPUs)"
            )
        return None


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


# ---------------------------------------------------------------------------------------------
# Pure builders
# ---------------------------------------------------------------------------------------------


def pool_labels(spec: NodePoolSpec, label_domain: str) -> dict[str, str]:
    """Labels on every node of the pool: the pool label first (friction point 4)."""
    labels = {
        f"{label_domain}/pool": spec.name,
        f"{label_domain}/preemptible": "true" if spec.preemptible else "false",
    }
    if spec.kind == "efa":
        labels[f"{label_domain}/efa"] = "true"
    if spec.mig_profile:
        labels["nvidia.com/mig.config"] = spec.mig_profile
    if spec.time_slicing:
        labels["nvidia.com/device-plugin.config"] = spec.time_slicing
    # The platform's own labels win over user labels (config also rejects such keys).
    return {**spec.labels, **labels}


def pool_taints(spec: NodePoolSpec) -> list[dict[str, str]]:
    taints = []
    if spec.is_gpu:
        taints.append(dict(GPU_TAINT))
    if spec.kind == "efa":
        taints.append(dict(EFA_TAINT))
    taints += [taint.manifest() for taint in spec.taints]
    return taints


def taint_tolerations(
    pools: Sequence[NodePoolSpec], skip: Sequence[str] = (GPU_RESOURCE,)
) -> list[dict[str, str]]:
    """Tolerations for node DaemonSets (GPU Operator operands, EFA device plugin) beyond the
    ``skip`` keys they tolerate already: every other taint the pools put on their nodes, once
    per key and effect, sorted."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in pools:
        for taint in pool_taints(pool):
            if taint["key"] not in skip:
                seen.setdefault(
                    (taint["key"], taint["effect"]),
                    {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]},
                )
    return [seen[k] for k in sorted(seen)]


def _requirement(key: str, operator: str, values: Sequence[str]) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def pool_requirements(spec: NodePoolSpec, instance_type: str | None = None) -> list[dict]:
    """The NodePool's requirements: what it may launch, where, and on which capacity."""
    reqs = []
    if spec.is_gpu:
        reqs.append(_requirement("karpenter.k8s.aws/instance-gpu-manufacturer", "In", ["nvidia"]))
        if instance_type is not None:
            reqs.append(_requirement("node.kubernetes.io/instance-type", "In", [instance_type]))
        else:
            if spec.gpus:
                reqs.append(_requirement("karpenter.k8s.aws/instance-gpu-name", "In", spec.gpus))
            if spec.instance_families:
                reqs.append(
                    _requirement("karpenter.k8s.aws/instance-family", "In", spec.instance_families)
                )
            if spec.instance_types:
                reqs.append(
                    _requirement("node.kubernetes.io/instance-type", "In", spec.instance_types)
                )
        arches = sorted({t.kubernetes_arch for t in spec.catalog_types})
        reqs.append(_requirement("kubernetes.io/arch", "In", arches))
    else:
        if spec.instance_types:
            reqs.append(_requirement("node.kubernetes.io/instance-type", "In", spec.instance_types))
        elif spec.instance_families:
            reqs.append(
                _requirement("karpenter.k8s.aws/instance-family", "In", spec.instance_families)
            )
        else:
            reqs.append(
                _requirement("karpenter.k8s.aws/instance-category", "In", DEFAULT_CPU_CATEGORIES)
            )
            reqs.append(
                _requirement(
                    "karpenter.k8s.aws/instance-generation",
                    "Gt",
                    [str(DEFAULT_CPU_MIN_GENERATION)],
                )
            )
        families = [t.split(".")[0] for t in spec.instance_types] or list(spec.instance_families)
        arches = sorted({family_arch(f) for f in families}) if families else ["amd64"]
        reqs.append(_requirement("kubernetes.io/arch", "In", arches))
    reqs.append(_requirement("kubernetes.io/os", "In", ["linux"]))
    reqs.append(_requirement(CAPACITY_TYPE_LABEL, "In", spec.capacity_types))
    if spec.zone is not None:
        reqs.append(_requirement("topology.kubernetes.io/zone", "In", [spec.zone]))
    return reqs


def nodepool_manifest(
    spec: NodePoolSpec,
    *,
    name: str,
    node_class: str,
    label_domain: str,
    gpu_limit: int | None,
    instance_type: str | None = None,
) -> dict[str, Any]:
    """A Karpenter ``NodePool`` (``karpenter.sh/v1``) for the pool (or one EFA type of it)."""
    limits: dict[str, Any] = {}
    if spec.limits.cpu is not None:
        limits["cpu"] = spec.limits.cpu
    if spec.limits.memory is not None:
        limits["memory"] = spec.limits.memory
    if gpu_limit is not None:
        limits[GPU_RESOURCE] = str(gpu_limit)
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": node_class},
        "requirements": pool_requirements(spec, instance_type),
        "expireAfter": spec.expiry,
        "terminationGracePeriod": spec.grace,
    }
    taints = pool_taints(spec)
    if taints:
        template_spec["taints"] = taints
    manifest_spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": pool_labels(spec, label_domain)},
            "spec": template_spec,
        },
        "disruption": {
            "consolidationPolicy": spec.consolidation_policy,
            "consolidateAfter": spec.disruption.consolidate_after or DEFAULT_CONSOLIDATE_AFTER,
            "budgets": spec.budgets,
        },
    }
    if limits:
        manifest_spec["limits"] = limits
    if spec.weight is not None:
        manifest_spec["weight"] = spec.weight
    return {
        "apiVersion": versions.NODEPOOL_API,
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": manifest_spec,
    }


def block_device_mappings(spec: NodePoolSpec) -> list[dict[str, Any]]:
    """Encrypted gp3 volumes; GPU pools at gp3's maximum IOPS and throughput."""
    rv = spec.root_volume
    size, iops, throughput = spec.root_volume_settings
    ebs: dict[str, Any] = {
        "volumeSize": f"{size}Gi",
        "volumeType": "gp3",
        "iops": iops,
        "throughput": throughput,
        "encrypted": True,
        "deleteOnTermination": True,
    }
    if rv.kms_key_id:
        ebs["kmsKeyID"] = rv.kms_key_id
    if spec.ami.family == "bottlerocket":
        os_volume = {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": "4Gi",
                "volumeType": "gp3",
                "encrypted": True,
                "deleteOnTermination": True,
            },
        }
        return [os_volume, {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": ebs}]
    return [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": ebs}]


def hugepages_user_data(ami_family: str, hugepages_2mi: str) -> str:
    """User data reserving 2 MiB hugepages at boot, before the kubelet starts and reports them.

    AL2023: a MIME part Karpenter merges with its own NodeConfig (shell parts run before
    ``nodeadm-run`` starts the kubelet). Bottlerocket: a TOML sysctl setting.
    """
    pages = _quantity_bytes(hugepages_2mi) // HUGEPAGE_BYTES
    if ami_family == "bottlerocket":
        return f'[settings.kernel.sysctl]\n"vm.nr_hugepages" = "{pages}"\n'
    return (
        "MIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="//"\n'
        "\n"
        "--//\n"
        'Content-Type: text/x-shellscript; charset="us-ascii"\n'
        "\n"
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        "# Reserve 2 MiB hugepages for EFA (libfabric/NCCL) before the kubelet starts.\n"
        f'echo "vm.nr_hugepages = {pages}" > /etc/sysctl.d/90-efa-hugepages.conf\n'
        "sysctl -p /etc/sysctl.d/90-efa-hugepages.conf\n"
        "--//--\n"
    )


def ec2nodeclass_manifest(
    spec: NodePoolSpec,
    *,
    name: str,
    cluster_name: str,
    node_role: str,
    tags: Mapping[str, str],
    extra_security_group_ids: Sequence[str] = (),
    placement_group: str | None = None,
    instance_type: str | None = None,
) -> dict[str, Any]:
    """A Karpenter ``EC2NodeClass`` (``karpenter.k8s.aws/v1``): AMI, network, storage, IMDS."""
    discovery = {"tags": {DISCOVERY_TAG: cluster_name}}
    node_spec: dict[str, Any] = {
        "role": node_role,
        "amiSelectorTerms": [{"alias": spec.ami.alias}],
        "subnetSelectorTerms": [discovery],
        "securityGroupSelectorTerms": [discovery, *({"id": sg} for sg in extra_security_group_ids)],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": block_device_mappings(spec),
    }
    if spec.is_gpu:
        # Local NVMe, striped, backs containerd and the kubelet: image pulls at disk speed.
        node_spec["instanceStorePolicy"] = "RAID0"
    kubelet = spec.kubelet.manifest()
    if kubelet:
        node_spec["kubelet"] = kubelet
    if instance_type is not None:
        node_spec["networkInterfaces"] = catalog.efa_network_interfaces(instance_type)
        node_spec["associatePublicIPAddress"] = False
        node_spec["userData"] = hugepages_user_data(
            spec.ami.family, catalog.hugepages_2mi_for(instance_type)
        )
    if placement_group is not None:
        node_spec["placementGroupSelector"] = {"name": placement_group}
    if spec.capacity_reservations:
        node_spec["capacityReservationSelectorTerms"] = [
            c.manifest() for c in spec.capacity_reservations
        ]
    node_spec["tags"] = {**tags, "eks-gpu-platform/pool": spec.name}
    return {
        "apiVersion": versions.EC2NODECLASS_API,
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": node_spec,
    }


def nodeoverlay_manifest(spec: NodePoolSpec, *, label_domain: str) -> dict[str, Any]:
    """A ``NodeOverlay`` telling Karpenter the EFA nodes' hugepages, so such pods provision."""
    return {
        "apiVersion": versions.NODEOVERLAY_API,
        "kind": "NodeOverlay",
        "metadata": {"name": f"{spec.name}-hugepages"},
        "spec": {
            "requirements": [
                _requirement(f"{label_domain}/pool", "In", [spec.name]),
                _requirement("node.kubernetes.io/instance-type", "In", spec.efa_types),
            ],
            "capacity": {"hugepages-2Mi": catalog.EFA_HUGEPAGES_2MI},
        },
    }


def split_gpu_limit(total: int | None, types: Sequence[catalog.InstanceType]) -> list[int | None]:
    """An EFA pool's GPU cap shared across its per-type NodePools (remainder to the first)."""
    if total is None:
        return [None] * len(types)
    share, rest = divmod(total, len(types))
    return [share + (1 if i < rest else 0) for i in range(len(types))]


def type_slug(instance_type: str) -> str:
    """``p5.48xlarge`` -> ``p5-48xlarge``: an instance type inside a Kubernetes name."""
    return instance_type.replace(".", "-")


# ---------------------------------------------------------------------------------------------
# Component
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NodePoolArgs:
    """Inputs of ``NodePool``: the pool spec and the cluster it provisions for.

    ``cluster`` (the ``EksCluster`` component) gives the cluster name, the label domain, the
    Kubernetes provider and the VPC (for an EFA pool's security group); ``karpenter`` (the
    ``Karpenter`` component) gives the node role and the dependency on Karpenter's CRDs and
    controller. Without them, set those explicitly; ``depends_on`` must then hold Karpenter's
    CRD release (a NodePool cannot be created before its CRD).

    ``gpu_limit``: the ``nvidia.com/gpu`` limit of a GPU or EFA pool; default the spec's
    ``limits.gpus`` (``GpuPlatform`` passes the limit its scheduler queues derive). A GPU or EFA
    pool with neither is refused: nothing would bound how many GPUs Karpenter provisions.
    """

    spec: NodePoolSpec
    cluster: "EksCluster | None" = None
    karpenter: "Karpenter | None" = None
    cluster_name: str | None = derived("cluster")
    label_domain: str | None = derived("cluster")
    node_role: pulumi.Input[str] | None = derived("karpenter")
    k8s_provider: k8s.Provider | None = derived("cluster")
    vpc_id: pulumi.Input[str] | None = derived("cluster")
    gpu_limit: int | None = None
    depends_on: Sequence[pulumi.Resource] = ()
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from .cluster import EksCluster
        from .karpenter import Karpenter

        problems = require_instance(self, "spec", NodePoolSpec)
        if self.cluster is not None:
            problems += require_instance(self, "cluster", EksCluster) or self._from_cluster()
        if self.karpenter is not None:
            problems += require_instance(self, "karpenter", Karpenter) or self._from_karpenter()
        for name in ("cluster_name", "label_domain", "k8s_provider"):
            if getattr(self, name) is None:
                problems.append(required_problem(name, "EksCluster", "cluster"))
        if self.node_role is None:
            problems.append(required_problem("node_role", "Karpenter", "karpenter"))
        if self.karpenter is None and not self.depends_on:
            problems.append(
                (
                    ("depends_on",),
                    "is empty; a NodePool and its EC2NodeClass need Karpenter's CRDs: pass the "
                    "Karpenter component as karpenter, or list its crd_release",
                )
            )
        if not problems:
            problems += self._pool_problems()
        if problems:
            raise SpecError(type(self).__name__, problems)

    def _from_cluster(self) -> list[Problem]:
        cluster = self.cluster
        assert cluster is not None
        out: list[Problem] = []
        for name, value, what in (
            ("cluster_name", cluster.spec.name, "name"),
            ("label_domain", cluster.spec.label_domain, "label domain"),
        ):
            given = getattr(self, name)
            if given is None:
                set_derived(self, name, value)
            elif given != value:
                out.append(
                    (
                        (name,),
                        f"{show(given)} is not the {what} of the EksCluster given as cluster "
                        f"({show(value)})",
                    )
                )
        if self.k8s_provider is None:
            set_derived(self, "k8s_provider", cluster.provider)
        if self.vpc_id is None:
            set_derived(self, "vpc_id", cluster.vpc_id)
        return out

    def _from_karpenter(self) -> list[Problem]:
        karpenter = self.karpenter
        assert karpenter is not None
        if self.node_role is None:
            set_derived(self, "node_role", karpenter.node_role_name)
        after = [karpenter.crd_release, karpenter.release]
        set_derived(
            self,
            "depends_on",
            [*after, *(d for d in self.depends_on if not any(d is a for a in after))],
        )
        return []

    def _pool_problems(self) -> list[Problem]:
        spec, out = self.spec, []
        pool = f"{spec.kind} pool {show(spec.name)}"
        if spec.kind == "efa":
            if self.vpc_id is None:
                out.append(
                    (
                        ("vpc_id",),
                        f"is required for {pool}: its security group is created in the VPC; "
                        "pass the EksCluster component as cluster, or set vpc_id",
                    )
                )
            gates = getattr(self.karpenter, "feature_gates", None)
            if gates is not None and not gates.get("nodeOverlay"):
                out.append(
                    (
                        ("karpenter",),
                        f"runs with the nodeOverlay feature gate off, but {pool} declares its "
                        "hugepages to Karpenter with a NodeOverlay; create Karpenter with "
                        "feature_gates={'nodeOverlay': True}",
                    )
                )
        limit = self.gpu_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            out.append((("gpu_limit",), f"{show(limit)} is not an integer"))
        elif not spec.is_gpu:
            if limit is not None:
                out.append((("gpu_limit",), f"only applies to gpu and efa pools; {pool} has none"))
        elif limit is None:
            if spec.limits.gpus is None:
                out.append(
                    (
                        ("gpu_limit",),
                        f"{pool} has no GPU limit; set limits.gpus in its NodePoolSpec (or "
                        "gpu_limit here), or nothing bounds how many GPUs Karpenter provisions",
                    )
                )
            else:
                set_derived(self, "gpu_limit", spec.limits.gpus)
        elif msg := check_range(limit, 1, 100000):
            out.append((("gpu_limit",), msg))
        elif spec.limits.gpus is not None and limit > spec.limits.gpus:
            out.append(
                (
                    ("gpu_limit",),
                    f"{limit} exceeds limits.gpus of {pool} ({spec.limits.gpus}); the pool's own "
                    "cap is the most it may get",
                )
            )
        elif short := spec.gpu_limit_shortfall(limit):
            out.append((("gpu_limit",), f"{limit} {short}; raise it or select fewer types"))
        return out


def pool_specs(args: Any, name: str = "node_pools") -> tuple[list[NodePoolSpec], list[Problem]]:
    """The specs of ``args.<name>``: ``NodePool`` components or ``NodePoolSpec`` values."""
    specs: list[NodePoolSpec] = []
    problems: list[Problem] = []
    for i, pool in enumerate(getattr(args, name)):
        spec = getattr(pool, "spec", None) if isinstance(pool, NodePool) else pool
        if isinstance(spec, NodePoolSpec):
            specs.append(spec)
        else:
            problems.append(((name, i), f"{show(pool)} is not a NodePool or a NodePoolSpec"))
    return specs, problems


def _has_outputs(spec: NodePoolSpec) -> bool:
    """Whether the EC2NodeClass carries values only known at deployment (a KMS key, a
    reservation from another resource)."""
    return is_output(spec.root_volume.kms_key_id) or any(
        is_output(c.id) or is_output(c.owner_id) for c in spec.capacity_reservations
    )


class NodePool(pulumi.ComponentResource):
    """One pool of Karpenter capacity: EC2NodeClass(es), NodePool(s), and EFA networking."""

    node_pool_names: pulumi.Output[Sequence[str]]
    node_class_names: pulumi.Output[Sequence[str]]

    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{TYPE_PREFIX}NodePool", name, None, opts)
        spec, tags = args.spec, dict(args.tags)
        cluster_name, label_domain = args.cluster_name or "", args.label_domain or ""
        self.spec = spec  # GpuOperatorArgs and EfaDevicePluginArgs read the pools' taints
        k8s_opts = pulumi.ResourceOptions(
            parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
        )
        security_groups: pulumi.Output[list[str]] = pulumi.Output.from_input([])
        placement_group: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        if spec.kind == "efa":
            pg = aws.ec2.PlacementGroup(
                f"{name}-pg",
                strategy="cluster",
                tags={**tags, "Name": f"{cluster_name}-{spec.name}"},
                opts=pulumi.ResourceOptions(parent=self),
            )
            sg = aws.ec2.SecurityGroup(
                f"{name}-efa",
                description=f"EFA traffic between {spec.name} nodes of {cluster_name}",
                vpc_id=args.vpc_id,
                tags={**tags, "Name": f"{cluster_name}-{spec.name}-efa"},
                opts=pulumi.ResourceOptions(parent=self),
            )
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-efa-self-in",
                security_group_id=sg.id,
                referenced_security_group_id=sg.id,
                ip_protocol="-1",
                description="EFA: all traffic from the pool's own nodes",
                opts=pulumi.ResourceOptions(parent=self),
            )
            aws.vpc.SecurityGroupEgressRule(
                f"{name}-efa-self-out",
                security_group_id=sg.id,
                referenced_security_group_id=sg.id,
                ip_protocol="-1",
                description="EFA: all traffic to the pool's own nodes",
                opts=pulumi.ResourceOptions(parent=self),
            )
            security_groups = sg.id.apply(lambda i: [i])
            placement_group = pg.name

        variants: list[tuple[str, str | None, int | None]]
        if spec.kind == "efa":
            types = spec.catalog_types
            limits = split_gpu_limit(args.gpu_limit, types)
            variants = [
                (f"{spec.name}-{type_slug(t.name)}", t.name, limit)
                for t, limit in zip(types, limits, strict=True)
            ]
        else:
            variants = [(spec.name, None, args.gpu_limit)]

        # Outputs inside the manifest (a KMS key, a reservation id) resolve with it.
        resolve: Any = pulumi.Output.from_input if _has_outputs(spec) else (lambda m: m)
        pools, classes = [], []
        for resource_name, instance_type, gpu_limit in variants:
            suffix = resource_name.removeprefix(spec.name)
            node_class = pulumi.Output.all(args.node_role, security_groups, placement_group).apply(
                lambda a, n=resource_name, t=instance_type: resolve(
                    ec2nodeclass_manifest(
                        spec,
                        name=n,
                        cluster_name=cluster_name,
                        node_role=a[0],
                        tags=tags,
                        extra_security_group_ids=a[1],
                        placement_group=a[2],
                        instance_type=t,
                    )
                )
            )
            klass = k8s.apiextensions.CustomResource(
                f"{name}{suffix}-class",
                api_version=versions.EC2NODECLASS_API,
                kind="EC2NodeClass",
                metadata={"name": resource_name},
                spec=node_class.apply(lambda m: m["spec"]),
                opts=k8s_opts,
            )
            manifest = nodepool_manifest(
                spec,
                name=resource_name,
                node_class=resource_name,
                label_domain=label_domain,
                gpu_limit=gpu_limit,
                instance_type=instance_type,
            )
            pool = k8s.apiextensions.CustomResource(
                f"{name}{suffix}-pool",
                api_version=versions.NODEPOOL_API,
                kind="NodePool",
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions(
                    parent=self,
                    provider=args.k8s_provider,
                    depends_on=[*args.depends_on, klass],
                ),
            )
            pools.append(pool)
            classes.append(klass)
        if spec.kind == "efa":
            overlay = nodeoverlay_manifest(spec, label_domain=label_domain)
            k8s.apiextensions.CustomResource(
                f"{name}-hugepages",
                api_version=versions.NODEOVERLAY_API,
                kind="NodeOverlay",
                metadata=overlay["metadata"],
                spec=overlay["spec"],
                opts=k8s_opts,
            )
        self.node_pool_names = pulumi.Output.from_input([v[0] for v in variants])
        self.node_class_names = pulumi.Output.from_input([v[0] for v in variants])
        self.register_outputs(
            {"node_pool_names": self.node_pool_names, "node_class_names": self.node_class_names}
        )
