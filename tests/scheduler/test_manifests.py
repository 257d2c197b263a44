"""Tests for ``eks_gpu_platform.scheduler.manifests`` (queues, priority classes) and
``disruption_policies``: the do-not-disrupt admission policy (its CEL evaluated on pods).
"""

import re
from dataclasses import replace

import celpy
import pytest
from cel_programs import environment as cel_environment
from cel_programs import program as cel_program
from crd_validation import validate

from eks_gpu_platform.scheduler.constants import NON_PREEMPTIBLE_CLASSES
from eks_gpu_platform.scheduler.disruption_policies import disruption_admission_policy
from eks_gpu_platform.scheduler.manifests import (
    priority_class_manifests,
    queue_manifest,
    queue_namespace_manifests,
    queues_parents_first,
)
from eks_gpu_platform.scheduler.spec import QueueSpec

from .helpers import queue, queue_namespace_selector, res

# --- queues and priority classes -------------------------------------------------------------


def test_queue_manifest_exactly():
    spec = QueueSpec(
        name="team-a",
        parent="research",
        display_name="Team A",
        priority=120,
        gpu=res(4, 8, 2),
        cpu=res(32.5, -1),
        memory=res(256, -1, 0),
        node_pools=("gpu-spot",),
    )
    assert queue_manifest(spec) == {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {
            "displayName": "Team A",
            "parentQueue": "research",
            "priority": 120,
            "resources": {
                "cpu": {"quota": 32500, "limit": -1, "overQuotaWeight": 1},
                "gpu": {"quota": 4, "limit": 8, "overQuotaWeight": 2},
                "memory": {"quota": 274877.906944, "limit": -1, "overQuotaWeight": 0},
            },
        },
    }


@pytest.mark.parametrize(
    ("cores", "millicores"), [(0.5, 500), (1, 1000), (0.001, 1), (-1, -1), (0, 0)]
)
def test_cpu_is_rendered_in_millicores(cores, millicores):
    spec = QueueSpec(
        name="q", gpu=res(1, 1), cpu=res(cores, -1), memory=res(1, -1), node_pools=("p",)
    )
    assert queue_manifest(spec)["spec"]["resources"]["cpu"]["quota"] == millicores


@pytest.mark.parametrize(
    ("gib", "mb"), [(1, 1073.741824), (0.5, 536.870912), (1024, 1099511.627776), (-1, -1)]
)
def test_memory_is_rendered_in_megabytes(gib, mb):
    spec = QueueSpec(
        name="q", gpu=res(1, 1), cpu=res(1, -1), memory=res(gib, -1), node_pools=("p",)
    )
    assert queue_manifest(spec)["spec"]["resources"]["memory"]["quota"] == mb


@pytest.mark.parametrize(
    "spec",
    [
        queue("org"),
        queue("team-a", parent="org", pools=("gpu-spot",), gpu=(0.5, 1.5)),
        QueueSpec(
            name="dev",
            display_name="Developers",
            priority=50,
            gpu=res(0, -1, 0),
            cpu=res(-1, -1),
            memory=res(0, -1),
            node_pools=("cpu",),
        ),
    ],
)
def test_queue_manifests_pass_the_queue_crd(spec):
    manifest = queue_manifest(spec)
    assert validate(manifest) == []
    resources = manifest["spec"]["resources"]
    assert sorted((k, sorted(v)) for k, v in resources.items()) == [
        (kind, ["limit", "overQuotaWeight", "quota"]) for kind in ("cpu", "gpu", "memory")
    ]


def test_queues_parents_first():
    queues = [
        queue("leaf", parent="mid", pools=("p",)),
        queue("other", pools=("p",)),
        queue("mid", parent="root"),
        queue("root"),
    ]
    assert [q.name for q in queues_parents_first(queues)] == ["root", "mid", "leaf", "other"]


def test_priority_classes_match_the_chart_templates():
    assert priority_class_manifests() == [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "train"},
            "value": 50,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "build-preemptible"},
            "value": 75,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "build"},
            "value": 100,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "inference"},
            "value": 125,
        },
    ]
    assert NON_PREEMPTIBLE_CLASSES == ("build", "inference")


# --- friction point 3: admission policy ----------------------------------------------------------

