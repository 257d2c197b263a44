"""The scheduling phase: what the platform promises about KAI, Karpenter and disruption.

Checks:
- ``do-not-disrupt/<queue>`` (admission only, server-side dry-run): a pod KAI treats as
  non-preemptible is annotated ``karpenter.sh/do-not-disrupt: "true"`` (Kubernetes 1.36+: the
  rendered MutatingAdmissionPolicy) or denied without it (1.30-1.35: the rendered
  ValidatingAdmissionPolicy), and a preemptible one is left alone; which of the two the render
  holds decides what is expected (components/scheduler/disruption_policies.py
  ``disruption_admission_policy``).
- ``system-pods-not-annotated``: no pod of a system namespace, no DaemonSet pod and no mirror
  pod carries the annotation unless its own controller put it there.
- ``kai-pods-in-queue-namespaces``: no KAI pod outside the queue namespaces that may be
  non-preemptible goes without the annotation (``kai_namespaces.py``).
- ``gang-all-or-nothing`` and ``over-limit-stays-pending``: in ``gangs.py`` and
  ``over_limit.py`` (they launch, or could launch, nodes).
"""

from __future__ import annotations

from ..scheduler.constants import (
    DO_NOT_DISRUPT_ANNOTATION,
    MIRROR_POD_ANNOTATION,
    PREEMPTIBILITY_LABEL,
    SYSTEM_NAMESPACES,
)
from ..scheduler.tenancy_policies import POD_POLICY_NAME, QUEUE_POLICY_NAME
from . import gangs, kai_namespaces, over_limit
from .core import Context, KubeError, Planned, Result, result, skip
from .probes import disruption_policy, probe_pod, queue_namespaces, vap_denial
from .workspace import first_listed, queue_workspace, timed, workspace_objects

NAME = "scheduling"
# KAI v0.16.8's binder creates its GPU reservation pods with the annotation itself
# (pkg/binder/binding/resourcereservation/resource_reservation.go L530-541), in its reservation
# namespace (pkg/common/constants/constants.go L23), labelled ``runai-gpu-group`` (L74).
KAI_RESERVATION_NAMESPACE = "kai-resource-reservation"
KAI_GPU_GROUP_LABEL = "runai-gpu-group"
# Pod templates of the owners a system pod may have: the annotation there was set by the pod's
# own controller (it copies the template's metadata into every pod).
TEMPLATE_OWNERS = {
    "DaemonSet": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
}

# (case, labels, priority class, annotated, non-preemptible) per pod of ``do-not-disrupt``:
# KAI v0.16.8 decides preemptibility by the label ``kai.scheduler/preemptibility`` first, then the
# priority class (value >= 100 non-preemptible): pkg/podgrouper/podgrouper/plugins/
# defaultgrouper/default_grouper.go L240-284, pkg/common/podgroup/preemptible.go L10-26.
DISRUPTION_CASES = (
    ("np-label", {PREEMPTIBILITY_LABEL: "non-preemptible"}, None, False, True),
    ("np-class", {}, "inference", False, True),
    ("preemptible", {}, "train", False, False),
)
# Only where the policy denies (before 1.36): a non-preemptible pod that carries it is admitted.
ANNOTATED_CASE = ("np-annotated", {PREEMPTIBILITY_LABEL: "non-preemptible"}, None, True, True)


def _describe(labels: dict, priority_class: str | None, annotated: bool) -> str:
    parts = [f"{k}={v}" for k, v in labels.items()]
    if priority_class:
        parts.append(f"priorityClassName {priority_class}")
    if annotated:
        parts.append(f'{DO_NOT_DISRUPT_ANNOTATION}: "true"')
    return ", ".join(parts)


def _cases(policy: dict) -> tuple:
    mutating = policy["kind"] == "MutatingAdmissionPolicy"
    return DISRUPTION_CASES if mutating else (*DISRUPTION_CASES, ANNOTATED_CASE)


