"""The documented label for each owner kind no policy judges on the owner works (issue 30 point 7).

``docs/kai-owners.md`` ("Owner kinds no policy covers") tells users of PyTorchJob, TFJob,
XGBoostJob, JAXJob, MPIJob ``kubeflow.org/v1``, JobSet, LeaderWorkerSet, RayCluster, RayJob,
RayService, Argo Workflow and Kubeflow Notebook which label to set. ``tests/fixtures/kai-pods/
owner-kinds.yaml`` holds the pods each kind's controller creates with that label, and KAI's
verdict for each, cited to the controllers and to KAI's groupers at v0.17.0. Per kind: the pod
policy acts on the pod exactly when KAI treats it as non-preemptible (1.36: the mutating policy
that adds ``karpenter.sh/do-not-disrupt: "true"``; 1.35: the validating policy denies it), with
the label, without it, and with it replaced by ``kai.scheduler/preemptibility: preemptible``; an
annotated pod is admitted; and no policy acts on the Jobs and StatefulSets the controllers create.
"""

import copy
import re

import pytest
import yaml

from .test_admission_fixtures import (
    CLASS_VALUES,
    FIXTURES,
    RENDERS,
    REPO,
    YAML_LOADER,
    _in_stack,
    _namespaces,
    _policies,
    acts_on,
)

POD_POLICY = "kai-non-preemptible-do-not-disrupt"
KEY = "fixtures.eks-gpu-platform.io/"
DOCUMENTS = [
    d
    for d in yaml.load_all(
        (FIXTURES / "kai-pods" / "owner-kinds.yaml").read_text(), Loader=YAML_LOADER
    )
    if d
]
PODS = [d for d in DOCUMENTS if d["kind"] == "Pod"]
CREATED = [d for d in DOCUMENTS if d["kind"] != "Pod"]
# The kinds the docs table lists, written out here so that a kind dropped from the fixtures or
# the docs fails the coverage test.
KINDS = {
    "PyTorchJob",
    "TFJob",
    "XGBoostJob",
    "JAXJob",
    "MPIJob",
    "JobSet",
    "LeaderWorkerSet",
    "RayCluster",
    "RayJob",
    "RayService",
    "Workflow",
    "Notebook",
}


def _kind(doc: dict) -> str:
    return doc["metadata"]["annotations"][KEY + "owner-kind"]


def _id(doc: dict) -> str:
    return f"{_kind(doc)}/{doc['kind']}/{doc['metadata']['name']}"


def _with_priority(pod: dict) -> dict:
    name = pod["spec"].get("priorityClassName")
    pod["spec"]["priority"] = CLASS_VALUES[name] if name else 0
    return pod


def _variant(pod: dict, config, change: str) -> dict:
    pod = _in_stack(pod, config)
    labels = pod["metadata"]["labels"]
    doc_label = pod["metadata"]["annotations"][KEY + "doc-label"]
    assert doc_label in labels, f"{_id(pod)} lacks its documented label {doc_label}"
    if change == "unlabelled":
        del labels[doc_label]
    elif change == "preemptible":
        del labels[doc_label]
        labels["kai.scheduler/preemptibility"] = "preemptible"
    elif change == "annotated":
        pod["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = "true"
    return _with_priority(pod)


def _expected(verdict: str) -> list[str]:
    return [POD_POLICY] if verdict == "non-preemptible" else []


def _acted(config, pod: dict) -> list[str]:
    labels = _namespaces(config)[pod["metadata"]["namespace"]]
    return acts_on(_policies(config), pod, "Pod", labels)


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", PODS, ids=_id)
def test_the_documented_label_is_acted_on(stack, config, pod):
    verdict = pod["metadata"]["annotations"][KEY + "kai-verdict"]
    assert _acted(config, _variant(pod, config, "labelled")) == _expected(verdict)
    (policy,) = (
        m
        for m in _policies(config)
        if m["metadata"]["name"] == POD_POLICY and not m["kind"].endswith("Binding")
    )
    if config.cluster.kubernetes_version == "1.36":
        # 1.36: the policy that acts is the mutating one, and its mutation adds the annotation.
        assert policy["kind"] == "MutatingAdmissionPolicy"
        (mutation,) = policy["spec"]["mutations"]
        expression = mutation["applyConfiguration"]["expression"]
        assert '"karpenter.sh/do-not-disrupt": "true"' in expression
    else:
        assert policy["kind"] == "ValidatingAdmissionPolicy"


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", PODS, ids=_id)
def test_the_same_pod_without_the_label(stack, config, pod):
    verdict = pod["metadata"]["annotations"][KEY + "kai-verdict-unlabelled"]
    assert _acted(config, _variant(pod, config, "unlabelled")) == _expected(verdict)


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", PODS, ids=_id)
def test_the_same_pod_labelled_preemptible_is_left_alone(stack, config, pod):
    # An explicit preemptibility wins over every class (K2, K3 in the fixture file).
    assert _acted(config, _variant(pod, config, "preemptible")) == []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("pod", PODS, ids=_id)
def test_the_annotated_pod_is_admitted(stack, config, pod):
    assert _acted(config, _variant(pod, config, "annotated")) == []


@pytest.mark.parametrize(("stack", "config"), RENDERS, ids=[r[0] for r in RENDERS])
@pytest.mark.parametrize("obj", CREATED, ids=_id)
def test_no_policy_acts_on_what_the_controller_creates(stack, config, obj):
    """The Jobs and StatefulSets between pod and owner: KAI never reads their labels (the owner's
    grouper takes the top owner), and no policy may deny or rewrite the controller's create."""
    obj = copy.deepcopy(obj)
    moved = _in_stack(
        {"metadata": {"namespace": obj["metadata"]["namespace"], "labels": {}}}, config
    )
    obj["metadata"]["namespace"] = moved["metadata"]["namespace"]
    labels = _namespaces(config)[obj["metadata"]["namespace"]]
    assert acts_on(_policies(config), obj, obj["kind"], labels) == []


def _documented_kinds() -> set[str]:
    text = (REPO / "docs" / "kai-owners.md").read_text()
    section = text.split("## Owner kinds no policy covers", 1)[1].split("\n## ", 1)[0]
    kinds = set()
    for row in section.splitlines():
        if not row.startswith("| ") or row.startswith("| Owner") or "any other" in row:
            continue
        first = row.split("|")[1]
        kinds |= {k for k in re.findall(r"`([^`]+)`", first) if re.fullmatch(r"[A-Z]\w+", k)}
    return kinds


def test_every_documented_kind_has_its_cases():
    assert _documented_kinds() == KINDS
    assert {_kind(d) for d in PODS} == KINDS
    for kind in KINDS:
        verdicts = {
            d["metadata"]["annotations"][KEY + "kai-verdict"] for d in PODS if _kind(d) == kind
        }
        assert verdicts == {"non-preemptible"}, kind
    # Both documented labels are exercised.
    doc_labels = {d["metadata"]["annotations"][KEY + "doc-label"] for d in PODS}
    assert doc_labels == {"priorityClassName", "kai.scheduler/preemptibility"}
    assert (len(PODS), len(CREATED)) == (16, 5)
