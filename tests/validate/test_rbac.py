"""The validation's least-privilege ClusterRole (issue 29, point 8): the exact role for the dev
render, the printed manifests, and every API call the validation made in this test process
(``fake_kube.JOURNAL``: the calls of the phases' and the runner's own code, whatever test drove
them) allowed by the role. The call -> (verb, API group, resource) mapping below is this test's
own table (an independent oracle), not the code's."""

from __future__ import annotations

import io
import subprocess
import sys
from contextlib import redirect_stdout

import yaml

from eks_gpu_platform.validate import rbac, render, runner

from . import fake_kube
from .fake_kube import FakeKube
from .phase_helpers import QUEUE_NAMESPACE, make_ctx

# kind -> (API group, resource), written from the Kubernetes API reference and the CRDs.
RESOURCES = {
    "Namespace": ("", "namespaces"),
    "ConfigMap": ("", "configmaps"),
    "ServiceAccount": ("", "serviceaccounts"),
    "Pod": ("", "pods"),
    "Node": ("", "nodes"),
    "Event": ("", "events"),
    "ResourceQuota": ("", "resourcequotas"),
    "Job": ("batch", "jobs"),
    "Deployment": ("apps", "deployments"),
    "DaemonSet": ("apps", "daemonsets"),
    "ReplicaSet": ("apps", "replicasets"),
    "StatefulSet": ("apps", "statefulsets"),
    "PodGroup": ("scheduling.run.ai", "podgroups"),
    "Queue": ("scheduling.run.ai", "queues"),
    "MPIJob": ("kubeflow.org", "mpijobs"),
    "NodeClaim": ("karpenter.sh", "nodeclaims"),
    "NodePool": ("karpenter.sh", "nodepools"),
    "NodeOverlay": ("karpenter.sh", "nodeoverlays"),
    "EC2NodeClass": ("karpenter.k8s.aws", "ec2nodeclasses"),
    "PriorityClass": ("scheduling.k8s.io", "priorityclasses"),
    "NetworkPolicy": ("networking.k8s.io", "networkpolicies"),
    "ValidatingAdmissionPolicy": ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
    "ValidatingAdmissionPolicyBinding": (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
    ),
    "MutatingAdmissionPolicy": ("admissionregistration.k8s.io", "mutatingadmissionpolicies"),
    "MutatingAdmissionPolicyBinding": (
        "admissionregistration.k8s.io",
        "mutatingadmissionpolicybindings",
    ),
}


# deployment.py's functions that read each rendered object by its kind.
RENDERED_READERS = ("check_objects", "problems")


def permission(call: tuple) -> tuple[str, str, str] | None:
    """(verb, group, resource) of a recorded call; None for discovery (``served``)."""
    op = call[0]
    if op == "served":
        return None
    if op == "logs":
        return ("get", "", "pods/log")
    if op == "create":
        (_, kind, _, _), _dry_run = call[1], call[2]
        return ("create", *RESOURCES[kind])
    _, _, kind, *_ = call
    return (op, *RESOURCES[kind])


def dev_role(render_dir) -> dict:
    return rbac.cluster_role(render.load("dev", render_dir("dev")).manifests)


