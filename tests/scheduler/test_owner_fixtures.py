"""The do-not-disrupt policies on workloads whose owner KAI reads first (issue 30 points 6 and 7,
review 2026-11-27 M2, M5, L3): ``tests/fixtures/kai-pods/owners.yaml`` holds Deployments and
MPIJobs, each with KAI's verdict derived line by line in the file. Some policy must act on the
owner or on a pod made from it exactly when KAI treats the pods as non-preemptible, and on 1.35
nothing KAI treats as preemptible is denied. The UPDATE ratchet: a metadata-only update of a
pre-existing workload (a finalizer patch, the garbage collector's) is never acted on.
"""

import copy

import pytest
import yaml

from .test_admission_fixtures import (
    CLASS_VALUES,
    FIXTURES,
    RENDERS,
    YAML_LOADER,
    _load,
    _namespaces,
    _policies,
    acts_on,
)

VERDICT = "fixtures.eks-gpu-platform.io/kai-verdict"
POD_POLICY = "kai-non-preemptible-do-not-disrupt"
WORKLOADS = "kai-non-preemptible-do-not-disrupt-workloads"
MPIJOBS = "kai-non-preemptible-do-not-disrupt-mpijobs"
OWNERS = [
    d
    for d in yaml.load_all((FIXTURES / "kai-pods" / "owners.yaml").read_text(), Loader=YAML_LOADER)
    if d
]


def _place(obj: dict, config) -> dict:
    """``obj`` in its namespace if the render has it as a queue namespace, else in the render's
    first queue namespace."""
    obj = copy.deepcopy(obj)
    queues = [n for n, lab in _namespaces(config).items() if any(k.endswith("/queue") for k in lab)]
    if obj["metadata"]["namespace"] not in queues:
        obj["metadata"]["namespace"] = queues[0]
    return obj


def _templates(owner: dict) -> list[tuple[str, dict]]:
    if owner["kind"] == "Deployment":
        return [("Deployment", owner["spec"]["template"])]
    return [(role, s["template"]) for role, s in owner["spec"]["mpiReplicaSpecs"].items()]


def _pods(owner: dict) -> list[dict]:
    """The pods the owner's controller makes (owners.yaml header)."""
    pods = []
    for role, template in _templates(owner):
        labels = dict(template.get("metadata", {}).get("labels", {}))
        if owner["kind"] == "Deployment":
            labels["pod-template-hash"] = "5d8f7c6b9"
            ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}
        else:
            labels.update(
                {
                    "training.kubeflow.org/operator-name": "mpi-operator",
                    "training.kubeflow.org/job-name": owner["metadata"]["name"],
                    "training.kubeflow.org/job-role": role.lower(),
                }
            )
            ref = (
                {"apiVersion": "batch/v1", "kind": "Job", "name": "launcher"}
                if role == "Launcher"
                else {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "j"}
            )
        spec = copy.deepcopy(template["spec"])
        spec["priority"] = CLASS_VALUES.get(spec.get("priorityClassName", ""), 0)
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{owner['metadata']['name']}-{role.lower()}",
                    "namespace": owner["metadata"]["namespace"],
                    "labels": labels,
                    "annotations": dict(template.get("metadata", {}).get("annotations", {})),
                    "ownerReferences": [{**ref, "uid": "u", "controller": True}],
                },
                "spec": spec,
            }
        )
    return pods


def _acted(config, owner: dict, old: dict | None = None) -> tuple[list[str], list[str]]:
    labels = _namespaces(config)[owner["metadata"]["namespace"]]
    on_owner = acts_on(_policies(config), owner, owner["kind"], labels, old)
    on_pods = sorted(
        {p for pod in _pods(owner) for p in acts_on(_policies(config), pod, "Pod", labels)}
    )
    return on_owner, on_pods


def _id(owner: dict) -> str:
    return f"{owner['kind']}/{owner['metadata']['name']}"


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("owner", OWNERS, ids=_id)
def test_a_policy_acts_exactly_when_kai_says_non_preemptible(stack, config, owner):
    owner = _place(owner, config)
    on_owner, on_pods = _acted(config, owner)
    expected_policy = WORKLOADS if owner["kind"] == "Deployment" else MPIJOBS
    if owner["metadata"]["annotations"][VERDICT] == "non-preemptible":
        # The owner's verdict comes from the owner, or (MPIJob without labels) from the pod.
        assert on_owner == [expected_policy] or (
            owner["kind"] == "MPIJob" and on_pods == [POD_POLICY]
        )
    else:
        assert (on_owner, on_pods) == ([], [])


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("owner", [o for o in OWNERS if o["kind"] == "Deployment"], ids=_id)
def test_the_pod_policy_leaves_deployment_pods_to_the_deployment(stack, config, owner):
    owner = _place(owner, config)
    assert _acted(config, owner)[1] == []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("owner", OWNERS, ids=_id)
def test_an_annotated_owner_is_admitted(stack, config, owner):
    owner = _place(owner, config)
    for _, template in _templates(owner):
        meta = template.setdefault("metadata", {})
        meta.setdefault("annotations", {})["karpenter.sh/do-not-disrupt"] = "true"
    assert _acted(config, owner) == ([], [])


def test_the_moved_deployment_pods_are_cases_here():
    names = {o["metadata"]["name"] for o in OWNERS}
    assert {"server", "server-gold", "kserve-predictor", "seldon-model"} <= names
    must = {p["metadata"]["name"] for p in _load(FIXTURES / "kai-pods" / "must-match.yaml")}
    assert not any("pod-template-hash" in p for p in must)
    assert [o["metadata"]["annotations"][VERDICT] for o in OWNERS].count("non-preemptible") == 7


# --- The UPDATE ratchet (review L3) ---------------------------------------------------------

SERVER = next(o for o in OWNERS if o["metadata"]["name"] == "serve-labelled")
NCCL = next(o for o in OWNERS if o["metadata"]["name"] == "nccl-inference")


def _updated(obj: dict, change) -> dict:
    new = copy.deepcopy(obj)
    change(new)
    return new


def _finalizer(o):
    o["metadata"]["finalizers"] = ["foregroundDeletion"]


def _deleting(o):
    o["metadata"]["deletionTimestamp"] = "2026-11-27T10:00:00Z"
    o["spec"].setdefault("template", {}).setdefault("metadata", {})["labels"] = {"x": "y"}


def _orphaned(o):
    o["metadata"]["ownerReferences"] = []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("owner", [SERVER, NCCL], ids=_id)
@pytest.mark.parametrize("change", [_finalizer, _orphaned, _deleting])
def test_a_metadata_only_update_of_an_unmarked_workload_is_not_acted_on(
    stack, config, owner, change
):
    old = _place(owner, config)
    assert _acted(config, old)[0] != []  # it would be acted on at creation
    new = _updated(old, change)
    namespace = _namespaces(config)[old["metadata"]["namespace"]]
    assert acts_on(_policies(config), new, owner["kind"], namespace, old) == []


def _template_label(o):
    for _, template in _templates(o):
        template["metadata"]["labels"]["version"] = "2"


def _owner_label(o):
    o["metadata"]["labels"]["team"] = "a"


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("owner", [SERVER, NCCL], ids=_id)
@pytest.mark.parametrize("change", [_template_label, _owner_label])
def test_a_template_or_label_update_is_judged(stack, config, owner, change):
    old = _place(owner, config)
    new = _updated(old, change)
    expected = [WORKLOADS if owner["kind"] == "Deployment" else MPIJOBS]
    namespace = _namespaces(config)[old["metadata"]["namespace"]]
    assert acts_on(_policies(config), new, owner["kind"], namespace, old) == expected
