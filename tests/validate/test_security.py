"""The security phase on FakeKube: exact pod specs and exact results. The admission behaviour
here (KAI's deviceaccess webhook, the toleration policy, Pod Security) is written into the fake
from its cited source; the real API server judges the same checks in the conformance suite."""

from __future__ import annotations

import pytest
from pod_security import RESTRICTED_CONTAINER, RESTRICTED_POD

from eks_gpu_platform.validate import security
from eks_gpu_platform.validate.core import Planned, Result

from .fake_kube import FakeKube
from .phase_helpers import (
    EVERY_TAINT_MESSAGE,
    NAMESPACE,
    PSA,
    QUEUE,
    QUEUE_NAMESPACE,
    RUN_NAMESPACE,
    TOLERATION_MESSAGE,
    TOLERATION_POLICY,
    make_ctx,
)

MANAGED = {
    "app.kubernetes.io/managed-by": "eks-gpu-platform-validate",
    "eks-gpu-platform.validate/run": "r1",
}
# kai-scheduler v0.16.8 pkg/admission/webhook/v1alpha2/deviceaccess/device_access.go L146-150,
# behind the API server's prefix (k8s.io/apiserver v0.36.3 pkg/admission/plugin/webhook/errors/
# statuserror.go L29, L47) naming KAI's webhook, "<service>.<namespace>.svc" (kai-scheduler
# v0.16.8 pkg/operator/operands/admission/resources.go L28, L339, L361-363).
KAI_DENIAL = (
    'admission webhook "admission.kai-scheduler.svc" denied the request: container probe has an '
    "environment variable NVIDIA_VISIBLE_DEVICES defined with a value of all. This is forbidden "
    "due to conflicts with Nvidia's device plugin. The only values that are allowed are 'void' "
    "or 'none'"
)
PSA_DENIAL = (
    'pods "validate-r1-privileged" is forbidden: violates PodSecurity "restricted:v1.36": '
    'privileged (container "probe" must not set securityContext.privileged=true), '
    'allowPrivilegeEscalation != false (container "probe" must set '
    "securityContext.allowPrivilegeEscalation=false)"
)


def _requests_gpu(container: dict) -> bool:
    return "nvidia.com/gpu" in container.get("resources", {}).get("requests", {})


def kai_deny(obj: dict) -> str | None:
    """KAI's validating webhook after its mutating one (device_access.go L30-78)."""
    if obj["kind"] != "Pod" or obj["spec"].get("schedulerName") != "kai-scheduler":
        return None
    for c in obj["spec"]["containers"]:
        for env in c.get("env", []):
            named = env["name"] == "NVIDIA_VISIBLE_DEVICES"
            if named and _requests_gpu(c) and env["value"] not in ("void", "none"):
                return KAI_DENIAL
    return None


