"""The tenancy admission policies (issue 29 points 1-4) evaluated on crafted tenant objects, the
shipped workload templates and the system pods (``tenancy_eval``), per fixture stack."""

import copy
import functools

import pytest

from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.platform import tenant_pools
from eks_gpu_platform.scheduler.guardrails import tenant_toleration_policy
from eks_gpu_platform.scheduler.spec import leaf_queue_names
from eks_gpu_platform.scheduler.tenancy import queue_tenancy
from eks_gpu_platform.scheduler.tenancy_policies import tenancy_policies

from .helpers import queue_namespace_selector
from .tenancy_eval import Request, denials, mutate
from .test_admission_fixtures import RENDERS, SYSTEM_PODS, _id


def config_of(stack: str):
    """The fixture stack's validated configuration (dev-1.35: dev's on Kubernetes 1.35), the
    one test_admission_fixtures made already (``RENDERS``), the same way, shared by every test
    (a frozen dataclass)."""
    return dict(RENDERS)[stack]


def policies_of(stack: str) -> list[dict]:
    config = config_of(stack)
    return tenancy_policies(
        kubernetes_version=config.cluster.kubernetes_version,
        label_domain=config.cluster.label_domain,
        queues=queue_tenancy(
            config.scheduler.queues,
            config.workload_kinds,
            {p.name: p.preemptible for p in config.gpu_pools},
            config.scheduler.priority_classes,
        ),
        pools=tenant_pools(config),
        extra_priority_classes=config.scheduler.priority_classes,
    )


# ---------------------------------------------------------------------------------------------
# Helpers: the render's namespaces and template pods, as the scheduler and examples render them
# ---------------------------------------------------------------------------------------------

STACKS = ("dev", "prod", "dev-1.35")
POLICIES = {stack: policies_of(stack) for stack in STACKS}
DOMAIN = "eks-gpu-platform.io"
GPUS = "nvidia.com/gpu, nvidia.com/gpu.*, nvidia.com/mig-* or vpc.amazonaws.com/efa"
POOLS_ALLOWED = (
    "; allowed: the queue's pools {pools} (label eks-gpu-platform.io/pool), or a pool no queue "
    "is routed to"
)
DS_CONTROLLER = {
    "username": "system:serviceaccount:kube-system:daemon-set-controller",
    "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system"],
}
NODE = {
    "username": "system:node:ip-10-40-0-10.us-west-2.compute.internal",
    "groups": ["system:nodes", "system:authenticated"],
}
TENANT = {"username": "arn:aws:iam::111122223333:role/research", "groups": ["research"]}


def namespace(name: str, queue: str | None = None) -> dict:
    labels = {"kubernetes.io/metadata.name": name}
    if queue is not None:
        labels[f"{DOMAIN}/queue"] = queue
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


# The functools.cache'd functions below are pure functions of the stack's name, computed once per
# test process: what they return is shared by every test, which copies what it changes
# (``pod_of``, ``_examples``).
def _examples(stack: str) -> list[dict]:
    return copy.deepcopy(_example_documents(stack))


@functools.cache
def _example_documents(stack: str) -> list[dict]:
    return [
        copy.deepcopy(doc)
        for template in example_workloads(config_of(stack)).values()
        for doc in template.documents
        if doc.get("metadata", {}).get("namespace")
    ]


@functools.cache
def template_pods(stack: str) -> list[tuple[str, dict]]:
    """(what, pod) for every pod template of the stack's examples in a queue namespace (shared:
    copy a pod before changing it, as ``pod_of`` does)."""
    out = []
    for doc in _example_documents(stack):
        kind, meta = doc["kind"], doc["metadata"]
        templates = []
        if kind == "Pod":
            templates = [(meta["name"], doc)]
        elif kind in ("Deployment", "Job", "StatefulSet"):
            templates = [(meta["name"], doc["spec"]["template"])]
        elif kind == "MPIJob":
            templates = [
                (f"{meta['name']}-{role.lower()}", spec["template"])
                for role, spec in doc["spec"]["mpiReplicaSpecs"].items()
            ]
        for name, template in templates:
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    **copy.deepcopy(template.get("metadata", {})),
                    "name": name,
                    "namespace": meta["namespace"],
                },
                "spec": copy.deepcopy(template["spec"]),
            }
            out.append((f"{kind} {meta['namespace']}/{name}", pod))
    return out