CLASSES = (
    "{'train': 50, 'build-preemptible': 75, 'build': 100, 'inference': 125, "
    "'system-node-critical': 2000001000, 'system-cluster-critical': 2000000000}"
)
DEPLOYMENT_POD = (
    "has(object.metadata.labels) && 'pod-template-hash' in object.metadata.labels && "
    "has(object.metadata.ownerReferences) && "
    "object.metadata.ownerReferences.exists(r, r.kind == 'ReplicaSet')"
)
KNATIVE_POD = (
    "has(object.metadata.labels) && 'serving.knative.dev/revision' in object.metadata.labels"
)
MPIJOB_POD = (
    "has(object.metadata.labels) && 'training.kubeflow.org/operator-name' in "
    "object.metadata.labels && object.metadata.labels['training.kubeflow.org/operator-name'] "
    "== 'mpi-operator'"
)
# Issue 30: a Deployment's pods fall back to no class here; the Deployment's policy judges them.
DEPLOYMENT_OR_NOTEBOOK = (
    f"(({KNATIVE_POD}) || "
    "(has(object.metadata.labels) && 'notebook-name' in object.metadata.labels))"
)
NON_PREEMPTIBLE = (
    "(!(has(object.metadata.labels) && 'serving.knative.dev/revision' in "
    "object.metadata.labels) && "
    "has(object.metadata.labels) && 'kai.scheduler/preemptibility' in object.metadata.labels "
    "&& object.metadata.labels['kai.scheduler/preemptibility'] in ['preemptible', "
    "'non-preemptible']) "
    "? object.metadata.labels['kai.scheduler/preemptibility'] == 'non-preemptible' "
    ": ((has(object.metadata.labels) && 'priorityClassName' in object.metadata.labels) "
    f"? (object.metadata.labels['priorityClassName'] in {CLASSES} ? {CLASSES}"
    f"[object.metadata.labels['priorityClassName']] >= 100 : {DEPLOYMENT_OR_NOTEBOOK}) "
    ": ((has(object.spec.priorityClassName) && object.spec.priorityClassName != '') "
    "? (has(object.spec.priority) && object.spec.priority >= 100) "
    f": {DEPLOYMENT_OR_NOTEBOOK}))"
)
KAI_SCHEDULED = "has(object.spec.schedulerName) && object.spec.schedulerName == 'kai-scheduler'"
NOT_NODE_POD = (
    "!(has(object.metadata.annotations) && 'kubernetes.io/config.mirror' in "
    "object.metadata.annotations) && !(has(object.metadata.ownerReferences) && "
    "object.metadata.ownerReferences.exists(r, r.kind in ['DaemonSet', 'Node']))"
)
ANNOTATED = (
    "has(object.metadata.annotations) && 'karpenter.sh/do-not-disrupt' in "
    "object.metadata.annotations"
)
POD_RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    ]
}
SELECTOR = {"namespaceSelector": queue_namespace_selector("example.com")}
POD_CONDITIONS = [
    {"name": "kai-scheduled", "expression": KAI_SCHEDULED},
    {"name": "not-node-pod", "expression": NOT_NODE_POD},
    {
        "name": "not-deployment-pod",
        "expression": f"(!({DEPLOYMENT_POD}) || ({KNATIVE_POD})) && !({MPIJOB_POD})",
    },
    {"name": "non-preemptible", "expression": NON_PREEMPTIBLE},
]
NAME = "kai-non-preemptible-do-not-disrupt"


def policies(version: str, **kwargs) -> list[dict]:
    return disruption_admission_policy(
        kubernetes_version=version, label_domain="example.com", **kwargs
    )


@pytest.mark.parametrize("version", ["1.36", "1.37", "v1.36.2"])
def test_mutating_pod_policy_from_1_36(version):
    manifests = policies(version)
    assert [m["kind"] for m in manifests] == [
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    ] * 4
    assert manifests[:2] == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": NAME},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": POD_RULES,
                "matchConditions": [
                    *POD_CONDITIONS,
                    {"name": "not-annotated", "expression": f"!({ANNOTATED})"},
                ],
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {
                            "expression": "Object{metadata: Object.metadata{annotations: "
                            '{"karpenter.sh/do-not-disrupt": "true"}}}'
                        },
                    }
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": NAME},
            "spec": {"policyName": NAME, "matchResources": SELECTOR},
        },
    ]
    assert [m["metadata"]["name"] for m in manifests[2:]] == [
        f"{NAME}-workloads",
        f"{NAME}-workloads",
        f"{NAME}-cronjobs",
        f"{NAME}-cronjobs",
        f"{NAME}-mpijobs",
        f"{NAME}-mpijobs",
    ]