def kai_mutate(obj: dict) -> dict:
    if obj["kind"] == "Pod" and obj["spec"].get("schedulerName") == "kai-scheduler":
        for c in obj["spec"]["containers"]:
            if not _requests_gpu(c):
                envs = [e for e in c.get("env", []) if e["name"] != "NVIDIA_VISIBLE_DEVICES"]
                c["env"] = [*envs, {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
    return obj


def platform_deny(obj: dict) -> str | None:
    if obj["kind"] != "Pod":
        return None
    tolerations = obj["spec"].get("tolerations", [])
    prefix = (
        "ValidatingAdmissionPolicy 'platform-tenant-tolerations' with binding "
        "'platform-tenant-tolerations' denied request: "
    )
    if any(t.get("key") == "CriticalAddonsOnly" for t in tolerations):
        return f'pods "{obj["metadata"]["name"]}" is forbidden: {prefix}{TOLERATION_MESSAGE}'
    if any(not t.get("key") for t in tolerations):
        return f'pods "{obj["metadata"]["name"]}" is forbidden: {prefix}{EVERY_TAINT_MESSAGE}'
    if obj["spec"]["containers"][0]["securityContext"].get("privileged"):
        return PSA_DENIAL
    return None


def cluster(*, kai: bool = True, platform: bool = True) -> FakeKube:
    kube = FakeKube([QUEUE_NAMESPACE])
    kube.deny = lambda obj: (
        (kai_deny(obj) if kai else None) or (platform_deny(obj) if platform else None)
    )
    kube.on_create = kai_mutate if kai else (lambda obj: obj)
    return kube


def created(kube: FakeKube, name: str) -> dict:
    (call,) = [c for c in kube.calls if c[0] == "create" and c[1][3] == name]
    return call


def test_pod_specs_are_exact():
    kube = cluster()
    ctx = make_ctx(kube, [QUEUE_NAMESPACE, TOLERATION_POLICY])
    security.run(ctx)
    # The run namespace (the queue namespace's labels) and its ServiceAccount are real creates.
    assert kube.objects[("v1", "Namespace", None, RUN_NAMESPACE)] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": RUN_NAMESPACE,
            "labels": {"eks-gpu-platform.io/queue": QUEUE, **PSA, **MANAGED},
        },
    }
    assert kube.objects[("v1", "ServiceAccount", RUN_NAMESPACE, "validate")] == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "validate", "namespace": RUN_NAMESPACE, "labels": MANAGED},
        "automountServiceAccountToken": False,
    }
    dry = [c[1] for c in kube.calls if c[0] == "create" and c[2]]
    assert dry == [
        ("v1", "Pod", RUN_NAMESPACE, "validate-r1-nvd-gpu"),
        ("v1", "Pod", RUN_NAMESPACE, "validate-r1-nvd-nogpu"),
        ("v1", "Pod", RUN_NAMESPACE, "validate-r1-toleration-0"),
        ("v1", "Pod", RUN_NAMESPACE, "validate-r1-toleration-1"),
        ("v1", "Pod", RUN_NAMESPACE, "validate-r1-privileged"),
        ("v1", "Pod", RUN_NAMESPACE, "validate-r1-restricted"),
    ]
    # Nothing but the namespace and the ServiceAccount was stored.
    assert sorted(k[1] for k in kube.objects) == ["Namespace", "Namespace", "ServiceAccount"]


def _seen_pods(monkeypatch) -> dict[str, dict]:
    seen: dict[str, dict] = {}
    original = FakeKube.create

    def recording(self, obj, *, dry_run=False):
        seen[obj["metadata"]["name"]] = obj
        return original(self, obj, dry_run=dry_run)

    monkeypatch.setattr(FakeKube, "create", recording)
    return seen


def test_gpu_pod_naming_all_gpus(monkeypatch):
    seen = _seen_pods(monkeypatch)
    security.run(make_ctx(cluster(), [QUEUE_NAMESPACE]))
    assert seen["validate-r1-nvd-gpu"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "validate-r1-nvd-gpu",
            "namespace": RUN_NAMESPACE,
            "labels": {
                "kai.scheduler/queue": QUEUE,
                "kai.scheduler/preemptibility": "preemptible",
                **MANAGED,
            },
        },
        "spec": {
            "serviceAccountName": "validate",
            "automountServiceAccountToken": False,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "securityContext": RESTRICTED_POD,
            "containers": [
                {
                    "name": "probe",
                    "image": "registry.k8s.io/pause:3.10.2",
                    "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
                    "resources": {
                        "requests": {"cpu": "10m", "memory": "16Mi", "nvidia.com/gpu": "1"},
                        "limits": {"memory": "16Mi", "nvidia.com/gpu": "1"},
                    },
                    "securityContext": RESTRICTED_CONTAINER,
                }
            ],
            "schedulerName": "kai-scheduler",
        },
    }


def test_privileged_and_toleration_pods(monkeypatch):
    seen = _seen_pods(monkeypatch)
    security.run(make_ctx(cluster(), [QUEUE_NAMESPACE, TOLERATION_POLICY]))
    privileged = seen["validate-r1-privileged"]
    assert privileged["spec"]["containers"][0]["securityContext"] == {"privileged": True}
    assert "schedulerName" not in privileged["spec"]
    assert seen["validate-r1-toleration-0"]["spec"]["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"}
    ]
    assert seen["validate-r1-toleration-1"]["spec"]["tolerations"] == [{"operator": "Exists"}]
    assert "schedulerName" not in seen["validate-r1-toleration-1"]["spec"]
    # Issue 29: the queue's label, which the tenancy policy requires before Kubernetes 1.36, so
    # only the policy each check is about refuses the pod.
    for name in ("privileged", "restricted", "toleration-0", "toleration-1"):
        assert seen[f"validate-r1-{name}"]["metadata"]["labels"]["kai.scheduler/queue"] == QUEUE