@functools.cache
def queue_namespaces(stack: str) -> dict[str, dict]:
    config = config_of(stack)
    return {
        q.workload_namespace: namespace(q.workload_namespace, q.name)
        for q in config.scheduler.queues
        if q.name in leaf_queue_names(config.scheduler.queues)
    }


def ns_of(stack: str, obj: dict) -> dict:
    name = obj["metadata"]["namespace"]
    return queue_namespaces(stack).get(name) or namespace(name)


def judge(stack: str, obj: dict, **kw) -> list[str]:
    return denials(
        POLICIES[stack], Request(obj=obj, namespace=kw.pop("ns", None) or ns_of(stack, obj), **kw)
    )


def pod_of(stack: str, namespace_name: str) -> dict:
    return next(
        copy.deepcopy(p)
        for _, p in template_pods(stack)
        if p["metadata"]["namespace"] == namespace_name
    )


# ---------------------------------------------------------------------------------------------
# Never refused: the shipped templates, the system pods, node pods, KAI's own requests
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_template_and_its_pods_are_admitted(stack):
    refused = {}
    for doc in _examples(stack):
        if msgs := judge(stack, doc):
            refused[f"{doc['kind']} {doc['metadata']['name']}"] = msgs
    for what, pod in template_pods(stack):
        if msgs := judge(stack, pod):
            refused[f"pod of {what}"] = msgs
    assert refused == {}
    assert len(template_pods(stack)) >= 3


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("pod", SYSTEM_PODS, ids=_id)
def test_no_system_pod_is_refused_in_its_namespace_or_a_mislabelled_system_one(stack, pod):
    assert judge(stack, pod) == []
    mislabelled = namespace(pod["metadata"]["namespace"], "research-batch")
    assert judge(stack, pod, ns=mislabelled) == []


NODE_PODS = [
    p
    for p in SYSTEM_PODS
    if any(r["kind"] == "DaemonSet" for r in p["metadata"].get("ownerReferences", []))
    or "kubernetes.io/config.mirror" in p["metadata"].get("annotations", {})
]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("pod", NODE_PODS, ids=_id)
def test_daemonset_and_mirror_pods_are_never_refused_in_a_queue_namespace(stack, pod):
    """Created by the DaemonSet controller or a node (userInfo), even in a queue namespace and
    even with host ports, system classes or no pool selection."""
    pod = copy.deepcopy(pod)
    queue_ns = next(iter(queue_namespaces(stack)))
    pod["metadata"]["namespace"] = queue_ns
    mirror = "kubernetes.io/config.mirror" in pod["metadata"].get("annotations", {})
    assert judge(stack, pod, user=NODE if mirror else DS_CONTROLLER) == []


def test_a_daemonset_owner_reference_written_by_a_tenant_exempts_nothing():
    pod = pod_of("dev", "research-batch")
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "x", "uid": "1", "controller": True}
    ]
    pod["spec"]["nodeName"] = "ip-10-40-0-10"
    assert judge("dev", pod, user=TENANT) == [
        "node name: pod train-research-batch sets spec.nodeName ip-10-40-0-10, which skips the "
        "scheduler and every taint but NoExecute; allowed: no spec.nodeName (select the "
        "queue's pools with nodeSelector or node affinity)"
    ]


