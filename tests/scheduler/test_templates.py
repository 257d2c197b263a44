"""Tests for ``eks_gpu_platform.scheduler``: KAI values, queues, routing, admission, templates."""

import re

import celpy
import pulumi
import pulumi_kubernetes as k8s
import pytest
from crd_validation import reference_dir, validate
from values_check import load_defaults, unknown_keys

from eks_gpu_platform import scheduler as ks
from eks_gpu_platform import versions
from eks_gpu_platform.spec import SpecError, load_spec

POOL_LABEL = "eks-gpu-platform.io/pool"
SYSTEM_SELECTOR = {POOL_LABEL: "system"}
SYSTEM_TOLERATIONS = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}


def res(quota: float, limit: float, weight: float = 1) -> ks.QueueResourceSpec:
    return ks.QueueResourceSpec(quota=quota, limit=limit, over_quota_weight=weight)


def queue(
    name: str,
    *,
    parent: str | None = None,
    pools: tuple[str, ...] = (),
    gpu: tuple[float, float] = (4, 8),
) -> ks.QueueSpec:
    return ks.QueueSpec(
        name=name,
        parent=parent,
        node_pools=pools,
        gpu=res(*gpu),
        cpu=res(64, -1),
        memory=res(512, -1),
    )


def raw_res(quota: float, limit: float, weight: float = 1) -> dict:
    return {"quota": quota, "limit": limit, "overQuotaWeight": weight}


def raw_queue(name: str, parent: str | None = None, pools=("gpu-spot",), **overrides) -> dict:
    out = {
        "name": name,
        "gpu": raw_res(4, 8),
        "cpu": raw_res(64, -1),
        "memory": raw_res(512, -1),
    }
    if parent is not None:
        out["parent"] = parent
    if pools:
        out["nodePools"] = list(pools)
    out.update(overrides)
    return out


# --- KAI values ------------------------------------------------------------------------------


def kai_values(**spec_fields) -> dict:
    spec = ks.SchedulerSpec(queues=(queue("team", pools=("gpu-spot",)),), **spec_fields)
    return ks.kai_values(
        spec=spec,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        pool_label_key=POOL_LABEL,
    )


def test_kai_values_exactly():
    assert kai_values() == {
        "global": {
            "gpuSharing": True,
            "clusterAutoscaling": True,
            "nodeSelector": SYSTEM_SELECTOR,
            "tolerations": SYSTEM_TOLERATIONS,
        },
        "defaultPriorityClasses": {"enabled": False},
        "defaultQueue": {"createDefaultQueue": False},
    }


def test_kai_values_switches():
    out = kai_values(gpu_sharing=False, cluster_autoscaling=False)
    assert (out["global"]["gpuSharing"], out["global"]["clusterAutoscaling"]) == (False, False)


def test_kai_values_keys_exist_in_the_chart_and_leave_the_shard_key_alone():
    defaults = load_defaults(reference_dir() / "kai-scheduler" / "chart-values-v0.16.8.yaml")
    out = kai_values()
    assert unknown_keys(out, defaults) == []
    assert "nodePoolLabelKey" not in out["global"]
    assert defaults["global"]["nodePoolLabelKey"] == ""


