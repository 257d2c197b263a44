"""Pure builders of the scheduler's Kubernetes objects: queues, priority classes, and the
do-not-disrupt admission policy with its CEL expressions (plain data in, dicts out).
"""

import re
from collections.abc import Sequence

from .. import versions
from .constants import (
    ADMISSION_API,
    BYTES_PER_GIB,
    BYTES_PER_MB,
    DISRUPTION_POLICY_NAME,
    DO_NOT_DISRUPT_ANNOTATION,
    MILLICORES_PER_CORE,
    MUTATING_ADMISSION_POLICY_GA,
    NON_PREEMPTIBLE_CLASSES,
    NON_PREEMPTIBLE_PRIORITY,
    PREEMPTIBILITY_LABEL,
    PRIORITY_CLASS_LABEL,
    PRIORITY_CLASSES,
    UNLIMITED,
    _num,
)
from .spec import QueueResourceSpec, QueueSpec


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


# Pods whose top owner KAI defaults to a non-preemptible class when no priority class is set
# (kai-scheduler v0.16.8 pkg/podgrouper/podgrouper/plugins): a Deployment -> ``inference``
# (deployment_grouper.go L48), a Knative service -> ``inference`` (knative.go L113), whose pods a
# Deployment runs too, a Kubeflow Notebook -> ``build`` (notebook_grouper.go L37). A Deployment's
# pods carry ``pod-template-hash`` and a ReplicaSet owner (the Deployment controller adds the
# label to every ReplicaSet it creates: kubernetes.io/docs/concepts/workloads/controllers/
# deployment/#pod-template-hash-label); a Notebook's carry ``notebook-name`` (kubeflow/kubeflow
# components/notebook-controller/controllers/notebook_controller.go generateStatefulSet).
DEPLOYMENT_POD_EXPRESSION = (
    "has(object.metadata.labels) && 'pod-template-hash' in object.metadata.labels && "
    "has(object.metadata.ownerReferences) && "
    "object.metadata.ownerReferences.exists(r, r.kind == 'ReplicaSet')"
)
NOTEBOOK_POD_EXPRESSION = "has(object.metadata.labels) && 'notebook-name' in object.metadata.labels"


def non_preemptible_expression(priority_classes: Sequence[str]) -> str:
    """CEL: the pod is non-preemptible for KAI (kai-scheduler v0.16.8).

    The label ``kai.scheduler/preemptibility`` decides when present. Otherwise the priority
    class, taken as KAI does from the label ``priorityClassName`` before
    ``spec.priorityClassName`` (``default_grouper.go`` L191-203): a label names one of
    ``priority_classes``; a ``spec.priorityClassName`` is non-preemptible when it is one of them
    or its value is 100 or more (``pkg/common/podgroup/preemptible.go`` L10-26; the Priority
    admission plugin has set ``spec.priority`` from the class before admission policies run:
    kubernetes/kubernetes ``pkg/kubeapiserver/options/plugins.go`` ``AllOrderedPlugins``).
    Without either, KAI's default for the pod's top owner: Deployment (and Knative) pods get
    ``inference``, Notebook pods ``build``, the rest ``train``. A ``priorityClassName`` label
    on the owning workload is not visible to pod admission: ``workload_admission_policy``
    marks the workload's pod template instead.
    """
    labels = "object.metadata.labels"
    has_label = f"has({labels}) && '{{key}}' in {labels}"
    classes = _cel_list(priority_classes)
    return (
        f"({has_label.format(key=PREEMPTIBILITY_LABEL)}) "
        f"? {labels}['{PREEMPTIBILITY_LABEL}'] == 'non-preemptible' "
        f": (({has_label.format(key=PRIORITY_CLASS_LABEL)}) "
        f"? {labels}['{PRIORITY_CLASS_LABEL}'] in {classes} "
        ": ((has(object.spec.priorityClassName) && object.spec.priorityClassName != '') "
        f"? (object.spec.priorityClassName in {classes} || (has(object.spec.priority) && "
        f"object.spec.priority >= {NON_PREEMPTIBLE_PRIORITY})) "
        f": (({DEPLOYMENT_POD_EXPRESSION}) || ({NOTEBOOK_POD_EXPRESSION}))))"
    )


