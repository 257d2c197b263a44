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
# The API server's built-in classes (kubernetes v1.36.3 pkg/apis/scheduling/v1/helpers.go L30-45:
# SystemCriticalPriority + 1000 and SystemCriticalPriority = 2 * 10^9, pkg/apis/scheduling/
# types.go L30-32). User classes may not exceed HighestUserDefinablePriority.
BUILTIN_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
# KAI's fallback classes when no class resolves (kai-scheduler v0.16.8
# pkg/podgrouper/podgrouper/plugins/constants/constants.go): the default grouper's ``train``
# (defaultgrouper/default_grouper.go L66), a Deployment's ``inference``
# (deployment/deployment_grouper.go L48), a Notebook's ``build`` (kubeflow/notebook/
# notebook_grouper.go L37).
DEFAULT_FALLBACK_CLASS = "train"
DEPLOYMENT_FALLBACK_CLASS = "inference"
NOTEBOOK_FALLBACK_CLASS = "build"
# The kubelet marks a static pod's mirror pod with this annotation and makes the Node its
# controller owner (k8s.io/api v0.36.3 core/v1/annotation_key_constants.go L27;
# kubernetes v1.36.3 pkg/kubelet/pod/mirror_client.go CreateMirrorPod).
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
# The label the scheduler component puts on every queue namespace: ``<labelDomain>/queue``.
# KAI itself does not read namespaces to pick a queue: the top owner's label
# ``kai.scheduler/queue``, then the pod's, then the ``project`` label, else ``default-queue``
# (kai-scheduler v0.16.8 defaultgrouper/default_grouper.go L134-166 CalcPodGroupQueue).
QUEUE_NAMESPACE_LABEL_SUFFIX = "queue"
# The API server labels every namespace with its own name (kubernetes v1.36.3
# pkg/registry/core/namespace/strategy.go L129, on every create and update): selectors match
# namespaces by name through it.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Namespaces the stack installs into or Kubernetes owns; no admission policy of the platform acts
# in them, whatever their labels: Kubernetes' own; kube-system also holds the EKS add-ons,
# Karpenter (components/karpenter/spec.py NAMESPACE) and the EFA device plugin
# (components/efa/component.py NAMESPACE); KAI's namespace and the namespaces of its GPU
# reservation pods and scaling pods (kai-scheduler v0.16.8 pkg/common/constants/constants.go
# L22-24); the GPU Operator's (components/gpu_operator/spec.py NAMESPACE).
SYSTEM_NAMESPACES = (
    "kube-system",
    "kube-public",
    "kube-node-lease",
    NAMESPACE,
    "kai-resource-reservation",
    "kai-scale-adjust",
    "gpu-operator",
)
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
# Namespaces a queue may not use: ``default`` and the system namespaces (none enforces Pod
# Security "restricted", and the admission policies never act in them).
RESERVED_NAMESPACES = ("default", *SYSTEM_NAMESPACES)