def test_kai_values_reject_the_shard_key_as_pool_label():
    message = (
        "kai_values: pool_label_key 'kai.scheduler/node-pool' is KAI's scheduling-shard key; "
        "nodes carrying it without a matching SchedulingShard are invisible to the default "
        "shard; use a label in your own domain, e.g. 'example.com/pool'"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        ks.kai_values(
            spec=ks.SchedulerSpec(queues=(queue("team", pools=("gpu",)),)),
            system_node_selector={},
            system_tolerations=[],
            pool_label_key="kai.scheduler/node-pool",
        )


# --- queues and priority classes -------------------------------------------------------------


def test_queue_manifest_exactly():
    spec = ks.QueueSpec(
        name="team-a",
        parent="research",
        display_name="Team A",
        priority=120,
        gpu=res(4, 8, 2),
        cpu=res(32.5, -1),
        memory=res(256, -1, 0),
        node_pools=("gpu-spot",),
    )
    assert ks.queue_manifest(spec) == {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {
            "displayName": "Team A",
            "parentQueue": "research",
            "priority": 120,
            "resources": {
                "cpu": {"quota": 32500, "limit": -1, "overQuotaWeight": 1},
                "gpu": {"quota": 4, "limit": 8, "overQuotaWeight": 2},
                "memory": {"quota": 274877.906944, "limit": -1, "overQuotaWeight": 0},
            },
        },
    }


@pytest.mark.parametrize(
    ("cores", "millicores"), [(0.5, 500), (1, 1000), (0.001, 1), (-1, -1), (0, 0)]
)
def test_cpu_is_rendered_in_millicores(cores, millicores):
    spec = ks.QueueSpec(
        name="q", gpu=res(1, 1), cpu=res(cores, -1), memory=res(1, -1), node_pools=("p",)
    )
    assert ks.queue_manifest(spec)["spec"]["resources"]["cpu"]["quota"] == millicores


@pytest.mark.parametrize(
    ("gib", "mb"), [(1, 1073.741824), (0.5, 536.870912), (1024, 1099511.627776), (-1, -1)]
)
def test_memory_is_rendered_in_megabytes(gib, mb):
    spec = ks.QueueSpec(
        name="q", gpu=res(1, 1), cpu=res(1, -1), memory=res(gib, -1), node_pools=("p",)
    )
    assert ks.queue_manifest(spec)["spec"]["resources"]["memory"]["quota"] == mb


@pytest.mark.parametrize(
    "spec",
    [
        queue("org"),
        queue("team-a", parent="org", pools=("gpu-spot",), gpu=(0.5, 1.5)),
        ks.QueueSpec(
            name="dev",
            display_name="Developers",
            priority=50,
            gpu=res(0, -1, 0),
            cpu=res(-1, -1),
            memory=res(0, -1),
            node_pools=("cpu",),
        ),
    ],
)
def test_queue_manifests_pass_the_queue_crd(spec):
    manifest = ks.queue_manifest(spec)
    assert validate(manifest) == []
    resources = manifest["spec"]["resources"]
    assert sorted((k, sorted(v)) for k, v in resources.items()) == [
        (kind, ["limit", "overQuotaWeight", "quota"]) for kind in ("cpu", "gpu", "memory")
    ]


def test_queues_parents_first():
    queues = [
        queue("leaf", parent="mid", pools=("p",)),
        queue("other", pools=("p",)),
        queue("mid", parent="root"),
        queue("root"),
    ]
    assert [q.name for q in ks.queues_parents_first(queues)] == ["root", "mid", "leaf", "other"]


def test_priority_classes_match_the_chart_templates():
    assert ks.priority_class_manifests() == [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "train"},
            "value": 50,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "build-preemptible"},
            "value": 75,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "build"},
            "value": 100,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "inference"},
            "value": 125,
        },
    ]
    assert ks.NON_PREEMPTIBLE_CLASSES == ("build", "inference")


# --- spec --------------------------------------------------------------------------------------


def test_scheduler_spec_from_config():
    spec = load_spec(
        ks.SchedulerSpec,
        {
            "queues": [
                raw_queue("org", pools=()),
                raw_queue("team-a", parent="org", pools=("gpu-spot", "gpu-od")),
            ],
            "gpuSharing": False,
        },
        "scheduler",
    )
    assert spec.gpu_sharing is False and spec.cluster_autoscaling is True
    assert spec.queues[1] == ks.QueueSpec(
        name="team-a",
        parent="org",
        gpu=res(4, 8),
        cpu=res(64, -1),
        memory=res(512, -1),
        node_pools=("gpu-spot", "gpu-od"),
    )
    assert ks.leaf_queue_names(spec.queues) == {"team-a"}


def test_disabled_scheduler_needs_no_queues():
    assert load_spec(ks.SchedulerSpec, {"enabled": False}, "scheduler").queues == ()


