"""The validations of the tenancy policies (``tenancy_policies``; pure, dicts out): the queue
policy's on any object (the queue a workload's labels or PodGroup name, its priority class and
preemptibility, and a Deployment KAI treats as non-preemptible) and the pod policy's (GPUs only
through KAI, ``NVIDIA_VISIBLE_DEVICES``, ``spec.nodeName``, priority classes, pools). Each reads
the policies' variables: ``variables.queue`` (the namespace's queue), ``variables.classes``,
``variables.classText`` and ``variables.nonPreemptible``."""

from collections.abc import Mapping

from .constants import (
    PREEMPTIBILITY_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
    SCHEDULER_NAME,
)
from .disruption_cel import (
    KAI_SCHEDULED_EXPRESSION,
    NOT_DEPLOYMENT_POD_EXPRESSION,
    _template_expressions,
    non_preemptible_expression,
    priority_class_table,
)
from .kai_owners import deployment_non_preemptible_expression, template_changed_expression
from .tenancy_cel import (
    GPU_RESOURCE_TEXT,
    cel_str,
    esc,
    gpu_expression,
    pod_pool_validations,
    visible_devices_validations,
)

PROJECT_LABEL = "project"  # kai-scheduler v0.16.8 pkg/podgrouper/podgrouper/plugins/constants
NODE_POOL_LABEL = "kai.scheduler/node-pool"  # pkg/common/constants/constants.go L26
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# The owners whose pod template must carry the queue label before 1.36, with its path.
TEMPLATE_OWNERS = {
    "Deployment": "object.spec.template",
    "StatefulSet": "object.spec.template",
    "ReplicaSet": "object.spec.template",
    "Job": "object.spec.template",
    "CronJob": "object.spec.jobTemplate.spec.template",
}

# The labels the queue policy judges itself (a pod's class or preemptibility by label).
LABELLED = (
    f"(has(object.metadata.labels) && ('{PRIORITY_CLASS_LABEL}' in object.metadata.labels || "
    f"'{PREEMPTIBILITY_LABEL}' in object.metadata.labels))"
)
LABELS = "(has(object.metadata.labels) ? object.metadata.labels : {})"
OLD_LABELS = "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})"


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
