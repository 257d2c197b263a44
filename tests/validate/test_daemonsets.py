"""A DaemonSet at 0 pods is ready only where no node should run it (issue 32, point 6): the
DaemonSet controller's node test (daemonsets.py, from kubernetes v1.36.3 pkg/controller/daemon
daemon_controller.go NodeShouldRunDaemonPod), and controllers-ready on FakeKube."""

from __future__ import annotations

import pytest

from eks_gpu_platform.validate import daemonsets, deployment

from .fake_kube import FakeKube
from .test_deployment import context, make_render

EFA_TAINT = {"key": "vpc.amazonaws.com/efa", "value": "true", "effect": "NoSchedule"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
HELM = {
    "efa": {
        "name": "efa",
        "chart": "aws-efa-k8s-device-plugin",
        "namespace": "kube-system",
        "values": {"fullnameOverride": "efa-plugin"},
    }
}


def efa_plugin(desired: int = 0, tolerations=None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "efa-plugin", "namespace": "kube-system", "generation": 1},
        "spec": {
            "template": {
                "spec": {
                    "nodeSelector": {"eks-gpu-platform.io/efa": "true"},
                    "tolerations": [{"key": "vpc.amazonaws.com/efa", "operator": "Exists"}]
                    if tolerations is None
                    else tolerations,
                }
            }
        },
        "status": {
            "observedGeneration": 1,
            "desiredNumberScheduled": desired,
            "updatedNumberScheduled": desired,
            "numberAvailable": desired,
        },
    }


def node(name: str, labels=None, taints=()) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": list(taints)},
    }


def efa_node(name: str, *taints) -> dict:
    return node(name, {"eks-gpu-platform.io/efa": "true"}, taints or (EFA_TAINT,))


def controllers_ready(*objects):
    kube = FakeKube(list(objects))
    results = deployment.run(context(kube, make_render([], HELM), checks=["controllers-ready"]))
    (result,) = results
    return result


def test_zero_pods_with_a_node_it_should_run_on_is_not_ready() -> None:
    result = controllers_ready(efa_plugin(), efa_node("ip-10-0-1-5"), node("ip-10-0-9-9"))
    assert (result.status, result.reason, result.details) == (
        "fail",
        "1 of 1 not ready",
        (
            "DaemonSet kube-system/efa-plugin (efa): 0 pods scheduled, but 1 nodes match its "
            "node selector, affinity and tolerations (ip-10-0-1-5)",
        ),
    )


def test_zero_pods_with_no_node_it_should_run_on_is_skipped_with_the_reason() -> None:
    # A node without the label, and an EFA node whose GPU taint the plugin does not tolerate.
    result = controllers_ready(
        efa_plugin(), node("ip-10-0-9-9"), efa_node("ip-10-0-1-5", EFA_TAINT, GPU_TAINT)
    )
    assert (result.status, result.reason, result.details) == (
        "skip",
        "1 DaemonSets with no node to run on and no other workload",
        (
            "DaemonSet kube-system/efa-plugin: skipped: 0 pods scheduled and no node matches its "
            "node selector, affinity and tolerations",
        ),
    )


def test_a_skipped_daemonset_beside_ready_workloads_is_named_in_the_pass() -> None:
    helm = {
        **HELM,
        "karpenter": {"name": "karpenter", "chart": "karpenter", "namespace": "kube-system"},
    }
    karpenter = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "kube-system"},
        "spec": {"replicas": 2},
        "status": {"replicas": 2, "updatedReplicas": 2, "availableReplicas": 2},
    }
    kube = FakeKube([efa_plugin(), karpenter, node("ip-10-0-9-9")])
    (result,) = deployment.run(context(kube, make_render([], helm), checks=["controllers-ready"]))
    assert (result.status, result.reason, result.details) == (
        "pass",
        "1 workloads ready; 1 DaemonSets skipped: no node to run on",
        (
            "Deployment kube-system/karpenter",
            "DaemonSet kube-system/efa-plugin: skipped: 0 pods scheduled and no node matches its "
            "node selector, affinity and tolerations",
        ),
    )