BAD_SCHEDULER = [
    (
        {"queues": [raw_queue("a"), raw_queue("a")]},
        "scheduler.queues[1].name: 'a' is already the name of queues[0]",
    ),
    (
        {"queues": [raw_queue("org", pools=()), raw_queue("a", parent="orgg")]},
        "scheduler.queues[1].parent: 'orgg' is not a queue; expected one of a, org; "
        "did you mean 'org'?",
    ),
    (
        {"queues": [raw_queue("org"), raw_queue("a", parent="org")]},
        "scheduler.queues[1].parent: 'org' lists nodePools, so it is a leaf queue and cannot be "
        "a parent; only leaf queues take workloads, so move its nodePools to its children",
    ),
    (
        {
            "queues": [
                raw_queue("a", parent="b", pools=()),
                raw_queue("b", parent="a", pools=()),
                raw_queue("c"),
            ]
        },
        "scheduler.queues[0].parent: 'b' closes a cycle: a -> b -> a",
    ),
    (
        {
            "queues": [
                raw_queue("x"),
                raw_queue("c", parent="a", pools=()),
                raw_queue("b", parent="c", pools=()),
                raw_queue("a", parent="b", pools=()),
            ]
        },
        "scheduler.queues[1].parent: 'a' closes a cycle: c -> a -> b -> c",
    ),
    (
        {"queues": [raw_queue("a", parent="a")]},
        "scheduler.queues[0].parent: 'a' is the queue itself",
    ),
    (
        {"queues": [raw_queue("a", pools=())]},
        "scheduler.queues[0].nodePools: is empty, but 'a' is a leaf queue; list the node pools "
        "its workloads run on",
    ),
    (
        {},
        "scheduler.queues: is empty; define at least one leaf queue with nodePools (workloads "
        "can only be submitted to leaf queues)",
    ),
    (
        {"queues": [raw_queue("a", parent="b", pools=()), raw_queue("b", parent="a", pools=())]},
        "scheduler.queues: has no leaf queue; every queue is some queue's parent",
    ),
    (
        {"queues": [raw_queue("a", gpu=raw_res(0, 0))]},
        "scheduler.queues[0].gpu.limit: 0 admits nothing: the queue's pods would stay pending and "
        "Karpenter would keep scaling up for them; use -1 for no limit or a positive number",
    ),
    (
        {"queues": [raw_queue("a", cpu=raw_res(-2, -1))]},
        "scheduler.queues[0].cpu.quota: -2 is not allowed; expected -1 (unlimited) or a number "
        "from 0 up",
    ),
    (
        {"queues": [raw_queue("a", memory=raw_res(0, -0.5))]},
        "scheduler.queues[0].memory.limit: -0.5 is not allowed; expected -1 (unlimited) or a "
        "number from 0 up",
    ),
    (
        {"queues": [raw_queue("a", gpu=raw_res(8, 4))]},
        "scheduler.queues[0].gpu.limit: 4 is below quota 8",
    ),
    (
        {"queues": [raw_queue("a", gpu=raw_res(-1, 4))]},
        "scheduler.queues[0].gpu.quota: is -1 (unlimited) but limit is 4; set a quota up to the "
        "limit, or limit -1",
    ),
    (
        {"queues": [raw_queue("a", gpu=raw_res(1, 2, -1))]},
        "scheduler.queues[0].gpu.overQuotaWeight: -1 is negative; expected a number from 0 up",
    ),
    (
        {"queues": [{k: v for k, v in raw_queue("a").items() if k != "memory"}]},
        "scheduler.queues[0].memory: is required",
    ),
    (
        {"queues": [raw_queue("a", gpu={"limit": 4, "overQuotaWeight": 1})]},
        "scheduler.queues[0].gpu.quota: is required",
    ),
    (
        {"queues": [raw_queue("Team_A")]},
        "scheduler.queues[0].name: 'Team_A' is not a queue name; expected 1-63 lowercase "
        "letters, digits or '-', starting and ending with a letter or digit",
    ),
    (
        {"queues": [raw_queue("a", pools=("gpu", "gpu"))]},
        "scheduler.queues[0].nodePools: lists the same pool twice",
    ),
    (
        {"queues": [raw_queue("a", pools=("GPU",))]},
        "scheduler.queues[0].nodePools[0]: 'GPU' is not a node pool name; expected 1-63 "
        "lowercase letters, digits or '-', starting and ending with a letter or digit",
    ),
    (
        {"queues": [raw_queue("a", nodePool=["gpu"])]},
        "scheduler.queues[0].nodePool: unknown key; did you mean 'nodePools'?",
    ),
]


