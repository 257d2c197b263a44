"""Pure builders and render readers for the scheduling and security phases (plain data in, dicts
out): the probe pods, the gang's PodGroup, and what the render says about queues, namespaces and
the admission policies the phases check.

Every probe pod meets Pod Security "restricted" (the level of every queue namespace,
``scheduler.podsecurity``) unless a check breaks it on purpose, runs a pinned ``pause`` image, and
names the run's own ServiceAccount with no token mounted: a fresh namespace's ``default``
ServiceAccount is made by the controller manager, and the ServiceAccount admission plugin
forbids a pod whose ServiceAccount does not exist (kubernetes v1.36.3
plugin/pkg/admission/serviceaccount/admission.go L155-163), so a run namespace brings its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..scheduler.constants import (
    DISRUPTION_POLICY_NAME,
    PREEMPTIBILITY_LABEL,
    QUEUE_LABEL,
    QUEUE_NAMESPACE_LABEL_SUFFIX,
    SCHEDULER_NAME,
)
from ..scheduler.guardrails import TENANT_TOLERATION_POLICY_NAME
from ..scheduler.podsecurity import (
    POD_SECURITY_LABEL_PREFIX,
    restricted_container_security_context,
    restricted_pod_security_context,
)

# The pause image of Kubernetes 1.36 (kubernetes v1.36.3 cmd/kubeadm/app/constants/constants.go
# L450 ``PauseVersion = "3.10.2"``): it only sleeps, needs no shell and no GPU library.
PROBE_IMAGE = "registry.k8s.io/pause:3.10.2"
PROBE_CONTAINER = "probe"
SERVICE_ACCOUNT = "validate"
# KAI v0.16.8 binds a pod to a PodGroup by this annotation (pkg/common/constants/constants.go
# L54 ``PodGroupAnnotationForPod``; the scheduler reads it in pkg/scheduler/api/pod_info/
# pod_info.go L381), and the pod grouper leaves a pod alone that carries it and has no owner
# (pkg/podgrouper/pod_controller.go L104-106, ``isOrphanPodWithPodGroup`` L232-235).
POD_GROUP_ANNOTATION = "pod-group-name"
# KAI v0.16.8's PodGroup API (deployments/kai-scheduler/crds/scheduling.run.ai_podgroups.yaml,
# pkg/apis/scheduling/v2alpha2/podgroup_types.go L34-64): ``minMember`` is the gang size the
# scheduler waits for (pkg/scheduler/api/podgroup_info/job_info.go L224-225: max(minMember, 1)).
POD_GROUP_API = "scheduling.run.ai/v2alpha2"
HOSTNAME_LABEL = "kubernetes.io/hostname"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"


def service_account(namespace: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": SERVICE_ACCOUNT, "namespace": namespace},
        "automountServiceAccountToken": False,
    }


def probe_pod(
    *,
    name: str,
    namespace: str,
    queue: str | None = None,
    kai: bool = True,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    priority_class: str | None = None,
    env: Mapping[str, str] | None = None,
    gpus: Mapping[str, int] | None = None,
    tolerations: Sequence[Mapping[str, str]] = (),
    privileged: bool = False,
    affinity: Mapping | None = None,
) -> dict:
    """A pod of one pause container: KAI-scheduled in ``queue`` when ``kai`` (``schedulerName``
    and the queue label), else left to the default scheduler. ``gpus`` are requested and
    limited (extended resources need both equal); ``privileged`` swaps the container's
    "restricted" security context for ``privileged: true`` (with ``allowPrivilegeEscalation:
    false`` the API server would refuse the pod as invalid before Pod Security sees it)."""
    meta: dict = {"name": name, "namespace": namespace}
    pod_labels = dict(labels or {})
    if kai and queue is not None:
        pod_labels = {QUEUE_LABEL: queue, **pod_labels}
    if pod_labels:
        meta["labels"] = pod_labels
    if annotations:
        meta["annotations"] = dict(annotations)
    container: dict = {"name": PROBE_CONTAINER, "image": PROBE_IMAGE}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    resources: dict = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "16Mi"}}
    for resource, count in (gpus or {}).items():
        resources["requests"][resource] = str(count)
        resources["limits"][resource] = str(count)
    container["resources"] = resources
    container["securityContext"] = (
        {"privileged": True} if privileged else restricted_container_security_context()
    )
    spec: dict = {
        "serviceAccountName": SERVICE_ACCOUNT,
        "automountServiceAccountToken": False,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "securityContext": restricted_pod_security_context(),
        "containers": [container],
    }
    if kai:
        spec["schedulerName"] = SCHEDULER_NAME
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if affinity:
        spec["affinity"] = dict(affinity)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod_group(*, name: str, namespace: str, queue: str, min_member: int) -> dict:
    """A KAI PodGroup of ``min_member`` pods in ``queue``, preemptible (class ``train``)."""
    return {
        "apiVersion": POD_GROUP_API,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "minMember": min_member,
            "queue": queue,
            "priorityClassName": "train",
            "preemptibility": "preemptible",
        },
    }


def gang_affinity(
    *,
    pool_label: str,
    pool: str,
    group: str,
    zone: str | None,
    instance_type: str | None,
) -> dict:
    """Required node affinity on the pool (and the gang template's zone and instance type where
    the render pins them) and required pod anti-affinity on the hostname among the gang's pods,
    so that two members can never share a node."""
    expressions = [{"key": pool_label, "operator": "In", "values": [pool]}]
    if zone is not None:
        expressions.append({"key": ZONE_LABEL, "operator": "In", "values": [zone]})
    if instance_type is not None:
        expressions.append(
            {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": [instance_type]}
        )
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions}]
            }
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {POD_GROUP_ANNOTATION: group}},
                    "topologyKey": HOSTNAME_LABEL,
                }
            ]
        },
    }


def gang_pods(
    *,
    group: str,
    namespace: str,
    queue: str,
    size: int,
    gpu_resource: str,
    affinity: Mapping,
    tolerations: Sequence[Mapping[str, str]],
) -> list[dict]:
    """``size`` preemptible pods of one GPU unit each, bound to PodGroup ``group`` by KAI's
    annotation, labelled with the group's name for their anti-affinity, tolerating the pool's
    NodePool taints (``nodepool_tolerations``)."""
    return [
        probe_pod(
            name=f"{group}-{i}",
            namespace=namespace,
            queue=queue,
            labels={POD_GROUP_ANNOTATION: group, PREEMPTIBILITY_LABEL: "preemptible"},
            annotations={POD_GROUP_ANNOTATION: group},
            priority_class="train",
            gpus={gpu_resource: 1},
            tolerations=tolerations,
            affinity=affinity,
        )
        for i in range(size)
    ]


# ---------------------------------------------------------------------------------------------
# What the render says
# ---------------------------------------------------------------------------------------------


def nodepool_tolerations(manifests: Sequence[dict], nodepools: Sequence[str]) -> list[dict]:
    """One ``Exists`` toleration per taint (key, effect) of the rendered NodePools named
    ``nodepools``, in render order: every GPU NodePool taints ``nvidia.com/gpu`` and an EFA one
    also ``vpc.amazonaws.com/efa`` (components/nodepool), and Karpenter launches a node only
    for a pod that tolerates its NodePool's taints (kubernetes-sigs/karpenter v1.15.0
    pkg/controllers/provisioning/scheduling/nodeclaim.go L132-135 ``CanAdd``), so a pod
    missing one is never placed there, whatever the limits."""
    out: list[dict] = []
    for manifest in manifests:
        if manifest.get("kind") != "NodePool" or manifest["metadata"]["name"] not in nodepools:
            continue
        for taint in manifest["spec"]["template"]["spec"].get("taints", []):
            toleration = {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
            if toleration not in out:
                out.append(toleration)
    return out


def pool_label_key(manifests: Sequence[dict]) -> str | None:
    """The platform's pool label (``<labelDomain>/pool``), read from a rendered NodePool."""
    for manifest in manifests:
        if manifest.get("kind") == "NodePool":
            labels = manifest["spec"]["template"].get("metadata", {}).get("labels", {})
            for key in labels:
                if key.endswith("/pool"):
                    return key
    return None


