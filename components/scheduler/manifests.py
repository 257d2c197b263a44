"""Pure builders of the scheduler's Kubernetes objects: queues, priority classes, and the
do-not-disrupt admission policy with its CEL expressions (plain data in, dicts out).
"""

import re
from collections.abc import Mapping, Sequence

from .. import versions
from .admission_pair import policy_pair
from .constants import (
    BUILTIN_PRIORITY_CLASSES,
    BYTES_PER_GIB,
    BYTES_PER_MB,
    DISRUPTION_POLICY_NAME,
    DO_NOT_DISRUPT_ANNOTATION,
    MILLICORES_PER_CORE,
    MIRROR_POD_ANNOTATION,
    MUTATING_ADMISSION_POLICY_GA,
    NAMESPACE_NAME_LABEL,
    NON_PREEMPTIBLE_PRIORITY,
    PREEMPTIBILITY_LABEL,
    PRIORITY_CLASS_LABEL,
    PRIORITY_CLASSES,
    QUEUE_NAMESPACE_LABEL_SUFFIX,
    SCHEDULER_NAME,
    SYSTEM_NAMESPACES,
    UNLIMITED,
    _num,
)
from .kai_owners import deployment_non_preemptible_expression, template_changed_expression
from .owner_templates import MPIJOB_POD_EXPRESSION, mpijob_policy
from .podsecurity import RESTRICTED, namespace_manifest
from .spec import QueueResourceSpec, QueueSpec, leaf_queue_names


def _cpu(value: float) -> int | float:
    return UNLIMITED if value == UNLIMITED else _num(round(value * MILLICORES_PER_CORE, 3))


def _memory(value: float) -> int | float:
    return UNLIMITED if value == UNLIMITED else _num(round(value * BYTES_PER_GIB / BYTES_PER_MB, 6))


def _resource(spec: QueueResourceSpec, convert) -> dict:
    return {
        "quota": convert(spec.quota),
        "limit": convert(spec.limit),
        "overQuotaWeight": _num(spec.over_quota_weight),
    }


def queue_manifest(queue: QueueSpec, *, label_domain: str | None = None) -> dict:
    """The ``scheduling.run.ai/v2`` Queue: all nine numbers explicit, in the CRD's units.

    With ``label_domain``, a leaf queue records the node pools it routes to in the annotation
    ``<label_domain>/node-pools``, and its explicit ``poolShares`` in ``<label_domain>/
    pool-shares`` (``pool=share,...``), both read by the policy pack's GPU-limit check.
    """
    spec: dict = {}
    if queue.display_name is not None:
        spec["displayName"] = queue.display_name
    if queue.parent is not None:
        spec["parentQueue"] = queue.parent
    if queue.priority is not None:
        spec["priority"] = queue.priority
    spec["resources"] = {
        "cpu": _resource(queue.cpu, _cpu),
        "gpu": _resource(queue.gpu, _num),
        "memory": _resource(queue.memory, _memory),
    }
    metadata: dict = {"name": queue.name}
    if label_domain is not None and queue.node_pools:
        metadata["annotations"] = {f"{label_domain}/node-pools": ",".join(queue.node_pools)}
        if queue.pool_shares:
            metadata["annotations"][f"{label_domain}/pool-shares"] = ",".join(
                f"{pool}={_num(share)}" for pool, share in queue.pool_shares.items()
            )
    return {
        "apiVersion": versions.KAI_QUEUE_API,
        "kind": "Queue",
        "metadata": metadata,
        "spec": spec,
    }


def queues_parents_first(queues: Sequence[QueueSpec]) -> list[QueueSpec]:
    """The queues ordered so that every parent comes before its children (stable otherwise)."""
    by_name = {q.name: q for q in queues}
    done: list[QueueSpec] = []
    seen: set[str] = set()

    def visit(queue: QueueSpec, path: tuple[str, ...]) -> None:
        if queue.name in seen or queue.name in path:
            return
        if queue.parent in by_name:
            visit(by_name[queue.parent], (*path, queue.name))
        seen.add(queue.name)
        done.append(queue)

    for queue in queues:
        visit(queue, ())
    return done


def priority_class_manifests() -> list[dict]:
    """KAI's four priority classes, exactly as the chart's templates define them."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        for name, value in PRIORITY_CLASSES.items()
    ]


# ---------------------------------------------------------------------------------------------
# Friction point 3: do-not-disrupt on non-preemptible pods
# ---------------------------------------------------------------------------------------------


def _kubernetes_minor(version: str) -> tuple[int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"kubernetes_version {version!r} is not a version such as '1.36'")
    return int(match.group(1)), int(match.group(2))


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
# lets either block a node's disruption (kubernetes-sigs/karpenter v1.14.1
# pkg/controllers/state/statenode.go L244-255).
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


def queue_namespace_selector(label_domain: str) -> dict:
    """The bindings' ``matchResources.namespaceSelector``: the platform's queue namespaces
    (label ``<label_domain>/queue``), never a system namespace even if mislabelled."""
    return {
        "matchExpressions": [
            {"key": f"{label_domain}/{QUEUE_NAMESPACE_LABEL_SUFFIX}", "operator": "Exists"},
            {
                "key": NAMESPACE_NAME_LABEL,
                "operator": "NotIn",
                "values": list(SYSTEM_NAMESPACES),
            },
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


def queue_namespace_manifests(
    queues: Sequence[QueueSpec], *, label_domain: str, kubernetes_version: str
) -> list[dict]:
    """The ``v1`` Namespace of every leaf queue (``QueueSpec.workload_namespace``), in queue
    order: Pod Security "restricted" (``podsecurity.namespace_manifest``) and the label
    ``<label_domain>/queue: <queue>`` the admission bindings select. Other builders may add
    objects into these namespaces beside them."""
    leaves = leaf_queue_names(queues)
    out = []
    for queue in queues:
        if queue.name not in leaves:
            continue
        manifest = namespace_manifest(queue.workload_namespace, RESTRICTED, kubernetes_version)
        manifest["metadata"]["labels"][f"{label_domain}/{QUEUE_NAMESPACE_LABEL_SUFFIX}"] = (
            queue.name
        )
        out.append(manifest)
    return out
