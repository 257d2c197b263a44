"""A small render (literal manifests, as ``make render STACK=dev`` writes them) and a Context
on FakeKube for the scheduling and security phases' tests. The literals are copied from
build/dev at the branch's base, not computed by the code under test."""

from __future__ import annotations

from pathlib import Path

from eks_gpu_platform.validate.core import Context, Options, Render

from .fake_kube import FakeKube

RUN = "r1"
QUEUE = "research-batch"
NAMESPACE = "research-batch"
RUN_NAMESPACE = "validate-r1-research-batch"
PSA = {
    "pod-security.kubernetes.io/audit": "restricted",
    "pod-security.kubernetes.io/audit-version": "v1.36",
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "v1.36",
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/warn-version": "v1.36",
}
QUEUE_NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {
        "name": NAMESPACE,
        "labels": {"eks-gpu-platform.io/queue": QUEUE, **PSA},
    },
}
TOLERATION_MESSAGE = (
    "tenant pods may not tolerate the system node group's taint (CriticalAddonsOnly): the "
    "system nodes run only the platform's controllers"
)
EVERY_TAINT_MESSAGE = (
    "tenant pods may not carry a toleration without a key (operator Exists tolerates every "
    "taint, the system nodes' included): name the taint to tolerate"
)
TOLERATION_POLICY = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "platform-tenant-tolerations"},
    "spec": {
        "failurePolicy": "Fail",
        "validations": [
            {
                "expression": "!has(object.spec.tolerations) || "
                "!object.spec.tolerations.exists(t, has(t.key) && t.key in "
                "['CriticalAddonsOnly'])",
                "message": TOLERATION_MESSAGE,
                "reason": "Forbidden",
            },
            {
                "expression": "!has(object.spec.tolerations) || "
                "!object.spec.tolerations.exists(t, !has(t.key) || t.key == '')",
                "message": EVERY_TAINT_MESSAGE,
                "reason": "Forbidden",
            },
        ],
    },
}
DISRUPTION_MESSAGE = (
    "non-preemptible kai-scheduler pods (priority class build, inference, system-node-critical, "
    "system-cluster-critical or any other of value 100 or more, a Deployment's or Notebook's "
    "pod without a class, or label kai.scheduler/preemptibility=non-preemptible) must carry the "
    'annotation karpenter.sh/do-not-disrupt: "true", or Karpenter may consolidate their node'
)


def disruption_policy(kind: str) -> dict:
    policy: dict = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": "kai-non-preemptible-do-not-disrupt"},
        "spec": {"failurePolicy": "Fail"},
    }
    if kind == "ValidatingAdmissionPolicy":
        policy["spec"]["validations"] = [
            {
                "expression": "has(object.metadata.annotations) && "
                "'karpenter.sh/do-not-disrupt' in object.metadata.annotations",
                "message": DISRUPTION_MESSAGE,
                "reason": "Invalid",
            }
        ]
    return policy


def make_ctx(
    kube: FakeKube,
    manifests: list[dict] | None = None,
    *,
    capacity: dict | None = None,
    render_dir: Path = Path("/nonexistent"),
    **options,
) -> Context:
    render = Render(
        dir=render_dir,
        manifests=tuple(manifests if manifests is not None else [QUEUE_NAMESPACE]),
        capacity=capacity or {"pools": [], "queues": []},
        helm={},
        outputs={},
    )
    now = [0.0]  # a clock that moves only when the check sleeps

    def sleep(seconds: float) -> None:
        now[0] += seconds

    return Context(
        kube=kube,
        render=render,
        options=Options(stack="dev", **options),
        run_id=RUN,
        namespace="validate-r1",
        clock=lambda: now[0],
        sleep=sleep,
    )
