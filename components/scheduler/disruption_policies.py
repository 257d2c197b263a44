"""The do-not-disrupt admission policies (pure builders, dicts out): Karpenter is kept off the
nodes of the pods KAI treats as non-preemptible (``disruption_cel``), on the pods themselves and on
the pod templates of their owners, whose labels KAI reads first."""

from collections.abc import Mapping

from .admission_pair import _kubernetes_minor, policy_pair
from .constants import (
    DISRUPTION_POLICY_NAME,
    DO_NOT_DISRUPT_ANNOTATION,
    MUTATING_ADMISSION_POLICY_GA,
    NON_PREEMPTIBLE_PRIORITY,
    PREEMPTIBILITY_LABEL,
    PRIORITY_CLASS_LABEL,
    SCHEDULER_NAME,
)
from .disruption_cel import (
    ANNOTATED_EXPRESSION,
    APPLY_DO_NOT_DISRUPT_EXPRESSION,
    KAI_SCHEDULED_EXPRESSION,
    NOT_DEPLOYMENT_POD_EXPRESSION,
    NOT_NODE_POD_EXPRESSION,
    _template_expressions,
    non_preemptible_expression,
    owner_non_preemptible_expression,
    priority_class_table,
)
from .kai_owners import deployment_non_preemptible_expression, template_changed_expression
from .manifests import queue_namespace_selector
from .owner_templates import mpijob_policy

POD_CREATE_RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    ]
}


