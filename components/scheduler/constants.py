"""Names, labels, annotations, priority classes and units shared by the scheduler's spec and
builders, and ``_num``, the number formatting both use (``UNLIMITED`` and ``_num`` live with the
GPU budget, ``budget.units``)."""

from ..budget.units import UNLIMITED as UNLIMITED
from ..budget.units import _num as _num

NAMESPACE = "kai-scheduler"
RELEASE_NAME = "kai-scheduler"
SCHEDULER_NAME = "kai-scheduler"
QUEUE_LABEL = "kai.scheduler/queue"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
PRIORITY_CLASS_LABEL = "priorityClassName"
BATCH_MIN_MEMBER_ANNOTATION = "kai.scheduler/batch-min-member"
GPU_FRACTION_ANNOTATION = "gpu-fraction"
GPU_MEMORY_ANNOTATION = "gpu-memory"
DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"
# KAI's scheduling-shard key (FACTS §7.5): never the project's pool label.
KAI_SHARD_LABEL_KEY = "kai.scheduler/node-pool"
ZONE_LABEL = "topology.kubernetes.io/zone"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"  # set on every Job pod by the Job controller
APP_LABEL = "app.kubernetes.io/name"
GPU_RESOURCE = "nvidia.com/gpu"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
HUGEPAGES_2MI_RESOURCE = "hugepages-2Mi"
GPU_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": EFA_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
# The chart's templates/priorityclasses/*.yaml: name and value only (no description,
# preemptionPolicy left at PreemptLowerPriority, not global default).
PRIORITY_CLASSES = {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}
# KAI treats priority >= 100 as non-preemptible: in-quota only, never preempted.
NON_PREEMPTIBLE_PRIORITY = 100
NON_PREEMPTIBLE_CLASSES = tuple(n for n, v in PRIORITY_CLASSES.items() if v >= 100)
MILLICORES_PER_CORE = 1000
BYTES_PER_GIB = 1024**3
BYTES_PER_MB = 1000**2
ADMISSION_API = "admissionregistration.k8s.io/v1"
# MutatingAdmissionPolicy is GA (admissionregistration.k8s.io/v1, on by default) from Kubernetes
# 1.36 (KEP-3962: alpha 1.32, beta 1.34, stable 1.36); ValidatingAdmissionPolicy v1 since 1.30.
MUTATING_ADMISSION_POLICY_GA = (1, 36)
DISRUPTION_POLICY_NAME = "kai-non-preemptible-do-not-disrupt"
DNS_LABEL = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
DNS_LABEL_TEXT = "1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"
DEFAULT_TRAINING_CONTAINER = "trainer"
DEFAULT_INFERENCE_CONTAINER = "server"
DEFAULT_FRACTIONAL_CONTAINER = "main"
# Namespaces a queue's workload templates may not use: Kubernetes' own, KAI's and the GPU
# Operator's (the stack installs into them; none enforces Pod Security "restricted").
RESERVED_NAMESPACES = (
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    NAMESPACE,
    "gpu-operator",
)
