"""The security phase: a tenant pod cannot name GPUs through ``NVIDIA_VISIBLE_DEVICES``, cannot
tolerate onto the system nodes, and every queue namespace enforces its rendered Pod Security
level. Every pod is a server-side dry-run create (admission runs in full, nothing is stored), in
the run's namespace of the queue (``Context.queue_namespace``: the rendered namespace's labels).

Checks:
- ``nvidia-visible-devices-blocked/<queue>``: KAI's ``deviceaccess`` admission plugin, on
  because the platform sets ``global.blockNvidiaVisibleDevices`` (components/scheduler/
  values.py; kai-scheduler v0.16.8 cmd/admission/main.go L54-56). It acts in two steps
  (pkg/admission/webhook/v1alpha2/deviceaccess/device_access.go): the mutating webhook sets
  ``NVIDIA_VISIBLE_DEVICES=void`` on every container that requests no GPU (``Mutate`` L57-78,
  ``blockGPUAccessIfNotRequested`` L101-108, overwriting a value already there:
  ``setVisibleDevicesEnvVar`` L122-130), then the validating webhook rejects any container
  whose value is not ``void``/``none`` (``whitelistVisibleDevicesEnvVar`` L143-151). So a pod
  asking for one GPU and naming ``all`` is rejected, and a pod asking for none that names
  ``all`` is admitted with ``void`` (or rejected, were the mutation skipped): either way no
  container reaches a GPU it was not given. Both webhooks declare ``sideEffects: None``
  (pkg/operator/operands/admission/resources.go L253, L303), so they run on dry-run requests.
- ``system-node-toleration-denied/<queue>``: the platform's ``platform-tenant-tolerations``
  ValidatingAdmissionPolicy (components/scheduler/guardrails.py) denies a pod tolerating a
  system node taint key, and one tolerating every taint (a toleration without a key); the
  expected text is the render's own validation message.
- ``pod-security/<namespace>``: the live queue namespace carries the rendered ``enforce``
  labels, and a pod breaking the level (a privileged container) is denied by Pod Security
  Admission with its message (k8s.io/pod-security-admission v0.36.3 admission/admission.go
  L479-483: ``violates PodSecurity "<level>:<version>": ...``) while a compliant pod is admitted.
"""

from __future__ import annotations

from collections.abc import Callable

from ..scheduler.constants import QUEUE_LABEL
from .core import Context, KubeError, Planned, Result, result, skip
from .probes import (
    PROBE_CONTAINER,
    enforced_level,
    probe_pod,
    queue_namespaces,
    system_taint_keys,
    toleration_policy,
    vap_denial,
)
from .workspace import queue_workspace, timed, workspace_objects

NAME = "security"
NVIDIA_VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
GPU_RESOURCE = "nvidia.com/gpu"
# KAI's rejection (device_access.go L146-150), for a container named PROBE_CONTAINER with ``all``.
KAI_DEVICE_ACCESS_DENIAL = (
    f"container {PROBE_CONTAINER} has an environment variable NVIDIA_VISIBLE_DEVICES defined "
    "with a value of all. This is forbidden due to conflicts with Nvidia's device plugin. The "
    "only values that are allowed are 'void' or 'none'"
)
# Values KAI lets through (device_access.go ``visibleDevicesWhitelist``).
ALLOWED_VISIBLE_DEVICES = ("void", "none")
PRIVILEGED_DETAIL = "must not set securityContext.privileged=true"


def _visible_devices(pod: dict) -> str | None:
    for container in pod.get("spec", {}).get("containers", []):
        if container.get("name") == PROBE_CONTAINER:
            for env in container.get("env", []):
                if env.get("name") == NVIDIA_VISIBLE_DEVICES:
                    return env.get("value")
    return None


def _attempt(ctx: Context, pod: dict) -> tuple[dict | None, KubeError | None]:
    """Dry-run create ``pod``: (the admitted object, None) or (None, the denial)."""
    try:
        return ctx.create(pod, dry_run=True), None
    except KubeError as exc:
        return None, exc


