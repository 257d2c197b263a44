"""The scheduling phase's admission checks on FakeKube: exact pod specs and exact results.
The admission behaviour in the fake (the rendered do-not-disrupt policy at 1.36 and at 1.35)
is written from the render; the real API server judges the same checks in the conformance
suite."""

from __future__ import annotations

import pytest

from eks_gpu_platform.validate import scheduling
from eks_gpu_platform.validate.core import Planned

from .fake_kube import FakeKube
from .phase_helpers import (
    DISRUPTION_MESSAGE,
    QUEUE,
    QUEUE_NAMESPACE,
    RUN_NAMESPACE,
    disruption_policy,
    make_ctx,
)

ANNOTATION = "karpenter.sh/do-not-disrupt"
PRIORITY = {"train": 50, "inference": 125}
VAP_DENIAL = (
    'pods "{name}" is forbidden: ValidatingAdmissionPolicy '
    "'kai-non-preemptible-do-not-disrupt' with binding 'kai-non-preemptible-do-not-disrupt' "
    "denied request: " + DISRUPTION_MESSAGE
)


def non_preemptible(obj: dict) -> bool:
    label = obj["metadata"].get("labels", {}).get("kai.scheduler/preemptibility")
    if label in ("preemptible", "non-preemptible"):
        return label == "non-preemptible"
    return PRIORITY.get(obj["spec"].get("priorityClassName"), 50) >= 100


def annotated(obj: dict) -> bool:
    return ANNOTATION in obj["metadata"].get("annotations", {})


def mutating_cluster(*, policy: bool = True) -> FakeKube:
    kube = FakeKube([QUEUE_NAMESPACE])

    def mutate(obj: dict) -> dict:
        if policy and obj["kind"] == "Pod" and non_preemptible(obj) and not annotated(obj):
            obj["metadata"].setdefault("annotations", {})[ANNOTATION] = "true"
        return obj

    kube.on_create = mutate
    return kube


def validating_cluster(*, policy: bool = True) -> FakeKube:
    kube = FakeKube([QUEUE_NAMESPACE])

    def deny(obj: dict) -> str | None:
        if policy and obj["kind"] == "Pod" and non_preemptible(obj) and not annotated(obj):
            return VAP_DENIAL.format(name=obj["metadata"]["name"])
        return None

    kube.deny = deny
    return kube


def disruption(kube: FakeKube, kind: str) -> tuple:
    ctx = make_ctx(kube, [QUEUE_NAMESPACE, disruption_policy(kind)])
    out = scheduling.run(ctx)
    (r,) = [r for r in out if r.name == f"do-not-disrupt/{QUEUE}"]
    return r.status, r.reason, r.details


MAP = "MutatingAdmissionPolicy"
VAP = "ValidatingAdmissionPolicy"


def test_mutating_policy_passes():
    assert disruption(mutating_cluster(), MAP) == (
        "pass",
        "MutatingAdmissionPolicy kai-non-preemptible-do-not-disrupt annotates non-preemptible "
        "pods only",
        (
            "np-label (kai.scheduler/preemptibility=non-preemptible): admitted, annotated",
            "np-class (priorityClassName inference): admitted, annotated",
            "preemptible (priorityClassName train): admitted, not annotated",
        ),
    )


def test_mutating_policy_missing_fails():
    assert disruption(mutating_cluster(policy=False), MAP) == (
        "fail",
        "np-label (kai.scheduler/preemptibility=non-preemptible): admitted without "
        'karpenter.sh/do-not-disrupt: "true" (policy kai-non-preemptible-do-not-disrupt did '
        "not annotate it; annotation None); np-class (priorityClassName inference): admitted "
        'without karpenter.sh/do-not-disrupt: "true" (policy kai-non-preemptible-do-not-disrupt'
        " did not annotate it; annotation None)",
        ("preemptible (priorityClassName train): admitted, not annotated",),
    )


def test_mutating_policy_annotating_everything_fails():
    kube = mutating_cluster()
    kube.on_create = lambda obj: {
        **obj,
        "metadata": {**obj["metadata"], "annotations": {ANNOTATION: "true"}},
    }
    status, reason, _ = disruption(kube, MAP)
    assert (status, reason) == (
        "fail",
        "preemptible (priorityClassName train): a preemptible pod was annotated 'true'",
    )