def test_kai_service_accounts_are_never_judged():
    """KAI's podgrouper writes PodGroups from labels judged here; its binder patches pods."""
    pg = {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "pg-x", "namespace": "research-batch"},
        "spec": {"queue": "default-queue", "minMember": 1},
    }
    kai = {"username": "system:serviceaccount:kai-scheduler:podgrouper", "groups": []}
    assert judge("dev", pg, user=kai) == []
    assert judge("dev", pg) == [
        "queue binding: PodGroup pg-x has spec.queue default-queue in namespace research-batch "
        "(queue research-batch); allowed: research-batch"
    ]


def test_an_update_that_changes_nothing_judged_is_admitted():
    """A controller's patch (a finalizer, an annotation) to a pod admitted before the policies."""
    old = pod_of("dev", "research-batch")
    old["spec"]["schedulerName"] = "default-scheduler"
    old["metadata"]["labels"]["kai.scheduler/queue"] = "research-serving"
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = {"x": "y"}
    assert judge("dev", new, operation="UPDATE", old=old) == []
    new["metadata"]["labels"]["kai.scheduler/queue"] = "research-notebooks"
    assert judge("dev", new, operation="UPDATE", old=old) == [
        "queue binding: label kai.scheduler/queue=research-notebooks on Pod train-research-batch "
        "in namespace research-batch (queue research-batch) names another queue; allowed: "
        "research-batch"
    ]


# ---------------------------------------------------------------------------------------------
# Refused, with the exact message: dev's research-batch training pod (queue research-batch, pool
# gpu-spot: preemptible-only, classes train and build-preemptible)
# ---------------------------------------------------------------------------------------------


def _labelled(pod, **labels):
    pod["metadata"].setdefault("labels", {}).update(labels)
    return pod


def _no_gpu(pod, env=None, container="containers"):
    for c in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
        for part in ("requests", "limits"):
            for key in list(c.get("resources", {}).get(part, {})):
                if key.startswith("nvidia.com/") or key == "vpc.amazonaws.com/efa":
                    del c["resources"][part][key]
    if env is not None:
        pod["spec"].setdefault(container, [{"name": "side", "image": "busybox"}])
        pod["spec"][container][0]["env"] = env
    return pod


def _set(path, value):
    def change(pod):
        node = pod
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
        return pod

    return change


def _deployment(pod, queue):
    labels = {**pod["metadata"]["labels"], "kai.scheduler/queue": queue}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": pod["metadata"]["namespace"], "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod["spec"]},
        },
    }