@pytest.mark.parametrize(("raw", "message"), BAD_SCHEDULER)
def test_bad_scheduler_config(raw, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(ks.SchedulerSpec, raw, "scheduler")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: res(1, 0), "QueueResourceSpec.limit: 0 admits nothing"),
        (lambda: res(4, 2), "QueueResourceSpec.limit: 2 is below quota 4"),
        (
            lambda: ks.QueueSpec(
                name="a", parent="a", gpu=res(1, 1), cpu=res(1, 1), memory=res(1, 1)
            ),
            "QueueSpec.parent: 'a' is the queue itself",
        ),
        (lambda: ks.SchedulerSpec(), "SchedulerSpec.queues: is empty"),
    ],
)
def test_bad_specs_from_python(build, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        build()


# --- friction point 1: pool GPU limits -----------------------------------------------------------

POOLS = {
    "gpu-spot": ks.PoolRouting(preemptible=True, gpu_cap=None),
    "gpu-od": ks.PoolRouting(preemptible=False, gpu_cap=None),
    "gpu-capped": ks.PoolRouting(preemptible=True, gpu_cap=16),
    "cpu": ks.PoolRouting(preemptible=True, gpu_cap=None, gpu=False),
}


@pytest.mark.parametrize(
    ("queues", "pools", "expected"),
    [
        (
            [
                queue("org"),
                queue("a", parent="org", pools=("gpu-spot", "gpu-od"), gpu=(4, 8)),
                queue("b", parent="org", pools=("gpu-spot", "cpu"), gpu=(2, 6)),
                queue("c", pools=("gpu-capped",), gpu=(1, -1)),
            ],
            POOLS,
            {"gpu-spot": 14, "gpu-od": 4, "gpu-capped": 16},
        ),
        (
            [queue("a", pools=("od",), gpu=(0.5, 1)), queue("b", pools=("od",), gpu=(0.25, 1))],
            {"od": ks.PoolRouting(preemptible=False, gpu_cap=None)},
            {"od": 1},
        ),
        (
            [queue("a", pools=("spot",), gpu=(4, 24)), queue("b", pools=("spot",), gpu=(4, 24))],
            {"spot": ks.PoolRouting(preemptible=True, gpu_cap=32)},
            {"spot": 32},
        ),
        (
            [
                queue("a", pools=("spot",), gpu=(0.1, 0.1)),
                queue("b", pools=("spot",), gpu=(0.2, 0.2)),
            ],
            {"spot": ks.PoolRouting(preemptible=True, gpu_cap=None)},
            {"spot": 1},
        ),
        (
            [queue("a", pools=("spot",))],
            {
                "spot": ks.PoolRouting(preemptible=True, gpu_cap=None),
                "unused": ks.PoolRouting(preemptible=True, gpu_cap=8),
            },
            {"spot": 8, "unused": 0},
        ),
        (
            # A parent's pools never count: only leaf queues take workloads.
            [
                queue("org", pools=("spot",), gpu=(100, 100)),
                queue("a", parent="org", pools=("spot",)),
            ],
            {"spot": ks.PoolRouting(preemptible=True, gpu_cap=None)},
            {"spot": 8},
        ),
    ],
)
def test_pool_gpu_limits(queues, pools, expected):
    assert ks.pool_gpu_limits(queues, pools) == expected


def test_pool_gpu_limits_need_a_cap_for_unlimited_queues():
    message = (
        "pool_gpu_limits: node pool 'gpu-spot' is fed by a queue with unlimited GPUs and has no "
        "GPU cap; see routing_problems"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        ks.pool_gpu_limits([queue("a", pools=("gpu-spot",), gpu=(1, -1))], POOLS)


@pytest.mark.parametrize(
    ("queues", "pools", "expected"),
    [
        (
            [queue("a", pools=("gpu-spot", "gpu-od", "gpu-capped", "cpu"))],
            POOLS,
            [],
        ),
        (
            [queue("a", pools=("gpu-spot", "gpu-od", "gpu-capped", "gpu-spto"))],
            POOLS,
            [
                (
                    ("queues", 0, "node_pools", 3),
                    "'gpu-spto' is not a node pool; expected one of cpu, gpu-capped, gpu-od, "
                    "gpu-spot; did you mean 'gpu-spot'?",
                )
            ],
        ),
        (
            [queue("a", pools=("gpu-spot", "gpu-capped"))],
            POOLS,
            [
                (
                    ("queues",),
                    "no leaf queue routes to GPU node pool 'gpu-od'; its GPU limit would be 0, "
                    "so Karpenter would never provision it; add it to a leaf queue's nodePools",
                )
            ],
        ),
        (
            [
                queue("a", pools=("gpu-spot", "gpu-od", "gpu-capped"), gpu=(1, -1)),
                queue("b", pools=("gpu-od",), gpu=(-1, -1)),
            ],
            POOLS,
            [
                (
                    ("queues", 0, "gpu", "limit"),
                    "is -1 (unlimited) and the queue routes to node pool 'gpu-spot', which has no "
                    "GPU cap, so nothing bounds its scale-up; set a finite gpu.limit or cap the "
                    "pool's GPUs",
                ),
                (
                    ("queues", 1, "gpu", "quota"),
                    "is -1 (unlimited) and the queue routes to node pool 'gpu-od', which has no "
                    "GPU cap, so nothing bounds its scale-up; set a finite gpu.quota or cap the "
                    "pool's GPUs",
                ),
            ],
        ),
        (
            [
                queue("a", pools=("gpu-spot", "gpu-capped"), gpu=(0, 4)),
                queue("b", pools=("gpu-od",), gpu=(0, 4)),
                queue("c", pools=("gpu-od",), gpu=(0, -1)),
            ],
            POOLS,
            [
                (
                    ("queues",),
                    "the GPU limit of node pool 'gpu-od' comes to 0 (it is non-preemptible, and "
                    "gpu.quota of its queues (b, c) sums to 0), so Karpenter would never "
                    "provision it",
                )
            ],
        ),
        (
            [queue("a", pools=("spot",))],
            {"spot": ks.PoolRouting(preemptible=True, gpu_cap=0)},
            [
                (
                    ("queues",),
                    "the GPU limit of node pool 'spot' comes to 0 (its GPU cap is 0), so "
                    "Karpenter would never provision it",
                )
            ],
        ),
    ],
)
def test_routing_problems(queues, pools, expected):
    assert ks.routing_problems(queues, pools) == expected


def test_routing_problems_read_as_configuration_keys():
    problems = ks.routing_problems(
        [queue("a", pools=("gpu-spto",))], {"gpu-spot": POOLS["gpu-spot"]}
    )
    assert SpecError("scheduler", problems, config=True).lines == [
        "scheduler.queues[0].nodePools[0]: 'gpu-spto' is not a node pool; expected one of "
        "gpu-spot; did you mean 'gpu-spot'?",
        "scheduler.queues: no leaf queue routes to GPU node pool 'gpu-spot'; its GPU limit would "
        "be 0, so Karpenter would never provision it; add it to a leaf queue's nodePools",
    ]


# --- friction point 3: admission policy ----------------------------------------------------------

NON_PREEMPTIBLE = (
    "(has(object.metadata.labels) && 'kai.scheduler/preemptibility' in object.metadata.labels) "
    "? object.metadata.labels['kai.scheduler/preemptibility'] == 'non-preemptible' "
    ": ((has(object.metadata.labels) && 'priorityClassName' in object.metadata.labels) "
    "? object.metadata.labels['priorityClassName'] "
    ": (has(object.spec.priorityClassName) ? object.spec.priorityClassName : '')) "
    "in ['build', 'inference']"
)
ANNOTATED = (
    "has(object.metadata.annotations) && 'karpenter.sh/do-not-disrupt' in "
    "object.metadata.annotations"
)
POD_RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    ]
}


