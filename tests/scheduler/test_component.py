"""Tests for ``eks_gpu_platform.scheduler.component``: the KaiScheduler component under mocks."""

import re

import pulumi
import pulumi_kubernetes as k8s
import pytest
from render_cache import cached

from eks_gpu_platform import versions
from eks_gpu_platform.scheduler.component import KaiScheduler, KaiSchedulerArgs
from eks_gpu_platform.scheduler.disruption_policies import disruption_admission_policy
from eks_gpu_platform.scheduler.manifests import queue_manifest
from eks_gpu_platform.scheduler.spec import SchedulerSpec
from eks_gpu_platform.scheduler.values import kai_values

from .helpers import POOL_LABEL, SYSTEM_SELECTOR, SYSTEM_TOLERATIONS, queue

# --- component ---------------------------------------------------------------------------------

TYPE = "eks-gpu-platform:index:KaiScheduler"
QUEUE_TYPE = "kubernetes:scheduling.run.ai/v2:Queue"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
PRIORITY_TYPE = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
ADMISSION = "kubernetes:admissionregistration.k8s.io/v1:"
NETPOL_TYPE = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
PSS = "pod-security.kubernetes.io/"
# KAI's namespaces: enforce baseline, audit and warn restricted, pinned to the cluster's minor.
KAI_NAMESPACE_LABELS = {
    f"{PSS}enforce": "baseline",
    f"{PSS}enforce-version": "v1.36",
    f"{PSS}audit": "restricted",
    f"{PSS}audit-version": "v1.36",
    f"{PSS}warn": "restricted",
    f"{PSS}warn-version": "v1.36",
}

SPEC = SchedulerSpec(
    queues=(
        queue("team-a", parent="org", pools=("gpu-spot",)),
        queue("org"),
        queue("inference", pools=("gpu-od",), gpu=(8, 8)),
    )
)


def make_scheduler(
    version: str = "1.36", policy: bool = True, label: str = POOL_LABEL, guardrails: bool = True
):
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        operator = k8s.core.v1.ConfigMap("operator", opts=pulumi.ResourceOptions(provider=provider))
        KaiScheduler(
            "kai",
            KaiSchedulerArgs(
                spec=SPEC,
                k8s_provider=provider,
                kubernetes_version=version,
                pool_label_key=label,
                system_node_selector=SYSTEM_SELECTOR,
                system_tolerations=SYSTEM_TOLERATIONS,
                disruption_policy=policy,
                tenant_guardrails=guardrails,
                depends_on=[operator],
            ),
        )

    return program


def scheduler_recording(
    run_program,
    version: str = "1.36",
    policy: bool = True,
    label: str = POOL_LABEL,
    guardrails: bool = True,
):
    """``run_program(make_scheduler(...))``, run once per test process for the same arguments
    (``render_cache.cached``: afresh when a test has patched the package since); the tests
    share the recording and must not change it."""
    key = ("tests/scheduler/test_component.py make_scheduler", version, policy, label, guardrails)
    return cached(key, lambda: run_program(make_scheduler(version, policy, label, guardrails)))


def children(recording):
    component = next(r for r in recording.resources if r.type == TYPE)
    return component, recording.children_of(component.urn)


