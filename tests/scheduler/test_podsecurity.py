"""Tests for ``eks_gpu_platform.scheduler.podsecurity`` (security contexts, Pod Security labels,
``WorkloadTemplate``), the Pod Security Standards checker in ``tests/pod_security.py`` (each
control fails where the standard says it must, and the documented exceptions hold), and the
per-queue namespace setting ``scheduler.queues[].namespace``.
"""

import copy
import re

import pytest
from pod_security import violations

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.scheduler.podsecurity import (
    WorkloadTemplate,
    namespace_manifest,
    pod_security_labels,
    restricted_container_security_context,
    restricted_pod_security_context,
    weakest_level,
)
from eks_gpu_platform.scheduler.spec import SchedulerSpec
from eks_gpu_platform.spec import SpecError, load_spec

from .test_spec import raw_queue

# --- builders ------------------------------------------------------------------------------------


def test_pod_security_labels_enforce_the_level_and_warn_at_restricted():
    assert pod_security_labels("baseline", "1.35") == {
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": "v1.35",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "v1.35",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "v1.35",
    }
    assert pod_security_labels("privileged", "1.36")["pod-security.kubernetes.io/enforce"] == (
        "privileged"
    )
    with pytest.raises(
        ValueError,
        match=re.escape("level 'root' is not one of privileged, baseline, restricted"),
    ):
        pod_security_labels("root", "1.36")


def test_namespace_manifest():
    assert namespace_manifest("research", "restricted", "1.36") == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "research", "labels": pod_security_labels("restricted", "1.36")},
    }


def test_weakest_level():
    assert weakest_level(["restricted", "baseline", "restricted"]) == "baseline"
    assert weakest_level(["restricted"]) == "restricted"


def test_workload_template_header():
    template = WorkloadTemplate(
        documents=({"kind": "Pod"},), pod_security="baseline", reason="sshd", notes=("a", "")
    )
    assert template.header == ("# pod-security: baseline - sshd", "# a", "#")
    assert WorkloadTemplate(documents=()).header == ("# pod-security: restricted",)
    assert template.kind("Pod") == {"kind": "Pod"}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"pod_security": "baseline"}, "a reason is required below restricted, and only there"),
        ({"reason": "why"}, "a reason is required below restricted, and only there"),
        ({"pod_security": "privileged", "reason": "x"}, "pod_security 'privileged' is not one"),
    ],
)
def test_workload_template_rejects(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        WorkloadTemplate(documents=(), **fields)


# --- the checker -------------------------------------------------------------------------------


def restricted_pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "securityContext": restricted_pod_security_context(),
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "securityContext": restricted_container_security_context(),
                }
            ],
        },
    }


def test_the_restricted_contexts_pass_restricted():
    assert violations(restricted_pod(), "restricted") == []


