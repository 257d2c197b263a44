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
"""

from collections.abc import Mapping, Sequence

from .constants import (
    ADMISSION_API,
    MIRROR_POD_ANNOTATION,
    MUTATING_ADMISSION_POLICY_GA,
    NAMESPACE,
    PREEMPTIBILITY_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
    QUEUE_NAMESPACE_LABEL_SUFFIX,
    SCHEDULER_NAME,
)
from .kai_owners import deployment_non_preemptible_expression, template_changed_expression
from .manifests import (
    KAI_SCHEDULED_EXPRESSION,
    NOT_DEPLOYMENT_POD_EXPRESSION,
    _kubernetes_minor,
    _template_expressions,
    non_preemptible_expression,
    priority_class_table,
    queue_namespace_selector,
)
from .tenancy import PoolAccess, QueueTenancy, forbidden_pools
from .tenancy_cel import (
    GPU_RESOURCE_TEXT,
    cel_list,
    cel_str,
    esc,
    gpu_expression,
    pod_pool_validations,
    pool_variables,
    visible_devices_validations,
)

QUEUE_POLICY_NAME = "platform-tenant-queue"
POD_POLICY_NAME = "platform-tenant-pods"
QUEUE_LABEL_POLICY_NAME = "platform-tenant-queue-label"
PROJECT_LABEL = "project"  # kai-scheduler v0.16.8 pkg/podgrouper/podgrouper/plugins/constants
NODE_POOL_LABEL = "kai.scheduler/node-pool"  # pkg/common/constants/constants.go L26
NODEPOOL_LABEL = "karpenter.sh/nodepool"
KAI_SERVICE_ACCOUNTS = f"system:serviceaccount:{NAMESPACE}:"
DAEMONSET_CONTROLLERS = (
    "system:serviceaccount:kube-system:daemon-set-controller",
    "system:kube-controller-manager",
)
# The owners whose pod template must carry the queue label before 1.36, with its path.
TEMPLATE_OWNERS = {
    "Deployment": "object.spec.template",
    "StatefulSet": "object.spec.template",
    "ReplicaSet": "object.spec.template",
    "Job": "object.spec.template",
    "CronJob": "object.spec.jobTemplate.spec.template",
}

NOT_KAI = f"!request.userInfo.username.startsWith('{KAI_SERVICE_ACCOUNTS}')"
TRUSTED_NODE_POD = (
    "((has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
    f"r.kind == 'DaemonSet') && request.userInfo.username in {cel_list(DAEMONSET_CONTROLLERS)}) "
    f"|| (has(object.metadata.annotations) && '{MIRROR_POD_ANNOTATION}' in "
    "object.metadata.annotations && has(request.userInfo.groups) && "
    "'system:nodes' in request.userInfo.groups))"
)
NOT_TRUSTED_NODE_POD = f"!(request.kind.kind == 'Pod' && {TRUSTED_NODE_POD})"
# The labels the queue policy judges itself (a pod's class or preemptibility by label).
LABELLED = (
    f"(has(object.metadata.labels) && ('{PRIORITY_CLASS_LABEL}' in object.metadata.labels || "
    f"'{PREEMPTIBILITY_LABEL}' in object.metadata.labels))"
)
LABELS = "(has(object.metadata.labels) ? object.metadata.labels : {})"
OLD_LABELS = "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})"


def _map_of_lists(table: Mapping[str, Sequence[str]]) -> str:
    return "{" + ", ".join(f"{cel_str(k)}: {cel_list(v)}" for k, v in table.items()) + "}"


def _map_of(table: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{cel_str(k)}: {cel_str(v)}" for k, v in table.items()) + "}"


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


def _v(expression: str, message_expression: str, message: str, reason: str = "Forbidden") -> dict:
    return {
        "expression": expression,
        "messageExpression": message_expression,
        "message": message,
        "reason": reason,
    }


def _label(key: str) -> str:
    return f"{LABELS}[{cel_str(key)}]"


def _changed(key: str) -> str:
    """CEL: CREATE, or an UPDATE that sets or changes label ``key``."""
    return (
        f"(request.operation == 'CREATE' || !({cel_str(key)} in {OLD_LABELS}) || "
        f"{OLD_LABELS}[{cel_str(key)}] != {_label(key)})"
    )


def queue_validations(mutating: bool) -> list[dict]:
    """The queue policy's validations on any object (``object`` unstructured)."""
    q, p = cel_str(QUEUE_LABEL), cel_str(PROJECT_LABEL)
    ns = "' in namespace ' + namespaceObject.metadata.name + ' (queue ' + variables.queue + ')'"
    project_value = (
        f"(request.kind.kind == 'Pod' && {cel_str(NODE_POOL_LABEL)} in {LABELS} ? "
        f"{_label(PROJECT_LABEL)} + '-' + {_label(NODE_POOL_LABEL)} : {_label(PROJECT_LABEL)})"
    )
    out = [
        _v(
            f"!({q} in {LABELS}) || !{_changed(QUEUE_LABEL)} || {_label(QUEUE_LABEL)} == "
            "variables.queue",
            f"'queue binding: label {QUEUE_LABEL}=' + {esc(_label(QUEUE_LABEL))} + ' on ' + "
            f"request.kind.kind + ' ' + object.metadata.name + {ns} + ' names another queue; "
            f"allowed: ' + variables.queue",
            f"queue binding: label {QUEUE_LABEL} names another queue than the namespace's",
        ),
        _v(
            f"!({p} in {LABELS}) || !{_changed(PROJECT_LABEL)} || {project_value} == "
            "variables.queue",
            f"'queue binding: label {PROJECT_LABEL}=' + {esc(_label(PROJECT_LABEL))} + ' on ' + "
            f"request.kind.kind + ' ' + object.metadata.name + {ns} + ' makes KAI pick queue ' + "
            f"{esc(project_value)} + '; allowed: ' + variables.queue + ' (with no "
            f"{NODE_POOL_LABEL} label on a pod), or no {PROJECT_LABEL} label'",
            f"queue binding: label {PROJECT_LABEL} names another queue than the namespace's",
        ),
        _v(
            "!(request.kind.group == 'scheduling.run.ai' && request.kind.kind == 'PodGroup') || "
            "(request.operation == 'UPDATE' && has(oldObject.spec.queue) && has(object.spec.queue) "
            "&& oldObject.spec.queue == object.spec.queue) || (has(object.spec.queue) && "
            "object.spec.queue == variables.queue)",
            "'queue binding: PodGroup ' + object.metadata.name + ' has spec.queue ' + "
            "(has(object.spec.queue) ? " + esc("string(object.spec.queue)") + " : '(unset)') + "
            f"{ns} + '; allowed: ' + variables.queue",
            "queue binding: a PodGroup's spec.queue names another queue than the namespace's",
        ),
        _v(
            f"!({cel_str(PRIORITY_CLASS_LABEL)} in {LABELS}) || "
            f"!{_changed(PRIORITY_CLASS_LABEL)} || "
            f"{_label(PRIORITY_CLASS_LABEL)} in variables.classes",
            f"'priority class: label {PRIORITY_CLASS_LABEL}=' + "
            f"{esc(_label(PRIORITY_CLASS_LABEL))} + ' on ' + request.kind.kind + ' ' + "
            f"object.metadata.name + ' is not allowed in queue ' + variables.queue + '; "
            "allowed: ' + variables.classText",
            f"priority class: label {PRIORITY_CLASS_LABEL} names a class the queue may not use",
        ),
        _v(
            f"variables.nonPreemptible || !({cel_str(PREEMPTIBILITY_LABEL)} in {LABELS}) || "
            f"!{_changed(PREEMPTIBILITY_LABEL)} || {_label(PREEMPTIBILITY_LABEL)} != "
            "'non-preemptible'",
            f"'priority class: label {PREEMPTIBILITY_LABEL}=non-preemptible on ' + "
            "request.kind.kind + ' ' + object.metadata.name + ' is not allowed: queue ' + "
            "variables.queue + ' runs preemptible work only; allowed: preemptible, or a class "
            "of ' + variables.classText",
            f"priority class: label {PREEMPTIBILITY_LABEL}=non-preemptible in a preemptible-only "
            "queue",
        ),
    ]
    if not mutating:
        owners = " || ".join(
            f"(request.kind.kind == '{kind}' && !(has({path}.metadata) && "
            f"has({path}.metadata.labels) && {q} in {path}.metadata.labels))"
            for kind, path in TEMPLATE_OWNERS.items()
        )
        out.append(
            _v(
                f"request.operation != 'CREATE' || (request.kind.group == '' && "
                f"request.kind.kind == 'Pod' ? {q} in {LABELS} : !(request.kind.group in "
                f"['apps', 'batch'] && ({owners})))",
                "'queue binding: ' + request.kind.kind + ' ' + object.metadata.name + "
                f"{ns} + ' has no label {QUEUE_LABEL} on its ' + (request.kind.kind == 'Pod' ? "
                f"'metadata' : 'pod template') + ', so KAI would put it in default-queue; add "
                f"the label {QUEUE_LABEL}: ' + variables.queue",
                f"queue binding: add the label {QUEUE_LABEL} with the namespace's queue",
            )
        )
    return out