def test_component_children(run_program):
    recording = scheduler_recording(run_program)
    component, kids = children(recording)
    assert sorted((r.type, r.name) for r in kids) == sorted(
        [
            (NAMESPACE_TYPE, "kai-namespace"),
            (RELEASE_TYPE, "kai-chart"),
            (PRIORITY_TYPE, "kai-priority-train"),
            (PRIORITY_TYPE, "kai-priority-build-preemptible"),
            (PRIORITY_TYPE, "kai-priority-build"),
            (PRIORITY_TYPE, "kai-priority-inference"),
            (QUEUE_TYPE, "kai-queue-org"),
            (QUEUE_TYPE, "kai-queue-team-a"),
            (QUEUE_TYPE, "kai-queue-inference"),
            (ADMISSION + "MutatingAdmissionPolicy", "kai-disruption-policy"),
            (ADMISSION + "MutatingAdmissionPolicyBinding", "kai-disruption-policy-binding"),
            (ADMISSION + "MutatingAdmissionPolicy", "kai-disruption-policy-workloads"),
            (
                ADMISSION + "MutatingAdmissionPolicyBinding",
                "kai-disruption-policy-workloads-binding",
            ),
            (ADMISSION + "MutatingAdmissionPolicy", "kai-disruption-policy-cronjobs"),
            (
                ADMISSION + "MutatingAdmissionPolicyBinding",
                "kai-disruption-policy-cronjobs-binding",
            ),
            (ADMISSION + "MutatingAdmissionPolicy", "kai-disruption-policy-mpijobs"),
            (
                ADMISSION + "MutatingAdmissionPolicyBinding",
                "kai-disruption-policy-mpijobs-binding",
            ),
            (NAMESPACE_TYPE, "kai-queue-namespace-team-a"),
            (NAMESPACE_TYPE, "kai-queue-namespace-inference"),
            (ADMISSION + "ValidatingAdmissionPolicy", "kai-tenant-tolerations-policy"),
            (ADMISSION + "ValidatingAdmissionPolicyBinding", "kai-tenant-tolerations-binding"),
            (ADMISSION + "MutatingAdmissionPolicy", "kai-platform-tenant-queue-label-policy"),
            (
                ADMISSION + "MutatingAdmissionPolicyBinding",
                "kai-platform-tenant-queue-label-binding",
            ),
            (ADMISSION + "ValidatingAdmissionPolicy", "kai-platform-tenant-queue-policy"),
            (ADMISSION + "ValidatingAdmissionPolicyBinding", "kai-platform-tenant-queue-binding"),
            (ADMISSION + "ValidatingAdmissionPolicy", "kai-platform-tenant-pods-policy"),
            (ADMISSION + "ValidatingAdmissionPolicyBinding", "kai-platform-tenant-pods-binding"),
            (NETPOL_TYPE, "kai-netpol-team-a-default-deny"),
            (NETPOL_TYPE, "kai-netpol-team-a-allow-dns"),
            (NETPOL_TYPE, "kai-netpol-inference-default-deny"),
            (NETPOL_TYPE, "kai-netpol-inference-allow-dns"),
        ]
    )
    provider = next(r for r in recording.resources if r.name == "k8s")
    assert all(r.provider.startswith(provider.urn) for r in kids)
    assert component.registered_outputs == {
        "namespace": "kai-scheduler",
        "release_name": "kai-scheduler",
        "queue_names": ["team-a", "org", "inference"],
    }


def test_component_release(run_program):
    recording = scheduler_recording(run_program)
    _, kids = children(recording)
    release = next(r for r in kids if r.type == RELEASE_TYPE)
    # By name: the queue namespaces are Namespaces too, and registrations reach the monitor in
    # the order their asyncio tasks finish preparing (this one waits for its depends_on), not
    # in source order, so "the first Namespace" was sometimes kai-queue-namespace-team-a.
    (namespace,) = [r for r in kids if r.type == NAMESPACE_TYPE and r.name == "kai-namespace"]
    operator = next(r for r in recording.resources if r.name == "operator")
    assert namespace.inputs["metadata"] == {
        "name": "kai-scheduler",
        "labels": KAI_NAMESPACE_LABELS,
    }
    assert operator.urn in namespace.dependencies
    assert {namespace.urn, operator.urn} <= set(release.dependencies)
    inputs = release.inputs
    assert inputs["name"] == "kai-scheduler"
    assert inputs["chart"] == "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler"
    assert inputs["version"] == versions.KAI_SCHEDULER.version == "v0.17.0"
    assert inputs["namespace"] == "kai-scheduler"
    assert "repositoryOpts" not in inputs
    assert inputs["values"] == kai_values(
        spec=SPEC,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        pool_label_key=POOL_LABEL,
        system_namespace_labels=KAI_NAMESPACE_LABELS,
    )
    assert inputs["values"]["global"]["resourceReservation"] == {
        "namespaceLabels": KAI_NAMESPACE_LABELS
    }
    assert inputs["values"]["nodescaleadjuster"] == {"labels": KAI_NAMESPACE_LABELS}