def test_a_daemonset_with_pods_does_not_list_nodes() -> None:
    kube = FakeKube([efa_plugin(desired=2)])
    (result,) = deployment.run(context(kube, make_render([], HELM), checks=["controllers-ready"]))
    assert (result.status, result.reason) == ("pass", "1 workloads ready")
    assert not [c for c in kube.calls if c[:3] == ("list", "v1", "Node")]


def test_no_controller_in_the_render_fails() -> None:
    kube = FakeKube()
    (result,) = deployment.run(context(kube, make_render([], {}), checks=["controllers-ready"]))
    assert (result.status, result.reason) == ("fail", "the render names no controller workload")


def test_no_kind_in_the_render_fails_crds_served() -> None:
    kube = FakeKube()
    (result,) = deployment.run(context(kube, make_render([], {}), checks=["crds-served"]))
    assert (result.status, result.reason) == (
        "fail",
        "the render has no manifest: no kind to check",
    )


# --- the DaemonSet controller's node test ------------------------------------------------------


def affinity(*terms) -> dict:
    return {
        "template": {
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": list(terms)
                        }
                    }
                }
            }
        }
    }


@pytest.mark.parametrize(
    ("terms", "labels", "name", "runs"),
    [
        # terms are ORed, a term's expressions ANDed
        (
            [{"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}],
            {"a": "1"},
            "n",
            True,
        ),
        (
            [
                {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]},
                {"matchExpressions": [{"key": "b", "operator": "Exists"}]},
            ],
            {"b": "x"},
            "n",
            True,
        ),
        (
            [
                {
                    "matchExpressions": [
                        {"key": "a", "operator": "In", "values": ["1"]},
                        {"key": "b", "operator": "DoesNotExist"},
                    ]
                }
            ],
            {"a": "1", "b": "x"},
            "n",
            False,
        ),
        # NotIn matches an absent label; Gt/Lt compare integers
        (
            [{"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}],
            {},
            "n",
            True,
        ),
        (
            [{"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["4"]}]}],
            {"gpus": "8"},
            "n",
            True,
        ),
        (
            [{"matchExpressions": [{"key": "gpus", "operator": "Lt", "values": ["4"]}]}],
            {"gpus": "x"},
            "n",
            False,
        ),
        # an empty term matches nothing; matchFields on the node's name
        ([{}], {"a": "1"}, "n", False),
        (
            [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}],
            {},
            "n",
            True,
        ),
    ],
)
def test_required_node_affinity(terms, labels, name, runs) -> None:
    assert daemonsets.should_run({"spec": affinity(*terms)}, node(name, labels)) is runs


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, 1),
        ({"operator": "Exists"}, {"key": "k", "effect": "NoExecute"}, 1),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, 1),
        ({"key": "k", "value": "w"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, 0),
        (
            {"key": "k", "operator": "Exists", "effect": "NoExecute"},
            {"key": "k", "effect": "NoSchedule"},
            0,
        ),
        ({"key": "k", "operator": "Gt", "value": "1"}, {"key": "k", "value": "2"}, 0),
    ],
)
def test_tolerations(toleration, taint, tolerated) -> None:
    assert daemonsets.tolerates(toleration, taint) is bool(tolerated)


def test_the_controllers_default_tolerations_and_prefer_no_schedule() -> None:
    ds = {"spec": {"template": {"spec": {}}}}
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
    prefer = {"key": "x", "effect": "PreferNoSchedule"}
    network = {"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}
    assert daemonsets.should_run(ds, node("n", taints=[not_ready, prefer]))
    assert not daemonsets.should_run(ds, node("n", taints=[network]))
    host = {"spec": {"template": {"spec": {"hostNetwork": True}}}}
    assert daemonsets.should_run(host, node("n", taints=[network]))
    pinned = {"spec": {"template": {"spec": {"nodeName": "other"}}}}
    assert not daemonsets.should_run(pinned, node("n"))