def _disruption_check(ctx: Context, queue: str, policy: dict) -> Result:
    name = f"do-not-disrupt/{queue}"
    namespace = queue_workspace(ctx, queue)
    mutating = policy["kind"] == "MutatingAdmissionPolicy"
    message = None if mutating else policy["spec"]["validations"][0]["message"]
    details: list[str] = []
    problems: list[str] = []
    for case, labels, priority_class, annotated, non_preemptible in _cases(policy):
        what = f"{case} ({_describe(labels, priority_class, annotated)})"
        pod = probe_pod(
            name=ctx.run_object_name(f"dnd-{case}"),
            namespace=namespace,
            queue=queue,
            labels=labels,
            annotations={DO_NOT_DISRUPT_ANNOTATION: "true"} if annotated else None,
            priority_class=priority_class,
        )
        try:
            admitted = ctx.create(pod, dry_run=True)
        except KubeError as exc:
            expected = message is not None and non_preemptible and not annotated
            if expected and vap_denial(policy["metadata"]["name"], message) in exc.message:
                details.append(f"{what}: denied: {exc.message}")
            elif non_preemptible and _tenancy_class_refusal(exc.message):
                # A queue that runs preemptible work only refuses non-preemptible pods outright
                # (components/scheduler/tenancy_policies.py): nothing left to annotate.
                details.append(f"{what}: refused by the queue's priority classes: {exc.message}")
            else:
                problems.append(f"{what}: denied: {exc.message}")
            continue
        value = admitted.get("metadata", {}).get("annotations", {}).get(DO_NOT_DISRUPT_ANNOTATION)
        if not mutating and non_preemptible and not annotated:
            problems.append(
                f"{what}: admitted without {DO_NOT_DISRUPT_ANNOTATION} (policy "
                f"{policy['metadata']['name']} did not deny it)"
            )
        elif mutating and non_preemptible and value != "true":
            problems.append(
                f'{what}: admitted without {DO_NOT_DISRUPT_ANNOTATION}: "true" (policy '
                f"{policy['metadata']['name']} did not annotate it; annotation {value!r})"
            )
        elif not non_preemptible and value is not None:
            problems.append(f"{what}: a preemptible pod was annotated {value!r}")
        else:
            shown = "annotated" if value == "true" else "not annotated"
            details.append(f"{what}: admitted, {shown}")
    if problems:
        return result(NAME, name, False, "; ".join(problems), details)
    how = "annotates" if mutating else "requires the annotation on"
    return result(
        NAME,
        name,
        True,
        f"{policy['kind']} {policy['metadata']['name']} {how} non-preemptible pods only",
        details,
    )


def _tenancy_class_refusal(message: str) -> bool:
    """Whether the API server's denial is a tenancy policy's priority-class refusal."""
    return any(
        f"ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: priority "
        "class:" in message
        for name in (QUEUE_POLICY_NAME, POD_POLICY_NAME)
    )


def _template_annotated(ctx: Context, pod: dict) -> str | None:
    """The owner whose pod template carries the annotation (``Kind name``), if any."""
    meta = pod.get("metadata", {})
    for ref in meta.get("ownerReferences", []):
        api_version = TEMPLATE_OWNERS.get(ref.get("kind"))
        if api_version is None or not ref.get("controller"):
            continue
        owner = ctx.kube.get(api_version, ref["kind"], ref["name"], meta.get("namespace"))
        template = (owner or {}).get("spec", {}).get("template", {}).get("metadata", {})
        if DO_NOT_DISRUPT_ANNOTATION in template.get("annotations", {}):
            return f"{ref['kind']} {ref['name']}"
    return None