def deployment_validations(extra_priority_classes: Mapping[str, int] | None) -> list[dict]:
    """The queue policy's preemptible-only check on a Deployment (``object``): KAI's rule for a
    Deployment's pods (``kai_owners.deployment_non_preemptible_expression``: its labels, then its
    template's, its top owner), which the pod policy cannot see and so leaves to this check.
    Judged on CREATE, and on UPDATE only when the template or the labels change, never on a
    Deployment being deleted (``template_changed_expression``); a label the validations above
    refuse in the same request (a class the queue may not use, ``non-preemptible``) is left to
    their message."""
    kinds = "request.kind.group == 'apps' && request.kind.kind == 'Deployment'"
    scheduled = _template_expressions("spec.template")[0]
    klass, pre = PRIORITY_CLASS_LABEL, PREEMPTIBILITY_LABEL
    reported = (
        f"({cel_str(klass)} in {LABELS} && {_changed(klass)} && "
        f"!({_label(klass)} in variables.classes)) || ({cel_str(pre)} in {LABELS} && "
        f"{_changed(pre)} && {_label(pre)} == 'non-preemptible')"
    )
    np = deployment_non_preemptible_expression(priority_class_table(extra_priority_classes))
    return [
        _v(
            f"!({kinds}) || variables.nonPreemptible || !({scheduled}) || "
            f"!({template_changed_expression('spec.template', 'metadata.labels')}) || "
            f"{reported} || !({np})",
            "'priority class: KAI treats the pods of Deployment ' + object.metadata.name + ' as "
            f"non-preemptible (label {pre} or {klass} on the Deployment, else on its pod "
            "template, else the template\\'s priorityClassName, else KAI\\'s inference "
            "default for a Deployment), but queue ' + variables.queue + ' runs preemptible work "
            f"only; allowed: {klass} ' + variables.classText + ' (label or template), or label "
            f"{pre}=preemptible'",
            "priority class: a Deployment KAI treats as non-preemptible is not allowed in a "
            "preemptible-only queue",
        )
    ]


