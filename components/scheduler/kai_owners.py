"""KAI's top owner of a Deployment's pods, and the CEL that mirrors it (issue 30 points 6, 7).

KAI (kai-scheduler v0.16.8, unchanged in v0.17.0: ``git diff v0.16.8 v0.17.0`` touches neither
``pkg/podgrouper/podgrouper/podgrouper.go`` nor the deployment, kubeflow, job, cronjob or
podjob plugins) walks a pod's owners through ``ownerReferences[0]`` of each object
(``pkg/podgrouper/podgrouper/podgrouper.go`` L87-120) and takes the last one it can read as the
top owner. When it may not read an owner (RBAC ``Forbidden``), the owner before it is the top
owner (L166-182, ``handleGetOwnerError``). What it may read is its chart's ClusterRole
``kai-podgrouper`` (``deployments/kai-scheduler/templates/rbac/podgrouper.yaml``, generated from
the ``+kubebuilder:rbac`` markers; v0.17.0 adds only ``run.ai`` ``kartas``, no workload kind).

So a Deployment is KAI's top owner of its pods unless its ``ownerReferences[0]`` names a kind in
``KAI_READABLE_OWNERS``: a KServe InferenceService (``serving.kserve.io``, absent from the role)
leaves the Deployment on top, hence the deployment grouper and its ``inference`` fallback
(``plugins/deployment/deployment_grouper.go`` L38, L48); a SeldonDeployment or a DevWorkspace is
read and registered with the default grouper (``hub/hub.go`` L127-136, L217-221), whose
fallback is ``train`` (``defaultgrouper/default_grouper.go`` L66).

The deployment grouper calls the default grouper with the Deployment alone as owner
(``deployment_grouper.go`` L38: no ``allOwners``), so the Deployment's labels come first and the
pod's next: the preemptibility label of the Deployment, then of the pod (``default_grouper.go``
L231-246); the class named by the Deployment's ``priorityClassName`` label, else the pod's
label, else the pod's ``spec.priorityClassName``, used only if that class exists (L191-203,
L275-284), else ``inference`` (L48). ``deployment_non_preemptible_expression`` is that rule on the
Deployment and its pod template, which the workloads policy sees together; the pod policy, which
sees neither the Deployment's labels nor its owner, leaves Deployments' pods to it.
"""

from collections.abc import Mapping

from .constants import NON_PREEMPTIBLE_PRIORITY, PREEMPTIBILITY_LABEL, PRIORITY_CLASS_LABEL

# Namespaced kinds the ClusterRole kai-podgrouper lets KAI ``get`` (kai-scheduler v0.16.8
# deployments/kai-scheduler/templates/rbac/podgrouper.yaml, one rule per API group: L13-24 core
# configmaps, L25-36 events and pods, L53-60 amlarc.azureml.com, L69-78 apps, L89-96 argoproj.io,
# L105-113 batch, L123-134 coordination.k8s.io, and the rules after them in group order). The
# role is identical in v0.17.0 but for ``run.ai`` ``kartas`` (not a workload owner).
KAI_READABLE_OWNERS: Mapping[str, tuple[str, ...]] = {
    "": ("ConfigMap", "Event", "Pod"),
    "amlarc.azureml.com": ("AmlJob",),
    "apps": ("Deployment", "ReplicaSet", "StatefulSet"),
    "argoproj.io": ("Workflow",),
    "batch": ("CronJob", "Job"),
    "coordination.k8s.io": ("Lease",),
    "egx.nvidia.io": ("SPOTRequest",),
    "grove.io": ("PodClique", "PodCliqueScalingGroup", "PodCliqueSet", "PodGangSet"),
    "jobset.x-k8s.io": ("JobSet",),
    "kubeflow.org": (
        "JAXJob",
        "MPIJob",
        "Notebook",
        "PyTorchJob",
        "ScheduledWorkflow",
        "TFJob",
        "XGBoostJob",
    ),
    "kubevirt.io": ("VirtualMachine", "VirtualMachineInstance"),
    "leaderworkerset.x-k8s.io": ("LeaderWorkerSet",),
    "machinelearning.seldon.io": ("SeldonDeployment",),
    "ray.io": ("RayCluster", "RayJob", "RayService"),
    "run.ai": (
        "DistributedInferenceWorkload",
        "DistributedWorkload",
        "InferenceWorkload",
        "InteractiveWorkload",
        "RunaiJob",
        "TrainingWorkload",
    ),
    "scheduler.grove.io": ("PodGang",),
    "scheduling.run.ai": ("PodGroup",),
    "serving.knative.dev": ("Configuration", "Revision", "Service"),
    "tekton.dev": ("PipelineRun", "TaskRun"),
    "trainer.kubeflow.org": ("TrainJob",),
    "workspace.devfile.io": ("DevWorkspace",),
}

# A Knative revision's Deployment: its pods are judged by the pod policy's Knative branch (KAI's
# Knative grouper, knative/knative.go L72-140), never by the Deployment's.
KNATIVE_TEMPLATE_LABEL = "serving.knative.dev/revision"