def test_validating_policy_passes():
    np_label = VAP_DENIAL.format(name="validate-r1-dnd-np-label")
    np_class = VAP_DENIAL.format(name="validate-r1-dnd-np-class")
    assert disruption(validating_cluster(), VAP) == (
        "pass",
        "ValidatingAdmissionPolicy kai-non-preemptible-do-not-disrupt requires the annotation "
        "on non-preemptible pods only",
        (
            f"np-label (kai.scheduler/preemptibility=non-preemptible): denied: {np_label}",
            f"np-class (priorityClassName inference): denied: {np_class}",
            "preemptible (priorityClassName train): admitted, not annotated",
            "np-annotated (kai.scheduler/preemptibility=non-preemptible, "
            'karpenter.sh/do-not-disrupt: "true"): admitted, annotated',
        ),
    )


def test_validating_policy_missing_fails():
    status, reason, _ = disruption(validating_cluster(policy=False), VAP)
    assert (status, reason) == (
        "fail",
        "np-label (kai.scheduler/preemptibility=non-preemptible): admitted without "
        "karpenter.sh/do-not-disrupt (policy kai-non-preemptible-do-not-disrupt did not deny "
        "it); np-class (priorityClassName inference): admitted without "
        "karpenter.sh/do-not-disrupt (policy kai-non-preemptible-do-not-disrupt did not deny it)",
    )


def test_disruption_pod_specs(monkeypatch):
    seen: dict[str, dict] = {}
    original = FakeKube.create

    def recording(self, obj, *, dry_run=False):
        seen[obj["metadata"]["name"]] = (obj, dry_run)
        return original(self, obj, dry_run=dry_run)

    monkeypatch.setattr(FakeKube, "create", recording)
    disruption(validating_cluster(), VAP)
    pod, dry = seen["validate-r1-dnd-np-annotated"]
    assert dry is True
    assert pod["metadata"] == {
        "name": "validate-r1-dnd-np-annotated",
        "namespace": RUN_NAMESPACE,
        "labels": {
            "kai.scheduler/queue": QUEUE,
            "kai.scheduler/preemptibility": "non-preemptible",
            "app.kubernetes.io/managed-by": "eks-gpu-platform-validate",
            "eks-gpu-platform.validate/run": "r1",
        },
        "annotations": {ANNOTATION: "true"},
    }
    assert pod["spec"]["schedulerName"] == "kai-scheduler"
    assert "priorityClassName" not in pod["spec"]
    assert seen["validate-r1-dnd-np-class"][0]["spec"]["priorityClassName"] == "inference"
    assert seen["validate-r1-dnd-preemptible"][0]["spec"]["priorityClassName"] == "train"


def test_no_policy_in_the_render_skips():
    ctx = make_ctx(mutating_cluster(), [QUEUE_NAMESPACE])
    (r, *_) = scheduling.run(ctx)
    assert (r.name, r.status, r.reason) == (
        f"do-not-disrupt/{QUEUE}",
        "skip",
        "the render has no do-not-disrupt admission policy",
    )


# --- system-pods-not-annotated -----------------------------------------------------------------


def pod(namespace, name, *, annotations=None, labels=None, owner=None):
    meta = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    if owner:
        kind, owner_name = owner
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": kind, "name": owner_name, "controller": True}
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {}}


DND = {ANNOTATION: "true"}


def system_pods(kube: FakeKube) -> tuple:
    ctx = make_ctx(kube, [])
    (r,) = [r for r in scheduling.run(ctx) if r.name == "system-pods-not-annotated"]
    return r.status, r.reason, r.details


def test_system_pods_clean():
    kube = FakeKube(
        [
            pod("kube-system", "aws-node-abcde", owner=("DaemonSet", "aws-node")),
            pod("kube-system", "coredns-1", owner=("ReplicaSet", "coredns-5d")),
            pod("gpu-operator", "nvidia-dcgm-exporter-x", owner=("DaemonSet", "dcgm")),
            # A tenant's pod with the annotation is not a system pod.
            pod("research-batch", "trainer-0", annotations=DND),
            # KAI's own GPU reservation pod (resource_reservation.go L530-541).
            pod(
                "kai-resource-reservation",
                "gpu-reservation-node-a-x1",
                annotations=DND,
                labels={"app": "kai-resource-reservation", "runai-gpu-group": "g1"},
            ),
        ]
    )
    assert system_pods(kube) == (
        "pass",
        "4 system, DaemonSet and mirror pods; none annotated by anything but its own controller",
        (
            "kai-resource-reservation/gpu-reservation-node-a-x1: 'true', set by KAI's binder "
            "(a GPU reservation pod)",
        ),
    )


