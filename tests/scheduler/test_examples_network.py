"""The shipped workload templates' NetworkPolicies (issue 22 point 6): every pod a template
creates is selected, for ingress and egress, by a NetworkPolicy in its own file (what checkov's
CKV2_K8S_6 asks), the inference template admits exactly its declared clients, and
``scheduler.queues[].inferenceClients`` is validated."""

import re
from dataclasses import replace
from pathlib import Path

import pytest
from pod_security import pod_templates
from stack_files import fixture_stack

from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.offline.render import validate as validate_stack
from eks_gpu_platform.scheduler.spec import SchedulerSpec
from eks_gpu_platform.spec import SpecError, load_spec

from .test_examples import IDS, SHIPPED
from .test_spec import raw_queue

REPO = Path(__file__).resolve().parents[2]


def _selects(policy: dict, labels: dict) -> bool:
    selector = policy["spec"]["podSelector"]
    assert set(selector) <= {"matchLabels"}  # the templates use matchLabels only
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def _pod_labels(obj: dict, template: dict) -> dict:
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    if obj["kind"] == "Job":  # the Job controller adds it to every pod
        labels["batch.kubernetes.io/job-name"] = obj["metadata"]["name"]
    return labels


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_every_pod_has_its_own_network_policy(stack, name, template, version):
    policies = [d for d in template.documents if d["kind"] == "NetworkPolicy"]
    pods = 0
    for obj in template.documents:
        for _, pod in pod_templates(obj):
            pods += 1
            labels = _pod_labels(obj, pod)
            own = [
                p
                for p in policies
                if p["metadata"]["namespace"] == obj["metadata"]["namespace"]
                and _selects(p, labels)
            ]
            types = {t for p in own for t in p["spec"]["policyTypes"]}
            assert types == {"Ingress", "Egress"}, (name, obj["metadata"]["name"])
    assert pods > 0


def _config(stack: str):
    return validate_stack(fixture_stack(stack))


def test_the_inference_template_admits_its_namespace_by_default():
    config = _config("prod")
    policy = example_workloads(config)["inference-serving"].kind("NetworkPolicy")
    assert policy["spec"]["ingress"][0]["from"] == [{"podSelector": {}}]
    assert policy["spec"]["podSelector"] == {
        "matchLabels": {"app.kubernetes.io/name": "serve-serving"}
    }


def test_the_inference_template_admits_the_declared_clients():
    config = _config("prod")
    queues = tuple(
        replace(q, inference_clients=("gateway",)) if q.name == "serving" else q
        for q in config.scheduler.queues
    )
    config = replace(config, scheduler=replace(config.scheduler, queues=queues))
    policy = example_workloads(config)["inference-serving"].kind("NetworkPolicy")
    assert policy["spec"]["ingress"][0]["from"] == [
        {"podSelector": {}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gateway"}}},
    ]


def test_the_nccl_namespace_is_closed_but_for_itself_and_dns():
    config = _config("prod")
    documents = example_workloads(config)["nccl-allreduce-train-efa"].documents
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("Namespace", "nccl-tests"),
        ("NetworkPolicy", "default-deny"),
        ("NetworkPolicy", "allow-dns"),
        ("NetworkPolicy", "allow-same-namespace"),
        ("MPIJob", "nccl-allreduce-train-efa"),
    ]
    assert documents[3]["spec"] == {
        "podSelector": {},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": {}}]}],
        "egress": [{"to": [{"podSelector": {}}]}],
    }


@pytest.mark.parametrize(
    ("clients", "message"),
    [
        (
            ["Gateway"],
            "scheduler.queues[0](team-a).inferenceClients[0]: 'Gateway' is not a namespace "
            "name; expected 1-63 lowercase letters, digits or '-', starting and ending with a "
            "letter or digit",
        ),
        (
            ["gateway", "gateway"],
            "scheduler.queues[0](team-a).inferenceClients: lists the same namespace twice",
        ),
    ],
)
def test_inference_clients_rejects(clients, message):
    raw = {"queues": [raw_queue("team-a", inferenceClients=clients)]}
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(SchedulerSpec, raw, "scheduler")


def test_inference_clients_default_to_none():
    spec = load_spec(SchedulerSpec, {"queues": [raw_queue("team-a")]}, "scheduler")
    assert spec.queues[0].inference_clients == ()