@pytest.mark.parametrize("version", ["1.36", "1.37", "v1.36.2"])
def test_mutating_policy_from_1_36(version):
    assert ks.disruption_admission_policy(kubernetes_version=version) == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "kai-non-preemptible-do-not-disrupt"},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": POD_RULES,
                "matchConditions": [
                    {"name": "non-preemptible", "expression": NON_PREEMPTIBLE},
                    {"name": "not-annotated", "expression": f"!({ANNOTATED})"},
                ],
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {
                            "expression": "Object{metadata: Object.metadata{annotations: "
                            '{"karpenter.sh/do-not-disrupt": "true"}}}'
                        },
                    }
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "kai-non-preemptible-do-not-disrupt"},
            "spec": {"policyName": "kai-non-preemptible-do-not-disrupt"},
        },
    ]


@pytest.mark.parametrize("version", ["1.30", "1.35", "1.35.4"])
def test_validating_policy_before_1_36(version):
    assert ks.disruption_admission_policy(kubernetes_version=version) == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "kai-non-preemptible-do-not-disrupt"},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": POD_RULES,
                "matchConditions": [{"name": "non-preemptible", "expression": NON_PREEMPTIBLE}],
                "validations": [
                    {
                        "expression": ANNOTATED,
                        "message": "non-preemptible pods (priority class build, inference, or "
                        "label kai.scheduler/preemptibility=non-preemptible) must carry the "
                        'annotation karpenter.sh/do-not-disrupt: "true", or Karpenter may '
                        "consolidate their node",
                        "reason": "Invalid",
                    }
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "kai-non-preemptible-do-not-disrupt"},
            "spec": {
                "policyName": "kai-non-preemptible-do-not-disrupt",
                "validationActions": ["Deny"],
            },
        },
    ]


def test_policy_needs_a_kubernetes_version():
    with pytest.raises(ValueError, match=re.escape("kubernetes_version 'latest' is not a version")):
        ks.disruption_admission_policy(kubernetes_version="latest")


_CEL = celpy.Environment()


def evaluate(expression: str, pod: dict) -> bool:
    program = _CEL.program(_CEL.compile(expression))
    return bool(program.evaluate({"object": celpy.json_to_cel(pod)}))


def pod(priority_class=None, labels=None, annotations=None) -> dict:
    metadata = {"name": "p"}
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    spec = {"containers": [{"name": "c", "image": "i"}]}
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    return {"metadata": metadata, "spec": spec}


DND = {"karpenter.sh/do-not-disrupt": "true"}
PREEMPTIBILITY = "kai.scheduler/preemptibility"

# pod -> (mutated by the 1.36 policy, denied by the pre-1.36 policy)
ADMISSION_CASES = [
    (pod("inference"), (True, True)),
    (pod("build", labels={"app": "x"}), (True, True)),
    (pod("build", annotations={"other": "x"}), (True, True)),
    (pod("build", annotations=DND), (False, False)),
    (pod("inference", annotations={"karpenter.sh/do-not-disrupt": "30m"}), (False, False)),
    (pod("train"), (False, False)),
    (pod("build-preemptible"), (False, False)),
    (pod(), (False, False)),
    (pod("train", labels={PREEMPTIBILITY: "non-preemptible"}), (True, True)),
    (pod("inference", labels={PREEMPTIBILITY: "preemptible"}), (False, False)),
    (pod(labels={"priorityClassName": "build"}), (True, True)),
    (pod("inference", labels={"priorityClassName": "train"}), (False, False)),
]