def test_the_dev_role_is_exactly_this(render_dir):
    assert dev_role(render_dir) == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": "eks-gpu-platform-validate",
            "labels": {"app.kubernetes.io/managed-by": "eks-gpu-platform"},
        },
        "rules": [
            {"apiGroups": [""], "resources": ["events"], "verbs": ["list"]},
            {
                "apiGroups": [""],
                "resources": ["namespaces", "pods"],
                "verbs": ["get", "list", "create", "delete"],
            },
            # nodes: list too, for the DaemonSets with no pod (validate/daemonsets.py).
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
            {"apiGroups": [""], "resources": ["pods/log", "resourcequotas"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["create", "delete"]},
            {
                "apiGroups": ["admissionregistration.k8s.io"],
                "resources": [
                    "mutatingadmissionpolicies",
                    "mutatingadmissionpolicybindings",
                    "validatingadmissionpolicies",
                    "validatingadmissionpolicybindings",
                ],
                "verbs": ["get"],
            },
            {
                "apiGroups": ["apps"],
                "resources": ["daemonsets", "deployments", "replicasets", "statefulsets"],
                "verbs": ["get"],
            },
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "create", "delete"]},
            {"apiGroups": ["karpenter.k8s.aws"], "resources": ["ec2nodeclasses"], "verbs": ["get"]},
            {
                "apiGroups": ["karpenter.sh"],
                "resources": ["nodeclaims"],
                "verbs": ["get", "list", "delete"],
            },
            {
                "apiGroups": ["karpenter.sh"],
                "resources": ["nodeoverlays", "nodepools"],
                "verbs": ["get"],
            },
            {
                "apiGroups": ["kubeflow.org"],
                "resources": ["mpijobs"],
                "verbs": ["create", "delete"],
            },
            {
                "apiGroups": ["networking.k8s.io"],
                "resources": ["networkpolicies"],
                "verbs": ["get"],
            },
            {
                "apiGroups": ["scheduling.k8s.io"],
                "resources": ["priorityclasses"],
                "verbs": ["get"],
            },
            {
                "apiGroups": ["scheduling.run.ai"],
                "resources": ["podgroups"],
                "verbs": ["get", "create", "delete"],
            },
            {"apiGroups": ["scheduling.run.ai"], "resources": ["queues"], "verbs": ["get"]},
        ],
    }


def test_the_command_prints_the_role_and_its_binding(render_dir):
    out = io.StringIO()
    with redirect_stdout(out):
        code = rbac.main(["--stack", "dev", "--render", str(render_dir("dev")), "--group", "ci"])
    role, binding = yaml.safe_load_all(out.getvalue())
    assert code == 0
    assert role == dev_role(render_dir)
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": "eks-gpu-platform-validate",
            "labels": {"app.kubernetes.io/managed-by": "eks-gpu-platform"},
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "eks-gpu-platform-validate",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "ci"}],
    }


def test_a_missing_render_exits_2(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "eks_gpu_platform.validate.rbac",
            "--stack",
            "x",
            "--render",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"error: no render at {tmp_path}: run `make render STACK=x` first\n"


def _drive_the_validation() -> None:
    """Some of the validation's own calls, so this test is not vacuous when run alone: the
    pre-flight (list, delete, create namespaces), the security phase (dry-run pods, a queue
    namespace's labels) and the clean-up."""
    old_run = {
        "app.kubernetes.io/managed-by": "eks-gpu-platform-validate",
        "eks-gpu-platform.validate/run": "old",
    }
    kube = FakeKube(
        [
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "validate-old", "labels": old_run},
            }
        ]
    )
    ctx = make_ctx(kube, [QUEUE_NAMESPACE])
    runner.run(ctx, runner.load_phases(["security"]), delete_leftovers=True, install_signals=False)


def test_every_call_the_validation_made_is_allowed_by_its_role(render_dir):
    """Runs last in the session (conftest.py orders it): the journal then holds the calls of
    every phase test of this process, as well as those driven here."""
    _drive_the_validation()
    role = dev_role(render_dir)
    created = {permission(call)[1:] for call, _ in fake_kube.JOURNAL if call[0] == "create"}
    denied, seen = [], set()
    for call, (module, function) in fake_kube.JOURNAL:
        needed = permission(call)
        if needed is None:
            continue
        if module.endswith(".core") and function == "cleanup" and needed[1:] not in created:
            continue  # the clean-up of a test's stand-in phase's objects
        if module.endswith(".deployment") and function in RENDERED_READERS:
            # Reads of the rendered kinds: allowed by the role of the render the test used.
            _, api_version, kind, *_ = call
            rendered = rbac.cluster_role([{"apiVersion": api_version, "kind": kind}])
            if not rbac.allows(rendered, *needed):
                denied.append((needed, module, function))
            continue
        seen.add(needed)
        if not rbac.allows(role, *needed):
            denied.append((needed, module, function))
    assert denied == []
    assert {
        ("list", "", "namespaces"),
        ("delete", "", "namespaces"),
        ("create", "", "namespaces"),
        ("create", "", "pods"),
    } <= seen
