"""KAI Scheduler, its queues and priority classes, and the Karpenter friction-point mitigations.

The component installs the ``kai-scheduler`` chart (``versions.KAI_SCHEDULER``) on the system
node group with GPU sharing and cluster autoscaling on, and lets Pulumi own what the chart would
otherwise create once and forget: the four priority classes (``train`` 50, ``build-preemptible``
75, ``build`` 100, ``inference`` 125) and the queues (``scheduling.run.ai/v2`` Queue, all nine
numbers explicit). The Run:ai x Karpenter friction points (FACTS §8.2) are handled here:

1. Over-quota pods trigger scale-up: ``pool_gpu_limits`` sizes each GPU pool's
   ``nvidia.com/gpu`` limit from the queues routed to it, and ``routing_problems`` reports
   routings that would leave a pool unbounded, unused or stuck at zero.
2. GPU fractions are invisible to Karpenter: ``global.gpuSharing`` and
   ``global.clusterAutoscaling`` (node-scale-adjuster); ``fractional_pod_template`` carries the
   GPU toleration and the pool affinity explicitly, because the pod requests no GPU.
3. Karpenter disrupts non-preemptible work: ``disruption_admission_policy`` adds (Kubernetes
   1.36+, MutatingAdmissionPolicy v1) or requires (older, ValidatingAdmissionPolicy v1)
   ``karpenter.sh/do-not-disrupt: "true"`` on the pods KAI schedules and treats as
   non-preemptible, only in the queue namespaces the component creates
   (``queue_namespace_manifests``), never on system, DaemonSet or mirror pods.
4. Gangs spread across pools, zones and types: ``training_job_template`` pins a gang to one
   pool (node affinity on the pool label, pod affinity on the pool label, zone and type) and, on
   a pool with several zones or types, to one zone and one type by required node affinity
   (``gang_placement``: Karpenter's pod affinity does not keep whole-node gangs together).

Units in configuration are human ones; the Queue CRD's are rendered: cpu in cores (rendered as
millicores, x1000), memory in GiB (rendered in MB = 10^6 bytes, x1073.741824), gpu in devices.
-1 means unlimited (quota) or no limit (limit) and is rendered as -1.
"""

# Queue routing and the pools' budgets live with the GPU budget (``budget``).
from typing import TYPE_CHECKING

from ..budget import (
    PoolRouting,
    pool_gpu_limits,
    routing_problems,
)
from ..lazy import lazy_exports
from .constants import (
    ADMISSION_API,
    APP_LABEL,
    BATCH_MIN_MEMBER_ANNOTATION,
    BYTES_PER_GIB,
    BYTES_PER_MB,
    DEFAULT_FRACTIONAL_CONTAINER,
    DEFAULT_INFERENCE_CONTAINER,
    DEFAULT_TRAINING_CONTAINER,
    DISRUPTION_POLICY_NAME,
    DNS_LABEL,
    DNS_LABEL_TEXT,
    DO_NOT_DISRUPT_ANNOTATION,
    EFA_RESOURCE,
    EFA_TOLERATION,
    GPU_FRACTION_ANNOTATION,
    GPU_MEMORY_ANNOTATION,
    GPU_RESOURCE,
    GPU_TOLERATION,
    HUGEPAGES_2MI_RESOURCE,
    JOB_NAME_LABEL,
    KAI_SHARD_LABEL_KEY,
    MILLICORES_PER_CORE,
    MUTATING_ADMISSION_POLICY_GA,
    NAMESPACE,
    NON_PREEMPTIBLE_CLASSES,
    NON_PREEMPTIBLE_PRIORITY,
    PREEMPTIBILITY_LABEL,
    PRIORITY_CLASS_LABEL,
    PRIORITY_CLASSES,
    QUEUE_LABEL,
    RELEASE_NAME,
    SCHEDULER_NAME,
    SYSTEM_NAMESPACES,
    UNLIMITED,
    ZONE_LABEL,
)
from .disruption_cel import (
    ANNOTATED_EXPRESSION,
    APPLY_DO_NOT_DISRUPT_EXPRESSION,
    NOT_ANNOTATED_EXPRESSION,
    non_preemptible_expression,
    owner_non_preemptible_expression,
    priority_class_table,
)
from .disruption_policies import (
    POD_CREATE_RULES,
    disruption_admission_policy,
    workload_admission_policy,
)
from .guardrails import (
    TENANT_TOLERATION_POLICY_NAME,
    system_namespace_labels,
    tenant_toleration_policy,
)
from .manifests import (
    priority_class_manifests,
    queue_manifest,
    queue_namespace_manifests,
    queue_namespace_selector,
    queues_parents_first,
)
from .network import (
    allow_dns_policy,
    default_deny_policy,
    queue_network_policies,
)
from .podsecurity import (
    BASELINE,
    PRIVILEGED,
    RESTRICTED,
    WorkloadTemplate,
    namespace_manifest,
    pod_security_labels,
    restricted_container_security_context,
    restricted_pod_security_context,
    weakest_level,
)
from .spec import (
    QueueResourceSpec,
    QueueSpec,
    SchedulerSpec,
    leaf_queue_names,
)
from .templates import (
    fractional_pod_template,
    gang_node_affinity,
    gang_placement,
    inference_deployment_template,
    inference_network_policy_template,
    inference_service_account_template,
    inference_service_template,
    isolated_pod_network_policy_template,
    notebook_pod_template,
    torchrun_command,
    training_job_template,
    training_network_policy_template,
    training_script_config_map,
    training_service_template,
)
from .values import (
    kai_values,
)