def _system_pods_check(ctx: Context) -> Result:
    name = "system-pods-not-annotated"
    pods = ctx.kube.list("v1", "Pod")
    scope = 0
    details: list[str] = []
    problems: list[str] = []
    for pod in pods:
        meta = pod.get("metadata", {})
        namespace = meta.get("namespace")
        annotations = meta.get("annotations", {})
        mirror = MIRROR_POD_ANNOTATION in annotations
        daemon = any(r.get("kind") == "DaemonSet" for r in meta.get("ownerReferences", []))
        if not (namespace in SYSTEM_NAMESPACES or mirror or daemon):
            continue
        scope += 1
        if DO_NOT_DISRUPT_ANNOTATION not in annotations:
            continue
        where = f"{namespace}/{meta.get('name')}"
        value = annotations[DO_NOT_DISRUPT_ANNOTATION]
        if namespace == KAI_RESERVATION_NAMESPACE and KAI_GPU_GROUP_LABEL in meta.get("labels", {}):
            details.append(f"{where}: {value!r}, set by KAI's binder (a GPU reservation pod)")
            continue
        owner = _template_annotated(ctx, pod)
        if owner is not None:
            details.append(f"{where}: {value!r}, from its {owner}'s pod template")
            continue
        kind = "mirror pod" if mirror else ("DaemonSet pod" if daemon else "system pod")
        problems.append(f"{kind} {where} carries {DO_NOT_DISRUPT_ANNOTATION}: {value!r}")
    if scope == 0:
        # Nothing inspected proves nothing, and a real cluster always runs some (kube-system's
        # CNI and kube-proxy DaemonSets): an empty list is a cluster not seen, a failure.
        return result(
            NAME,
            name,
            False,
            "no pod of a system namespace, DaemonSet or mirror pod to inspect: every cluster "
            "runs some (kube-system), so the pod list was empty or not readable",
        )
    if problems:
        # One line per pod in the details (a node's worth of pods in one reason is unreadable);
        # the pods their own controller marked follow them.
        return result(
            NAME,
            name,
            False,
            f"{len(problems)} of {scope} system, DaemonSet and mirror pods carry "
            f"{DO_NOT_DISRUPT_ANNOTATION} from something other than their own controller, so "
            "Karpenter never disrupts their nodes",
            [*problems, *details],
        )
    return result(
        NAME,
        name,
        True,
        f"{scope} system, DaemonSet and mirror pods; none annotated by anything but its own "
        "controller",
        details,
    )


def run(ctx: Context) -> list[Result]:
    """The phase's checks in order; a check ``--checks`` leaves out is not run."""
    out: list[Result] = []
    policy = disruption_policy(ctx.render.manifests)
    queues = queue_namespaces(ctx.render.manifests)
    if not queues and ctx.wants("do-not-disrupt"):
        # Not silent: no queue namespace, nothing to probe (a render always has one).
        out.append(skip(NAME, "do-not-disrupt", "the render has no queue namespace to probe"))
    for queue, _, _ in queues:
        check = f"do-not-disrupt/{queue}"
        if not ctx.wants(check):
            continue
        if policy is None:
            out.append(skip(NAME, check, "the render has no do-not-disrupt admission policy"))
            continue
        out.append(timed(ctx, NAME, check, lambda q=queue: _disruption_check(ctx, q, policy)))
    for check, fn in (
        ("system-pods-not-annotated", lambda: _system_pods_check(ctx)),
        (
            kai_namespaces.CHECK,
            # The rendered queue namespaces and this run's copies of them (same labels).
            lambda: kai_namespaces.check(
                ctx,
                NAME,
                [n for q, ns, _ in queues for n in (ns, ctx.queue_namespace_name(q))],
            ),
        ),
        (gangs.GANG_CHECK, lambda: gangs.gang_check(ctx)),
        (over_limit.OVER_LIMIT_CHECK, lambda: over_limit.over_limit_check(ctx)),
    ):
        if ctx.wants(check):
            out.append(timed(ctx, NAME, check, fn))
    return out


def checks(ctx: Context) -> list[str]:
    """The names of the checks ``run`` would report on this render (no API call)."""
    queues = [f"do-not-disrupt/{q}" for q, _, _ in queue_namespaces(ctx.render.manifests)]
    return [
        *(queues or ["do-not-disrupt"]),
        "system-pods-not-annotated",
        kai_namespaces.CHECK,
        gangs.GANG_CHECK,
        over_limit.OVER_LIMIT_CHECK,
    ]


def planned(ctx: Context) -> list[Planned]:
    out: list[Planned] = []
    policy = disruption_policy(ctx.render.manifests)
    if policy is not None:
        for queue, _, _ in queue_namespaces(ctx.render.manifests):
            ns = ctx.queue_namespace_name(queue)
            pods = tuple(
                f"Pod {ns}/{ctx.run_object_name(f'dnd-{case[0]}')} (dry-run)"
                for case in _cases(policy)
            )
            out.append(
                Planned(NAME, f"do-not-disrupt/{queue}", (*workspace_objects(ctx, queue), *pods))
            )
    out.append(Planned(NAME, "system-pods-not-annotated", ()))
    out.append(Planned(NAME, kai_namespaces.CHECK, ()))
    out += gangs.planned(ctx)
    out += over_limit.planned(ctx)
    return first_listed(out)