def owner_non_preemptible_expression(priority_classes: Sequence[str]) -> str:
    """CEL on a workload (Deployment, StatefulSet, ReplicaSet, Job): its own labels make its
    pods non-preemptible for KAI, which reads the top owner's labels before the pod's
    (``default_grouper.go`` L191-203, L226-273)."""
    labels = "object.metadata.labels"
    return (
        f"has({labels}) && (('{PREEMPTIBILITY_LABEL}' in {labels}) "
        f"? {labels}['{PREEMPTIBILITY_LABEL}'] == 'non-preemptible' "
        f": ('{PRIORITY_CLASS_LABEL}' in {labels} && "
        f"{labels}['{PRIORITY_CLASS_LABEL}'] in {_cel_list(priority_classes)}))"
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


WORKLOAD_RULES = {
    "resourceRules": [
        {
            "apiGroups": ["apps"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["deployments", "statefulsets", "replicasets"],
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
TEMPLATE_ANNOTATED_EXPRESSION = (
    "has(object.spec.template.metadata) && has(object.spec.template.metadata.annotations) && "
    f"'{DO_NOT_DISRUPT_ANNOTATION}' in object.spec.template.metadata.annotations"
)
APPLY_TEMPLATE_DO_NOT_DISRUPT_EXPRESSION = (
    "Object{spec: Object.spec{template: Object.spec.template{metadata: "
    f'Object.spec.template.metadata{{annotations: {{"{DO_NOT_DISRUPT_ANNOTATION}": "true"}}}}}}}}}}'
)


def workload_admission_policy(
    *, kubernetes_version: str, priority_classes: Sequence[str] = NON_PREEMPTIBLE_CLASSES
) -> list[dict]:
    """The policy and binding that mark the pod template of a workload whose own labels make
    it non-preemptible (``owner_non_preemptible_expression``): mutating from Kubernetes 1.36,
    a denial before, as ``disruption_admission_policy``."""
    name = f"{DISRUPTION_POLICY_NAME}-workloads"
    owner = {
        "name": "owner-non-preemptible",
        "expression": owner_non_preemptible_expression(priority_classes),
    }
    if _kubernetes_minor(kubernetes_version) >= MUTATING_ADMISSION_POLICY_GA:
        return [
            {
                "apiVersion": ADMISSION_API,
                "kind": "MutatingAdmissionPolicy",
                "metadata": {"name": name},
                "spec": {
                    "failurePolicy": "Fail",
                    "reinvocationPolicy": "Never",
                    "matchConstraints": WORKLOAD_RULES,
                    "matchConditions": [
                        owner,
                        {
                            "name": "not-annotated",
                            "expression": f"!({TEMPLATE_ANNOTATED_EXPRESSION})",
                        },
                    ],
                    "mutations": [
                        {
                            "patchType": "ApplyConfiguration",
                            "applyConfiguration": {
                                "expression": APPLY_TEMPLATE_DO_NOT_DISRUPT_EXPRESSION
                            },
                        }
                    ],
                },
            },
            {
                "apiVersion": ADMISSION_API,
                "kind": "MutatingAdmissionPolicyBinding",
                "metadata": {"name": name},
                "spec": {"policyName": name},
            },
        ]
    return [
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": WORKLOAD_RULES,
                "matchConditions": [owner],
                "validations": [
                    {
                        "expression": TEMPLATE_ANNOTATED_EXPRESSION,
                        "message": (
                            f"workloads labelled non-preemptible ({PRIORITY_CLASS_LABEL} "
                            f"{', '.join(priority_classes)}, or {PREEMPTIBILITY_LABEL}="
                            "non-preemptible) must carry the annotation "
                            f'{DO_NOT_DISRUPT_ANNOTATION}: "true" in their pod template, or '
                            "Karpenter may consolidate their pods' nodes"
                        ),
                        "reason": "Invalid",
                    }
                ],
            },
        },
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Deny"]},
        },
    ]


def disruption_admission_policy(
    *, kubernetes_version: str, priority_classes: Sequence[str] = NON_PREEMPTIBLE_CLASSES
) -> list[dict]:
    """The admission policy and binding that keep Karpenter off non-preemptible pods' nodes.

    From Kubernetes 1.36 (MutatingAdmissionPolicy GA): a mutating policy that adds
    ``karpenter.sh/do-not-disrupt: "true"`` (an ApplyConfiguration, which also creates a missing
    annotations map) to pods of ``priority_classes`` that do not carry the annotation; an
    explicit value, such as a duration, is left alone. Before 1.36: a validating policy whose
    binding denies such pods without the annotation. Only pod creation is matched. Then the
    workloads' policy and binding (``workload_admission_policy``), for owners' labels.
    """
    non_preemptible = {
        "name": "non-preemptible",
        "expression": non_preemptible_expression(priority_classes),
    }
    workloads = workload_admission_policy(
        kubernetes_version=kubernetes_version, priority_classes=priority_classes
    )
    if _kubernetes_minor(kubernetes_version) >= MUTATING_ADMISSION_POLICY_GA:
        policy = {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": DISRUPTION_POLICY_NAME},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": POD_CREATE_RULES,
                "matchConditions": [
                    non_preemptible,
                    {"name": "not-annotated", "expression": NOT_ANNOTATED_EXPRESSION},
                ],
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {"expression": APPLY_DO_NOT_DISRUPT_EXPRESSION},
                    }
                ],
            },
        }
        binding = {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": DISRUPTION_POLICY_NAME},
            "spec": {"policyName": DISRUPTION_POLICY_NAME},
        }
        return [policy, binding, *workloads]
    classes = ", ".join(priority_classes)
    policy = {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": DISRUPTION_POLICY_NAME},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": POD_CREATE_RULES,
            "matchConditions": [non_preemptible],
            "validations": [
                {
                    "expression": ANNOTATED_EXPRESSION,
                    "message": (
                        f"non-preemptible pods (priority class {classes}, or label "
                        f"{PREEMPTIBILITY_LABEL}=non-preemptible) must carry the annotation "
                        f'{DO_NOT_DISRUPT_ANNOTATION}: "true", or Karpenter may consolidate '
                        "their node"
                    ),
                    "reason": "Invalid",
                }
            ],
        },
    }
    binding = {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": DISRUPTION_POLICY_NAME},
        "spec": {"policyName": DISRUPTION_POLICY_NAME, "validationActions": ["Deny"]},
    }
    return [policy, binding, *workloads]