def test_system_pods_annotated_fail():
    kube = FakeKube(
        [
            pod("kube-system", "coredns-1", annotations=DND, owner=("ReplicaSet", "coredns-5d")),
            pod("research-batch", "logs-agent-x", annotations=DND, owner=("DaemonSet", "logs")),
            pod(
                "default",
                "kube-proxy-static",
                annotations={**DND, "kubernetes.io/config.mirror": "abc"},
            ),
            # A gpu-reservation-looking pod outside KAI's namespace is not exempt.
            pod("kai-scheduler", "x", annotations=DND, labels={"runai-gpu-group": "g"}),
        ]
    )
    assert system_pods(kube) == (
        "fail",
        "4 of 4 system, DaemonSet and mirror pods carry karpenter.sh/do-not-disrupt from "
        "something other than their own controller, so Karpenter never disrupts their nodes",
        (
            "mirror pod default/kube-proxy-static carries karpenter.sh/do-not-disrupt: 'true'",
            "system pod kai-scheduler/x carries karpenter.sh/do-not-disrupt: 'true'",
            "system pod kube-system/coredns-1 carries karpenter.sh/do-not-disrupt: 'true'",
            "DaemonSet pod research-batch/logs-agent-x carries karpenter.sh/do-not-disrupt: 'true'",
        ),
    )


def test_system_pods_annotated_lists_the_marked_then_the_exempt():
    kube = FakeKube(
        [
            pod("kube-system", "aws-node-abcde", annotations=DND, owner=("DaemonSet", "aws-node")),
            pod("kube-system", "kube-proxy-x", owner=("DaemonSet", "kube-proxy")),
            pod(
                "kai-resource-reservation",
                "gpu-reservation-node-a-x1",
                annotations=DND,
                labels={"app": "kai-resource-reservation", "runai-gpu-group": "g1"},
            ),
        ]
    )
    assert system_pods(kube) == (
        "fail",
        "1 of 3 system, DaemonSet and mirror pods carry karpenter.sh/do-not-disrupt from "
        "something other than their own controller, so Karpenter never disrupts their nodes",
        (
            "DaemonSet pod kube-system/aws-node-abcde carries karpenter.sh/do-not-disrupt: 'true'",
            "kai-resource-reservation/gpu-reservation-node-a-x1: 'true', set by KAI's binder "
            "(a GPU reservation pod)",
        ),
    )


def test_annotation_from_the_owners_template_is_its_controllers():
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "logs", "namespace": "kube-system"},
        "spec": {"template": {"metadata": {"annotations": DND}}},
    }
    kube = FakeKube(
        [daemonset, pod("kube-system", "logs-x", annotations=DND, owner=("DaemonSet", "logs"))]
    )
    assert system_pods(kube) == (
        "pass",
        "1 system, DaemonSet and mirror pods; none annotated by anything but its own controller",
        ("kube-system/logs-x: 'true', from its DaemonSet logs's pod template",),
    )


def test_system_pods_are_listed_live_in_every_namespace():
    kube = FakeKube([])
    system_pods(kube)
    assert ("list", "v1", "Pod", None, None) in kube.calls


def test_no_system_pod_to_inspect_is_a_failure_not_a_pass():
    # A tenant's pod only: nothing the check is about was seen (issue 32, point 6).
    kube = FakeKube([pod("research-batch", "trainer-0")])
    assert system_pods(kube) == (
        "fail",
        "no pod of a system namespace, DaemonSet or mirror pod to inspect: every cluster runs "
        "some (kube-system), so the pod list was empty or not readable",
        (),
    )


@pytest.mark.parametrize("kind", [MAP, VAP])
def test_planned_lists_the_dry_run_pods(kind):
    ctx = make_ctx(FakeKube([]), [QUEUE_NAMESPACE, disruption_policy(kind)])
    ns = RUN_NAMESPACE
    pods = ["np-label", "np-class", "preemptible"] + (["np-annotated"] if kind == VAP else [])
    assert scheduling.planned(ctx) == [
        Planned(
            "scheduling",
            f"do-not-disrupt/{QUEUE}",
            (
                f"Namespace {ns}",
                f"ServiceAccount {ns}/validate",
                *(f"Pod {ns}/validate-r1-dnd-{p} (dry-run)" for p in pods),
            ),
        ),
        Planned("scheduling", "system-pods-not-annotated", ()),
        Planned("scheduling", "kai-pods-in-queue-namespaces", ()),
    ]


def test_no_queue_namespace_is_a_named_skip_not_silence():
    # Before: no do-not-disrupt result at all, so a render without queues reported nothing.
    ctx = make_ctx(FakeKube([]), [disruption_policy(MAP)], checks=("do-not-disrupt*",))
    assert [(r.name, r.status, r.reason) for r in scheduling.run(ctx)] == [
        ("do-not-disrupt", "skip", "the render has no queue namespace to probe")
    ]
    assert scheduling.checks(ctx)[0] == "do-not-disrupt"