TRAIN = "train-research-batch"
IN_BATCH = "in namespace research-batch (queue research-batch)"
CASES = {
    "another queue's label": (
        lambda p: _labelled(p, **{"kai.scheduler/queue": "research-serving"}),
        f"queue binding: label kai.scheduler/queue=research-serving on Pod {TRAIN} {IN_BATCH} "
        "names another queue; allowed: research-batch",
    ),
    "a Deployment naming another queue": (
        lambda p: _deployment(p, "research-serving"),
        f"queue binding: label kai.scheduler/queue=research-serving on Deployment web {IN_BATCH} "
        "names another queue; allowed: research-batch",
    ),
    "a project label with KAI's node-pool label": (
        lambda p: _labelled(p, project="research", **{"kai.scheduler/node-pool": "serving"}),
        f"queue binding: label project=research on Pod {TRAIN} {IN_BATCH} makes KAI pick queue "
        "research-serving; allowed: research-batch (with no kai.scheduler/node-pool label on a "
        "pod), or no project label",
    ),
    "a GPU pod under the default scheduler": (
        _set(("spec", "schedulerName"), "default-scheduler"),
        f"GPUs only through the scheduler: pod {TRAIN} requests {GPUS} with schedulerName "
        "default-scheduler; allowed: schedulerName kai-scheduler",
    ),
    "a GPU pod without schedulerName": (
        lambda p: (p["spec"].pop("schedulerName"), p)[1],
        f"GPUs only through the scheduler: pod {TRAIN} requests {GPUS} with schedulerName "
        "default-scheduler; allowed: schedulerName kai-scheduler",
    ),
    "NVIDIA_VISIBLE_DEVICES=all without a GPU": (
        lambda p: _no_gpu(p, [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]),
        f"GPU visibility: pod {TRAIN} requests no GPU but sets NVIDIA_VISIBLE_DEVICES "
        "(container=value: trainer=all); allowed: NVIDIA_VISIBLE_DEVICES unset, void or none, "
        "by value (valueFrom cannot be checked)",
    ),
    "a line break in the value stays on one line": (
        lambda p: _no_gpu(p, [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "0\nall"}]),
        f"GPU visibility: pod {TRAIN} requests no GPU but sets NVIDIA_VISIBLE_DEVICES "
        "(container=value: trainer=0\\nall); allowed: NVIDIA_VISIBLE_DEVICES unset, void or "
        "none, by value (valueFrom cannot be checked)",
    ),
    "NVIDIA_VISIBLE_DEVICES from a ConfigMap in an init container": (
        lambda p: _no_gpu(
            p,
            [
                {
                    "name": "NVIDIA_VISIBLE_DEVICES",
                    "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}},
                }
            ],
            "initContainers",
        ),
        f"GPU visibility: pod {TRAIN} requests no GPU but sets NVIDIA_VISIBLE_DEVICES "
        "(container=value: side=<valueFrom>); allowed: NVIDIA_VISIBLE_DEVICES unset, void or "
        "none, by value (valueFrom cannot be checked)",
    ),
    "envFrom in a no-GPU pod tolerating the GPU taint": (
        lambda p: _set(
            ("spec", "containers"),
            [{**_no_gpu(p)["spec"]["containers"][0], "envFrom": [{"secretRef": {"name": "s"}}]}],
        )(p),
        f"GPU visibility: pod {TRAIN} requests no GPU, tolerates the nvidia.com/gpu taint and "
        "takes environment variables from a ConfigMap or Secret (envFrom), which could set "
        "NVIDIA_VISIBLE_DEVICES; allowed: env entries by value, or request a GPU with "
        "schedulerName kai-scheduler",
    ),
    "spec.nodeName": (
        _set(("spec", "nodeName"), "ip-10-40-0-10.us-west-2.compute.internal"),
        f"node name: pod {TRAIN} sets spec.nodeName ip-10-40-0-10.us-west-2.compute.internal, "
        "which skips the scheduler and every taint but NoExecute; allowed: no spec.nodeName "
        "(select the queue's pools with nodeSelector or node affinity)",
    ),
    "a non-preemptible class": (
        _set(("spec", "priorityClassName"), "inference"),
        f"priority class: pod {TRAIN} has priorityClassName inference, not allowed in queue "
        "research-batch; allowed: train, build-preemptible",
    ),
    "a system class": (
        _set(("spec", "priorityClassName"), "system-node-critical"),
        f"priority class: pod {TRAIN} has priorityClassName system-node-critical, not allowed "
        "in queue research-batch; allowed: train, build-preemptible",
    ),
    "a non-preemptible class by label": (
        lambda p: _labelled(p, priorityClassName="build"),
        f"priority class: label priorityClassName=build on Pod {TRAIN} is not allowed in queue "
        "research-batch; allowed: train, build-preemptible",
    ),
    "the preemptibility label": (
        lambda p: _labelled(p, **{"kai.scheduler/preemptibility": "non-preemptible"}),
        f"priority class: label kai.scheduler/preemptibility=non-preemptible on Pod {TRAIN} is "
        "not allowed: queue research-batch runs preemptible work only; allowed: preemptible, or "
        "a class of train, build-preemptible",
    ),
    "another queue's pool by nodeSelector": (
        _set(("spec", "nodeSelector"), {f"{DOMAIN}/pool": "inference"}),
        f"pools: pod {TRAIN} selects eks-gpu-platform.io/pool=inference (nodeSelector), a pool "
        "of another queue" + POOLS_ALLOWED.format(pools="gpu-spot"),
    ),
    "another queue's NodePool by nodeSelector": (
        _set(("spec", "nodeSelector"), {"karpenter.sh/nodepool": "notebooks"}),
        f"pools: pod {TRAIN} selects karpenter.sh/nodepool=notebooks (nodeSelector), a pool of "
        "another queue" + POOLS_ALLOWED.format(pools="gpu-spot"),
    ),
    "another queue's pool by preferred node affinity": (
        _set(
            ("spec", "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
            [
                {
                    "weight": 1,
                    "preference": {
                        "matchExpressions": [
                            {
                                "key": f"{DOMAIN}/pool",
                                "operator": "In",
                                "values": ["gpu-spot", "notebooks"],
                            }
                        ]
                    },
                }
            ],
        ),
        f"pools: pod {TRAIN} selects notebooks in its node affinity (In on eks-gpu-platform.io/"
        "pool or karpenter.sh/nodepool), a pool of another queue"
        + POOLS_ALLOWED.format(pools="gpu-spot"),
    ),
    "tolerating the GPU taint without selecting a pool": (
        lambda p: (p["spec"].pop("affinity"), p)[1],
        f"pools: pod {TRAIN} tolerates every taint of inference, notebooks, routed to other "
        "queues, without selecting its pools; add nodeSelector eks-gpu-platform.io/pool (or a "
        "required node affinity In on it)" + POOLS_ALLOWED.format(pools="gpu-spot"),
    ),
}