# Never ReplicaSets: the deployment controller compares a ReplicaSet's template with its
# Deployment's and makes a new ReplicaSet on any difference (kubernetes v1.36.3
# pkg/controller/deployment/sync.go getNewReplicaSet, util/deployment_util.go EqualIgnoreHash).
# The owners KAI reads labels from (its top owner): Deployment, StatefulSet, Job; a CronJob's
# pods are grouped by their Job (cronjobs/crobjob-grouper.go L40-61), whose labels the CronJob
# controller copies from ``spec.jobTemplate.metadata`` (kubernetes v1.36.3
# pkg/controller/cronjob/utils.go getJobFromTemplate2).
WORKLOAD_RULES = {
    "resourceRules": [
        {
            "apiGroups": ["apps"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["deployments", "statefulsets"],
        },
        # A Job's pod template cannot change once the Job exists: creation only.
        {
            "apiGroups": ["batch"],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["jobs"],
        },
    ]
}
CRONJOB_RULES = {
    "resourceRules": [
        {
            "apiGroups": ["batch"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["cronjobs"],
        }
    ]
}


def _workload_message(extra_priority_classes: Mapping[str, int] | None) -> str:
    table = priority_class_table(extra_priority_classes)
    classes = ", ".join(n for n, v in table.items() if v >= NON_PREEMPTIBLE_PRIORITY)
    return (
        f"{SCHEDULER_NAME} workloads labelled non-preemptible ({PRIORITY_CLASS_LABEL} "
        f"{classes}, or {PREEMPTIBILITY_LABEL}=non-preemptible) must carry the annotation "
        f'{DO_NOT_DISRUPT_ANNOTATION}: "true" in their pod template, or Karpenter may '
        "consolidate their pods' nodes"
    )


def workload_admission_policy(
    *,
    kubernetes_version: str,
    label_domain: str,
    extra_priority_classes: Mapping[str, int] | None = None,
) -> list[dict]:
    """The policies and bindings that mark the pod template of a KAI workload whose own labels
    make it non-preemptible (``owner_non_preemptible_expression``): Deployments, StatefulSets
    and Jobs, then CronJobs (their ``spec.jobTemplate``). Mutating from Kubernetes 1.36, a
    denial before, as ``disruption_admission_policy``; never ReplicaSets."""
    mutating = _kubernetes_minor(kubernetes_version) >= MUTATING_ADMISSION_POLICY_GA
    selector = queue_namespace_selector(label_domain)
    message = _workload_message(extra_priority_classes)
    table = priority_class_table(extra_priority_classes)
    out: list[dict] = []
    for suffix, rules, labels_guard, labels, path, changed in (
        (
            "workloads",
            WORKLOAD_RULES,
            "has(object.metadata.labels)",
            "object.metadata.labels",
            "spec.template",
            template_changed_expression("spec.template", "metadata.labels"),
        ),
        (
            "cronjobs",
            CRONJOB_RULES,
            "has(object.spec.jobTemplate.metadata) && has(object.spec.jobTemplate.metadata.labels)",
            "object.spec.jobTemplate.metadata.labels",
            "spec.jobTemplate.spec.template",
            template_changed_expression("spec.jobTemplate", None),
        ),
    ):
        scheduled, annotated, apply = _template_expressions(path)
        verdict = f"{labels_guard} && ({owner_non_preemptible_expression(labels, table)})"
        if suffix == "workloads":
            # A Deployment: KAI's whole rule, its labels and its template's (kai_owners.py).
            verdict = (
                f"request.kind.kind == 'Deployment' ? "
                f"({deployment_non_preemptible_expression(table)}) : ({verdict})"
            )
        conditions = [
            {"name": "kai-scheduled", "expression": scheduled},
            {"name": "template-changed", "expression": changed},
            {"name": "owner-non-preemptible", "expression": verdict},
        ]
        out += policy_pair(
            name=f"{DISRUPTION_POLICY_NAME}-{suffix}",
            mutating=mutating,
            rules=rules,
            conditions=conditions,
            annotated=annotated,
            mutation={
                "patchType": "ApplyConfiguration",
                "applyConfiguration": {"expression": apply},
            },
            message=message,
            namespace_selector=selector,
        )
    return out + mpijob_policy(
        name=f"{DISRUPTION_POLICY_NAME}-mpijobs",
        mutating=mutating,
        changed=template_changed_expression("spec.mpiReplicaSpecs", "metadata.labels"),
        table=table,
        message=message,
        namespace_selector=selector,
    )


def disruption_admission_policy(
    *,
    kubernetes_version: str,
    label_domain: str,
    extra_priority_classes: Mapping[str, int] | None = None,
) -> list[dict]:
    """The admission policies and bindings that keep Karpenter off non-preemptible KAI pods'
    nodes, acting only on pods KAI schedules (``spec.schedulerName`` kai-scheduler: KAI's pod
    grouper skips every other pod, kai-scheduler v0.16.8 pkg/podgrouper/pod_controller.go L90)
    in the platform's queue namespaces (the bindings' ``queue_namespace_selector``), never on
    a mirror or DaemonSet pod.

    From Kubernetes 1.36 (MutatingAdmissionPolicy GA): a mutating policy that adds
    ``karpenter.sh/do-not-disrupt: "true"`` (an ApplyConfiguration, which also creates a missing
    annotations map) to non-preemptible pods (``non_preemptible_expression``) that do not carry
    the annotation; an explicit value, such as a duration, is left alone. Before 1.36: a
    validating policy whose binding denies such pods without the annotation. Only pod creation
    is matched. Then the workloads' policies (``workload_admission_policy``), for owners' labels.
    """
    table = priority_class_table(extra_priority_classes)
    classes = ", ".join(n for n, v in table.items() if v >= NON_PREEMPTIBLE_PRIORITY)
    pods = policy_pair(
        name=DISRUPTION_POLICY_NAME,
        mutating=_kubernetes_minor(kubernetes_version) >= MUTATING_ADMISSION_POLICY_GA,
        rules=POD_CREATE_RULES,
        conditions=[
            {"name": "kai-scheduled", "expression": KAI_SCHEDULED_EXPRESSION},
            {"name": "not-node-pod", "expression": NOT_NODE_POD_EXPRESSION},
            {"name": "not-deployment-pod", "expression": NOT_DEPLOYMENT_POD_EXPRESSION},
            {
                "name": "non-preemptible",
                "expression": non_preemptible_expression(extra_priority_classes),
            },
        ],
        annotated=ANNOTATED_EXPRESSION,
        mutation={
            "patchType": "ApplyConfiguration",
            "applyConfiguration": {"expression": APPLY_DO_NOT_DISRUPT_EXPRESSION},
        },
        message=(
            f"non-preemptible {SCHEDULER_NAME} pods (priority class {classes} or any other of "
            f"value {NON_PREEMPTIBLE_PRIORITY} or more, a Knative Service's or Notebook's pod "
            f"without a class, or label {PREEMPTIBILITY_LABEL}=non-preemptible) must carry the "
            f'annotation {DO_NOT_DISRUPT_ANNOTATION}: "true", or Karpenter may consolidate '
            "their node"
        ),
        namespace_selector=queue_namespace_selector(label_domain),
    )
    return [
        *pods,
        *workload_admission_policy(
            kubernetes_version=kubernetes_version,
            label_domain=label_domain,
            extra_priority_classes=extra_priority_classes,
        ),
    ]
