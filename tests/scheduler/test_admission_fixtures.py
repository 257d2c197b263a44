"""The do-not-disrupt admission policies on the pods of a real EKS GPU node (issue 19).

Each render's policies (1.36: MutatingAdmissionPolicy; 1.35: ValidatingAdmissionPolicy) are
evaluated the way the API server does: the binding's ``matchResources.namespaceSelector`` against
the pod's namespace labels, then every ``matchCondition`` (CEL, with cel-python), then for the
validating policy its validation. The pods are ``tests/fixtures/system-pods`` (never acted on)
and ``tests/fixtures/kai-pods`` (``must-match.yaml`` always, ``must-not-match.yaml`` never), with
``spec.priority`` filled from the class the way the Priority admission plugin does (kubernetes
v1.36.3 plugin/pkg/admission/priority/admission.go) and the namespaces labelled as the scheduler
component creates them (plus ``kubernetes.io/metadata.name``, which the API server sets on every
namespace: kubernetes v1.36.3 pkg/registry/core/namespace/strategy.go).
"""

import copy
import functools
import json
from dataclasses import replace
from pathlib import Path

import celpy
import pytest
import yaml
from cel_programs import program as cel_program
from stack_files import fixture_stack

from eks_gpu_platform.offline.render import validate as validate_stack
from eks_gpu_platform.scheduler import (
    SYSTEM_NAMESPACES,
    disruption_admission_policy,
    leaf_queue_names,
    queue_namespace_manifests,
)

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
# The Priority admission plugin's table: the built-ins (kubernetes v1.36.3
# pkg/apis/scheduling/v1/helpers.go) and KAI's four as the platform renders them.
CLASS_VALUES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
    "train": 50,
    "build-preemptible": 75,
    "build": 100,
    "inference": 125,
}
DEV_QUEUE_NAMESPACES = ("research-batch", "research-serving", "research-notebooks")
# libyaml's parser under PyYAML's safe constructor: the same documents as yaml.safe_load_all
# (checked equal, as JSON, for every fixture file read here and by test_owner_fixtures and
# test_owner_kinds when written), 0.17 s -> 0.02 s per process.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(path: Path) -> list[dict]:
    pods = [d for d in yaml.load_all(path.read_text(), Loader=YAML_LOADER) if d]
    for pod in pods:
        name = pod["spec"].get("priorityClassName")
        pod["spec"]["priority"] = CLASS_VALUES[name] if name else 0
    return pods


SYSTEM_PODS = [p for f in sorted((FIXTURES / "system-pods").glob("*.yaml")) for p in _load(f)]
MUST_MATCH = _load(FIXTURES / "kai-pods" / "must-match.yaml")
MUST_NOT_MATCH = _load(FIXTURES / "kai-pods" / "must-not-match.yaml")


def _renders() -> list[tuple[str, object]]:
    out = []
    for stack in ("dev", "prod"):
        out.append((stack, validate_stack(fixture_stack(stack))))
    dev = out[0][1]
    out.append(("dev-1.35", replace(dev, cluster=replace(dev.cluster, kubernetes_version="1.35"))))
    return out


RENDERS = _renders()


def _selected(selector: dict, labels: dict) -> bool:
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        if operator == "Exists":
            ok = key in labels
        elif operator == "DoesNotExist":
            ok = key not in labels
        elif operator == "In":
            ok = labels.get(key) in expression["values"]
        elif operator == "NotIn":
            ok = key not in labels or labels[key] not in expression["values"]
        else:  # pragma: no cover - the policies use only the operators above
            raise AssertionError(operator)
        if not ok:
            return False
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def _cel(expression: str, obj: dict, kind: str, old: dict | None = None) -> bool:
    return _Request(obj, kind, old).cel(expression)


# (expression, request key) -> the value: a CEL expression is a pure function of its activation
# (https://github.com/google/cel-spec/blob/master/doc/langdef.md "Evaluation": no side
# effects), and the key is everything the activation is built from, so an object judged again
# (another render with the same expression, another test) gets the interpreter's first value.
_RESULTS: dict[tuple[str, str], bool] = {}


class _Request:
    """One admission request: its CEL activation built once, on the first expression evaluated
    (not once per expression), and its key."""

    def __init__(self, obj: dict, kind: str, old: dict | None = None) -> None:
        self.obj, self.kind, self.old = obj, kind, old

    @functools.cached_property
    def key(self) -> str:
        return json.dumps([self.obj, self.kind, self.old], sort_keys=True)

    @functools.cached_property
    def activation(self) -> dict:
        operation = "CREATE" if self.old is None else "UPDATE"
        return {
            "object": celpy.json_to_cel(self.obj),
            "oldObject": celpy.json_to_cel(self.old),
            "request": celpy.json_to_cel(
                {"kind": {"group": "", "version": "v1", "kind": self.kind}, "operation": operation}
            ),
        }

    def cel(self, expression: str) -> bool:
        if (expression, self.key) not in _RESULTS:
            program = cel_program(expression)
            _RESULTS[(expression, self.key)] = bool(program.evaluate(self.activation))
        return _RESULTS[(expression, self.key)]