@pytest.mark.parametrize("stack", ["dev", "dev-1.35"])
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_crafted_tenant_object_is_refused_with_its_message(stack, case):
    change, message = CASES[case]
    assert judge(stack, change(pod_of(stack, "research-batch"))) == [message]


def test_a_pod_without_the_queue_label_gets_it_on_136_and_is_refused_before():
    pod = pod_of("dev", "research-batch")
    del pod["metadata"]["labels"]["kai.scheduler/queue"]
    request = Request(obj=pod, namespace=ns_of("dev", pod))
    assert mutate(POLICIES["dev"], request)["metadata"]["labels"] == {
        "kai.scheduler/queue": "research-batch"
    }
    assert judge("dev", pod) == []
    assert judge("dev-1.35", pod) == [
        "queue binding: Pod train-research-batch in namespace research-batch (queue "
        "research-batch) has no label kai.scheduler/queue on its metadata, so KAI would put it "
        "in default-queue; add the label kai.scheduler/queue: research-batch"
    ]
    deploy = _deployment(pod_of("dev", "research-batch"), "research-batch")
    for part in (deploy["metadata"], deploy["spec"]["template"]["metadata"]):
        del part["labels"]["kai.scheduler/queue"]
    assert judge("dev", deploy) == []
    assert judge("dev-1.35", deploy) == [
        "queue binding: Deployment web in namespace research-batch (queue research-batch) has no "
        "label kai.scheduler/queue on its pod template, so KAI would put it in default-queue; "
        "add the label kai.scheduler/queue: research-batch"
    ]


def test_prod_reserved_efa_nodes_are_unreachable_from_research():
    """llm-training's train-efa (capacity reservation, EFA) from research's namespace."""
    pod = pod_of("prod", "research")
    pod["spec"]["tolerations"].append(
        {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}
    )
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchExpressions"][0]["values"] = ["train-efa"]
    assert judge("prod", pod) == [
        "pools: pod train-research selects train-efa in its node affinity (In on "
        "eks-gpu-platform.io/pool or karpenter.sh/nodepool), a pool of another queue"
        + POOLS_ALLOWED.format(pools="train-spot")
    ]
    del pod["spec"]["affinity"]
    pod["spec"]["nodeSelector"] = {"node.kubernetes.io/instance-type": "p5.48xlarge"}
    assert judge("prod", pod) == [
        "pools: pod train-research tolerates every taint of train-efa, inference, routed to "
        "other queues, without selecting its pools; add nodeSelector eks-gpu-platform.io/pool "
        "(or a required node affinity In on it)" + POOLS_ALLOWED.format(pools="train-spot")
    ]