@pytest.mark.parametrize(("candidate", "outcome"), ADMISSION_CASES)
def test_admission_cel_on_pods(candidate, outcome):
    mutating, _ = ks.disruption_admission_policy(kubernetes_version="1.36")
    mutated = all(evaluate(c["expression"], candidate) for c in mutating["spec"]["matchConditions"])
    validating, _ = ks.disruption_admission_policy(kubernetes_version="1.35")
    denied = all(
        evaluate(c["expression"], candidate) for c in validating["spec"]["matchConditions"]
    ) and not all(evaluate(v["expression"], candidate) for v in validating["spec"]["validations"])
    assert (mutated, denied) == outcome


def test_apply_configuration_expression_parses():
    mutating, _ = ks.disruption_admission_policy(kubernetes_version="1.36")
    expression = mutating["spec"]["mutations"][0]["applyConfiguration"]["expression"]
    assert _CEL.compile(expression) is not None


def test_custom_priority_classes():
    policy, _ = ks.disruption_admission_policy(
        kubernetes_version="1.36", priority_classes=("critical",)
    )
    condition = policy["spec"]["matchConditions"][0]["expression"]
    assert condition.endswith("in ['critical']")
    assert evaluate(condition, pod("critical"))
    assert not evaluate(condition, pod("inference"))


# --- friction points 2 and 4: workload templates -------------------------------------------------


def test_training_job_template_exactly():
    job = ks.training_job_template(
        name="llama-pretrain",
        namespace="research",
        queue="team-a",
        pool="p5-efa",
        pool_label_key=POOL_LABEL,
        replicas=4,
        gpus_per_pod=8,
        image="nvcr.io/nvidia/pytorch:25.01-py3",
        command=["torchrun", "train.py"],
        efa_per_pod=32,
        hugepages_2mi="5120Mi",
        memory="1000Gi",
    )
    own = {"matchLabels": {"batch.kubernetes.io/job-name": "llama-pretrain"}}
    resources = {
        "memory": "1000Gi",
        "nvidia.com/gpu": "8",
        "vpc.amazonaws.com/efa": "32",
        "hugepages-2Mi": "5120Mi",
    }
    assert job == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "llama-pretrain",
            "namespace": "research",
            "labels": {"kai.scheduler/queue": "team-a"},
            "annotations": {"kai.scheduler/batch-min-member": "4"},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": 4,
            "parallelism": 4,
            "template": {
                "metadata": {"labels": {"kai.scheduler/queue": "team-a"}},
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "priorityClassName": "train",
                    "restartPolicy": "Never",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": POOL_LABEL,
                                                "operator": "In",
                                                "values": ["p5-efa"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        },
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": own, "topologyKey": POOL_LABEL},
                                {
                                    "labelSelector": own,
                                    "topologyKey": "topology.kubernetes.io/zone",
                                },
                            ]
                        },
                    },
                    "tolerations": [GPU_TOLERATION, EFA_TOLERATION],
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                            "command": ["torchrun", "train.py"],
                            "resources": {"requests": resources, "limits": resources},
                        }
                    ],
                },
            },
        },
    }


def job(**overrides) -> dict:
    fields = {
        "name": "job",
        "namespace": "ns",
        "queue": "q",
        "pool": "gpu-spot",
        "pool_label_key": POOL_LABEL,
        "replicas": 2,
        "gpus_per_pod": 1,
        "image": "img",
        "command": ["run"],
    }
    return ks.training_job_template(**{**fields, **overrides})


@pytest.mark.parametrize(
    ("overrides", "pod_annotations"),
    [
        ({}, None),
        ({"do_not_disrupt": "4h"}, {"karpenter.sh/do-not-disrupt": "4h"}),
        ({"priority_class": "build"}, {"karpenter.sh/do-not-disrupt": "true"}),
        (
            {"priority_class": "build", "do_not_disrupt": "4h"},
            {"karpenter.sh/do-not-disrupt": "true"},
        ),
    ],
)
def test_training_job_disruption_annotations(overrides, pod_annotations):
    template = job(**overrides)["spec"]["template"]
    assert template["metadata"].get("annotations") == pod_annotations
    assert template["spec"]["tolerations"] == [GPU_TOLERATION]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"replicas": 0}, "training_job_template: replicas 0 must be at least 1"),
        ({"gpus_per_pod": 0}, "training_job_template: gpus_per_pod 0 must be at least 1"),
        ({"efa_per_pod": -1}, "training_job_template: efa_per_pod -1 must not be negative"),
        (
            {"hugepages_2mi": "1Gi"},
            "training_job_template: hugepages_2mi '1Gi' needs a cpu or memory request as well",
        ),
        (
            {"name": "Job_1"},
            "training_job_template: name 'Job_1' is not a DNS label (1-63 lowercase letters, "
            "digits or '-', starting and ending with a letter or digit)",
        ),
    ],
)
def test_training_job_rejects(overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        job(**overrides)


def test_inference_deployment_template_exactly():
    deployment = ks.inference_deployment_template(
        name="chat",
        namespace="serving",
        queue="inference",
        pool="gpu-od",
        pool_label_key=POOL_LABEL,
        replicas=3,
        gpus_per_pod=1,
        image="vllm/vllm-openai:v0.9.0",
        cpu="8",
        memory="64Gi",
    )
    resources = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}
    assert deployment == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "chat",
            "namespace": "serving",
            "labels": {"kai.scheduler/queue": "inference"},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "chat"}},
            "template": {
                "metadata": {
                    "labels": {
                        "app.kubernetes.io/name": "chat",
                        "kai.scheduler/queue": "inference",
                    },
                    "annotations": {"karpenter.sh/do-not-disrupt": "true"},
                },
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "priorityClassName": "inference",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": POOL_LABEL,
                                                "operator": "In",
                                                "values": ["gpu-od"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": [GPU_TOLERATION],
                    "containers": [
                        {
                            "name": "server",
                            "image": "vllm/vllm-openai:v0.9.0",
                            "resources": {"requests": resources, "limits": resources},
                        }
                    ],
                },
            },
        },
    }