def _visible_devices_check(ctx: Context, queue: str) -> Result:
    name = f"nvidia-visible-devices-blocked/{queue}"
    namespace = queue_workspace(ctx, queue)
    preemptible = {"kai.scheduler/preemptibility": "preemptible"}
    env = {NVIDIA_VISIBLE_DEVICES: "all"}
    details: list[str] = []
    problems: list[str] = []

    gpu_pod = probe_pod(
        name=ctx.run_object_name("nvd-gpu"),
        namespace=namespace,
        queue=queue,
        labels=preemptible,
        env=env,
        gpus={GPU_RESOURCE: 1},
    )
    admitted, denial = _attempt(ctx, gpu_pod)
    if denial is not None and KAI_DEVICE_ACCESS_DENIAL in denial.message:
        details.append(f"1 GPU + {NVIDIA_VISIBLE_DEVICES}=all: rejected: {denial.message}")
    elif denial is not None:
        problems.append(
            f"1 GPU + {NVIDIA_VISIBLE_DEVICES}=all: denied, but not by KAI's deviceaccess "
            f"webhook: {denial.message}"
        )
    else:
        problems.append(
            "admitted: KAI's admission webhook did not reject a container requesting "
            f"{GPU_RESOURCE} with {NVIDIA_VISIBLE_DEVICES}=all (is KAI's admission running with "
            "blockNvidiaVisibleDevices?)"
        )

    bare_pod = probe_pod(
        name=ctx.run_object_name("nvd-nogpu"),
        namespace=namespace,
        queue=queue,
        labels=preemptible,
        env=env,
    )
    admitted, denial = _attempt(ctx, bare_pod)
    if admitted is not None:
        value = _visible_devices(admitted)
        if value in ALLOWED_VISIBLE_DEVICES:
            details.append(f"no GPU + {NVIDIA_VISIBLE_DEVICES}=all: admitted as {value!r}")
        else:
            problems.append(
                "admitted: KAI's admission webhook did not reject a container requesting no "
                f"GPU with {NVIDIA_VISIBLE_DEVICES}=all, nor rewrite it to 'void' (admitted "
                f"with {value!r})"
            )
    elif KAI_DEVICE_ACCESS_DENIAL in denial.message:
        details.append(f"no GPU + {NVIDIA_VISIBLE_DEVICES}=all: rejected: {denial.message}")
    else:
        problems.append(
            f"no GPU + {NVIDIA_VISIBLE_DEVICES}=all: denied, but not by KAI's deviceaccess "
            f"webhook: {denial.message}"
        )

    if problems:
        return result(NAME, name, False, "; ".join(problems), details)
    return result(
        NAME,
        name,
        True,
        f"no container of a pod in queue {queue} reaches a GPU through {NVIDIA_VISIBLE_DEVICES}",
        details,
    )


def _toleration_cases(policy: dict) -> list[tuple[str, dict, str]]:
    """(what, toleration, expected denial) per rendered validation."""
    validations = policy["spec"]["validations"]
    cases = [
        (f"tolerates {key}", {"key": key, "operator": "Exists"}, validations[0]["message"])
        for key in system_taint_keys(policy)
    ]
    if len(validations) > 1:
        cases.append(("tolerates every taint", {"operator": "Exists"}, validations[1]["message"]))
    return cases


def _toleration_check(ctx: Context, queue: str, policy: dict) -> Result:
    name = f"system-node-toleration-denied/{queue}"
    namespace = queue_workspace(ctx, queue)
    policy_name = policy["metadata"]["name"]
    details: list[str] = []
    problems: list[str] = []
    for i, (what, toleration, message) in enumerate(_toleration_cases(policy)):
        # The queue's label: before 1.36 the tenancy policy would also refuse the pod without
        # it, and which of two denials the API server reports is not the check's to guess.
        pod = probe_pod(
            name=ctx.run_object_name(f"toleration-{i}"),
            namespace=namespace,
            kai=False,
            labels={QUEUE_LABEL: queue},
            tolerations=[toleration],
        )
        expected = vap_denial(policy_name, message)
        _, denial = _attempt(ctx, pod)
        if denial is None:
            problems.append(f"{what}: admitted (policy {policy_name} did not deny it)")
        elif expected not in denial.message:
            problems.append(f"{what}: denied with another message: {denial.message}")
        else:
            details.append(f"{what}: denied: {denial.message}")
    if not details and not problems:
        return skip(NAME, name, f"policy {policy_name} names no system taint key")
    if problems:
        return result(NAME, name, False, "; ".join(problems), details)
    return result(
        NAME, name, True, f"{policy_name} denies every toleration of the system nodes", details
    )