def test_component_tenant_guardrails(run_program):
    recording = scheduler_recording(run_program)
    _, kids = children(recording)
    by_name = {r.name: r for r in kids}
    policy = by_name["kai-tenant-tolerations-policy"]
    binding = by_name["kai-tenant-tolerations-binding"]
    assert policy.inputs["metadata"] == {"name": "platform-tenant-tolerations"}
    assert policy.inputs["spec"]["validations"][0]["expression"] == (
        "!has(object.spec.tolerations) || !object.spec.tolerations.exists(t, "
        "has(t.key) && t.key in ['CriticalAddonsOnly'])"
    )
    assert binding.inputs["spec"]["policyName"] == "platform-tenant-tolerations"
    assert binding.inputs["spec"]["validationActions"] == ["Deny"]
    assert policy.urn in binding.dependencies
    namespace = by_name["kai-queue-namespace-team-a"]
    deny = by_name["kai-netpol-team-a-default-deny"]
    assert deny.inputs["metadata"] == {"name": "default-deny", "namespace": "team-a"}
    assert deny.inputs["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert namespace.urn in deny.dependencies
    dns = by_name["kai-netpol-inference-allow-dns"]
    assert dns.inputs["metadata"] == {"name": "allow-dns", "namespace": "inference"}
    assert dns.inputs["spec"]["egress"][0]["ports"] == [
        {"protocol": "UDP", "port": 53},
        {"protocol": "TCP", "port": 53},
    ]
    assert by_name["kai-queue-namespace-inference"].urn in dns.dependencies


def test_component_without_tenant_guardrails(run_program):
    recording = scheduler_recording(run_program, guardrails=False)
    _, kids = children(recording)
    assert not [r for r in kids if r.type == NETPOL_TYPE or "tenant" in r.name]


def test_component_queues_after_the_release_and_their_parents(run_program):
    recording = scheduler_recording(run_program)
    _, kids = children(recording)
    release = next(r for r in kids if r.type == RELEASE_TYPE)
    queues = {r.name: r for r in kids if r.type == QUEUE_TYPE}
    assert sorted(queues) == ["kai-queue-inference", "kai-queue-org", "kai-queue-team-a"]
    for spec in SPEC.queues:
        registered = queues[f"kai-queue-{spec.name}"]
        manifest = queue_manifest(spec, label_domain="eks-gpu-platform.io")
        assert registered.inputs["apiVersion"] == "scheduling.run.ai/v2"
        assert registered.inputs["kind"] == "Queue"
        assert registered.inputs["metadata"] == manifest["metadata"]
        assert registered.inputs["spec"] == manifest["spec"]
        assert release.urn in registered.dependencies
    assert queues["kai-queue-org"].urn in queues["kai-queue-team-a"].dependencies


def test_component_priority_classes(run_program):
    recording = scheduler_recording(run_program)
    _, kids = children(recording)
    classes = {
        r.inputs["metadata"]["name"]: r.inputs["value"] for r in kids if r.type == PRIORITY_TYPE
    }
    assert classes == {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}


@pytest.mark.parametrize(
    ("version", "policy", "expected"),
    [
        ("1.36", True, ["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"] * 4),
        ("1.35", True, ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"] * 4),
        ("1.36", False, []),
    ],
)
def test_component_admission_policy(run_program, version, policy, expected):
    recording = scheduler_recording(run_program, version, policy)
    _, kids = children(recording)
    admission = [
        r
        for r in kids
        if r.type.startswith(ADMISSION)
        and "tenant-tolerations" not in r.name
        and "platform-tenant-" not in r.name
    ]
    assert [r.type.removeprefix(ADMISSION) for r in admission] == expected
    manifests = (
        disruption_admission_policy(kubernetes_version=version, label_domain="eks-gpu-platform.io")
        if policy
        else []
    )
    for registered, manifest in zip(admission, manifests, strict=True):
        assert registered.inputs["metadata"] == manifest["metadata"]
        assert registered.inputs["spec"] == manifest["spec"]
    if admission:
        assert admission[0].urn in admission[1].dependencies


def test_component_queue_namespaces(run_program):
    recording = scheduler_recording(run_program)
    _, kids = children(recording)
    operator = next(r for r in recording.resources if r.name == "operator")
    namespaces = {r.name: r for r in kids if r.name.startswith("kai-queue-namespace-")}
    labels = {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.36",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "v1.36",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "v1.36",
    }
    assert {n: r.inputs["metadata"] for n, r in namespaces.items()} == {
        f"kai-queue-namespace-{q}": {
            "name": q,
            "labels": {**labels, "eks-gpu-platform.io/queue": q},
        }
        for q in ("team-a", "inference")
    }
    for registered in namespaces.values():
        assert operator.urn in registered.dependencies


def test_component_rejects_the_shard_key_before_registering(run_program):
    with pytest.raises(Exception, match=re.escape("is KAI's scheduling-shard key")):
        run_program(make_scheduler(label="kai.scheduler/node-pool"))


def test_leaf_queue_records_its_node_pools_for_the_policy_pack():
    leaf = next(q for q in SPEC.queues if q.node_pools)
    parent = next(q for q in SPEC.queues if not q.node_pools)
    assert queue_manifest(leaf, label_domain="example.com")["metadata"] == {
        "name": leaf.name,
        "annotations": {"example.com/node-pools": ",".join(leaf.node_pools)},
    }
    assert queue_manifest(parent, label_domain="example.com")["metadata"] == {"name": parent.name}
