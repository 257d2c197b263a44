"""The stack configuration: ``PlatformConfig``, every section's spec together, and the checks
that span sections.

Each top-level configuration key of the ``eks-gpu-platform`` namespace maps to one spec
(``cluster`` -> ``ClusterSpec``, ``karpenter`` -> ``KarpenterSpec``, ...), defined in its
capability's package (``cluster/spec.py``, ``karpenter/spec.py``, ...) and re-exported here.
``PlatformConfig.load`` parses a whole stack's configuration, collects every problem, and raises
one ``SpecError`` listing them all before any resource is registered. Components take these specs
as plain values: they decide the shape of the graph.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any

from . import versions
from .aws import PARTITIONS, REGION_PATTERN, TAG_KEY_PATTERN, partition_for_region
from .budget import (
    MAX_POOL_GPUS,
    PoolRouting,
    capacity_of,
    gpu_limits,
    layout_config_problems,
    nodepool_names,
    plan_config_problems,
    pool_capacity_problems,
    pool_routing,
    routing_problems,
    unknown_pool_problems,
)
from .budget.preemption import preemption_delay_problems
from .cluster.spec import (
    DEFAULT_LABEL_DOMAIN,
    DEFAULT_LOG_TYPES,
    LABEL_DOMAIN_ANNOTATION,
    ClusterSpec,
    SystemNodeGroupSpec,
)
from .config_checks import (
    KARPENTER_RESERVED_TAGS,
    admin_problems,
    device_plugin_problems,
    kms_problems,
    mig_problems,
    region_problem,
    tag_problems,
)
from .gang_checks import gang_problems
from .gpu_operator import GpuOperatorSpec
from .karpenter.spec import (
    MAX_KARPENTER_VERSION_EXCLUSIVE,
    MIN_KARPENTER_VERSION,
    KarpenterSpec,
    version_tuple,
)
from .naming import PROJECT
from .network.spec import VpcSpec
from .nodepool import (
    AMI_SHIPS_NVIDIA_DRIVER,
    DEFAULT_CPU_POOL_NAME,
    NodePoolSpec,
    default_cpu_pool,
)
from .nodepool.dra import dra_platform_problems
from .scheduler import SchedulerSpec
from .scheduler.spec import QueueSpec, leaf_queue_names
from .scheduler.tenancy import priority_class_problems
from .spec import (
    Problem,
    Spec,
    SpecError,
    camel,
    did_you_mean,
    doc,
    load_value,
    show,
)
from .tenants.checks import tenant_conflict_problems, tenant_partition_problems
from .validate.spec import ValidationSpec
from .validation_access.checks import principal_problems

# The configuration namespaces something reads, besides the project's own (the program reads
# ``<project>:<key>``). The engine hands a provider of package ``pkg`` exactly the stack's keys of
# namespace ``pkg`` (pulumi/pulumi@1b5949891b3c, the 3.260 line; the mechanism is unchanged in the
# pinned 3.272: pkg/resource/deploy/target.go ``GetPackageConfig`` skips every key whose
# ``Namespace()`` is not the package; default_providers.go line 143 configures a default provider
# with it) and reads ``pulumi:`` keys itself (default_providers.go line 271,
# ``pulumi:disable-default-providers``). The program's providers are aws (pulumi_aws), eks
# (pulumi_eks) and kubernetes (pulumi_kubernetes): a key of any other namespace reaches nothing,
# so ``eks-gpu-platfrom:vpc`` would be dropped silently and the default VPC rendered.
PROVIDER_NAMESPACES = ("aws", "eks", "kubernetes", "pulumi")


def namespace_problems(keys: Iterable[str], project: str = PROJECT) -> list[str]:
    """One line per stack configuration key whose namespace (before the first ``:``) is neither
    the project's nor a provider's, with a did-you-mean for a near miss."""
    known = [project, *PROVIDER_NAMESPACES]
    problems = []
    for key in keys:
        namespace, colon, _ = key.partition(":")
        if not colon or namespace in known:
            continue
        problems.append(
            f"{key}: unknown configuration namespace {namespace!r}, which nothing reads"
            + did_you_mean(namespace, known)
            + f"; allowed namespaces are {project} (this program) and "
            + f"{', '.join(PROVIDER_NAMESPACES)} (its providers and the engine)"
        )
    return problems


# Its own names, and those it re-exports from where they moved (the section specs, the AWS
# partitions and patterns, version_tuple).
__all__ = [
    "DEFAULT_LABEL_DOMAIN",
    "DEFAULT_LOG_TYPES",
    "KARPENTER_RESERVED_TAGS",
    "LABEL_DOMAIN_ANNOTATION",
    "MAX_KARPENTER_VERSION_EXCLUSIVE",
    "MIN_KARPENTER_VERSION",
    "OPERATOR_LABELS",
    "PARTITIONS",
    "PLATFORM_LABEL_SUFFIXES",
    "PROJECT",
    "PROVIDER_NAMESPACES",
    "REGION_PATTERN",
    "TAG_KEY_PATTERN",
    "ClusterSpec",
    "KarpenterSpec",
    "PlatformConfig",
    "SystemNodeGroupSpec",
    "VpcSpec",
    "namespace_problems",
    "partition_for_region",
    "version_tuple",
]

# Node labels the platform sets from pool fields: <labelDomain>/<suffix>, and the operator's.
PLATFORM_LABEL_SUFFIXES = ("pool", "preemptible", "efa", "system", "dra")
OPERATOR_LABELS = ("nvidia.com/mig.config", "nvidia.com/device-plugin.config")


# GPUs built for training: SXM parts with NVLink between a node's GPUs (p4d/p4de, p5/p5e/p5en,
# p6-b200/p6-b300; catalog.py). A queue whose first GPU pool selects only these defaults to
# training; the PCIe parts (l4, l40s, a10g, t4, t4g, rtx-pro-server-6000) default to inference.
TRAINING_GPUS = frozenset({"a100", "h100", "h200", "b200", "b300"})


def derived_workload_kind(pools: typing.Sequence[NodePoolSpec]) -> str:
    """A leaf queue's workload kind when ``workloadKind`` is unset, from its GPU pools in
    routing order (issue 23, point 6): ``training`` if one is an efa pool (multi-node
    training); else from the first: ``notebook`` on a time-sliced pool (slices share a GPU
    without memory or fault isolation: interactive work, not serving), ``training`` on a
    preemptible pool (checkpointed batch work tolerates the interruptions) or one that selects
    only ``TRAINING_GPUS``, else ``inference``."""
    if any(p.kind == "efa" for p in pools):
        return "training"
    first = pools[0]
    if first.time_slicing is not None:
        return "notebook"
    if first.preemptible:
        return "training"
    names = {t.gpu_name for t in first.catalog_types}
    return "training" if names and names <= TRAINING_GPUS else "inference"


@dataclass(frozen=True, kw_only=True)
class PlatformConfig(Spec):
    """Every configuration key of a stack, validated together."""

    region: str = doc(text="AWS region (`aws:region`).")
    cluster: ClusterSpec = doc(text="EKS control plane.")
    vpc: VpcSpec = doc(VpcSpec(), "Network: a new VPC or an existing one.")
    system_node_group: SystemNodeGroupSpec = doc(
        SystemNodeGroupSpec(), "Managed node group for controllers."
    )
    karpenter: KarpenterSpec = doc(KarpenterSpec(), "Karpenter controller.")
    node_pools: tuple[NodePoolSpec, ...] = doc(
        (), "Karpenter capacity: gpu, efa and cpu pools (see Node pools)."
    )
    gpu_operator: GpuOperatorSpec = doc(GpuOperatorSpec(), "NVIDIA GPU Operator.")
    scheduler: SchedulerSpec = doc(
        SchedulerSpec(enabled=False),
        "KAI scheduler and queues; off unless configured (then enabled: true by default).",
    )
    tags: Mapping[str, str] = doc(
        text="Tags on every AWS resource (and on Karpenter's instances).", default_factory=dict
    )
    validation: ValidationSpec = doc(
        ValidationSpec(),
        "The validation the deploy workflow runs after `pulumi up` (docs/validation.md); off "
        "unless afterDeploy lists phases.",
    )

    @property
    def pools(self) -> tuple[NodePoolSpec, ...]:
        """The configured pools, plus the default general-purpose pool when none is cpu."""
        if any(p.kind == "cpu" for p in self.node_pools):
            return self.node_pools
        return (*self.node_pools, default_cpu_pool(spot=self.karpenter.interruption_handling))

    @property
    def efa_pools(self) -> tuple[NodePoolSpec, ...]:
        return tuple(p for p in self.node_pools if p.kind == "efa")

    @property
    def gpu_pools(self) -> tuple[NodePoolSpec, ...]:
        return tuple(p for p in self.node_pools if p.is_gpu)

    @property
    def drivers_preinstalled(self) -> bool:
        """Whether every GPU node boots an AMI that ships the NVIDIA driver and toolkit."""
        return all(AMI_SHIPS_NVIDIA_DRIVER[p.ami.family] for p in self.gpu_pools)

    def slices_per_gpu(self, pool: NodePoolSpec) -> int:
        """``nvidia.com/gpu`` each physical GPU of the pool advertises: time-slicing replicas,
        or MIG devices under strategy ``single`` (the smallest count over the pool's GPU
        families, so the pool is never sized too small). Queues count these; Karpenter counts
        physical GPUs (see ``capacity.py``)."""
        return capacity_of(pool, self.gpu_operator).units_per_gpu

    def _routing(self) -> dict[str, PoolRouting]:
        return pool_routing(self)

    @property
    def gpu_limits(self) -> dict[str, int | None]:
        """Each GPU pool's ``nvidia.com/gpu`` limit: from the queues routed to it when the
        scheduler is on (friction point 1), else the pool's own cap."""
        return gpu_limits(self)

    @property
    def workload_kinds(self) -> dict[str, str]:
        """The workload kind of every leaf queue routed to a GPU pool, by queue name:
        ``scheduler.queues[].workloadKind``, else ``derived_workload_kind`` of its GPU pools
        (in routing order). The example templates follow it (offline.examples)."""
        if not self.scheduler.enabled:
            return {}
        pools = {p.name: p for p in self.gpu_pools}
        leaves = leaf_queue_names(self.scheduler.queues)
        out: dict[str, str] = {}
        for queue in self.scheduler.queues:
            routed = [pools[n] for n in queue.node_pools if n in pools]
            if queue.name in leaves and routed:
                out[queue.name] = queue.workload_kind or derived_workload_kind(routed)
        return out

    @property
    def partition(self) -> str:
        return partition_for_region(self.region)

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := region_problem(self.region):
            out.append((("region",), msg))
        return out + self.cross_problems(SECTIONS)

    def cross_problems(self, valid: frozenset[str]) -> list[Problem]:
        """The checks that read more than one section (and the tag keys). Each runs only when
        every section it reads is in ``valid``: ``load`` passes the sections that loaded
        without a problem, so one run reports every section's own problems and every
        cross-section problem among the valid ones (a bad ``kubernetesVersion`` does not hide a
        zone outside the region)."""
        out: list[Problem] = []
        if "tags" in valid:
            out += tag_problems(self.tags)
        kube = self.cluster.kubernetes_version
        minimum = versions.KARPENTER_MIN_VERSION_FOR_KUBERNETES.get(kube)
        if (
            {"cluster", "karpenter"} <= valid
            and minimum
            and version_tuple(self.karpenter.version) < version_tuple(minimum)
        ):
            out.append(
                (
                    ("karpenter", "chart_version"),
                    f"{show(self.karpenter.version)} does not support Kubernetes {kube}; "
                    f"it needs Karpenter {minimum} or newer",
                )
            )
        if {
            "karpenter",
            "system_node_group",
        } <= valid and self.karpenter.replicas > self.system_node_group.min_size:
            out.append(
                (
                    ("karpenter", "replicas"),
                    f"{self.karpenter.replicas} replicas need {self.karpenter.replicas} system "
                    f"nodes (one per node), but systemNodeGroup.minSize is "
                    f"{self.system_node_group.min_size}",
                )
            )
        if "node_pools" in valid:
            out += self._pool_problems(valid)
        if {"node_pools", "validation"} <= valid:
            out += self._validation_problems()
        if "scheduler" in valid:
            out += self._scheduler_problems(valid)
        if {"node_pools", "gpu_operator"} <= valid:
            out += device_plugin_problems(self.gpu_operator, [p.name for p in self.gpu_pools])
        if {"cluster", "region"} <= valid:
            out += admin_problems(self.cluster.admins, self.region, self.partition)
            out += admin_problems(self.cluster.viewers, self.region, self.partition, "viewers")
        if {"scheduler", "region"} <= valid:
            out += tenant_partition_problems(self.scheduler.queues, self.region, self.partition)
        if {"cluster", "scheduler"} <= valid:
            out += tenant_conflict_problems(self.cluster, self.scheduler.queues)
        if {"cluster", "scheduler", "validation", "region"} <= valid:
            out += principal_problems(self)
        keys: list[tuple[Any, Any]] = []
        if "cluster" in valid:
            keys.append((("cluster", "kms_key_arn"), self.cluster.kms_key_arn))
        if "node_pools" in valid:
            keys += [
                (("node_pools", i, "root_volume", "kms_key_id"), p.root_volume.kms_key_id)
                for i, p in enumerate(self.node_pools)
            ]
        if "region" in valid:
            out += kms_problems(keys, self.region, self.partition)
        return out

    def _validation_problems(self) -> list[Problem]:
        """``validation.pools`` against the stack's GPU pools (what ``--pool`` accepts)."""
        names = [p.name for p in self.gpu_pools]
        return [
            (
                ("validation", "pools", i),
                f"{show(pool)} is not a GPU pool of this stack; expected one of "
                f"{', '.join(names) or '(none)'}{did_you_mean(pool, names)}",
            )
            for i, pool in enumerate(self.validation.pools)
            if pool not in names
        ]

    def _pool_problems(self, valid: frozenset[str]) -> list[Problem]:
        out: list[Problem] = []
        seen: dict[str, int] = {}
        if not any(p.kind == "cpu" for p in self.node_pools):
            for i, pool in enumerate(self.node_pools):
                if pool.name == DEFAULT_CPU_POOL_NAME:
                    out.append(
                        (
                            ("node_pools", i, "name"),
                            f"{show(pool.name)} is the default cpu pool's name (added because "
                            "no pool is kind: cpu); rename this pool or define a cpu pool",
                        )
                    )
        for i, pool in enumerate(self.node_pools):
            out += self._one_pool_problems(i, pool, valid)
            names = [pool.name]
            if pool.kind == "efa":
                names += [n for n in nodepool_names(pool) if n != pool.name]
            for name in names:
                if name in seen:
                    out.append(
                        (
                            ("node_pools", i, "name"),
                            f"{show(pool.name)} collides with nodePools[{seen[name]}] "
                            f"(Karpenter object {show(name)})",
                        )
                    )
                seen.setdefault(name, i)
        if "scheduler" in valid and not self.scheduler.enabled:
            # Without the scheduler each pool's budget is its own cap (with it: the queues').
            out += layout_config_problems(self)
        return out

    def _one_pool_problems(
        self, i: int, pool: NodePoolSpec, valid: frozenset[str]
    ) -> list[Problem]:
        """One pool against the other sections (only those in ``valid``)."""
        out: list[Problem] = []
        platform_labels = {
            f"{self.cluster.label_domain}/{suffix}" for suffix in PLATFORM_LABEL_SUFFIXES
        } | set(OPERATOR_LABELS)
        if "cluster" in valid:
            for key in sorted(set(pool.labels) & platform_labels):
                out.append(
                    (
                        ("node_pools", i, "labels"),
                        f"{show(key)} is set by the platform itself (pool name, preemptible, efa, "
                        "migProfile, timeSlicing); remove it",
                    )
                )
        if "region" in valid and pool.zone is not None and not pool.zone.startswith(self.region):
            out.append(
                (
                    ("node_pools", i, "zone"),
                    f"{show(pool.zone)} is not in region {self.region}",
                )
            )
        uses_interruptible = {"spot", "reserved"} & set(pool.capacity_types)
        if "karpenter" in valid and uses_interruptible and not self.karpenter.interruption_handling:
            out.append(
                (
                    ("karpenter", "interruption_handling"),
                    f"is false but nodePools[{i}] ({pool.name}) uses "
                    f"{' and '.join(sorted(uses_interruptible))} capacity; Karpenter needs "
                    "the interruption queue to drain those nodes before EC2 reclaims them",
                )
            )
        if (
            "scheduler" in valid
            and pool.is_gpu
            and pool.limits.gpus is None
            and not self.scheduler.enabled
        ):
            out.append(
                (
                    ("node_pools", i, "limits", "gpus"),
                    f"is not set; GPU pool {show(pool.name)} needs a GPU cap (or scheduler "
                    "queues routed to it, which size it)",
                )
            )
        if "gpu_operator" in valid:
            out += self._gpu_operator_problems(i, pool)
        if {"cluster", "karpenter"} <= valid:
            out += dra_platform_problems(
                i,
                pool,
                karpenter_version=self.karpenter.version,
                kubernetes_version=self.cluster.kubernetes_version,
            )
        return out

    def _scheduler_problems(self, valid: frozenset[str]) -> list[Problem]:
        """Queues against the pools they route to, and the GPU Operator KAI needs."""
        out: list[Problem] = []
        if not self.scheduler.enabled:
            return out
        if "gpu_operator" in valid and not self.gpu_operator.enabled:
            out.append(
                (
                    ("gpu_operator", "enabled"),
                    "is false but the KAI scheduler is on; KAI needs the GPU Operator "
                    "(RuntimeClass nvidia, GPU feature discovery labels)",
                )
            )
        if "node_pools" not in valid:
            return out
        routing = routing_problems(self.scheduler.queues, self._routing())
        out += [(("scheduler", *p), m) for p, m in routing]
        out += gang_problems(self, budgets=not routing)
        out += self._workload_kind_problems()
        out += [
            (("scheduler", *path), msg)
            for path, msg in priority_class_problems(
                self.scheduler.queues,
                {p.name: p.preemptible for p in self.gpu_pools},
                self.scheduler.priority_classes,
            )
        ]
        out += [
            (("scheduler", *path), msg)
            for path, msg in preemption_delay_problems(
                self.scheduler.queues, {p.name: p for p in self.gpu_pools}
            )
        ]
        if not routing and "gpu_operator" in valid:
            limits = self.gpu_limits
            for i, pool in enumerate(self.node_pools):
                limit = limits.get(pool.name)
                if limit is not None and limit > MAX_POOL_GPUS:
                    # Said in the keys the user wrote, before NodePoolArgs sees the budget
                    # (issue 28, point 13: it named its own argument, gpu_limit).
                    out.append(((("node_pools", i)), self._budget_too_large(pool.name, limit)))
                elif limit is not None and (short := pool.gpu_limit_shortfall(limit)):
                    out.append(
                        (
                            ("node_pools", i),
                            f"the GPU limit its queues allow ({limit}) {short}; raise the "
                            "routed queues' gpu quota/limit or select fewer types",
                        )
                    )
            out += plan_config_problems(self)
        return out

    def _budget_too_large(self, pool: str, limit: int) -> str:
        queues = [
            f"scheduler.queues[{i}]({q.name}).gpu.limit {q.gpu.limit:g}"
            for i, q in enumerate(self.scheduler.queues)
            if pool in q.node_pools
        ]
        return (
            f"the GPU budget its queues allow ({limit}) is above the most a pool may get "
            f"({MAX_POOL_GPUS}); lower {', '.join(queues)} (or their parents' gpu.limit), or "
            "cap the pool with limits.gpus"
        )

    def _workload_kind_problems(self) -> list[Problem]:
        """``workloadKind`` only where a template follows it: a leaf queue with a GPU pool."""
        kinds = self.workload_kinds
        return [
            (
                ("scheduler", "queues", i, "workload_kind"),
                "is set but the queue is not a leaf queue routed to a GPU pool, so no workload "
                "template follows it; remove it",
            )
            for i, queue in enumerate(self.scheduler.queues)
            if queue.workload_kind is not None and queue.name not in kinds
        ]

    def _gpu_operator_problems(self, i: int, pool: NodePoolSpec) -> list[Problem]:
        out: list[Problem] = []
        if pool.mig_profile is not None:
            if not self.gpu_operator.enabled or self.gpu_operator.mig_strategy == "none":
                out.append(
                    (
                        ("node_pools", i, "mig_profile"),
                        "needs the GPU Operator with migStrategy single or mixed",
                    )
                )
            out += [
                (("node_pools", i, "mig_profile"), m) for m in mig_problems(pool, self.gpu_operator)
            ]
        if pool.time_slicing is not None:
            names = sorted(self.gpu_operator.time_slicing)
            if not self.gpu_operator.enabled or pool.time_slicing not in names:
                out.append(
                    (
                        ("node_pools", i, "time_slicing"),
                        f"{show(pool.time_slicing)} is not a gpuOperator.timeSlicing "
                        f"configuration; expected one of {', '.join(names) or '(none defined)'}",
                    )
                )
        out += pool_capacity_problems(i, pool, self.gpu_operator)
        return out

    @classmethod
    def load(
        cls, values: Mapping[str, Any], region: Any, stack_keys: Iterable[str] = ()
    ) -> PlatformConfig:
        """Build the config from the project namespace's values (keys without the prefix) and
        ``aws:region``, or raise one ``SpecError`` with every problem: the namespaces of
        ``stack_keys`` (every key of the stack's configuration, when the caller has them), each
        section's own, then the cross-section checks over the sections that loaded cleanly."""
        problems: list[str] = namespace_problems(stack_keys)
        sections: dict[str, Any] = {}
        hints = typing.get_type_hints(cls)
        known = {camel(f.name): f for f in fields(cls) if f.name != "region"}
        for key in values:
            if key not in known:
                problems.append(
                    f"{PROJECT}:{key}: unknown configuration key"
                    + did_you_mean(key, known)
                    + f"; allowed keys are {', '.join(sorted(known))}"
                )
        valid = set(SECTIONS)
        if region is None or region == "":
            problems.append("aws:region: is required; set it with `pulumi config set aws:region`")
            valid.discard("region")
        elif not isinstance(region, str):
            problems.append(f"aws:region: {show(region)} is not an AWS region such as 'us-west-2'")
            valid.discard("region")
        elif msg := region_problem(region):
            problems.append(f"aws:region: {msg}")
            valid.discard("region")
        for key, f in known.items():
            if key not in values:
                if key == "cluster":
                    problems.append("cluster: is required; set at least cluster.name")
                    valid.discard(f.name)
                continue
            try:
                sections[f.name] = load_value(hints[f.name], values[key], key)
            except SpecError as err:
                problems.extend(err.lines)
                valid.discard(f.name)
        # The cross-section checks, on a config whose invalid sections hold their defaults
        # (never read: every check names the sections it reads).
        partial = object.__new__(cls)
        for f in fields(cls):
            if f.name in sections:
                value = sections[f.name]
            elif f.name == "region":
                value = region if "region" in valid else ""
            elif f.name == "cluster":
                value = _PLACEHOLDER_CLUSTER
            else:
                value = f.default if f.default is not MISSING else f.default_factory()
            object.__setattr__(partial, f.name, value)
        cross = partial.cross_problems(frozenset(valid))
        if "node_pools" not in valid:
            # Pools that are valid on their own still meet the checks that read one pool and
            # the other sections (a zone outside the region, spot without the queue, ...).
            for i, pool in _valid_items(NodePoolSpec, values.get("nodePools")):
                cross += partial._one_pool_problems(i, pool, frozenset(valid))
        if "scheduler" not in valid and "node_pools" in valid:
            # Queues that are valid on their own still meet the routing check that reads one
            # queue: every pool it names exists (one bad queue does not hide another's typo).
            raw = values.get("scheduler")
            queues = raw.get("queues") if isinstance(raw, dict) else None
            names = [p.name for p in partial.pools]
            for i, queue in _valid_items(QueueSpec, queues):
                cross += [
                    (("scheduler", *path), msg)
                    for path, msg in unknown_pool_problems(i, queue, names)
                ]
        problems += SpecError("", cross, config=True, data=values).lines
        if problems:
            raise SpecError.from_lines(problems)
        return cls(region=region, **sections)


def _valid_items(tp: type, raw: Any) -> list[tuple[int, Any]]:
    """The items of a configuration list that load on their own, with their indexes."""
    out = []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        try:
            out.append((i, load_value(tp, item, "")))
        except SpecError:
            continue
    return out


SECTIONS = frozenset(f.name for f in fields(PlatformConfig))
# Stands in for an invalid or missing ``cluster`` section while the other sections are checked.
_PLACEHOLDER_CLUSTER = ClusterSpec(name="placeholder")