def pod_validations(
    *, pool_label_key: str, extra_priority_classes: Mapping[str, int] | None
) -> list[dict]:
    """The pod policy's validations (``object`` a Pod)."""
    create = "request.operation == 'CREATE'"
    out = [
        _v(
            f"!({create}) || !({gpu_expression()}) || ({KAI_SCHEDULED_EXPRESSION})",
            "'GPUs only through the scheduler: pod ' + object.metadata.name + ' requests "
            f"{GPU_RESOURCE_TEXT} with schedulerName ' + (has(object.spec.schedulerName) ? "
            + esc("object.spec.schedulerName")
            + f" : 'default-scheduler') + '; allowed: schedulerName {SCHEDULER_NAME}'",
            f"GPUs only through the scheduler: pods requesting GPUs or EFA must set schedulerName "
            f"{SCHEDULER_NAME}",
        ),
        *visible_devices_validations(),
        _v(
            f"!({create}) || !has(object.spec.nodeName) || object.spec.nodeName == ''",
            "'node name: pod ' + object.metadata.name + ' sets spec.nodeName ' + "
            + esc("object.spec.nodeName")
            + " + ', which skips the scheduler and every taint but NoExecute; allowed: no "
            "spec.nodeName (select the queue\\'s pools with nodeSelector or node affinity)'",
            "node name: tenant pods may not set spec.nodeName",
        ),
        _v(
            "!has(object.spec.priorityClassName) || object.spec.priorityClassName == '' || "
            "object.spec.priorityClassName in variables.classes",
            "'priority class: pod ' + object.metadata.name + ' has priorityClassName ' + "
            + esc("object.spec.priorityClassName")
            + " + ', not allowed in queue ' + variables.queue + '; allowed: ' + "
            "variables.classText",
            "priority class: the pod's priorityClassName is not allowed in its queue",
        ),
        _v(
            f"variables.nonPreemptible || !({KAI_SCHEDULED_EXPRESSION}) || {LABELLED} || "
            f"!({NOT_DEPLOYMENT_POD_EXPRESSION}) || "
            "(has(object.spec.priorityClassName) && object.spec.priorityClassName != '' && "
            "!(object.spec.priorityClassName in variables.classes)) || "
            f"!({non_preemptible_expression(extra_priority_classes)})",
            "'priority class: KAI treats pod ' + object.metadata.name + ' as non-preemptible "
            "(its class, a Knative Service\\'s or Notebook\\'s default class, or "
            f"{PREEMPTIBILITY_LABEL}=non-preemptible), but queue ' + variables.queue + ' runs "
            "preemptible work only; allowed: priorityClassName ' + variables.classText",
            "priority class: non-preemptible pods are not allowed in a preemptible-only queue",
        ),
    ]
    out += pod_pool_validations(pool_label_key=pool_label_key, nodepool_label_key=NODEPOOL_LABEL)
    return out