def test_a_default_pod_passes_baseline_and_fails_restricted():
    pod = {"kind": "Pod", "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert violations(pod, "baseline") == []
    assert violations(pod, "restricted") == [
        "spec.containers[0].securityContext.runAsNonRoot: Running as Non-root: must be true",
        "spec.containers[0].securityContext.allowPrivilegeEscalation: Privilege Escalation: "
        "must be false",
        "spec.containers[0].securityContext.seccompProfile.type: Seccomp: must be RuntimeDefault "
        "or Localhost",
        "spec.containers[0].securityContext.capabilities.drop: Capabilities: must include ALL",
    ]


def changed(path: str, value) -> dict:
    pod = restricted_pod()
    target = pod
    *parents, last = path.split(".")
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    target[last] = value
    return pod


C = "spec.containers[0]"


@pytest.mark.parametrize(
    ("path", "value", "level", "expected"),
    [
        ("spec.hostNetwork", True, "baseline", "spec.hostNetwork: Host Namespaces"),
        ("spec.hostPID", True, "baseline", "spec.hostPID: Host Namespaces"),
        (
            "spec.volumes",
            [{"name": "h", "hostPath": {"path": "/"}}],
            "baseline",
            "spec.volumes[0].hostPath: HostPath Volumes are forbidden",
        ),
        (
            "spec.containers.0.securityContext.privileged",
            True,
            "baseline",
            f"{C}.securityContext.privileged: Privileged Containers are forbidden",
        ),
        (
            "spec.containers.0.securityContext.capabilities.add",
            ["SYS_ADMIN", "IPC_LOCK"],
            "baseline",
            f"{C}.securityContext.capabilities.add: Capabilities: IPC_LOCK, SYS_ADMIN not allowed",
        ),
        (
            "spec.containers.0.ports",
            [{"containerPort": 80, "hostPort": 80}],
            "baseline",
            f"{C}.ports[0].hostPort: Host Ports: must be unset or 0",
        ),
        (
            "spec.containers.0.livenessProbe",
            {"httpGet": {"host": "10.0.0.1", "port": 80}},
            "baseline",
            f"{C}.livenessProbe: Host Probes: host must be unset",
        ),
        (
            "spec.securityContext.seccompProfile",
            {"type": "Unconfined"},
            "baseline",
            "spec.securityContext.seccompProfile.type: Seccomp: Unconfined is forbidden",
        ),
        (
            "spec.securityContext.sysctls",
            [{"name": "kernel.msgmax", "value": "1"}],
            "baseline",
            "spec.securityContext.sysctls: Sysctls: 'kernel.msgmax' is unsafe",
        ),
        (
            "spec.containers.0.securityContext.procMount",
            "Unmasked",
            "baseline",
            f"{C}.securityContext.procMount: /proc Mount Type: must be Default",
        ),
        (
            "spec.containers.0.securityContext.seLinuxOptions",
            {"type": "spc_t"},
            "baseline",
            f"{C}.securityContext.seLinuxOptions.type: SELinux: 'spc_t' is forbidden",
        ),
        (
            "spec.volumes",
            [{"name": "n", "nfs": {"server": "s", "path": "/"}}],
            "restricted",
            "spec.volumes[0]: Volume Types: nfs not allowed",
        ),
        (
            "spec.containers.0.securityContext.allowPrivilegeEscalation",
            True,
            "restricted",
            f"{C}.securityContext.allowPrivilegeEscalation: Privilege Escalation: must be false",
        ),
        (
            "spec.securityContext.runAsUser",
            0,
            "restricted",
            "spec.securityContext.runAsUser: Running as Non-root user: must not be 0",
        ),
        (
            "spec.containers.0.securityContext.runAsNonRoot",
            False,
            "restricted",
            f"{C}.securityContext.runAsNonRoot: Running as Non-root: must be true",
        ),
        (
            "spec.containers.0.securityContext.capabilities",
            {"drop": ["NET_RAW"]},
            "restricted",
            f"{C}.securityContext.capabilities.drop: Capabilities: must include ALL",
        ),
        (
            "spec.containers.0.securityContext.capabilities.add",
            ["CHOWN"],
            "restricted",
            f"{C}.securityContext.capabilities.add: Capabilities: CHOWN not allowed",
        ),
    ],
)
def test_the_checker_catches(path, value, level, expected):
    found = violations(changed(path, value), level)
    assert len(found) == 1 and found[0].startswith(expected), found
    if level == "restricted":
        assert violations(changed(path, value), "baseline") == []


def test_documented_exceptions():
    # Container-level runAsNonRoot and seccompProfile may be unset when the pod level sets them.
    pod = restricted_pod()
    del pod["spec"]["containers"][0]["securityContext"]["runAsNonRoot"]
    del pod["spec"]["containers"][0]["securityContext"]["seccompProfile"]
    assert violations(pod, "restricted") == []
    # Windows pods are exempt from Privilege Escalation, Seccomp and Capabilities.
    windows = {
        "kind": "Pod",
        "spec": {
            "os": {"name": "windows"},
            "securityContext": {"runAsNonRoot": True},
            "containers": [{"name": "c", "image": "i"}],
        },
    }
    assert violations(windows, "restricted") == []
    linux = copy.deepcopy(windows)
    linux["spec"]["os"]["name"] = "linux"
    assert len(violations(linux, "restricted")) == 3


def test_workload_pod_templates_are_checked():
    job = {
        "kind": "MPIJob",
        "spec": {
            "mpiReplicaSpecs": {
                "Worker": {"template": {"spec": {"hostIPC": True, "containers": []}}}
            }
        },
    }
    assert violations(job, "baseline") == [
        "spec.mpiReplicaSpecs.Worker.template.spec.hostIPC: Host Namespaces: must be unset or false"
    ]
    deployment = {"kind": "Deployment", "spec": {"template": restricted_pod()}}
    assert violations(deployment, "restricted") == []
    assert violations({"kind": "Service", "spec": {}}, "restricted") == []


# --- scheduler.queues[].namespace ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        (
            "Team_A",
            "scheduler.queues[0](team-a).namespace: 'Team_A' is not a namespace name; "
            "expected 1-63 lowercase letters, digits or '-', starting and ending with a letter "
            "or digit",
        ),
        (
            "default",
            "scheduler.queues[0](team-a).namespace: 'default' is reserved; workloads need a "
            "namespace of their own whose labels enforce Pod Security (default: the queue's "
            "name)",
        ),
        (
            "kai-scheduler",
            "scheduler.queues[0](team-a).namespace: 'kai-scheduler' is reserved;",
        ),
    ],
)
def test_queue_namespace_rejects(namespace, message):
    raw = {"queues": [raw_queue("team-a", namespace=namespace)]}
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(SchedulerSpec, raw, "scheduler")


def test_queue_namespace_defaults_to_the_queue_name():
    spec = load_spec(
        SchedulerSpec,
        {"queues": [raw_queue("team-a"), raw_queue("team-b", namespace="ml-b")]},
        "scheduler",
    )
    assert [q.workload_namespace for q in spec.queues] == ["team-a", "ml-b"]


def test_configured_namespace_is_used_by_the_templates():
    config = PlatformConfig.load(
        {
            "cluster": {"name": "gpu-test"},
            "nodePools": [
                {"name": "spot", "gpus": ["l4"], "capacityTypes": ["spot"], "preemptible": True}
            ],
            "scheduler": {"queues": [raw_queue("team-a", pools=("spot",), namespace="ml")]},
        },
        "us-east-1",
    )
    examples = example_workloads(config)
    assert sorted(examples) == ["training-team-a"]  # a preemptible pool: training
    for template in examples.values():
        assert {
            d["metadata"].get("namespace", d["metadata"]["name"]) for d in template.documents
        } == {"ml"}