def test_an_ephemeral_container_may_not_set_visible_devices_in_a_no_gpu_pod():
    old = _no_gpu(pod_of("dev", "research-batch"))
    new = copy.deepcopy(old)
    new["spec"]["ephemeralContainers"] = [
        {
            "name": "debug",
            "image": "busybox",
            "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
        }
    ]
    assert judge("dev", new, operation="UPDATE", old=old, subresource="ephemeralcontainers") == [
        f"GPU visibility: pod {TRAIN} requests no GPU but sets NVIDIA_VISIBLE_DEVICES "
        "(container=value: debug=all); allowed: NVIDIA_VISIBLE_DEVICES unset, void or none, by "
        "value (valueFrom cannot be checked)"
    ]


def test_a_keyless_toleration_gets_one_refusal_the_toleration_guardrails():
    """``platform-tenant-tolerations`` refuses a toleration without a key in the same
    namespaces; the pool rule does not count it, so the validation CLI sees that one message."""
    pod = pod_of("dev", "research-batch")
    del pod["spec"]["affinity"]
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    guardrail = tenant_toleration_policy(
        label_domain=DOMAIN, system_taint_keys=["CriticalAddonsOnly"]
    )
    assert denials(POLICIES["dev"] + guardrail, Request(obj=pod, namespace=ns_of("dev", pod))) == [
        "tenant pods may not carry a toleration without a key (operator Exists tolerates every "
        "taint, the system nodes' included): name the taint to tolerate"
    ]


def test_the_policies_match_what_they_must_and_nothing_else():
    """Every namespaced kind for the queue policy (scope Namespaced: a cluster-scoped object has
    no namespace to read the queue from), pods and ephemeral containers for the pod policy, pod
    CREATE for the 1.36 mutation, all bound to the queue namespaces only, failing closed."""
    selector = queue_namespace_selector(DOMAIN)
    by_name = {(m["kind"], m["metadata"]["name"]): m for m in POLICIES["dev"]}
    queue = by_name[("ValidatingAdmissionPolicy", "platform-tenant-queue")]["spec"]
    pods = by_name[("ValidatingAdmissionPolicy", "platform-tenant-pods")]["spec"]
    label = by_name[("MutatingAdmissionPolicy", "platform-tenant-queue-label")]["spec"]
    assert queue["matchConstraints"] == {
        "namespaceSelector": selector,
        "resourceRules": [
            {
                "apiGroups": ["*"],
                "apiVersions": ["*"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["*"],
                "scope": "Namespaced",
            }
        ],
    }
    assert pods["matchConstraints"]["resourceRules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["pods", "pods/ephemeralcontainers"],
        }
    ]
    assert label["matchConstraints"]["resourceRules"][0]["operations"] == ["CREATE"]
    assert {queue["failurePolicy"], pods["failurePolicy"], label["failurePolicy"]} == {"Fail"}
    for (kind, name), manifest in by_name.items():
        if kind.endswith("Binding"):
            assert manifest["spec"]["matchResources"] == {"namespaceSelector": selector}, name
    assert sorted(by_name) == [
        ("MutatingAdmissionPolicy", "platform-tenant-queue-label"),
        ("MutatingAdmissionPolicyBinding", "platform-tenant-queue-label"),
        ("ValidatingAdmissionPolicy", "platform-tenant-pods"),
        ("ValidatingAdmissionPolicy", "platform-tenant-queue"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-pods"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-queue"),
    ]
    assert {m["kind"] for m in POLICIES["dev-1.35"]} == {
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