if TYPE_CHECKING:
    from .component import (
        KaiScheduler,
        KaiSchedulerArgs,
    )

# Loaded on first use: these load the Pulumi SDKs, which a reader of the specs (the stack's
# validation) does not need (lazy.py).
__getattr__ = lazy_exports(
    __name__,
    {
        "KaiScheduler": ".component",
        "KaiSchedulerArgs": ".component",
    },
)

__all__ = [
    "ADMISSION_API",
    "ANNOTATED_EXPRESSION",
    "APPLY_DO_NOT_DISRUPT_EXPRESSION",
    "APP_LABEL",
    "BASELINE",
    "BATCH_MIN_MEMBER_ANNOTATION",
    "BYTES_PER_GIB",
    "BYTES_PER_MB",
    "DEFAULT_FRACTIONAL_CONTAINER",
    "DEFAULT_INFERENCE_CONTAINER",
    "DEFAULT_TRAINING_CONTAINER",
    "DISRUPTION_POLICY_NAME",
    "DNS_LABEL",
    "DNS_LABEL_TEXT",
    "DO_NOT_DISRUPT_ANNOTATION",
    "EFA_RESOURCE",
    "EFA_TOLERATION",
    "GPU_FRACTION_ANNOTATION",
    "GPU_MEMORY_ANNOTATION",
    "GPU_RESOURCE",
    "GPU_TOLERATION",
    "HUGEPAGES_2MI_RESOURCE",
    "JOB_NAME_LABEL",
    "KAI_SHARD_LABEL_KEY",
    "MILLICORES_PER_CORE",
    "MUTATING_ADMISSION_POLICY_GA",
    "NAMESPACE",
    "NON_PREEMPTIBLE_CLASSES",
    "NON_PREEMPTIBLE_PRIORITY",
    "NOT_ANNOTATED_EXPRESSION",
    "POD_CREATE_RULES",
    "PREEMPTIBILITY_LABEL",
    "PRIORITY_CLASSES",
    "PRIORITY_CLASS_LABEL",
    "PRIVILEGED",
    "QUEUE_LABEL",
    "RELEASE_NAME",
    "RESTRICTED",
    "SCHEDULER_NAME",
    "SYSTEM_NAMESPACES",
    "TENANT_TOLERATION_POLICY_NAME",
    "UNLIMITED",
    "ZONE_LABEL",
    "KaiScheduler",
    "KaiSchedulerArgs",
    "PoolRouting",
    "QueueResourceSpec",
    "QueueSpec",
    "SchedulerSpec",
    "WorkloadTemplate",
    "allow_dns_policy",
    "default_deny_policy",
    "disruption_admission_policy",
    "fractional_pod_template",
    "gang_node_affinity",
    "gang_placement",
    "inference_deployment_template",
    "inference_network_policy_template",
    "inference_service_account_template",
    "inference_service_template",
    "isolated_pod_network_policy_template",
    "kai_values",
    "leaf_queue_names",
    "namespace_manifest",
    "non_preemptible_expression",
    "notebook_pod_template",
    "owner_non_preemptible_expression",
    "pod_security_labels",
    "pool_gpu_limits",
    "priority_class_manifests",
    "priority_class_table",
    "queue_manifest",
    "queue_namespace_manifests",
    "queue_namespace_selector",
    "queue_network_policies",
    "queues_parents_first",
    "restricted_container_security_context",
    "restricted_pod_security_context",
    "routing_problems",
    "system_namespace_labels",
    "tenant_toleration_policy",
    "torchrun_command",
    "training_job_template",
    "training_network_policy_template",
    "training_script_config_map",
    "training_service_template",
    "weakest_level",
    "workload_admission_policy",
]
