"""The preemptible-only rule on a Deployment's pods (platform-tenant-queue, on the Deployment):
KAI v0.16.8 judges them from the Deployment's labels first, then the pod's, and from the
Deployment's top owner (docs/kai-owners.md), none of which the pod shows, so the pod policy
leaves them to the Deployment. dev's research-batch is preemptible-only (pool gpu-spot, classes
train and build-preemptible)."""

import copy

from .test_tenancy_policies import TRAIN, _deployment, judge, pod_of

QUEUE = "research-batch"
DEPLOYMENT_NON_PREEMPTIBLE = (
    "priority class: KAI treats the pods of Deployment web as non-preemptible (label "
    "kai.scheduler/preemptibility or priorityClassName on the Deployment, else on its pod "
    "template, else the template's priorityClassName, else KAI's inference default for a "
    "Deployment), but queue research-batch runs preemptible work only; allowed: "
    "priorityClassName train, build-preemptible (label or template), or label "
    "kai.scheduler/preemptibility=preemptible"
)
POD_NON_PREEMPTIBLE = (
    f"priority class: KAI treats pod {TRAIN} as non-preemptible (its class, a Knative "
    "Service's or Notebook's default class, or kai.scheduler/preemptibility=non-preemptible), "
    "but queue research-batch runs preemptible work only; allowed: priorityClassName train, "
    "build-preemptible"
)
SELDON = {
    "apiVersion": "machinelearning.seldon.io/v1",
    "kind": "SeldonDeployment",
    "name": "model",
    "uid": "2",
    "controller": True,
}


def unlabelled(**labels) -> dict:
    """A KAI-scheduled Deployment whose template names no class, with ``labels`` (and the
    queue label) on the Deployment only."""
    deploy = _deployment(pod_of("dev", QUEUE), QUEUE)
    deploy["metadata"]["labels"] = {"kai.scheduler/queue": QUEUE, **labels}
    deploy["spec"]["template"]["metadata"]["labels"] = {"kai.scheduler/queue": QUEUE}
    deploy["spec"]["selector"]["matchLabels"] = {"kai.scheduler/queue": QUEUE}
    del deploy["spec"]["template"]["spec"]["priorityClassName"]
    return deploy


def pod_of_deployment(deploy: dict) -> dict:
    """The pod the ReplicaSet controller creates from ``deploy``'s template."""
    template = copy.deepcopy(deploy["spec"]["template"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            **template["metadata"],
            "name": TRAIN,
            "namespace": QUEUE,
            "labels": {**template["metadata"]["labels"], "pod-template-hash": "5d8f"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-5d8f",
                    "uid": "1",
                    "controller": True,
                }
            ],
        },
        "spec": template["spec"],
    }


def test_a_deployment_labelled_preemptible_runs_in_a_preemptible_only_queue():
    """The label on the Deployment only: KAI reads it before the pod's (default_grouper.go
    L231-246, L275-284), so the pods, which carry no class, are preemptible."""
    for labels in ({"priorityClassName": "train"}, {"kai.scheduler/preemptibility": "preemptible"}):
        deploy = unlabelled(**labels)
        assert judge("dev", deploy) == [], labels
        assert judge("dev", pod_of_deployment(deploy)) == [], labels


def test_an_unlabelled_deployment_is_refused_at_the_deployment():
    """No label and no class: KAI's deployment grouper falls back to inference (100)."""
    deploy = unlabelled()
    assert judge("dev", deploy) == [DEPLOYMENT_NON_PREEMPTIBLE]
    assert judge("dev-1.35", deploy) == [DEPLOYMENT_NON_PREEMPTIBLE]
    assert judge("dev", pod_of_deployment(deploy)) == []
    # A preemptible class in the template, or a queue that may run non-preemptible work.
    deploy["spec"]["template"]["spec"]["priorityClassName"] = "train"
    assert judge("dev", deploy) == []
    serving = unlabelled()
    serving["metadata"]["namespace"] = "research-serving"
    template = serving["spec"]["template"]["metadata"]
    for labels in (serving["metadata"]["labels"], template["labels"]):
        labels["kai.scheduler/queue"] = "research-serving"
    assert judge("dev", serving) == []


def test_a_deployment_owned_by_a_seldondeployment_is_not_kais_top_owner():
    """KAI reads SeldonDeployments (ClusterRole kai-podgrouper): the default grouper, train."""
    deploy = unlabelled()
    deploy["metadata"]["ownerReferences"] = [SELDON]
    assert judge("dev", deploy) == []
    assert judge("dev", pod_of_deployment(deploy)) == []


def test_the_deployment_check_judges_only_what_changes():
    """UPDATE: only a changed template or labels; never a Deployment being deleted."""
    old = unlabelled()
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["example.com/hold"]
    assert judge("dev", new, operation="UPDATE", old=old) == []
    new["metadata"]["deletionTimestamp"] = "2026-11-27T11:00:00Z"
    new["spec"]["template"]["metadata"]["annotations"] = {"a": "b"}
    assert judge("dev", new, operation="UPDATE", old=old) == []
    del new["metadata"]["deletionTimestamp"]
    assert judge("dev", new, operation="UPDATE", old=old) == [DEPLOYMENT_NON_PREEMPTIBLE]
    labelled = copy.deepcopy(old)
    labelled["metadata"]["labels"]["team"] = "research"
    assert judge("dev", labelled, operation="UPDATE", old=old) == [DEPLOYMENT_NON_PREEMPTIBLE]


def test_a_refused_label_on_the_deployment_gets_its_own_message_only():
    deploy = unlabelled(**{"kai.scheduler/preemptibility": "non-preemptible"})
    assert judge("dev", deploy) == [
        "priority class: label kai.scheduler/preemptibility=non-preemptible on Deployment web is "
        "not allowed: queue research-batch runs preemptible work only; allowed: preemptible, or "
        "a class of train, build-preemptible"
    ]
    deploy = unlabelled(priorityClassName="inference")
    assert judge("dev", deploy) == [
        "priority class: label priorityClassName=inference on Deployment web is not allowed in "
        "queue research-batch; allowed: train, build-preemptible"
    ]


def test_the_pod_check_still_judges_pods_no_deployment_decides():
    """A bare pod: its class (refused by the class rule), or a Notebook's or Knative Service's
    default when it names none (build, inference); a Knative revision's pod even with a
    ReplicaSet owner (KAI's Knative grouper, knative.go L72-140)."""
    pod = pod_of("dev", QUEUE)
    pod["spec"]["priorityClassName"] = "inference"
    assert judge("dev", pod) == [
        f"priority class: pod {TRAIN} has priorityClassName inference, not allowed in queue "
        "research-batch; allowed: train, build-preemptible"
    ]
    notebook = pod_of("dev", QUEUE)
    del notebook["spec"]["priorityClassName"]
    notebook["metadata"]["labels"]["notebook-name"] = "nb"
    assert judge("dev", notebook) == [POD_NON_PREEMPTIBLE]
    knative = pod_of_deployment(unlabelled())
    knative["metadata"]["labels"]["serving.knative.dev/revision"] = "web-00001"
    assert judge("dev", knative) == [POD_NON_PREEMPTIBLE]