def queue_namespaces(manifests: Sequence[dict]) -> list[tuple[str, str, dict[str, str]]]:
    """(queue, namespace, labels) of every rendered queue namespace (label
    ``<labelDomain>/queue``), in render order."""
    out = []
    for manifest in manifests:
        if manifest.get("kind") != "Namespace":
            continue
        labels = manifest.get("metadata", {}).get("labels", {})
        for key, value in labels.items():
            if key.endswith(f"/{QUEUE_NAMESPACE_LABEL_SUFFIX}"):
                out.append((value, manifest["metadata"]["name"], dict(labels)))
                break
    return out


def label_domain(manifests: Sequence[dict]) -> str | None:
    for manifest in manifests:
        if manifest.get("kind") != "Namespace":
            continue
        for key in manifest.get("metadata", {}).get("labels", {}):
            if key.endswith(f"/{QUEUE_NAMESPACE_LABEL_SUFFIX}"):
                return key.rsplit("/", 1)[0]
    return None


def enforced_level(labels: Mapping[str, str]) -> tuple[str, str] | None:
    """(level, version) a namespace's Pod Security labels enforce, e.g. ("restricted", "v1.36");
    ``latest`` when no version is pinned (the PSA default)."""
    level = labels.get(f"{POD_SECURITY_LABEL_PREFIX}enforce")
    if level is None:
        return None
    return level, labels.get(f"{POD_SECURITY_LABEL_PREFIX}enforce-version", "latest")