def acts_on(
    manifests: list[dict], obj: dict, kind: str, namespace_labels: dict, old: dict | None = None
) -> list[str]:
    """Names of the policies that would mutate (1.36) or deny (1.35) ``obj`` (an UPDATE from
    ``old`` when given, else a CREATE)."""
    bindings = {m["spec"]["policyName"]: m for m in manifests if m["kind"].endswith("Binding")}
    request = _Request(obj, kind, old)
    acted = []
    for policy in (m for m in manifests if not m["kind"].endswith("Binding")):
        rules = policy["spec"]["matchConstraints"]["resourceRules"]
        resource = {
            "Pod": "pods",
            "Deployment": "deployments",
            "StatefulSet": "statefulsets",
            "Job": "jobs",
            "CronJob": "cronjobs",
            "ReplicaSet": "replicasets",
            "MPIJob": "mpijobs",
        }[kind]
        operation = "CREATE" if old is None else "UPDATE"
        if not any(resource in r["resources"] and operation in r["operations"] for r in rules):
            continue
        binding = bindings[policy["metadata"]["name"]]
        if not _selected(binding["spec"]["matchResources"]["namespaceSelector"], namespace_labels):
            continue
        if not all(request.cel(c["expression"]) for c in policy["spec"]["matchConditions"]):
            continue
        if policy["kind"] == "ValidatingAdmissionPolicy" and all(
            request.cel(v["expression"]) for v in policy["spec"]["validations"]
        ):
            continue
        acted.append(policy["metadata"]["name"])
    return acted


# config -> (config, value) by identity: PlatformConfig holds dicts (unhashable); the config
# kept in the entry keeps its id from being reused.
_BY_CONFIG: dict[tuple[str, int], tuple[object, object]] = {}


def _once_per_config(function):
    """``function(config)`` computed once per config object (the renders' configs live as long
    as the process); every caller shares the value and must not change it."""

    @functools.wraps(function)
    def once(config):
        key = (function.__name__, id(config))
        if key not in _BY_CONFIG or _BY_CONFIG[key][0] is not config:
            _BY_CONFIG[key] = (config, function(config))
        return _BY_CONFIG[key][1]

    return once


@_once_per_config
def _namespaces(config) -> dict[str, dict]:
    labels = {
        m["metadata"]["name"]: {
            **m["metadata"]["labels"],
            "kubernetes.io/metadata.name": m["metadata"]["name"],
        }
        for m in queue_namespace_manifests(
            config.scheduler.queues,
            label_domain=config.cluster.label_domain,
            kubernetes_version=config.cluster.kubernetes_version,
        )
    }
    for name in (*SYSTEM_NAMESPACES, "default"):
        labels.setdefault(name, {"kubernetes.io/metadata.name": name})
    return labels


@_once_per_config
def _policies(config) -> list[dict]:
    return disruption_admission_policy(
        kubernetes_version=config.cluster.kubernetes_version,
        label_domain=config.cluster.label_domain,
        extra_priority_classes=config.scheduler.priority_classes,
    )


def _in_stack(pod: dict, config) -> dict:
    """The fixture pod moved from a dev queue namespace to the matching leaf queue's of
    ``config`` (the n-th dev namespace to the n-th leaf, cycling)."""
    pod = copy.deepcopy(pod)
    namespace = pod["metadata"]["namespace"]
    if namespace in DEV_QUEUE_NAMESPACES:
        leaves = [
            q
            for q in config.scheduler.queues
            if q.name in leaf_queue_names(config.scheduler.queues)
        ]
        queue = leaves[DEV_QUEUE_NAMESPACES.index(namespace) % len(leaves)]
        pod["metadata"]["namespace"] = queue.workload_namespace
        pod["metadata"]["labels"]["kai.scheduler/queue"] = queue.name
    return pod


def _id(pod: dict) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", SYSTEM_PODS, ids=_id)
def test_no_system_pod_is_acted_on(stack, config, pod):
    namespaces = _namespaces(config)
    assert acts_on(_policies(config), pod, "Pod", namespaces[pod["metadata"]["namespace"]]) == []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", SYSTEM_PODS, ids=_id)
def test_a_mislabelled_system_namespace_still_never_matches(stack, config, pod):
    labels = {
        f"{config.cluster.label_domain}/queue": "research-serving",
        "kubernetes.io/metadata.name": pod["metadata"]["namespace"],
    }
    kai_pod = copy.deepcopy(pod)
    kai_pod["spec"]["schedulerName"] = "kai-scheduler"
    assert acts_on(_policies(config), kai_pod, "Pod", labels) == []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", MUST_MATCH, ids=_id)