@pytest.mark.parametrize("version", ["1.30", "1.35", "1.35.4"])
def test_validating_pod_policy_before_1_36(version):
    manifests = policies(version)
    assert [m["kind"] for m in manifests] == [
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ] * 4
    assert manifests[:2] == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": NAME},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": POD_RULES,
                "matchConditions": POD_CONDITIONS,
                "validations": [
                    {
                        "expression": ANNOTATED,
                        "message": "non-preemptible kai-scheduler pods (priority class build, "
                        "inference, system-node-critical, system-cluster-critical or any other "
                        "of value 100 or more, a Knative Service's or Notebook's pod without a "
                        "class, or label kai.scheduler/preemptibility=non-preemptible) must carry "
                        "the "
                        'annotation karpenter.sh/do-not-disrupt: "true", or Karpenter may '
                        "consolidate their node",
                        "reason": "Invalid",
                    }
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": NAME},
            "spec": {"policyName": NAME, "matchResources": SELECTOR, "validationActions": ["Deny"]},
        },
    ]


def test_workload_policies_exactly():
    workloads, _, cronjobs, cronjob_binding, mpijobs, mpijob_binding = policies("1.36")[2:]
    assert workloads["spec"]["matchConstraints"] == {
        "resourceRules": [
            {
                "apiGroups": ["apps"],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["deployments", "statefulsets"],
            },
            {
                "apiGroups": ["batch"],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["jobs"],
            },
        ]
    }
    assert cronjobs["spec"]["matchConstraints"] == {
        "resourceRules": [
            {
                "apiGroups": ["batch"],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["cronjobs"],
            }
        ]
    }
    assert cronjobs["spec"]["matchConditions"][0] == {
        "name": "kai-scheduled",
        "expression": "has(object.spec.jobTemplate.spec.template.spec.schedulerName) && "
        "object.spec.jobTemplate.spec.template.spec.schedulerName == 'kai-scheduler'",
    }
    assert cronjobs["spec"]["mutations"][0]["applyConfiguration"]["expression"] == (
        "Object{spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: "
        "Object.spec.jobTemplate.spec{template: Object.spec.jobTemplate.spec.template{metadata: "
        "Object.spec.jobTemplate.spec.template.metadata{annotations: "
        '{"karpenter.sh/do-not-disrupt": "true"}}}}}}}'
    )
    assert cronjob_binding["spec"] == {"policyName": f"{NAME}-cronjobs", "matchResources": SELECTOR}
    assert [c["name"] for c in workloads["spec"]["matchConditions"]] == [
        "kai-scheduled",
        "template-changed",
        "owner-non-preemptible",
        "not-annotated",
    ]
    assert cronjobs["spec"]["matchConditions"][1] == {
        "name": "template-changed",
        "expression": "!has(object.metadata.deletionTimestamp) && (request.operation == 'CREATE' "
        "|| oldObject == null || object.spec.jobTemplate != oldObject.spec.jobTemplate)",
    }
    assert mpijobs["spec"]["matchConstraints"] == {
        "resourceRules": [
            {
                "apiGroups": ["kubeflow.org"],
                "apiVersions": ["v2beta1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["mpijobs"],
            }
        ]
    }
    assert [c["name"] for c in mpijobs["spec"]["matchConditions"]] == [
        "kai-scheduled",
        "template-changed",
        "non-preemptible",
        "not-annotated",
    ]
    assert mpijobs["spec"]["mutations"][0]["patchType"] == "JSONPatch"
    assert mpijob_binding["spec"] == {"policyName": f"{NAME}-mpijobs", "matchResources": SELECTOR}


def test_policy_needs_a_kubernetes_version():
    with pytest.raises(ValueError, match=re.escape("kubernetes_version 'latest' is not a version")):
        policies("latest")


def evaluate(expression: str, obj: dict, kind: str = "Pod") -> bool:
    program = cel_program(expression)
    request = {"kind": {"group": "", "version": "v1", "kind": kind}, "operation": "CREATE"}
    return bool(
        program.evaluate(
            {
                "object": celpy.json_to_cel(obj),
                "oldObject": celpy.json_to_cel(None),
                "request": celpy.json_to_cel(request),
            }
        )
    )


def pod(
    priority_class=None,
    labels=None,
    annotations=None,
    priority=None,
    owner=None,
    scheduler="kai-scheduler",
) -> dict:
    metadata: dict = {"name": "p"}
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    if owner is not None:
        metadata["ownerReferences"] = [{"kind": owner, "name": "o", "apiVersion": "apps/v1"}]
    spec: dict = {"schedulerName": scheduler, "containers": [{"name": "c", "image": "i"}]}
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
        # The Priority admission plugin resolves the class before admission policies run.
        spec["priority"] = {"train": 50, "build-preemptible": 75, "build": 100}.get(
            priority_class, 125 if priority_class == "inference" else 0
        )
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": metadata, "spec": spec}


HASH = {"pod-template-hash": "5d9c7b"}


DND = {"karpenter.sh/do-not-disrupt": "true"}
PREEMPTIBILITY = "kai.scheduler/preemptibility"

# pod -> (mutated by the 1.36 policy, denied by the pre-1.36 policy); namespace selection is
# tested on the fixtures (test_admission_fixtures.py).
ADMISSION_CASES = [
    (pod("inference"), (True, True)),
    (pod("build", labels={"app": "x"}), (True, True)),
    (pod("build", annotations={"other": "x"}), (True, True)),
    (pod("build", annotations=DND), (False, False)),
    (pod("inference", annotations={"karpenter.sh/do-not-disrupt": "30m"}), (False, False)),
    (pod("train"), (False, False)),
    (pod("build-preemptible"), (False, False)),
    (pod(), (False, False)),
    (pod("train", labels={PREEMPTIBILITY: "non-preemptible"}), (True, True)),
    (pod("inference", labels={PREEMPTIBILITY: "preemptible"}), (False, False)),
    # Issue 19: KAI ignores a preemptibility value it cannot parse; the class decides.
    (pod("inference", labels={PREEMPTIBILITY: "Non-Preemptible"}), (True, True)),
    (pod("train", labels={PREEMPTIBILITY: "true"}), (False, False)),
    (pod(labels={"priorityClassName": "build"}), (True, True)),
    (pod("inference", labels={"priorityClassName": "train"}), (False, False)),
    # Issue 19: a label naming a class KAI does not find: the kind's fallback, not spec.
    (pod("inference", labels={"priorityClassName": "gold"}), (False, False)),
    # Issue 30: a Deployment's pods are judged on the Deployment (its labels and owner first).
    (pod(labels={"priorityClassName": "gold", **HASH}, owner="ReplicaSet"), (False, False)),
    (pod(labels={"priorityClassName": "system-node-critical"}), (True, True)),
    (pod("critical", priority=1000), (True, True)),  # any class of value 100 or more
    (pod("low", priority=99), (False, False)),
    (pod(labels=HASH, owner="ReplicaSet"), (False, False)),  # a Deployment's: its policy
    (pod("inference", labels=HASH, owner="ReplicaSet"), (False, False)),
    # An MPIJob's pods: the MPIJob's policy (owner_templates.py).
    (
        pod("inference", labels={"training.kubeflow.org/operator-name": "mpi-operator"}),
        (False, False),
    ),
    (pod("inference", labels={"training.kubeflow.org/operator-name": "other"}), (True, True)),
    # A Knative Service's pods keep the pod-level rule, fallback inference.
    (pod(labels={**HASH, "serving.knative.dev/revision": "r"}, owner="ReplicaSet"), (True, True)),
    (pod(labels=HASH, owner="ReplicaSet", annotations=DND), (False, False)),
    (pod("train", labels=HASH, owner="ReplicaSet"), (False, False)),  # its class decides
    (pod(owner="ReplicaSet"), (False, False)),  # a bare ReplicaSet: train
    (pod(labels={"notebook-name": "nb"}, owner="StatefulSet"), (True, True)),  # build
    (pod(labels={"statefulset": "db"}, owner="StatefulSet"), (False, False)),
    # Issue 19: only pods KAI schedules; never a node's own pods.
    (pod("inference", scheduler="default-scheduler"), (False, False)),
    (pod(labels=HASH, owner="ReplicaSet", scheduler="default-scheduler"), (False, False)),
    (pod("inference", owner="DaemonSet"), (False, False)),
    (
        pod("inference", owner="Node", annotations={"kubernetes.io/config.mirror": "h"}),
        (False, False),
    ),
]


@pytest.mark.parametrize(("candidate", "outcome"), ADMISSION_CASES)
def test_admission_cel_on_pods(candidate, outcome):
    mutating = policies("1.36")[0]
    mutated = all(evaluate(c["expression"], candidate) for c in mutating["spec"]["matchConditions"])
    validating = policies("1.35")[0]
    denied = all(
        evaluate(c["expression"], candidate) for c in validating["spec"]["matchConditions"]
    ) and not all(evaluate(v["expression"], candidate) for v in validating["spec"]["validations"])
    assert (mutated, denied) == outcome


def test_apply_configuration_expression_parses():
    for manifest in policies("1.36"):
        if manifest["kind"] == "MutatingAdmissionPolicy":
            mutation = manifest["spec"]["mutations"][0]
            key = "applyConfiguration" if "applyConfiguration" in mutation else "jsonPatch"
            assert cel_environment().compile(mutation[key]["expression"]) is not None


def test_extra_priority_classes():
    policy = policies("1.36", extra_priority_classes={"critical": 1000, "batch": 10})[0]
    condition = policy["spec"]["matchConditions"][3]["expression"]
    assert "'system-cluster-critical': 2000000000, 'critical': 1000, 'batch': 10}" in condition
    assert evaluate(condition, pod(labels={"priorityClassName": "critical"}))
    assert not evaluate(condition, pod(labels={"priorityClassName": "batch"}))
    assert evaluate(condition, pod(labels={"priorityClassName": "inference"}))
    # Without the extra table, the label names no known class: a bare pod's fallback, train.
    plain = policies("1.36")[0]["spec"]["matchConditions"][3]["expression"]
    assert not evaluate(plain, pod(labels={"priorityClassName": "critical"}))


def workload(kind: str, labels=None, template_annotations=None, scheduler="kai-scheduler") -> dict:
    metadata: dict = {"name": "w"}
    if labels is not None:
        metadata["labels"] = labels
    template: dict = {
        "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "i"}]}
    }
    if template_annotations is not None:
        template["metadata"] = {"annotations": template_annotations}
    return {"kind": kind, "metadata": metadata, "spec": {"template": template}}


# workload -> (mutated by the 1.36 workloads policy, denied by the pre-1.36 one)
WORKLOAD_CASES = [
    (workload("Deployment", {"priorityClassName": "inference"}), (True, True)),
    (workload("Job", {"priorityClassName": "build"}), (True, True)),
    (workload("StatefulSet", {PREEMPTIBILITY: "non-preemptible"}), (True, True)),
    (
        workload("Deployment", {PREEMPTIBILITY: "preemptible", "priorityClassName": "build"}),
        (False, False),
    ),
    (workload("Deployment", {"priorityClassName": "train"}), (False, False)),
    # Issue 30: no labels anywhere, no owner: KAI's Deployment fallback, inference.
    (workload("Deployment"), (True, True)),
    (workload("Job", {"priorityClassName": "build"}, DND), (False, False)),
    (workload("Deployment", {"priorityClassName": "gold"}), (True, True)),  # fallback inference
    (workload("StatefulSet", {"priorityClassName": "gold"}), (False, False)),  # fallback train
    (
        workload("Job", {"priorityClassName": "build"}, scheduler="default-scheduler"),
        (False, False),
    ),
]


@pytest.mark.parametrize(("candidate", "outcome"), WORKLOAD_CASES)
def test_admission_cel_on_workloads(candidate, outcome):
    kind = candidate["kind"]
    mutating = policies("1.36")[2]
    mutated = all(
        evaluate(c["expression"], candidate, kind) for c in mutating["spec"]["matchConditions"]
    )
    validating = policies("1.35")[2]
    denied = all(
        evaluate(c["expression"], candidate, kind) for c in validating["spec"]["matchConditions"]
    ) and not all(
        evaluate(v["expression"], candidate, kind) for v in validating["spec"]["validations"]
    )
    assert (mutated, denied) == outcome


def test_queue_namespaces_exactly():
    queues = (
        queue("research"),
        queue("batch", parent="research", pools=("gpu",)),
        replace(queue("serving", parent="research", pools=("gpu",)), namespace="serve"),
    )
    assert queue_namespace_manifests(
        queues, label_domain="example.com", kubernetes_version="1.36"
    ) == [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": name,
                "labels": {
                    "pod-security.kubernetes.io/enforce": "restricted",
                    "pod-security.kubernetes.io/enforce-version": "v1.36",
                    "pod-security.kubernetes.io/audit": "restricted",
                    "pod-security.kubernetes.io/audit-version": "v1.36",
                    "pod-security.kubernetes.io/warn": "restricted",
                    "pod-security.kubernetes.io/warn-version": "v1.36",
                    "example.com/queue": queue_name,
                },
            },
        }
        for name, queue_name in (("batch", "batch"), ("serve", "serving"))
    ]