def results(kube: FakeKube, manifests=None) -> list[tuple]:
    ctx = make_ctx(kube, manifests or [QUEUE_NAMESPACE, TOLERATION_POLICY])
    return [(r.name, r.status, r.reason, r.details) for r in security.run(ctx)]


def test_all_pass():
    assert results(cluster()) == [
        (
            f"nvidia-visible-devices-blocked/{QUEUE}",
            "pass",
            f"no container of a pod in queue {QUEUE} reaches a GPU through NVIDIA_VISIBLE_DEVICES",
            (
                f"1 GPU + NVIDIA_VISIBLE_DEVICES=all: rejected: {KAI_DENIAL}",
                "no GPU + NVIDIA_VISIBLE_DEVICES=all: admitted as 'void'",
            ),
        ),
        (
            f"system-node-toleration-denied/{QUEUE}",
            "pass",
            "platform-tenant-tolerations denies every toleration of the system nodes",
            (
                'tolerates CriticalAddonsOnly: denied: pods "validate-r1-toleration-0" is '
                "forbidden: ValidatingAdmissionPolicy 'platform-tenant-tolerations' with "
                "binding 'platform-tenant-tolerations' denied request: " + TOLERATION_MESSAGE,
                'tolerates every taint: denied: pods "validate-r1-toleration-1" is '
                "forbidden: ValidatingAdmissionPolicy 'platform-tenant-tolerations' with "
                "binding 'platform-tenant-tolerations' denied request: " + EVERY_TAINT_MESSAGE,
            ),
        ),
        (
            f"pod-security/{NAMESPACE}",
            "pass",
            f"{NAMESPACE} enforces Pod Security restricted",
            (
                f"{NAMESPACE}: enforce restricted, version v1.36",
                f"privileged pod: denied: {PSA_DENIAL}",
                "restricted pod: admitted",
            ),
        ),
    ]


def test_no_kai_webhook_fails_clearly():
    (nvd, *_) = results(cluster(kai=False))
    assert nvd == (
        f"nvidia-visible-devices-blocked/{QUEUE}",
        "fail",
        "admitted: KAI's admission webhook did not reject a container requesting "
        "nvidia.com/gpu with NVIDIA_VISIBLE_DEVICES=all (is KAI's admission running with "
        "blockNvidiaVisibleDevices?); admitted: KAI's admission webhook did not reject a "
        "container requesting no GPU with NVIDIA_VISIBLE_DEVICES=all, nor rewrite it to "
        "'void' (admitted with 'all')",
        (),
    )


def test_no_platform_policies_fail():
    _, toleration, psa = results(cluster(platform=False))
    assert toleration == (
        f"system-node-toleration-denied/{QUEUE}",
        "fail",
        "tolerates CriticalAddonsOnly: admitted (policy platform-tenant-tolerations did not "
        "deny it); tolerates every taint: admitted (policy platform-tenant-tolerations did not "
        "deny it)",
        (),
    )
    assert psa == (
        f"pod-security/{NAMESPACE}",
        "fail",
        "a privileged pod was admitted (Pod Security restricted did not deny it)",
        (f"{NAMESPACE}: enforce restricted, version v1.36", "restricted pod: admitted"),
    )


def test_denial_by_something_else_is_not_a_pass():
    kube = cluster(kai=False, platform=False)
    kube.deny = lambda obj: (
        'pods "x" is forbidden: error looking up service account' if obj["kind"] == "Pod" else None
    )
    nvd, toleration, psa = results(kube)
    assert nvd[1:3] == (
        "fail",
        "1 GPU + NVIDIA_VISIBLE_DEVICES=all: denied, but not by KAI's deviceaccess webhook: "
        'pods "x" is forbidden: error looking up service account; no GPU + '
        "NVIDIA_VISIBLE_DEVICES=all: denied, but not by KAI's deviceaccess webhook: "
        'pods "x" is forbidden: error looking up service account',
    )
    assert toleration[2].startswith(
        'tolerates CriticalAddonsOnly: denied with another message: pods "x" is forbidden'
    )
    assert psa[2] == (
        'a privileged pod was denied, not by Pod Security: pods "x" is forbidden: error '
        'looking up service account; a pod meeting restricted was denied: pods "x" is '
        "forbidden: error looking up service account"
    )


