"""The tenancy admission policies (issue 29 points 1-4; pure builders, dicts out), bound to the
platform's queue namespaces only (``manifests.queue_namespace_selector``: never a system namespace).

- ``platform-tenant-queue`` (ValidatingAdmissionPolicy, every namespaced resource ``*`` a tenant can
  create, CREATE and UPDATE): the labels KAI reads to pick a queue and a priority. KAI takes a
  workload's queue from its top owner's ``kai.scheduler/queue`` label, then the pod's, then a
  ``project`` label (``<project>``, or ``<project>-<node-pool label>`` when the pod carries KAI's
  node-pool label), else ``default-queue`` (kai-scheduler v0.16.8 pkg/podgrouper/podgrouper/
  plugins/defaultgrouper/default_grouper.go L134-166); every grouper passes its owner to that
  function (job/job_grouper.go L51, deployment/deployment_grouper.go L38, kubeflow/
  distributed_common.go L31, jobset/jobset_grouper.go L86, aml/aml_grouper.go L37, grove/
  grove_grouper.go L70, cronjobs/crobjob-grouper.go L61 with the Job), Knative its Revision
  (knative/knative.go L114, L134), which is why every kind is matched, not a list of owners. A
  PodGroup's ``spec.queue`` is what the scheduler reads for pods that bring their own PodGroup.
  ``resources: ["*"]`` matches no subresource, so ``pods/binding``, through which KAI's binder
  binds (pkg/binder/binding/binder.go L71-78), and ``pods/status`` are never judged. In a
  preemptible-only queue it also refuses a Deployment KAI treats as non-preemptible
  (``deployment_validations``: KAI reads the Deployment's labels and owner, which its pods do not
  show, so the pod policy leaves Deployments' and MPIJobs' pods alone).
- ``platform-tenant-pods`` (ValidatingAdmissionPolicy, pods and ``pods/ephemeralcontainers``): GPUs
  only through KAI, ``NVIDIA_VISIBLE_DEVICES``, ``spec.nodeName``, priority classes, pools.
- 1.36+: ``platform-tenant-queue-label`` (MutatingAdmissionPolicy v1, GA in 1.36:
  kubernetes/kubernetes#136039) gives a pod without ``kai.scheduler/queue`` the namespace's queue.
  The pod's label is enough: KAI reads it whenever the top owner has none (L135-139), and an owner
  that has one is held to the namespace's queue. Before 1.36 the queue policy refuses such a pod,
  and a Deployment, StatefulSet, ReplicaSet, Job or CronJob whose pod template lacks it, naming the
  label to add.

Never judged (``matchConditions``): requests of KAI's own service accounts (KAI's operator runs
each operand as a Deployment in ``Config.spec.namespace``, the release namespace ``kai-scheduler``,
under a service account of the operand's name: kai-scheduler v0.16.8 pkg/operator/operands/
common/common.go L137-143, L164; its podgrouper writes PodGroups derived from the pod and owner
labels judged here, its binder patches pods it binds), and a DaemonSet's or mirror pod when the
DaemonSet controller (``system:serviceaccount:kube-system:daemon-set-controller``, or
``system:kube-controller-manager`` without per-controller credentials: kubernetes v1.36.3
cmd/kube-controller-manager/app/controllermanager.go ``--use-service-account-credentials``) or a
node (group ``system:nodes``: the kubelet creates mirror pods, pkg/kubelet/pod/mirror_client.go)
creates it: an owner reference alone is the creator's to write. On UPDATE a rule judges only what
changed (labels, a PodGroup's queue, a pod's spec), so a controller's patch to an object admitted
earlier is never refused.

This module names the policies and builds their match conditions and variables; the queue and
pod policies' validations are built in ``tenancy_validations``, their CEL pieces in
``tenancy_cel``.
"""

from collections.abc import Mapping, Sequence

from .admission_pair import _kubernetes_minor, mutating_pair, validating_pair
from .constants import (
    MIRROR_POD_ANNOTATION,
    MUTATING_ADMISSION_POLICY_GA,
    NAMESPACE,
    QUEUE_LABEL,
    QUEUE_NAMESPACE_LABEL_SUFFIX,
)
from .manifests import queue_namespace_selector
from .tenancy import PoolAccess, QueueTenancy, forbidden_pools
from .tenancy_cel import cel_list, cel_str, pool_variables
from .tenancy_validations import deployment_validations, pod_validations, queue_validations

QUEUE_POLICY_NAME = "platform-tenant-queue"
POD_POLICY_NAME = "platform-tenant-pods"
QUEUE_LABEL_POLICY_NAME = "platform-tenant-queue-label"
KAI_SERVICE_ACCOUNTS = f"system:serviceaccount:{NAMESPACE}:"
DAEMONSET_CONTROLLERS = (
    "system:serviceaccount:kube-system:daemon-set-controller",
    "system:kube-controller-manager",
)

