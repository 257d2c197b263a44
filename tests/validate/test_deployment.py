"""The deployment phase on FakeKube: expected controllers (exact names per stack), drift field by
field, readiness of controllers, EC2NodeClasses and NodePools. The API server's own behaviour
(what it stores, defaults, serves) is judged by the conformance suite's real one."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from eks_gpu_platform.validate import deployment, drift, render
from eks_gpu_platform.validate.controllers import expected_controllers
from eks_gpu_platform.validate.core import Context, Options, Render

from .fake_kube import FakeKube

NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu-spot", "labels": {"eks-gpu-platform.io/pool": "gpu-spot"}},
    "spec": {
        "limits": {"nvidia.com/gpu": 8},
        "template": {
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.k8s.aws",
                    "kind": "EC2NodeClass",
                    "name": "gpu-spot",
                },
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
                ],
                "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            }
        },
    },
}
NODECLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "gpu-spot"},
    "spec": {"amiSelectorTerms": [{"alias": "al2023@v20260903"}], "role": "KarpenterNode"},
}
NETPOL = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": {"name": "default-deny", "namespace": "research-batch"},
    "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
}
HELM = {
    "karpenter": {
        "name": "karpenter",
        "chart": "karpenter",
        "version": "1.14.1",
        "namespace": "kube-system",
        "values": {"replicas": 2},
    }
}


def make_render(manifests=(NODEPOOL, NODECLASS, NETPOL), helm=HELM) -> Render:
    return Render(Path("build/dev"), tuple(copy.deepcopy(list(manifests))), {}, helm, {})


def ready(obj: dict, ami: bool = True) -> dict:
    """The live object as Karpenter leaves it: defaults, status, Ready."""
    live = copy.deepcopy(obj)
    live["metadata"].update({"uid": "u-1", "generation": 1, "resourceVersion": "7"})
    live["metadata"].setdefault("labels", {})["app.kubernetes.io/managed-by"] = "pulumi"
    live["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}]}
    if ami:
        live["status"]["amis"] = [{"id": "ami-0123", "name": "al2023"}]
    return live


def deployment_obj(name: str, namespace: str, replicas: int = 2, available: int = 2) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "generation": 3},
        "spec": {"replicas": replicas},
        "status": {
            "observedGeneration": 3,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": available,
        },
    }


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def context(kube: FakeKube, rendered: Render | None = None, checks=()) -> Context:
    clock = Clock()
    return Context(
        kube=kube,
        render=rendered or make_render(),
        options=Options("dev", checks=tuple(checks)),
        run_id="0a1b2c3d",
        namespace="validate-0a1b2c3d",
        clock=clock,
        sleep=clock.sleep,
    )


def healthy_kube() -> FakeKube:
    return FakeKube(
        [
            ready(NODEPOOL, ami=False),
            ready(NODECLASS),
            ready(NETPOL, ami=False),
            deployment_obj("karpenter", "kube-system"),
        ]
    )


def by_name(results):
    return {r.name: r for r in results}


def test_a_healthy_cluster_passes_every_check_in_order() -> None:
    results = deployment.run(context(healthy_kube()))
    assert [(r.name, r.status, r.reason) for r in results] == [
        ("controllers-ready", "pass", "1 workloads ready"),
        ("crds-served", "pass", "3 kinds served"),
        ("objects-match-render/NodePool", "pass", "1 NodePool objects match the render"),
        ("objects-match-render/EC2NodeClass", "pass", "1 EC2NodeClass objects match the render"),
        ("objects-match-render/NetworkPolicy", "pass", "1 NetworkPolicy objects match the render"),
        ("ec2nodeclasses-ready", "pass", "1 EC2NodeClass objects Ready"),
        ("nodepools-ready", "pass", "1 NodePool objects Ready"),
    ]


def test_a_missing_object_fails_its_kind_with_the_exact_line() -> None:
    kube = healthy_kube()
    kube.delete("networking.k8s.io/v1", "NetworkPolicy", "default-deny", "research-batch")
    result = by_name(deployment.run(context(kube)))["objects-match-render/NetworkPolicy"]
    assert result.status == "fail"
    assert result.reason == "1 of 1 NetworkPolicy objects differ from the render"
    assert result.details == (
        "NetworkPolicy research-batch/default-deny: missing from the cluster",
    )


def test_a_changed_field_fails_with_the_exact_drift_line() -> None:
    kube = healthy_kube()
    live = kube.get("karpenter.sh/v1", "NodePool", "gpu-spot")
    live["spec"]["limits"]["nvidia.com/gpu"] = 16
    live["spec"]["template"]["spec"]["requirements"][0]["values"] = ["spot", "on-demand"]
    kube.put(live)
    result = by_name(deployment.run(context(kube)))["objects-match-render/NodePool"]
    assert result.status == "fail"
    assert result.details == (
        'NodePool gpu-spot: spec.limits["nvidia.com/gpu"]: rendered 8, live 16',
        "NodePool gpu-spot: spec.template.spec.requirements[0].values: "
        'rendered ["spot"], live ["spot", "on-demand"]',
    )


def test_a_removed_field_and_a_removed_label_are_drift() -> None:
    kube = healthy_kube()
    live = kube.get("karpenter.sh/v1", "NodePool", "gpu-spot")
    del live["spec"]["template"]["spec"]["taints"]
    del live["metadata"]["labels"]["eks-gpu-platform.io/pool"]
    kube.put(live)
    assert by_name(deployment.run(context(kube)))["objects-match-render/NodePool"].details == (
        'NodePool gpu-spot: metadata.labels["eks-gpu-platform.io/pool"]: rendered "gpu-spot", '
        "live missing",
        "NodePool gpu-spot: spec.template.spec.taints: rendered "
        '[{"effect": "NoSchedule", "key": "nvidia.com/gpu"}], live missing',
    )


def test_defaults_and_status_the_server_adds_are_not_drift() -> None:
    kube = healthy_kube()
    live = kube.get("karpenter.sh/v1", "NodePool", "gpu-spot")
    # CRD defaults (karpenter.sh_nodepools.yaml: disruption, expireAfter), extra fields in a
    # list item, managed fields, status: none is set by the render.
    live["spec"]["disruption"] = {"consolidateAfter": "0s", "budgets": [{"nodes": "10%"}]}
    live["spec"]["template"]["spec"]["expireAfter"] = "720h"
    live["spec"]["template"]["spec"]["taints"][0]["value"] = ""
    live["metadata"]["managedFields"] = [{"manager": "pulumi-kubernetes"}]
    live["metadata"]["annotations"] = {"karpenter.sh/nodepool-hash": "123"}
    live["status"]["resources"] = {"nodes": "0"}
    # An int-or-string quantity comes back as sent, or as a string.
    live["spec"]["limits"]["nvidia.com/gpu"] = "8"
    kube.put(live)
    assert by_name(deployment.run(context(kube)))["objects-match-render/NodePool"].status == "pass"


def test_lists_of_named_items_match_by_name_not_position() -> None:
    rendered = {"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b"}]}}
    live = {"spec": {"containers": [{"name": "b"}, {"name": "a", "image": "x:2"}]}}
    assert drift.drift(rendered, live) == [("spec.containers[name=a].image", "x:1", "x:2")]


def test_a_secret_the_render_masks_is_not_compared() -> None:
    rendered = {"data": {"token": "[secret]", "user": "a"}}
    assert drift.drift(rendered, {"data": {"token": "czNjcjN0", "user": "b"}}) == [
        ("data.user", "a", "b")
    ]


def test_an_ec2nodeclass_not_ready_or_without_amis_fails() -> None:
    kube = healthy_kube()
    live = kube.get("karpenter.k8s.aws/v1", "EC2NodeClass", "gpu-spot")
    live["status"] = {
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "reason": "AMIsNotFound",
                "message": "AMISelector did not match any AMIs",
            }
        ]
    }
    kube.put(live)
    result = by_name(deployment.run(context(kube)))["ec2nodeclasses-ready"]
    assert (result.status, result.reason) == ("fail", "2 problems in 1 EC2NodeClass objects")
    assert result.details == (
        "EC2NodeClass gpu-spot: Ready=False (AMIsNotFound: AMISelector did not match any AMIs)",
        "EC2NodeClass gpu-spot: status.amis is empty",
    )


def test_a_nodepool_not_ready_fails_after_waiting_the_capped_time() -> None:
    kube = healthy_kube()
    live = kube.get("karpenter.sh/v1", "NodePool", "gpu-spot")
    live["status"] = {}
    kube.put(live)
    ctx = context(kube)
    result = by_name(deployment.run(ctx))["nodepools-ready"]
    assert result.details == ("NodePool gpu-spot: no Ready condition",)
    assert ctx.clock() == deployment.READY_WAIT_S  # waited, then gave up


def test_a_controller_missing_or_not_rolled_out_fails() -> None:
    kube = healthy_kube()
    kube.put(deployment_obj("karpenter", "kube-system", replicas=2, available=1))
    result = by_name(deployment.run(context(kube)))["controllers-ready"]
    assert result.details == (
        "Deployment kube-system/karpenter (karpenter): 1 of 2 updated replicas available",
    )
    kube.delete("apps/v1", "Deployment", "karpenter", "kube-system")
    result = by_name(deployment.run(context(kube)))["controllers-ready"]
    assert result.details == (
        "Deployment kube-system/karpenter (karpenter): missing from the cluster",
    )


def test_a_kind_not_served_fails_crds_served() -> None:
    kube = healthy_kube()
    kube.served_kinds = {("karpenter.sh/v1", "NodePool"), ("networking.k8s.io/v1", "NetworkPolicy")}
    result = by_name(deployment.run(context(kube)))["crds-served"]
    assert (result.status, result.details) == (
        "fail",
        ("karpenter.k8s.aws/v1 EC2NodeClass: not served",),
    )


def test_checks_left_out_by_the_filter_are_not_run() -> None:
    kube = healthy_kube()
    results = deployment.run(context(kube, checks=["objects-match-render/Node*"]))
    assert [r.name for r in results] == ["objects-match-render/NodePool"]
    assert not [c for c in kube.calls if c[0] == "get" and c[2] == "Deployment"]


@pytest.mark.parametrize(
    ("obj", "problem"),
    [
        (
            {
                "kind": "DaemonSet",
                "metadata": {"generation": 2},
                "status": {"observedGeneration": 1},
            },
            "the spec update is not observed yet",
        ),
        (
            {
                "kind": "DaemonSet",
                "status": {"desiredNumberScheduled": 3, "updatedNumberScheduled": 2},
            },
            "2 of 3 pods updated",
        ),
        (
            {
                "kind": "DaemonSet",
                "status": {
                    "desiredNumberScheduled": 3,
                    "updatedNumberScheduled": 3,
                    "numberAvailable": 1,
                },
            },
            "1 of 3 updated pods available",
        ),
        ({"kind": "DaemonSet", "status": {"desiredNumberScheduled": 0}}, None),
        (
            {
                "kind": "Deployment",
                "spec": {"replicas": 2},
                "status": {"replicas": 3, "updatedReplicas": 2, "availableReplicas": 2},
            },
            "1 old replicas pending termination",
        ),
        (
            {
                "kind": "Deployment",
                "spec": {"replicas": 1},
                "status": {
                    "conditions": [{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}]
                },
            },
            "exceeded its progress deadline",
        ),
    ],
)
def test_rollout_problem_follows_kubectl_rollout_status(obj, problem) -> None:
    assert deployment.rollout_problem(obj) == problem


DEV_CONTROLLERS = [
    ("Deployment", "kube-system", "karpenter"),
    ("Deployment", "kai-scheduler", "kai-operator"),
    ("Deployment", "kai-scheduler", "pod-grouper"),
    ("Deployment", "kai-scheduler", "binder"),
    ("Deployment", "kai-scheduler", "queue-controller"),
    ("Deployment", "kai-scheduler", "podgroup-controller"),
    ("Deployment", "kai-scheduler", "node-scale-adjuster"),
    ("Deployment", "kai-scheduler", "admission"),
    ("Deployment", "kai-scheduler", "kai-scheduler-default"),
    ("Deployment", "gpu-operator", "gpu-operator"),
    ("Deployment", "gpu-operator", "gpu-operator-node-feature-discovery-master"),
    ("Deployment", "gpu-operator", "gpu-operator-node-feature-discovery-gc"),
    ("DaemonSet", "gpu-operator", "gpu-operator-node-feature-discovery-worker"),
]


def test_expected_controllers_of_dev(render_dir) -> None:
    controllers = expected_controllers(render.load("dev", render_dir("dev")))
    assert [(c.kind, c.namespace, c.name) for c in controllers] == DEV_CONTROLLERS


def test_expected_controllers_of_prod_add_the_efa_device_plugin(render_dir) -> None:
    controllers = expected_controllers(render.load("prod", render_dir("prod")))
    assert [(c.kind, c.namespace, c.name) for c in controllers] == [
        *DEV_CONTROLLERS,
        ("DaemonSet", "kube-system", "aws-efa-k8s-device-plugin"),
    ]


def test_expected_controllers_follow_the_chart_values_and_manifests() -> None:
    helm = {
        "ctl": {"name": "ctl", "chart": "karpenter", "namespace": "karpenter"},
        "kai": {
            "name": "kai",
            "chart": "kai-scheduler",
            "namespace": "kai",
            "values": {"binder": {"enabled": False}, "defaultShard": {"enabled": False}},
        },
        "gpu": {
            "name": "gpu",
            "chart": "gpu-operator",
            "namespace": "gpu",
            "values": {"nfd": {"enabled": False}},
        },
        "efa": {
            "name": "efa",
            "chart": "aws-efa-k8s-device-plugin",
            "namespace": "kube-system",
            "values": {"fullnameOverride": "efa-plugin"},
        },
    }
    mig = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "eks-gpu-platform-mig-ready", "namespace": "gpu-operator"},
    }
    controllers = expected_controllers(make_render([mig], helm))
    assert [c.ref for c in controllers] == [
        "Deployment karpenter/ctl-karpenter",
        "Deployment kai/kai-operator",
        "Deployment kai/pod-grouper",
        "Deployment kai/queue-controller",
        "Deployment kai/podgroup-controller",
        "Deployment kai/admission",
        "Deployment gpu/gpu-operator",
        "DaemonSet kube-system/efa-plugin",
        "DaemonSet gpu-operator/eks-gpu-platform-mig-ready",
    ]


def test_the_dev_render_applied_as_is_passes_its_object_checks(render_dir) -> None:
    loaded = render.load("dev", render_dir("dev"))
    kube = FakeKube([ready(m, ami=True) for m in loaded.manifests])
    results = deployment.run(context(kube, loaded, checks=["objects-match-render/*"]))
    # One check per rendered kind: 12 with the queue namespaces' ResourceQuotas (issue 29).
    assert len(results) == 12
    assert {r.status for r in results} == {"pass"}


def test_planned_is_empty_the_phase_only_reads() -> None:
    kube = healthy_kube()
    assert deployment.planned(context(kube)) == []
    deployment.run(context(kube))
    assert not [c for c in kube.calls if c[0] in ("create", "delete")]