def _pod_security_check(ctx: Context, queue: str, namespace: str, labels: dict) -> Result:
    name = f"pod-security/{namespace}"
    rendered = enforced_level(labels)
    if rendered is None:
        return result(NAME, name, False, f"the render's namespace {namespace} enforces no level")
    level, version = rendered
    live = ctx.kube.get("v1", "Namespace", namespace)
    if live is None:
        return result(NAME, name, False, f"namespace {namespace} does not exist")
    live_level = enforced_level(live.get("metadata", {}).get("labels", {}))
    if live_level != rendered:
        return result(
            NAME,
            name,
            False,
            f"namespace {namespace} enforces {live_level or 'nothing'}, the render "
            f"{level}:{version}",
        )
    run_namespace = queue_workspace(ctx, queue)
    details = [f"{namespace}: enforce {level}, version {version}"]
    problems: list[str] = []
    # Both carry the queue's label, which the tenancy policy requires before 1.36
    # (components/scheduler/tenancy_policies.py): Pod Security alone judges them.
    queue_label = {QUEUE_LABEL: queue}
    privileged = probe_pod(
        name=ctx.run_object_name("privileged"),
        namespace=run_namespace,
        kai=False,
        labels=queue_label,
        privileged=True,
    )
    _, denial = _attempt(ctx, privileged)
    psa = f'violates PodSecurity "{level}:{version}"'
    if level == "privileged":
        if denial is not None:
            problems.append(f"a privileged pod was denied at level privileged: {denial.message}")
    elif denial is None:
        problems.append(f"a privileged pod was admitted (Pod Security {level} did not deny it)")
    elif psa not in denial.message or PRIVILEGED_DETAIL not in denial.message:
        problems.append(f"a privileged pod was denied, not by Pod Security: {denial.message}")
    else:
        details.append(f"privileged pod: denied: {denial.message}")
    compliant = probe_pod(
        name=ctx.run_object_name("restricted"),
        namespace=run_namespace,
        kai=False,
        labels=queue_label,
    )
    _, denial = _attempt(ctx, compliant)
    if denial is not None:
        problems.append(f"a pod meeting restricted was denied: {denial.message}")
    else:
        details.append("restricted pod: admitted")
    if problems:
        return result(NAME, name, False, "; ".join(problems), details)
    return result(NAME, name, True, f"{namespace} enforces Pod Security {level}", details)


def run(ctx: Context) -> list[Result]:
    """The phase's checks in order; a check ``--checks`` leaves out is not run."""
    namespaces = queue_namespaces(ctx.render.manifests)
    if not namespaces:
        return [skip(NAME, "queues", "the render has no queue namespace")]
    policy = toleration_policy(ctx.render.manifests)
    checks: list[tuple[str, Callable[[], Result]]] = []
    for queue, _, _ in namespaces:
        checks.append(
            (
                f"nvidia-visible-devices-blocked/{queue}",
                lambda q=queue: _visible_devices_check(ctx, q),
            )
        )
    for queue, _, _ in namespaces:
        name = f"system-node-toleration-denied/{queue}"
        if policy is None:
            reason = "the render has no tenant toleration policy"
            checks.append((name, lambda n=name, r=reason: skip(NAME, n, r)))
        else:
            checks.append((name, lambda q=queue: _toleration_check(ctx, q, policy)))
    for queue, namespace, labels in namespaces:
        checks.append(
            (
                f"pod-security/{namespace}",
                lambda q=queue, n=namespace, lb=labels: _pod_security_check(ctx, q, n, lb),
            )
        )
    return [timed(ctx, NAME, name, fn) for name, fn in checks if ctx.wants(name)]


def checks(ctx: Context) -> list[str]:
    """The names of the checks ``run`` would report on this render (no API call)."""
    namespaces = queue_namespaces(ctx.render.manifests)
    if not namespaces:
        return ["queues"]
    return [
        *(f"nvidia-visible-devices-blocked/{q}" for q, _, _ in namespaces),
        *(f"system-node-toleration-denied/{q}" for q, _, _ in namespaces),
        *(f"pod-security/{n}" for _, n, _ in namespaces),
    ]


def _dry(namespace: str, name: str) -> str:
    return f"Pod {namespace}/{name} (dry-run)"


def planned(ctx: Context) -> list[Planned]:
    """Per check: the run namespace and ServiceAccount (listed under the first check of each
    queue; created once per run) and the dry-run pods, which the API server never stores."""
    namespaces = queue_namespaces(ctx.render.manifests)
    policy = toleration_policy(ctx.render.manifests)
    out: list[Planned] = []
    for queue, _, _ in namespaces:
        ns = ctx.queue_namespace_name(queue)
        pods = (
            _dry(ns, ctx.run_object_name("nvd-gpu")),
            _dry(ns, ctx.run_object_name("nvd-nogpu")),
        )
        out.append(
            Planned(
                NAME,
                f"nvidia-visible-devices-blocked/{queue}",
                (*workspace_objects(ctx, queue), *pods),
            )
        )
    if policy is not None:
        for queue, _, _ in namespaces:
            ns = ctx.queue_namespace_name(queue)
            pods = tuple(
                _dry(ns, ctx.run_object_name(f"toleration-{i}"))
                for i in range(len(_toleration_cases(policy)))
            )
            out.append(Planned(NAME, f"system-node-toleration-denied/{queue}", pods))
    for queue, namespace, _ in namespaces:
        ns = ctx.queue_namespace_name(queue)
        pods = (
            _dry(ns, ctx.run_object_name("privileged")),
            _dry(ns, ctx.run_object_name("restricted")),
        )
        out.append(Planned(NAME, f"pod-security/{namespace}", pods))
    return out
