"""The CEL of the do-not-disrupt admission policies (``disruption_policies``; pure, strings out):
which pods KAI treats as non-preemptible (kai-scheduler v0.16.8's rule, from what the pod or its
owner shows), which pods are a node's own, and the annotation's test and apply configuration."""

from collections.abc import Mapping, Sequence

from .constants import (
    BUILTIN_PRIORITY_CLASSES,
    DO_NOT_DISRUPT_ANNOTATION,
    MIRROR_POD_ANNOTATION,
    NON_PREEMPTIBLE_PRIORITY,
    PREEMPTIBILITY_LABEL,
    PRIORITY_CLASS_LABEL,
    PRIORITY_CLASSES,
    SCHEDULER_NAME,
)
from .owner_templates import MPIJOB_POD_EXPRESSION


def _cel_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


# The pods of a top owner KAI defaults to a non-preemptible class when no class resolves
# (kai-scheduler v0.16.8 pkg/podgrouper/podgrouper/plugins): a Deployment -> ``inference``
# (deployment/deployment_grouper.go L48), a Knative service -> ``inference`` (knative/knative.go
# L113), whose pods a Deployment runs too, a Kubeflow Notebook -> ``build`` (kubeflow/notebook/
# notebook_grouper.go L37); the rest -> ``train`` (defaultgrouper/default_grouper.go L66). A
# Deployment's pods carry ``pod-template-hash`` and a ReplicaSet owner (kubernetes v1.36.3
# pkg/controller/deployment/sync.go getNewReplicaSet); a Notebook's carry ``notebook-name``
# (kubeflow/kubeflow components/notebook-controller/controllers/notebook_controller.go
# generateStatefulSet).
DEPLOYMENT_POD_EXPRESSION = (
    "has(object.metadata.labels) && 'pod-template-hash' in object.metadata.labels && "
    "has(object.metadata.ownerReferences) && "
    "object.metadata.ownerReferences.exists(r, r.kind == 'ReplicaSet')"
)
NOTEBOOK_POD_EXPRESSION = "has(object.metadata.labels) && 'notebook-name' in object.metadata.labels"
# A Knative Service's pods carry ``serving.knative.dev/revision``; KAI groups them by their
# Revision and never reads a preemptibility label for them: the PodGroup metadata carries no
# preemptibility (kai-scheduler v0.16.8 pkg/podgrouper/podgrouper/plugins/knative/knative.go
# L29, L88-139), so only the class decides (``inference`` when none resolves, L113).
KNATIVE_POD_EXPRESSION = (
    "has(object.metadata.labels) && 'serving.knative.dev/revision' in object.metadata.labels"
)
# KAI parses the preemptibility label strictly (kai-scheduler v0.16.8 pkg/apis/scheduling/
# v2alpha2/podgroup_types.go L96-108): any other value is ignored (default_grouper.go L244).
PREEMPTIBILITY_VALUES = ("preemptible", "non-preemptible")
KAI_SCHEDULED_EXPRESSION = (
    f"has(object.spec.schedulerName) && object.spec.schedulerName == '{SCHEDULER_NAME}'"
)
# Never a node's own pods: a mirror pod (annotation, Node owner) or a DaemonSet's; Karpenter
# lets either block a node's disruption (kubernetes-sigs/karpenter v1.15.0
# pkg/controllers/state/statenode.go L328-339).
NOT_NODE_POD_EXPRESSION = (
    f"!(has(object.metadata.annotations) && '{MIRROR_POD_ANNOTATION}' in "
    "object.metadata.annotations) && !(has(object.metadata.ownerReferences) && "
    "object.metadata.ownerReferences.exists(r, r.kind in ['DaemonSet', 'Node']))"
)


def priority_class_table(extra: Mapping[str, int] | None = None) -> dict[str, int]:
    """The classes the policies know by name, with their values: KAI's four (the platform
    renders them), the API server's two built-ins, then ``extra`` (classes users create)."""
    return {**PRIORITY_CLASSES, **BUILTIN_PRIORITY_CLASSES, **dict(extra or {})}


def _cel_map(table: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"'{name}': {value}" for name, value in table.items()) + "}"


def _class_decides(labels: str, table: Mapping[str, int], fallback: str) -> str:
    """CEL: the class named by the ``priorityClassName`` label decides if ``table`` knows it,
    else the kind's fallback ``fallback`` (KAI ignores a label naming no existing class and does
    not read spec then: default_grouper.go L191-224, L275-284)."""
    classes = _cel_map(table)
    key = f"{labels}['{PRIORITY_CLASS_LABEL}']"
    return f"({key} in {classes} ? {classes}[{key}] >= {NON_PREEMPTIBLE_PRIORITY} : {fallback})"


def _preemptibility_label(labels: str, guard: str) -> tuple[str, str]:
    """CEL (valid, non-preemptible) for the preemptibility label of ``labels``."""
    key = f"{labels}['{PREEMPTIBILITY_LABEL}']"
    values = _cel_list(PREEMPTIBILITY_VALUES)
    valid = f"{guard}'{PREEMPTIBILITY_LABEL}' in {labels} && {key} in {values}"
    return valid, f"{key} == 'non-preemptible'"