@pytest.mark.parametrize(
    ("live_labels", "reason"),
    [
        (None, f"namespace {NAMESPACE} does not exist"),
        (
            {**PSA, "pod-security.kubernetes.io/enforce": "baseline"},
            f"namespace {NAMESPACE} enforces ('baseline', 'v1.36'), the render restricted:v1.36",
        ),
        (
            {},
            f"namespace {NAMESPACE} enforces nothing, the render restricted:v1.36",
        ),
    ],
)
def test_live_namespace_drift(live_labels, reason):
    kube = cluster()
    if live_labels is None:
        kube.objects.pop(("v1", "Namespace", None, NAMESPACE))
    else:
        kube.put({**QUEUE_NAMESPACE, "metadata": {"name": NAMESPACE, "labels": live_labels}})
    *_, psa = results(kube)
    assert psa == (f"pod-security/{NAMESPACE}", "fail", reason, ())


def test_no_toleration_policy_skips():
    _, toleration, _ = results(cluster(), [QUEUE_NAMESPACE])
    assert toleration == (
        f"system-node-toleration-denied/{QUEUE}",
        "skip",
        "the render has no tenant toleration policy",
        (),
    )


def test_no_queue_namespace_skips():
    ctx = make_ctx(cluster(), [TOLERATION_POLICY])
    assert security.run(ctx) == [
        Result("security", "queues", "skip", "the render has no queue namespace")
    ]


def test_an_api_error_is_a_fail_not_a_raise():
    kube = cluster()

    def boom(obj):
        raise RuntimeError("connection refused")

    kube.deny = boom
    out = security.run(make_ctx(kube))
    assert (out[0].status, out[0].reason) == ("fail", "RuntimeError: connection refused")


def test_planned_lists_what_run_creates():
    ctx = make_ctx(cluster(), [QUEUE_NAMESPACE, TOLERATION_POLICY])
    ns = RUN_NAMESPACE
    assert security.planned(ctx) == [
        Planned(
            "security",
            f"nvidia-visible-devices-blocked/{QUEUE}",
            (
                f"Namespace {ns}",
                f"ServiceAccount {ns}/validate",
                f"Pod {ns}/validate-r1-nvd-gpu (dry-run)",
                f"Pod {ns}/validate-r1-nvd-nogpu (dry-run)",
            ),
        ),
        Planned(
            "security",
            f"system-node-toleration-denied/{QUEUE}",
            (
                f"Pod {ns}/validate-r1-toleration-0 (dry-run)",
                f"Pod {ns}/validate-r1-toleration-1 (dry-run)",
            ),
        ),
        Planned(
            "security",
            f"pod-security/{NAMESPACE}",
            (
                f"Pod {ns}/validate-r1-privileged (dry-run)",
                f"Pod {ns}/validate-r1-restricted (dry-run)",
            ),
        ),
    ]
    kube = cluster()
    run_ctx = make_ctx(kube, [QUEUE_NAMESPACE, TOLERATION_POLICY])
    security.run(run_ctx)
    made = [
        f"{k[1]} {k[2]}/{k[3]}" if k[2] else f"{k[1]} {k[3]}"
        for c in kube.calls
        if c[0] == "create"
        for k in [c[1]]
    ]
    listed = [o.removesuffix(" (dry-run)") for p in security.planned(ctx) for o in p.objects]
    assert made == listed


def test_checks_left_out_by_checks_are_not_run():
    kube = cluster()
    ctx = make_ctx(kube, [QUEUE_NAMESPACE, TOLERATION_POLICY])
    ctx.wants = lambda check: check.startswith("pod-security/")  # Context.wants (validate)
    assert [r.name for r in security.run(ctx)] == [f"pod-security/{NAMESPACE}"]
    dry = [c[1][3] for c in kube.calls if c[0] == "create" and c[2]]
    assert dry == ["validate-r1-privileged", "validate-r1-restricted"]
