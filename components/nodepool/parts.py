"""The sub-specs of a pool spec: disruption budgets, limits, root volume, AMI, kubelet, taints
and capacity reservations."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .. import versions
from ..aws import KMS_KEY_REF_PATTERN
from ..budget.units import MAX_POOL_GPUS
from ..checks import (
    check_cron,
    check_label_value,
    check_positive_quantity,
    check_qualified_key,
    duration_seconds,
)
from ..spec import (
    DURATION_OR_NEVER,
    QUANTITY,
    Problem,
    Spec,
    check_one_of,
    check_pattern,
    check_range,
    doc,
    show,
)
from .constants import (
    BUDGET_REASONS,
    DEFAULT_AMI_VERSION,
    DEFAULT_CONSOLIDATE_AFTER,
    GP3_BASE_IOPS,
    GP3_BASE_THROUGHPUT,
    GP3_MAX_IOPS,
    GP3_MAX_THROUGHPUT,
    KUBELET_RESERVED_KEYS,
    ZONE_PATTERN,
)


def article(word: str) -> str:
    """``a`` or ``an`` before ``word``, as it is pronounced in these messages."""
    return "an" if word[:1].lower() in "aeio" else "a"


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
        if self.schedule is not None and (msg := check_cron(self.schedule)):
            out.append((("schedule",), msg))
        if self.duration is not None and (
            msg := check_pattern(
                self.duration,
                r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$",
                "a duration in hours and minutes such as '8h' or '1h30m'",
            )
        ):
            out.append((("duration",), msg))
        elif self.duration is not None and duration_seconds(self.duration) == 0:
            out.append(
                (
                    ("duration",),
                    f"{show(self.duration)} is zero: the budget would never be active; give it "
                    "a length such as '8h'",
                )
            )
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
        if self.gpus is not None and (msg := check_range(self.gpus, 1, MAX_POOL_GPUS)):
            out.append((("gpus",), msg))
        for name, example in (("cpu", "1000"), ("memory", "4000Gi")):
            value = getattr(self, name)
            # A zero cap launches nothing: the pool's pods would stay pending forever.
            if value is not None and (msg := check_positive_quantity(value, example)):
                out.append(((name,), msg))
        return out


@dataclass(frozen=True, kw_only=True)
class RootVolumeSpec(Spec):
    """The node's root (or, on Bottlerocket, data) volume: encrypted gp3."""

    size_gib: int | None = doc(
        None,
        "Default 50 GiB for GPU/EFA pools whose every type has instance store (containerd and "
        "the kubelet live on its RAID0), 200 GiB for GPU pools with a type without (g5g), "
        "100 GiB for CPU pools.",
    )
    iops: int | None = doc(
        None, "Default 3000 (gp3 baseline); 4000 for GPU pools with a type without instance store."
    )
    throughput: int | None = doc(
        None,
        "MiB/s; default 125 (gp3 baseline); 1000 (gp3 maximum) for GPU pools with a type "
        "without instance store.",
    )
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
        if self.kms_key_id is not None and (
            msg := check_pattern(
                self.kms_key_id,
                KMS_KEY_REF_PATTERN,
                "a KMS key id, key ARN, alias ('alias/NAME') or alias ARN",
            )
        ):
            out.append((("kms_key_id",), msg))
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
        if msg := check_qualified_key(self.key, "taint key"):
            out.append((("key",), msg))
        if self.value is not None and (msg := check_label_value(self.value)):
            out.append((("value",), msg))
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
    instance_type: str | None = doc(
        None,
        "The reservation's instance type (one of the pool's): gang templates pin it first "
        "(reserved capacity). Not part of the selector.",
    )
    zone: str | None = doc(
        None,
        "The reservation's availability zone: gang templates pin it with its type. Not part "
        "of the selector.",
    )

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
        if self.zone is not None and (
            msg := check_pattern(self.zone, ZONE_PATTERN, "an availability zone like 'us-west-2a'")
        ):
            out.append((("zone",), msg))
        return out

    def manifest(self) -> dict[str, Any]:
        if self.id is not None:
            return {"id": self.id}
        out: dict[str, Any] = {"tags": dict(self.tags)}
        if self.owner_id is not None:
            out["ownerID"] = self.owner_id
        return out
