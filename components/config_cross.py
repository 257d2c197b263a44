"""The configuration's cross-section checks: each reads more than one section of the stack
(pools against the cluster, Karpenter, the GPU Operator, the scheduler's queues, the
validation, the region), and runs only when every section it reads loaded without a problem.

``CrossSectionChecks`` is mixed into ``config.PlatformConfig`` and reads its sections and derived
views (``gpu_pools``, ``gpu_limits``, ``workload_kinds``, ``partition``) by attribute;
``config_load`` runs the same checks on a partial config while loading.
"""

from __future__ import annotations

from typing import Any

from . import versions
from .budget import (
    MAX_POOL_GPUS,
    layout_config_problems,
    nodepool_names,
    plan_config_problems,
    pool_capacity_problems,
    routing_problems,
)
from .budget.preemption import preemption_delay_problems
from .config_checks import (
    admin_problems,
    device_plugin_problems,
    kms_problems,
    mig_problems,
    tag_problems,
)
from .gang_checks import gang_problems
from .karpenter.spec import version_tuple
from .nodepool import DEFAULT_CPU_POOL_NAME, NodePoolSpec
from .nodepool.dra import dra_platform_problems
from .scheduler.tenancy import priority_class_problems
from .spec import Problem, did_you_mean, show
from .tenants.checks import tenant_conflict_problems, tenant_partition_problems
from .validation_access.checks import principal_problems

# Node labels the platform sets from pool fields: <labelDomain>/<suffix>, and the operator's.
PLATFORM_LABEL_SUFFIXES = ("pool", "preemptible", "efa", "system", "dra")
OPERATOR_LABELS = ("nvidia.com/mig.config", "nvidia.com/device-plugin.config")


class CrossSectionChecks:
    """The checks of ``PlatformConfig`` that read more than one section (a mixin: the
    config holds the sections)."""

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
            out += layout_config_problems(self.pools, self.gpu_operator, self.scheduler)
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
            out += plan_config_problems(
                self.pools, self.gpu_operator, self.scheduler, self.workload_kinds
            )
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