def _named(manifests: Sequence[dict], name: str, kinds: Sequence[str]) -> dict | None:
    for manifest in manifests:
        if manifest.get("kind") in kinds and manifest.get("metadata", {}).get("name") == name:
            return manifest
    return None


def disruption_policy(manifests: Sequence[dict]) -> dict | None:
    """The rendered pod do-not-disrupt policy: a ``MutatingAdmissionPolicy`` (Kubernetes 1.36+)
    or a ``ValidatingAdmissionPolicy`` (1.30-1.35), ``scheduler.disruption_policies.
    disruption_admission_policy``."""
    return _named(
        manifests, DISRUPTION_POLICY_NAME, ("MutatingAdmissionPolicy", "ValidatingAdmissionPolicy")
    )


def toleration_policy(manifests: Sequence[dict]) -> dict | None:
    return _named(manifests, TENANT_TOLERATION_POLICY_NAME, ("ValidatingAdmissionPolicy",))


_KEYS = re.compile(r"t\.key in \[([^\]]*)\]")


def system_taint_keys(policy: Mapping) -> list[str]:
    """The system node taint keys the rendered toleration policy forbids, read from its first
    validation (``scheduler.guardrails.tenant_toleration_expressions``: ``t.key in ['K', ...]``)."""
    for validation in policy.get("spec", {}).get("validations", []):
        match = _KEYS.search(validation.get("expression", ""))
        if match:
            return re.findall(r"'([^']*)'", match.group(1))
    return []


def vap_denial(policy_name: str, message: str) -> str:
    """The API server's text for a ValidatingAdmissionPolicy denial through the binding of the
    same name (kubernetes/apiserver v0.36.3 pkg/admission/plugin/policy/validating/
    dispatcher.go L294)."""
    return (
        f"ValidatingAdmissionPolicy '{policy_name}' with binding '{policy_name}' denied request: "
        f"{message}"
    )