def _cel_list(values) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def _cel_map(table: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"'{name}': {value}" for name, value in table.items()) + "}"


def owner_read_by_kai_expression(obj: str = "object") -> str:
    """CEL: ``<obj>.metadata.ownerReferences[0]`` names a kind KAI may read, so ``obj`` is not
    KAI's top owner of its pods (podgrouper.go L96-113)."""
    parts = []
    for group, kinds in KAI_READABLE_OWNERS.items():
        version = "r.apiVersion == 'v1'" if group == "" else f"r.apiVersion.startsWith('{group}/')"
        parts.append(f"({version} && r.kind in {_cel_list(kinds)})")
    refs = f"{obj}.metadata.ownerReferences"
    return f"has({refs}) && size({refs}) > 0 && [{refs}[0]].exists(r, " + " || ".join(parts) + ")"


def owner_first_expression(template: str, table: Mapping[str, int], fallback: str) -> str:
    """CEL: KAI treats the pods of the pod template at ``template`` as non-preemptible when the
    default grouper is called with the owner (``object``) alone (``default_grouper.go`` L60-67):
    the owner's valid preemptibility label, else the template's (L231-246); else the class named
    by the owner's ``priorityClassName`` label, else the template's label, else the template's
    ``spec.priorityClassName`` (L275-284), if the class exists (``table``; L194-203), else the
    grouper's ``fallback`` (CEL ``true`` for ``inference``, ``false`` for ``train``). A class
    named only in ``spec.priorityClassName`` and absent from ``table`` gives ``false``: its value
    is unknown here (README "Owners": list it in ``scheduler.priorityClasses``)."""
    classes = _cel_map(table)
    labels, tlabels = "object.metadata.labels", f"{template}.metadata.labels"
    has_labels = f"has({labels})"
    has_tlabels = f"has({template}.metadata) && has({tlabels})"
    values = _cel_list(("preemptible", "non-preemptible"))

    def pre(guard: str, where: str) -> tuple[str, str]:
        key = f"{where}['{PREEMPTIBILITY_LABEL}']"
        return f"{guard} && '{PREEMPTIBILITY_LABEL}' in {where} && {key} in {values}", (
            f"{key} == 'non-preemptible'"
        )

    def named(guard: str, where: str) -> tuple[str, str]:
        key = f"{where}['{PRIORITY_CLASS_LABEL}']"
        return f"{guard} && '{PRIORITY_CLASS_LABEL}' in {where}", (
            f"({key} in {classes} ? {classes}[{key}] >= {NON_PREEMPTIBLE_PRIORITY} : {fallback})"
        )

    d_pre, d_pre_np = pre(has_labels, labels)
    t_pre, t_pre_np = pre(has_tlabels, tlabels)
    d_class, d_class_np = named(has_labels, labels)
    t_class, t_class_np = named(has_tlabels, tlabels)
    spec = f"{template}.spec.priorityClassName"
    spec_np = f"({spec} in {classes} ? {classes}[{spec}] >= {NON_PREEMPTIBLE_PRIORITY} : false)"
    return (
        f"(({d_pre}) ? {d_pre_np} : ({t_pre}) ? {t_pre_np} "
        f": ({d_class}) ? {d_class_np} : ({t_class}) ? {t_class_np} "
        f": (has({spec}) && {spec} != '') ? {spec_np} : {fallback})"
    )


def deployment_non_preemptible_expression(table: Mapping[str, int]) -> str:
    """CEL on a Deployment (``object``): KAI v0.16.8 treats the pods of its template as
    non-preemptible (``owner_first_expression``, fallback ``inference``: deployment_grouper.go
    L38, L48). False when an owner KAI reads is above it (that top owner's grouper and labels
    decide, unseen here) or it is a Knative revision's (the pod policy's Knative branch)."""
    tlabels = "object.spec.template.metadata.labels"
    knative = (
        f"has(object.spec.template.metadata) && has({tlabels}) && "
        f"'{KNATIVE_TEMPLATE_LABEL}' in {tlabels}"
    )
    return f"!({owner_read_by_kai_expression()}) && !({knative}) && " + owner_first_expression(
        "object.spec.template", table, "true"
    )


def template_changed_expression(template: str, labels: str | None) -> str:
    """CEL matchCondition (review L3): act on CREATE, and on UPDATE only when the pod template
    (``object.<template>``) or the owner's labels (``object.<labels>``) changed, never on an
    object being deleted. A patch of finalizers or ownerReferences alone (as the garbage
    collector makes) changes neither, so it passes untouched."""
    changed = f"object.{template} != oldObject.{template}"
    if labels is not None:
        new = f"(has(object.{labels}) ? object.{labels} : {{}})"
        old = f"(has(oldObject.{labels}) ? oldObject.{labels} : {{}})"
        changed += f" || {new} != {old}"
    return (
        "!has(object.metadata.deletionTimestamp) && "
        f"(request.operation == 'CREATE' || oldObject == null || {changed})"
    )