def test_every_non_preemptible_kai_pod_is_acted_on(stack, config, pod):
    pod = _in_stack(pod, config)
    namespaces = _namespaces(config)
    assert acts_on(_policies(config), pod, "Pod", namespaces[pod["metadata"]["namespace"]]) == [
        "kai-non-preemptible-do-not-disrupt"
    ]


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", MUST_NOT_MATCH, ids=_id)
def test_no_preemptible_or_foreign_pod_is_acted_on(stack, config, pod):
    pod = _in_stack(pod, config)
    namespaces = _namespaces(config)
    assert acts_on(_policies(config), pod, "Pod", namespaces[pod["metadata"]["namespace"]]) == []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
def test_no_policy_matches_replicasets(stack, config):
    for manifest in _policies(config):
        if manifest["kind"].endswith("Binding"):
            continue
        for rule in manifest["spec"]["matchConstraints"]["resourceRules"]:
            assert "replicasets" not in rule["resources"]
            assert "*" not in rule["resources"]


def _workload(kind: str, labels: dict, scheduler: str = "kai-scheduler") -> dict:
    template = {
        "metadata": {"labels": {"app": "w"}},
        "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "i"}]},
    }
    if kind == "CronJob":
        return {
            "apiVersion": "batch/v1",
            "kind": kind,
            "metadata": {"name": "w", "namespace": "research-batch"},
            "spec": {
                "schedule": "0 * * * *",
                "jobTemplate": {"metadata": {"labels": labels}, "spec": {"template": template}},
            },
        }
    return {
        "kind": kind,
        "metadata": {"name": "w", "namespace": "research-batch", "labels": labels},
        "spec": {"template": template},
    }


WORKLOADS_POLICY = "kai-non-preemptible-do-not-disrupt-workloads"
CRONJOBS_POLICY = "kai-non-preemptible-do-not-disrupt-cronjobs"
# (kind, owner labels, scheduler, namespace) -> the policies that act on it
WORKLOAD_CASES = [
    (
        "CronJob",
        {"priorityClassName": "inference"},
        "kai-scheduler",
        "research-batch",
        [CRONJOBS_POLICY],
    ),
    (
        "CronJob",
        {"kai.scheduler/preemptibility": "non-preemptible"},
        "kai-scheduler",
        "research-batch",
        [CRONJOBS_POLICY],
    ),
    ("CronJob", {"priorityClassName": "train"}, "kai-scheduler", "research-batch", []),
    ("CronJob", {"priorityClassName": "build"}, "default-scheduler", "research-batch", []),
    ("CronJob", {"priorityClassName": "build"}, "kai-scheduler", "kube-system", []),
    (
        "Deployment",
        {"priorityClassName": "inference"},
        "kai-scheduler",
        "research-batch",
        [WORKLOADS_POLICY],
    ),
    # KAI ignores a label naming no existing class; a Deployment then falls back to inference.
    (
        "Deployment",
        {"priorityClassName": "gold"},
        "kai-scheduler",
        "research-batch",
        [WORKLOADS_POLICY],
    ),
    ("Job", {"priorityClassName": "gold"}, "kai-scheduler", "research-batch", []),
    (
        "StatefulSet",
        {"priorityClassName": "system-cluster-critical"},
        "kai-scheduler",
        "research-batch",
        [WORKLOADS_POLICY],
    ),
    (
        "Job",
        {"kai.scheduler/preemptibility": "preemptible", "priorityClassName": "build"},
        "kai-scheduler",
        "research-batch",
        [],
    ),
    ("Deployment", {"priorityClassName": "inference"}, "default-scheduler", "research-batch", []),
    ("Deployment", {"priorityClassName": "inference"}, "kai-scheduler", "default", []),
]


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize(("kind", "labels", "scheduler", "namespace", "expected"), WORKLOAD_CASES)
def test_workload_policies(stack, config, kind, labels, scheduler, namespace, expected):
    obj = _workload(kind, labels, scheduler)
    if namespace == "research-batch":
        leaves = [
            q
            for q in config.scheduler.queues
            if q.name in leaf_queue_names(config.scheduler.queues)
        ]
        namespace = leaves[0].workload_namespace
    ns_labels = _namespaces(config)[namespace]
    assert acts_on(_policies(config), obj, kind, ns_labels) == expected


def test_the_fixtures_hold_what_they_should():
    assert len(SYSTEM_PODS) == 24
    assert {p["metadata"]["namespace"] for p in SYSTEM_PODS} == {
        "kube-system",
        "kai-scheduler",
        "kai-resource-reservation",
        "gpu-operator",
    }
    assert {
        p["metadata"]["ownerReferences"][0]["kind"]
        for p in SYSTEM_PODS
        if "ownerReferences" in p["metadata"]
    } == {"DaemonSet", "ReplicaSet", "Node"}
    assert (len(MUST_MATCH), len(MUST_NOT_MATCH)) == (9, 12)