def test_fractional_pod_template_exactly():
    manifest = ks.fractional_pod_template(
        name="notebook",
        namespace="dev",
        queue="team-a",
        pool="gpu-spot",
        pool_label_key=POOL_LABEL,
        image="jupyter/base",
        gpu_fraction=0.5,
        cpu="2",
    )
    assert manifest == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "notebook",
            "namespace": "dev",
            "labels": {"kai.scheduler/queue": "team-a"},
            "annotations": {"gpu-fraction": "0.5"},
        },
        "spec": {
            "schedulerName": "kai-scheduler",
            "priorityClassName": "train",
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": POOL_LABEL, "operator": "In", "values": ["gpu-spot"]}
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [GPU_TOLERATION],
            "containers": [
                {
                    "name": "main",
                    "image": "jupyter/base",
                    "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}},
                }
            ],
        },
    }


def test_fractional_pod_by_gpu_memory_and_non_preemptible():
    manifest = ks.fractional_pod_template(
        name="nb",
        namespace="dev",
        queue="team-a",
        pool="gpu-spot",
        pool_label_key=POOL_LABEL,
        image="img",
        command=["sleep", "infinity"],
        gpu_memory_mib=2000,
        priority_class="build",
    )
    assert manifest["metadata"]["annotations"] == {
        "gpu-memory": "2000",
        "karpenter.sh/do-not-disrupt": "true",
    }
    assert manifest["spec"]["containers"] == [
        {"name": "main", "image": "img", "command": ["sleep", "infinity"]}
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "fractional_pod_template: set exactly one of gpu_fraction, gpu_memory_mib"),
        (
            {"gpu_fraction": 0.5, "gpu_memory_mib": 100},
            "fractional_pod_template: set exactly one of gpu_fraction, gpu_memory_mib",
        ),
        (
            {"gpu_fraction": 1.0},
            "fractional_pod_template: gpu_fraction 1.0 must be between 0 and 1 (exclusive); "
            "request whole GPUs with nvidia.com/gpu",
        ),
        ({"gpu_memory_mib": 0}, "fractional_pod_template: gpu_memory_mib 0 must be at least 1"),
    ],
)
def test_fractional_pod_rejects(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ks.fractional_pod_template(
            name="nb",
            namespace="dev",
            queue="q",
            pool="p",
            pool_label_key=POOL_LABEL,
            image="img",
            **fields,
        )


# --- component ---------------------------------------------------------------------------------

TYPE = "eks-gpu-platform:index:KaiScheduler"
QUEUE_TYPE = "kubernetes:scheduling.run.ai/v2:Queue"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
PRIORITY_TYPE = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
ADMISSION = "kubernetes:admissionregistration.k8s.io/v1:"

SPEC = ks.SchedulerSpec(
    queues=(
        queue("team-a", parent="org", pools=("gpu-spot",)),
        queue("org"),
        queue("inference", pools=("gpu-od",), gpu=(8, 8)),
    )
)


def make_scheduler(version: str = "1.36", policy: bool = True, label: str = POOL_LABEL):
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        operator = k8s.core.v1.ConfigMap("operator", opts=pulumi.ResourceOptions(provider=provider))
        ks.KaiScheduler(
            "kai",
            ks.KaiSchedulerArgs(
                spec=SPEC,
                k8s_provider=provider,
                kubernetes_version=version,
                pool_label_key=label,
                system_node_selector=SYSTEM_SELECTOR,
                system_tolerations=SYSTEM_TOLERATIONS,
                disruption_policy=policy,
                depends_on=[operator],
            ),
        )

    return program


def children(recording):
    component = next(r for r in recording.resources if r.type == TYPE)
    return component, recording.children_of(component.urn)


def test_component_children(run_program):
    recording = run_program(make_scheduler())
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
    recording = run_program(make_scheduler())
    _, kids = children(recording)
    release = next(r for r in kids if r.type == RELEASE_TYPE)
    namespace = next(r for r in kids if r.type == NAMESPACE_TYPE)
    operator = next(r for r in recording.resources if r.name == "operator")
    assert namespace.inputs["metadata"] == {"name": "kai-scheduler"}
    assert operator.urn in namespace.dependencies
    assert {namespace.urn, operator.urn} <= set(release.dependencies)
    inputs = release.inputs
    assert inputs["name"] == "kai-scheduler"
    assert inputs["chart"] == "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler"
    assert inputs["version"] == versions.KAI_SCHEDULER.version == "v0.16.8"
    assert inputs["namespace"] == "kai-scheduler"
    assert "repositoryOpts" not in inputs
    assert inputs["values"] == ks.kai_values(
        spec=SPEC,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        pool_label_key=POOL_LABEL,
    )


def test_component_queues_after_the_release_and_their_parents(run_program):
    recording = run_program(make_scheduler())
    _, kids = children(recording)
    release = next(r for r in kids if r.type == RELEASE_TYPE)
    queues = {r.name: r for r in kids if r.type == QUEUE_TYPE}
    assert sorted(queues) == ["kai-queue-inference", "kai-queue-org", "kai-queue-team-a"]
    for spec in SPEC.queues:
        registered = queues[f"kai-queue-{spec.name}"]
        manifest = ks.queue_manifest(spec, label_domain="eks-gpu-platform.io")
        assert registered.inputs["apiVersion"] == "scheduling.run.ai/v2"
        assert registered.inputs["kind"] == "Queue"
        assert registered.inputs["metadata"] == manifest["metadata"]
        assert registered.inputs["spec"] == manifest["spec"]
        assert release.urn in registered.dependencies
    assert queues["kai-queue-org"].urn in queues["kai-queue-team-a"].dependencies


def test_component_priority_classes(run_program):
    recording = run_program(make_scheduler())
    _, kids = children(recording)
    classes = {
        r.inputs["metadata"]["name"]: r.inputs["value"] for r in kids if r.type == PRIORITY_TYPE
    }
    assert classes == {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}


@pytest.mark.parametrize(
    ("version", "policy", "expected"),
    [
        ("1.36", True, ["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"]),
        ("1.35", True, ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]),
        ("1.36", False, []),
    ],
)
def test_component_admission_policy(run_program, version, policy, expected):
    recording = run_program(make_scheduler(version, policy))
    _, kids = children(recording)
    admission = [r for r in kids if r.type.startswith(ADMISSION)]
    assert [r.type.removeprefix(ADMISSION) for r in admission] == expected
    manifests = ks.disruption_admission_policy(kubernetes_version=version) if policy else []
    for registered, manifest in zip(admission, manifests, strict=True):
        assert registered.inputs["metadata"] == manifest["metadata"]
        assert registered.inputs["spec"] == manifest["spec"]
    if admission:
        assert admission[0].urn in admission[1].dependencies