NOT_KAI = f"!request.userInfo.username.startsWith('{KAI_SERVICE_ACCOUNTS}')"
TRUSTED_NODE_POD = (
    "((has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
    f"r.kind == 'DaemonSet') && request.userInfo.username in {cel_list(DAEMONSET_CONTROLLERS)}) "
    f"|| (has(object.metadata.annotations) && '{MIRROR_POD_ANNOTATION}' in "
    "object.metadata.annotations && has(request.userInfo.groups) && "
    "'system:nodes' in request.userInfo.groups))"
)
NOT_TRUSTED_NODE_POD = f"!(request.kind.kind == 'Pod' && {TRUSTED_NODE_POD})"


def _map_of_lists(table: Mapping[str, Sequence[str]]) -> str:
    return "{" + ", ".join(f"{cel_str(k)}: {cel_list(v)}" for k, v in table.items()) + "}"


def _lookup(table: str, default: str) -> str:
    return f"(variables.queue in {table} ? {table}[variables.queue] : {default})"


def _variables(label_domain: str, queues: Sequence[QueueTenancy]) -> list[dict]:
    classes = _map_of_lists({q.queue: q.classes for q in queues})
    np = "{" + ", ".join(f"{cel_str(q.queue)}: {str(q.non_preemptible).lower()}" for q in queues)
    return [
        {
            "name": "queue",
            "expression": "namespaceObject.metadata.labels["
            f"'{label_domain}/{QUEUE_NAMESPACE_LABEL_SUFFIX}']",
        },
        {"name": "classes", "expression": _lookup(classes, "[]")},
        {"name": "nonPreemptible", "expression": _lookup(np + "}", "false")},
        {
            "name": "classText",
            "expression": "variables.classes.size() == 0 ? 'none' : variables.classes.join(', ')",
        },
    ]


def queue_label_mutation(label_domain: str) -> list[dict]:
    """1.36+: the MutatingAdmissionPolicy and binding giving a pod without ``kai.scheduler/
    queue`` its namespace's queue (an ApplyConfiguration merging one label)."""
    selector = queue_namespace_selector(label_domain)
    queue = f"namespaceObject.metadata.labels['{label_domain}/{QUEUE_NAMESPACE_LABEL_SUFFIX}']"
    return mutating_pair(
        name=QUEUE_LABEL_POLICY_NAME,
        match_constraints={
            "namespaceSelector": selector,
            "resourceRules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["pods"],
                }
            ],
        },
        conditions=[
            {"name": "not-kai", "expression": NOT_KAI},
            {"name": "not-node-pod", "expression": f"!{TRUSTED_NODE_POD}"},
            {
                "name": "unlabelled",
                "expression": "!has(object.metadata.labels) || "
                f"!({cel_str(QUEUE_LABEL)} in object.metadata.labels)",
            },
        ],
        mutations=[
            {
                "patchType": "ApplyConfiguration",
                "applyConfiguration": {
                    "expression": "Object{metadata: Object.metadata{labels: "
                    f'{{"{QUEUE_LABEL}": {queue}}}}}}}'
                },
            }
        ],
        namespace_selector=selector,
    )


def tenancy_policies(
    *,
    kubernetes_version: str,
    label_domain: str,
    queues: Sequence[QueueTenancy],
    pools: Sequence[PoolAccess],
    extra_priority_classes: Mapping[str, int] | None = None,
) -> list[dict]:
    """Every tenancy policy and binding (see the module docstring), in apply order."""
    mutating = _kubernetes_minor(kubernetes_version) >= MUTATING_ADMISSION_POLICY_GA
    selector = queue_namespace_selector(label_domain)
    variables = _variables(label_domain, queues)
    ops = ["CREATE", "UPDATE"]
    out = validating_pair(
        name=QUEUE_POLICY_NAME,
        match_constraints={
            "namespaceSelector": selector,
            "resourceRules": [
                {
                    "apiGroups": ["*"],
                    "apiVersions": ["*"],
                    "operations": ops,
                    "resources": ["*"],
                    "scope": "Namespaced",
                }
            ],
        },
        conditions=[
            {"name": "not-kai", "expression": NOT_KAI},
            {"name": "not-node-pod", "expression": NOT_TRUSTED_NODE_POD},
        ],
        variables=variables,
        validations=queue_validations(mutating) + deployment_validations(extra_priority_classes),
        namespace_selector=selector,
    )
    out += validating_pair(
        name=POD_POLICY_NAME,
        match_constraints={
            "namespaceSelector": selector,
            "resourceRules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ops,
                    "resources": ["pods", "pods/ephemeralcontainers"],
                }
            ],
        },
        conditions=[
            {"name": "not-kai", "expression": NOT_KAI},
            {"name": "not-node-pod", "expression": f"!{TRUSTED_NODE_POD}"},
            {
                "name": "spec-changed",
                "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec",
            },
        ],
        variables=variables
        + pool_variables(
            queues=queues,
            forbidden={q.queue: forbidden_pools(q, pools) for q in queues},
            pools=pools,
        ),
        validations=pod_validations(
            pool_label_key=f"{label_domain}/pool", extra_priority_classes=extra_priority_classes
        ),
        namespace_selector=selector,
    )
    if mutating:
        out = queue_label_mutation(label_domain) + out
    return out