def non_preemptible_expression(extra_priority_classes: Mapping[str, int] | None = None) -> str:
    """CEL on a pod KAI schedules: KAI (v0.16.8) treats it as non-preemptible.

    Mirrors ``pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go`` for what the
    pod itself shows: the label ``kai.scheduler/preemptibility`` when it parses (L240-246),
    except on a Knative Service's pods, for which KAI never reads it (knative/knative.go L88-139);
    else the class named by the label ``priorityClassName`` (L278-279) if it is a known class
    (``priority_class_table``), else the kind's fallback (L196-223); else
    ``spec.priorityClassName`` (L280-281), whose value the Priority admission plugin has put in
    ``spec.priority`` before policies run (kubernetes v1.36.3 plugin/pkg/admission/priority/
    admission.go; the class exists, or the pod is rejected); else the kind's fallback:
    Knative pods ``inference``, Notebook pods ``build``, the rest ``train``. A Deployment's pods
    (``NOT_DEPLOYMENT_POD_EXPRESSION``) are left to the workloads policy and the tenancy queue
    policy, which judge the Deployment (``kai_owners``).
    Non-preemptible means a value of 100 or more (``pkg/common/podgroup/preemptible.go``
    L10-26). The owner's labels come first for KAI but are not visible here:
    ``workload_admission_policy`` marks the owner's pod template for them.
    """
    labels = "object.metadata.labels"
    table = priority_class_table(extra_priority_classes)
    fallback = f"(({KNATIVE_POD_EXPRESSION}) || ({NOTEBOOK_POD_EXPRESSION}))"
    valid, non_preemptible = _preemptibility_label(
        labels, f"!({KNATIVE_POD_EXPRESSION}) && has({labels}) && "
    )
    return (
        f"({valid}) ? {non_preemptible} "
        f": ((has({labels}) && '{PRIORITY_CLASS_LABEL}' in {labels}) "
        f"? {_class_decides(labels, table, fallback)} "
        ": ((has(object.spec.priorityClassName) && object.spec.priorityClassName != '') "
        f"? (has(object.spec.priority) && object.spec.priority >= {NON_PREEMPTIBLE_PRIORITY}) "
        f": {fallback}))"
    )


def owner_non_preemptible_expression(
    labels: str, extra_priority_classes: Mapping[str, int] | None = None
) -> str:
    """CEL on a workload whose own labels (``labels``: the top owner's, which KAI reads before
    the pod's, default_grouper.go L191-203, L231-239) make its pods non-preemptible: a valid
    preemptibility label, or a ``priorityClassName`` label naming a known class of value 100 or
    more (a name no class has falls back to ``train``: StatefulSet, Job, CronJob, MPIJob).
    Without either label the pod policy decides from the pod. Deployments have their own rule
    (``kai_owners.deployment_non_preemptible_expression``)."""
    table = priority_class_table(extra_priority_classes)
    valid, non_preemptible = _preemptibility_label(labels, "")
    fallback = "false"
    return (
        f"({valid}) ? {non_preemptible} "
        f": ('{PRIORITY_CLASS_LABEL}' in {labels} ? {_class_decides(labels, table, fallback)} "
        ": false)"
    )


# The pods of a Deployment (not a Knative revision's): KAI reads the Deployment's labels before
# the pod's, and the Deployment's owner decides whether it is KAI's top owner at all
# (kai_owners.py), none of which a pod shows: the workloads policy judges them on the Deployment.
# Likewise an MPIJob's pods (owner_templates.py): the MPIJob's labels come first.
NOT_DEPLOYMENT_POD_EXPRESSION = (
    f"(!({DEPLOYMENT_POD_EXPRESSION}) || ({KNATIVE_POD_EXPRESSION})) && !({MPIJOB_POD_EXPRESSION})"
)


ANNOTATED_EXPRESSION = (
    "has(object.metadata.annotations) && "
    f"'{DO_NOT_DISRUPT_ANNOTATION}' in object.metadata.annotations"
)
NOT_ANNOTATED_EXPRESSION = f"!({ANNOTATED_EXPRESSION})"
APPLY_DO_NOT_DISRUPT_EXPRESSION = (
    f'Object{{metadata: Object.metadata{{annotations: {{"{DO_NOT_DISRUPT_ANNOTATION}": "true"}}}}}}'
)


def _template_expressions(path: str) -> tuple[str, str, str]:
    """(KAI-scheduled, annotated, apply) CEL for the pod template at ``object.<path>``."""
    template = f"object.{path}"
    scheduled = (
        f"has({template}.spec.schedulerName) && {template}.spec.schedulerName == '{SCHEDULER_NAME}'"
    )
    annotated = (
        f"has({template}.metadata) && has({template}.metadata.annotations) && "
        f"'{DO_NOT_DISRUPT_ANNOTATION}' in {template}.metadata.annotations"
    )
    parts = path.split(".")
    inner = f'{{annotations: {{"{DO_NOT_DISRUPT_ANNOTATION}": "true"}}}}'
    value = f"Object.{path}.metadata{inner}"
    for depth in range(len(parts), 0, -1):
        prefix = ".".join(parts[:depth])
        field = "metadata" if depth == len(parts) else parts[depth]
        value = f"Object.{prefix}{{{field}: {value}}}"
    apply = f"Object{{{parts[0]}: {value}}}"
    return scheduled, annotated, apply