def test_component_rejects_the_shard_key_before_registering(run_program):
    with pytest.raises(Exception, match=re.escape("is KAI's scheduling-shard key")):
        run_program(make_scheduler(label="kai.scheduler/node-pool"))


def test_leaf_queue_records_its_node_pools_for_the_policy_pack():
    leaf = next(q for q in SPEC.queues if q.node_pools)
    parent = next(q for q in SPEC.queues if not q.node_pools)
    assert ks.queue_manifest(leaf, label_domain="example.com")["metadata"] == {
        "name": leaf.name,
        "annotations": {"example.com/node-pools": ",".join(leaf.node_pools)},
    }
    assert ks.queue_manifest(parent, label_domain="example.com")["metadata"] == {
        "name": parent.name
    }


@pytest.mark.parametrize(
    ("preemptible", "slices", "cap", "expected"),
    [
        # quota 6 / limit 10 admitted slices; each physical GPU carries `slices` of them.
        (False, 1, None, 6),
        (False, 4, None, 2),  # ceil(6 / 4)
        (True, 4, None, 3),  # ceil(10 / 4)
        (True, 4, 2, 2),
        (True, 10, None, 1),
    ],
)
def test_time_sliced_pool_limit_counts_physical_gpus(preemptible, slices, cap, expected):
    queues = (queue("team", pools=("shared",), gpu=(6, 10)),)
    pools = {"shared": ks.PoolRouting(preemptible, cap, slices_per_gpu=slices)}
    assert ks.pool_gpu_limits(queues, pools) == {"shared": expected}