def test_a_preemptible_only_queue_refusing_non_preemptible_pods_passes():
    """Issue 29: the tenancy policy refuses non-preemptible pods in a queue whose pools are all
    preemptible; the check records that refusal instead of failing on it."""
    kube = mutating_cluster()
    refusal = (
        'pods "{name}" is forbidden: ValidatingAdmissionPolicy '
        "'{policy}' with binding '{policy}' denied request: priority class: refused"
    )

    def deny(obj: dict) -> str | None:
        if obj["kind"] == "Pod" and non_preemptible(obj):
            label = "kai.scheduler/preemptibility" in obj["metadata"].get("labels", {})
            policy = "platform-tenant-queue" if label else "platform-tenant-pods"
            return refusal.format(name=obj["metadata"]["name"], policy=policy)
        return None

    kube.deny = deny
    np_label = refusal.format(name="validate-r1-dnd-np-label", policy="platform-tenant-queue")
    np_class = refusal.format(name="validate-r1-dnd-np-class", policy="platform-tenant-pods")
    assert disruption(kube, MAP) == (
        "pass",
        "MutatingAdmissionPolicy kai-non-preemptible-do-not-disrupt annotates non-preemptible "
        "pods only",
        (
            "np-label (kai.scheduler/preemptibility=non-preemptible): refused by the queue's "
            f"priority classes: {np_label}",
            f"np-class (priorityClassName inference): refused by the queue's priority classes: "
            f"{np_class}",
            "preemptible (priorityClassName train): admitted, not annotated",
        ),
    )


def test_another_denial_of_a_non_preemptible_pod_still_fails():
    kube = mutating_cluster()
    kube.deny = lambda obj: (
        "forbidden: something else" if obj["kind"] == "Pod" and non_preemptible(obj) else None
    )
    status, _, _ = disruption(kube, MAP)
    assert status == "fail"


# --- kai-pods-in-queue-namespaces (review 2026-11-27 L2) ----------------------------------------


def kai_pod(namespace, name, *, labels=None, annotations=None, priority_class=None, priority=None):
    p = pod(namespace, name, labels=labels, annotations=annotations)
    p["spec"] = {"schedulerName": "kai-scheduler"}
    if priority_class is not None:
        p["spec"].update({"priorityClassName": priority_class, "priority": priority})
    return p


def kai_namespaces_result(kube: FakeKube) -> tuple:
    ctx = make_ctx(kube, [QUEUE_NAMESPACE])
    (r,) = [r for r in scheduling.run(ctx) if r.name == "kai-pods-in-queue-namespaces"]
    return r.status, r.reason, r.details


def test_kai_pods_outside_queue_namespaces_are_reported():
    kube = FakeKube(
        [
            kai_pod(QUEUE, "in-queue"),  # the queue namespace: the policies act there
            kai_pod("kai-resource-reservation", "gpu-reservation-x"),  # KAI's own
            kai_pod("default", "server-abc"),  # no class: may be non-preemptible
            kai_pod("team-x", "infer", priority_class="inference", priority=125),
            kai_pod("team-x", "np", labels={"kai.scheduler/preemptibility": "non-preemptible"}),
            kai_pod("team-x", "marked", annotations=DND),
            kai_pod("team-x", "batch", priority_class="train", priority=50),
            kai_pod("team-x", "spot", labels={"kai.scheduler/preemptibility": "preemptible"}),
            pod("team-x", "not-kai"),
        ]
    )
    assert kai_namespaces_result(kube) == (
        "fail",
        f"3 kai-scheduler pods outside the queue namespaces ({QUEUE}, validate-r1-{QUEUE}) may "
        "be non-preemptible and carry no karpenter.sh/do-not-disrupt: the admission policies "
        "act only in queue namespaces, so Karpenter may consolidate their nodes; run them in a "
        "queue's namespace, or annotate or label them kai.scheduler/preemptibility=preemptible",
        ("default/server-abc", "team-x/infer", "team-x/np"),
    )


def test_kai_pods_outside_queue_namespaces_all_protected_pass():
    kube = FakeKube(
        [
            kai_pod(QUEUE, "in-queue"),
            kai_pod("team-x", "marked", annotations=DND),
            kai_pod("team-x", "batch", priority_class="train", priority=50),
        ]
    )
    assert kai_namespaces_result(kube) == (
        "pass",
        "2 kai-scheduler pods outside the queue namespaces, none unprotected",
        (),
    )