def _vap(
    name: str,
    rules: list[dict],
    conditions: list[dict],
    variables: list[dict],
    validations: list[dict],
    selector: dict,
) -> list[dict]:
    return [
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"namespaceSelector": selector, "resourceRules": rules},
                "matchConditions": conditions,
                "variables": variables,
                "validations": validations,
            },
        },
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "matchResources": {"namespaceSelector": selector},
                "validationActions": ["Deny"],
            },
        },
    ]


def queue_label_mutation(label_domain: str) -> list[dict]:
    """1.36+: the MutatingAdmissionPolicy and binding giving a pod without ``kai.scheduler/
    queue`` its namespace's queue (an ApplyConfiguration merging one label)."""
    selector = queue_namespace_selector(label_domain)
    queue = f"namespaceObject.metadata.labels['{label_domain}/{QUEUE_NAMESPACE_LABEL_SUFFIX}']"
    return [
        {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": QUEUE_LABEL_POLICY_NAME},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": {
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
                "matchConditions": [
                    {"name": "not-kai", "expression": NOT_KAI},
                    {"name": "not-node-pod", "expression": f"!{TRUSTED_NODE_POD}"},
                    {
                        "name": "unlabelled",
                        "expression": "!has(object.metadata.labels) || "
                        f"!({cel_str(QUEUE_LABEL)} in object.metadata.labels)",
                    },
                ],
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {
                            "expression": "Object{metadata: Object.metadata{labels: "
                            f'{{"{QUEUE_LABEL}": {queue}}}}}}}'
                        },
                    }
                ],
            },
        },
        {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": QUEUE_LABEL_POLICY_NAME},
            "spec": {
                "policyName": QUEUE_LABEL_POLICY_NAME,
                "matchResources": {"namespaceSelector": selector},
            },
        },
    ]


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
    out = _vap(
        QUEUE_POLICY_NAME,
        [
            {
                "apiGroups": ["*"],
                "apiVersions": ["*"],
                "operations": ops,
                "resources": ["*"],
                "scope": "Namespaced",
            }
        ],
        [
            {"name": "not-kai", "expression": NOT_KAI},
            {"name": "not-node-pod", "expression": NOT_TRUSTED_NODE_POD},
        ],
        variables,
        queue_validations(mutating) + deployment_validations(extra_priority_classes),
        selector,
    )
    out += _vap(
        POD_POLICY_NAME,
        [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ops,
                "resources": ["pods", "pods/ephemeralcontainers"],
            }
        ],
        [
            {"name": "not-kai", "expression": NOT_KAI},
            {"name": "not-node-pod", "expression": f"!{TRUSTED_NODE_POD}"},
            {
                "name": "spec-changed",
                "expression": "request.operation == 'CREATE' || object.spec != oldObject.spec",
            },
        ],
        variables
        + pool_variables(
            queues=queues,
            forbidden={q.queue: forbidden_pools(q, pools) for q in queues},
            pools=pools,
        ),
        pod_validations(
            pool_label_key=f"{label_domain}/pool", extra_priority_classes=extra_priority_classes
        ),
        selector,
    )
    if mutating:
        out = queue_label_mutation(label_domain) + out
    return out
