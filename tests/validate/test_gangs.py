"""The scheduling phase's node-launching checks on FakeKube: the gang (PodGroup and pods, exact)
and the over-limit job; the cluster's answers (placement, KAI's reason, NodeClaims, events) are
written into the fake. The capacity literals are dev's build/dev/capacity.json, trimmed."""

from __future__ import annotations

import types

import pytest

from eks_gpu_platform.validate import gangs, over_limit, scheduling
from eks_gpu_platform.validate.core import Planned

from .fake_kube import FakeKube
from .phase_helpers import make_ctx

MANAGED = {
    "app.kubernetes.io/managed-by": "eks-gpu-platform-validate",
    "eks-gpu-platform.validate/run": "r1",
}
BATCH_NS = "validate-r1-research-batch"
SERVING_NS = "validate-r1-research-serving"
SMALL = ["g6.xlarge", "g6.2xlarge"]
BIG = ["g6.12xlarge", "g6.48xlarge"]
CAPACITY = {
    "pools": [
        {
            "name": "gpu-spot",
            "instanceTypes": SMALL,
            "advertisedPerNode": {
                "g6.xlarge": {"nvidia.com/gpu": 1},
                "g6.2xlarge": {"nvidia.com/gpu": 1},
            },
            "limit": {"gpu-spot": {"nvidia.com/gpu": 6}},
            "nodePools": [{"name": "gpu-spot", "instanceTypes": SMALL}],
            "maxNodes": 6,
        },
        {
            "name": "inference",
            "instanceTypes": [*SMALL, *BIG],
            "advertisedPerNode": {
                "g6.xlarge": {"nvidia.com/gpu": 1},
                "g6.2xlarge": {"nvidia.com/gpu": 1},
                "g6.12xlarge": {"nvidia.com/gpu": 4},
                "g6.48xlarge": {"nvidia.com/gpu": 8},
            },
            "limit": {"inference": {"nvidia.com/gpu": 4}},
            "nodePools": [{"name": "inference", "instanceTypes": [*SMALL, *BIG]}],
            "maxNodes": 4,
        },
        {
            "name": "notebooks",
            "instanceTypes": ["g6.xlarge"],
            "advertisedPerNode": {"g6.xlarge": {"nvidia.com/gpu": 4}},
            "limit": {"notebooks": {"nvidia.com/gpu": 4}},
            "nodePools": [{"name": "notebooks", "instanceTypes": ["g6.xlarge"]}],
            "maxNodes": 1,
        },
    ],
    "queues": [
        {
            "name": "research-batch",
            "limit": 8,
            "effectiveLimit": 8,
            "pools": ["gpu-spot"],
            "reachablePerPool": {"gpu-spot": 6},
        },
        {
            "name": "research-notebooks",
            "limit": 2,
            "effectiveLimit": 2,
            "pools": ["notebooks"],
            "reachablePerPool": {"notebooks": 4},
        },
        {
            "name": "research-serving",
            "limit": 4,
            "effectiveLimit": 4,
            "pools": ["inference"],
            "reachablePerPool": {"inference": 4},
        },
    ],
}
OUTPUTS = {"clusterEndpoint": "https://ABC.gr7.us-west-2.eks.amazonaws.com"}


def namespace(queue: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": queue,
            "labels": {
                "eks-gpu-platform.io/queue": queue,
                "pod-security.kubernetes.io/enforce": "restricted",
            },
        },
    }


GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "true"}
EFA_TAINT = {"effect": "NoSchedule", "key": "vpc.amazonaws.com/efa", "value": "true"}


def nodepool(name: str, *taints: dict) -> dict:
    """A rendered NodePool, trimmed to its labels and taints (build/dev/manifests/
    nodepool-gpu-spot.yaml; an EFA pool's as build/prod/manifests/nodepool-train-efa.yaml)."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"eks-gpu-platform.io/pool": name}},
                "spec": {"taints": list(taints)},
            }
        },
    }


NODEPOOL = nodepool("gpu-spot", GPU_TAINT)
MANIFESTS = [
    namespace("research-batch"),
    namespace("research-notebooks"),
    namespace("research-serving"),
    NODEPOOL,
    nodepool("inference", GPU_TAINT),
    nodepool("notebooks", GPU_TAINT),
]
# The affinity of build/dev/examples/training-research-batch.yaml's Job.
TRAINING_EXAMPLE = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train-research-batch
spec:
  template:
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: eks-gpu-platform.io/pool
                operator: In
                values:
                - gpu-spot
              - key: topology.kubernetes.io/zone
                operator: In
                values:
                - us-west-2a
              - key: node.kubernetes.io/instance-type
                operator: In
                values:
                - g6.xlarge
"""
PRICES = {"g6.xlarge": 0.8048, "g6.2xlarge": 0.9776, "g6.12xlarge": 4.6016, "g6.48xlarge": 13.35}


@pytest.fixture
def prices(monkeypatch):
    """Stands in for vgpu's prices.py (its contract: nodes x the highest hourly price among
    planned.instance_types x max_minutes / 60, None when a type has no price)."""
    module = types.ModuleType("eks_gpu_platform.validate.prices")
    table = dict(PRICES)

    def estimate_usd(planned, region, user=None):
        assert region == "us-west-2"
        if any(t not in table for t in planned.instance_types):
            return None
        return (
            planned.nodes * max(table[t] for t in planned.instance_types) * planned.max_minutes / 60
        )

    module.estimate_usd = estimate_usd
    monkeypatch.setattr(gangs, "prices", module)
    return table


@pytest.fixture
def render_dir(tmp_path):
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "training-research-batch.yaml").write_text(TRAINING_EXAMPLE)
    return tmp_path


def ctx_for(kube, render_dir, capacity=CAPACITY, **options):
    ctx = make_ctx(kube, MANIFESTS, capacity=capacity, render_dir=render_dir, **options)
    object.__setattr__(ctx.render, "outputs", OUTPUTS)
    return ctx


def node(name, zone="us-west-2a", itype="g6.xlarge", pool="gpu-spot"):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "eks-gpu-platform.io/pool": pool,
                "topology.kubernetes.io/zone": zone,
                "node.kubernetes.io/instance-type": itype,
            },
        },
    }


def placing(kube: FakeKube, nodes: list[str | None]):
    """Bind the gang's pods, in creation order, to ``nodes`` (None: left Pending)."""
    queue = list(nodes)

    def on_create(obj):
        if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith("validate-r1-gang-"):
            target = queue.pop(0)
            if target:
                obj["spec"]["nodeName"] = target
                obj["status"] = {"phase": "Running"}
            else:
                obj["status"] = {"phase": "Pending"}
        return obj

    kube.on_create = on_create


def gang_result(kube, render_dir, **options):
    return gangs.gang_check(ctx_for(kube, render_dir, **options))


def test_gang_candidates_and_pin(render_dir):
    queues = ["research-batch", "research-notebooks", "research-serving"]
    assert gangs.gang_candidates(CAPACITY, queues, render_dir, ()) == [
        gangs.GangPlan("gpu-spot", "research-batch", "us-west-2a", "g6.xlarge", ("g6.xlarge",)),
        gangs.GangPlan("inference", "research-serving", None, None, (*SMALL, *BIG)),
    ]
    # notebooks: one node at most. --pool restricts.
    assert [
        p.pool for p in gangs.gang_candidates(CAPACITY, queues, render_dir, ("inference",))
    ] == ["inference"]


def test_gang_passes_with_exact_objects(prices, render_dir):
    kube = FakeKube([node("n1"), node("n2")])
    placing(kube, ["n1", "n2"])
    seen = []
    original = kube.create
    kube.create = lambda obj, dry_run=False: seen.append(obj) or original(obj, dry_run=dry_run)
    r = gang_result(kube, render_dir)
    assert (r.status, r.reason, r.details) == (
        "pass",
        "all 2 members ran on 2 nodes of pool gpu-spot (us-west-2a, g6.xlarge) after 0 s",
        (
            "pool gpu-spot, queue research-batch, estimated at most $0.80",
            "validate-r1-gang-0: Running on n1",
            "validate-r1-gang-1: Running on n2",
            "nodes n1, n2: zones ['us-west-2a'], types ['g6.xlarge']",
        ),
    )
    group, pod0 = seen[2], seen[3]
    assert group == {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "validate-r1-gang", "namespace": BATCH_NS, "labels": MANAGED},
        "spec": {
            "minMember": 2,
            "queue": "research-batch",
            "priorityClassName": "train",
            "preemptibility": "preemptible",
        },
    }
    assert pod0["metadata"] == {
        "name": "validate-r1-gang-0",
        "namespace": BATCH_NS,
        "labels": {
            "kai.scheduler/queue": "research-batch",
            "pod-group-name": "validate-r1-gang",
            "kai.scheduler/preemptibility": "preemptible",
            **MANAGED,
        },
        "annotations": {"pod-group-name": "validate-r1-gang"},
    }
    spec = pod0["spec"]
    assert spec["schedulerName"] == "kai-scheduler"
    assert spec["priorityClassName"] == "train"
    assert spec["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert spec["containers"][0]["resources"] == {
        "requests": {"cpu": "10m", "memory": "16Mi", "nvidia.com/gpu": "1"},
        "limits": {"memory": "16Mi", "nvidia.com/gpu": "1"},
    }
    assert spec["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "eks-gpu-platform.io/pool",
                                "operator": "In",
                                "values": ["gpu-spot"],
                            },
                            {
                                "key": "topology.kubernetes.io/zone",
                                "operator": "In",
                                "values": ["us-west-2a"],
                            },
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": ["g6.xlarge"],
                            },
                        ]
                    }
                ]
            }
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"pod-group-name": "validate-r1-gang"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        },
    }
    # The gang is deleted as soon as it is judged.
    assert not [k for k in kube.objects if k[1] in ("Pod", "PodGroup")]


def test_gang_pods_tolerate_every_taint_of_the_pools_nodepools(prices, render_dir):
    # An EFA pool's NodePool taints vpc.amazonaws.com/efa too: without its toleration Karpenter
    # never launches for the gang (karpenter v1.15.0 scheduling/nodeclaim.go L132-135).
    kube = FakeKube([node("n1"), node("n2")])
    placing(kube, ["n1", "n2"])
    seen = []
    original = kube.create
    kube.create = lambda obj, dry_run=False: seen.append(obj) or original(obj, dry_run=dry_run)
    ctx = ctx_for(kube, render_dir)
    manifests = [m for m in MANIFESTS if m is not NODEPOOL]
    object.__setattr__(
        ctx.render, "manifests", (*manifests, nodepool("gpu-spot", GPU_TAINT, EFA_TAINT))
    )
    assert gangs.gang_check(ctx).status == "pass"
    for pod in seen[3:5]:
        assert pod["spec"]["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"},
        ]


def test_gang_in_part_fails(prices, render_dir):
    kube = FakeKube([node("n1")])
    placing(kube, ["n1", None])
    r = gang_result(kube, render_dir, time_cap_s=600.0)
    assert (r.status, r.reason) == (
        "fail",
        "part of the gang was placed: 1 of 2 bound, 1 running after 600 s",
    )


def test_gang_never_placed_fails(prices, render_dir):
    kube = FakeKube([])
    placing(kube, [None, None])
    r = gang_result(kube, render_dir, time_cap_s=300.0)
    assert (r.status, r.reason) == (
        "fail",
        "no member of the gang was placed within 300 s (time cap)",
    )


def test_gang_across_zones_fails(prices, render_dir):
    kube = FakeKube([node("n1"), node("n2", zone="us-west-2b")])
    placing(kube, ["n1", "n2"])
    r = gang_result(kube, render_dir)
    assert (r.status, r.reason) == (
        "fail",
        "zones ['us-west-2a', 'us-west-2b'], the gang template pins us-west-2a",
    )


def test_gang_over_the_cost_cap_refuses_to_start(prices, render_dir):
    kube = FakeKube([])
    r = gang_result(kube, render_dir, cost_cap_usd=0.5)
    assert (r.status, r.reason) == (
        "skip",
        "the cheapest gang (2 x g6.xlarge in pool gpu-spot for up to 30 min) is estimated at "
        "$0.80, over the cost cap $0.50",
    )
    assert not [c for c in kube.calls if c[0] == "create"]


def test_gang_picks_the_cheapest_pool(prices, render_dir):
    prices["g6.xlarge"] = 100.0  # inference on its big types only (13.35) is now cheaper
    inference = {
        **CAPACITY["pools"][1],
        "instanceTypes": BIG,
        "nodePools": [{"name": "inference", "instanceTypes": BIG}],
    }
    capacity = {"pools": [CAPACITY["pools"][0], inference], "queues": CAPACITY["queues"]}
    kube = FakeKube([])
    placing(kube, [None, None])
    r = gangs.gang_check(ctx_for(kube, render_dir, capacity=capacity, time_cap_s=60.0))
    assert r.details[0] == "pool inference, queue research-serving, estimated at most $0.45"


def test_gang_skips_without_prices_or_pools(render_dir):
    # the real price table (prices.py) has no us-west-2 price
    r = gang_result(FakeKube([]), render_dir)
    assert (r.status, r.reason) == (
        "skip",
        "no price for g6.12xlarge, g6.2xlarge, g6.48xlarge, g6.xlarge in us-west-2: the cost cap "
        "cannot be held (--price INSTANCE_TYPE=USD_PER_HOUR supplies one)",
    )
    r = gang_result(FakeKube([]), render_dir, pools=("notebooks",))
    assert (r.status, r.reason) == (
        "skip",
        "no GPU pool among --pool notebooks holds a gang of 2 one-GPU pods for a queue routed to "
        "it (share, limit or nodes below 2)",
    )
    r = gangs.gang_check(ctx_for(FakeKube([]), render_dir, capacity={"pools": [], "queues": []}))
    assert (r.status, r.reason) == ("skip", "the render has no GPU pool")


def test_a_gang_that_starts_commits_its_estimate_to_the_run(prices, render_dir):
    kube = FakeKube([node("n1"), node("n2")])
    placing(kube, ["n1", "n2"])
    ctx = ctx_for(kube, render_dir)
    assert gangs.gang_check(ctx).status == "pass"
    assert round(ctx.committed_usd, 4) == 0.8048  # 2 x $0.8048/h x 30 min


def test_gang_priced_by_price_options_and_bounded_with_the_run(render_dir):
    # --price (Options.prices) prices what the real table lacks in us-west-2
    user = {"g6.xlarge": 0.81, "g6.2xlarge": 0.98, "g6.12xlarge": 4.61, "g6.48xlarge": 13.36}
    plan, planned, cost = gangs.choose_gang(ctx_for(FakeKube([]), render_dir, prices=user))
    assert (plan.pool, planned.instance_types, planned.nodes, cost) == (
        "gpu-spot",
        ("g6.xlarge",),
        2,
        0.81,  # 2 x $0.81/h x 30 min
    )
    # the cost cap bounds the run: what the capacity phase committed before counts
    ctx = ctx_for(FakeKube([]), render_dir, prices=user)
    ctx.committed_usd = 19.5
    assert gangs.choose_gang(ctx) == (
        "the cheapest gang (2 x g6.xlarge in pool gpu-spot for up to 30 min) is estimated at "
        "$0.81 ($20.31 for the run), over the cost cap $20.00"
    )


# --- over-limit-stays-pending -------------------------------------------------------------------


def test_over_limit_choice():
    queues = ["research-batch", "research-notebooks", "research-serving"]
    # serving: 5 GPUs fit g6.48xlarge (8) but not within the NodePool limit 4: the limit is
    # what stops Karpenter. batch: 9 fits no type (a weaker proof, the fallback). notebooks: 3
    # slices fit a g6.xlarge (4) within its limit 4 (whole-node rounding): not promised.
    assert over_limit.over_limit_choice(CAPACITY, queues) == (
        "research-serving",
        5,
        ("inference",),
        ("g6.48xlarge",),
    )
    assert over_limit.over_limit_choice(CAPACITY, ["research-batch", "research-notebooks"]) == (
        "research-batch",
        9,
        ("gpu-spot",),
        (),
    )
    assert over_limit.over_limit_choice(CAPACITY, ["research-notebooks"]) == (
        "no leaf queue whose NodePools can launch nothing for a job one GPU over its limit "
        "(whole-node rounding or a shared pool, README friction point 1: the platform promises "
        "no more there): research-notebooks: 3 GPUs fit notebooks/g6.xlarge (4) within the "
        "NodePool limit"
    )


# KAI's OverLimit text (kai-scheduler v0.16.8 pkg/scheduler/api/unschedule_info.go L57-83,
# numbers by resource_info.HumanizeResource, base_resources.go L166-171), on the PodGroup's
# reason; on the pod as ``JobFitErrorsToMessage`` writes it ("<reason>: <message>.",
# pkg/scheduler/api/common_info/job_errors.go L44-75; default_status_updater.go L367-368).
KAI_OVER_LIMIT = (
    "research-serving quota has reached the allowable limit of GPUs. Limit is 4 GPUs, "
    "currently 0 GPUs allocated and workload requested 5 GPUs"
)


def kai_marks(kube: FakeKube, *, reason="OverLimit", extra=None):
    message = f"{reason}: {KAI_OVER_LIMIT}."

    def on_create(obj):
        if obj["kind"] == "Pod":
            obj["metadata"].setdefault("annotations", {})["pod-group-name"] = "pg-over-limit"
            obj["status"] = {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message,
                    }
                ],
            }
            kube.put(
                {
                    "apiVersion": "scheduling.run.ai/v2alpha2",
                    "kind": "PodGroup",
                    "metadata": {
                        "name": "pg-over-limit",
                        "namespace": obj["metadata"]["namespace"],
                    },
                    "status": {
                        "schedulingConditions": [
                            {"reasons": [{"reason": reason, "message": KAI_OVER_LIMIT}]}
                        ]
                    },
                }
            )
            if extra:
                extra(obj)
        return obj

    kube.on_create = on_create
    return message


def test_over_limit_passes(render_dir):
    kube = FakeKube(
        [
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodeClaim",
                "metadata": {
                    "name": "inference-old",
                    "labels": {"karpenter.sh/nodepool": "inference"},
                },
            }
        ]
    )
    message = kai_marks(kube)
    seen = []
    original = kube.create
    kube.create = lambda obj, dry_run=False: seen.append(obj) or original(obj, dry_run=dry_run)
    r = over_limit.over_limit_check(ctx_for(kube, render_dir))
    assert (r.status, r.reason, r.details) == (
        "pass",
        "a job one GPU over queue research-serving's limit stayed Pending (OverLimit) and "
        "Karpenter launched nothing for it in 60 s",
        (
            "queue research-serving: one pod of 5 x nvidia.com/gpu (effective limit 4)",
            f"KAI: OverLimit; PodScheduled False Unschedulable: {message}",
            "watched NodePools inference for 60 s",
        ),
    )
    pod = seen[-1]
    assert pod["metadata"]["name"] == "validate-r1-over-limit"
    assert pod["metadata"]["namespace"] == SERVING_NS
    assert pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == "5"
    assert pod["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert pod["spec"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "eks-gpu-platform.io/pool",
                                "operator": "In",
                                "values": ["inference"],
                            }
                        ]
                    }
                ]
            }
        }
    }
    assert (
        "list",
        "karpenter.sh/v1",
        "NodeClaim",
        None,
        "karpenter.sh/nodepool=inference",
    ) in kube.calls
    assert ("v1", "Pod", SERVING_NS, "validate-r1-over-limit") not in kube.objects


def test_over_limit_karpenter_launch_fails(render_dir):
    kube = FakeKube([])

    def launch(pod):
        kube.put(
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodeClaim",
                "metadata": {
                    "name": "inference-abcde",
                    "labels": {"karpenter.sh/nodepool": "inference"},
                },
            }
        )
        kube.put(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": "e1", "namespace": SERVING_NS},
                "involvedObject": {"kind": "Pod", "name": "validate-r1-over-limit"},
                "reason": "Nominated",
                "message": "Pod should schedule on: nodeclaim/inference-abcde",
            }
        )

    kai_marks(kube, extra=launch)
    r = over_limit.over_limit_check(ctx_for(kube, render_dir))
    assert (r.status, r.reason) == (
        "fail",
        "Karpenter launched NodeClaim(s) inference-abcde; Karpenter nominated the pod: Pod "
        "should schedule on: nodeclaim/inference-abcde",
    )


def test_over_limit_pod_tolerates_an_efa_nodepools_taints(render_dir):
    # Otherwise Karpenter would skip the EFA NodePool for its taint and the check would pass
    # without its limit being tried.
    kube = FakeKube([])
    kai_marks(kube)
    seen = []
    original = kube.create
    kube.create = lambda obj, dry_run=False: seen.append(obj) or original(obj, dry_run=dry_run)
    ctx = ctx_for(kube, render_dir)
    manifests = [m for m in MANIFESTS if m["metadata"]["name"] != "inference"]
    object.__setattr__(
        ctx.render, "manifests", (*manifests, nodepool("inference", GPU_TAINT, EFA_TAINT))
    )
    assert over_limit.over_limit_check(ctx).status == "pass"
    assert seen[-1]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"},
    ]


def test_over_limit_pod_not_marked_unschedulable_fails(render_dir):
    # The PodGroup says OverLimit but the pod carries no PodScheduled=False/Unschedulable:
    # Karpenter never looks at such a pod, so its silence proves nothing.
    kube = FakeKube([])

    def no_condition(pod):
        pod["status"] = {"phase": "Pending"}

    kai_marks(kube, extra=no_condition)
    r = over_limit.over_limit_check(ctx_for(kube, render_dir))
    assert (r.status, r.reason) == (
        "fail",
        "KAI marked the job OverLimit but not the pod PodScheduled=False/Unschedulable within "
        "120 s (PodScheduled: none): Karpenter never considered it, so its limits were not tried",
    )


def test_over_limit_not_marked_by_kai_fails(render_dir):
    kube = FakeKube([])
    kai_marks(kube, reason="Unschedulable")
    r = over_limit.over_limit_check(ctx_for(kube, render_dir))
    assert (r.status, r.reason) == (
        "fail",
        "KAI did not mark the job OverLimit within 120 s (PodScheduled: Unschedulable "
        f"Unschedulable: {KAI_OVER_LIMIT}.)",
    )
    kube = FakeKube([])  # no KAI at all: nothing marks the pod
    r = over_limit.over_limit_check(ctx_for(kube, render_dir, time_cap_s=30.0))
    assert (r.status, r.reason) == (
        "fail",
        "KAI did not mark the job OverLimit within 30 s (PodScheduled: none)",
    )


def test_scheduling_planned_with_gpu_pools(prices, render_dir):
    ctx = ctx_for(FakeKube([]), render_dir)
    out = scheduling.planned(ctx)
    assert out[-2:] == [
        Planned(
            "scheduling",
            "gang-all-or-nothing",
            (
                f"Namespace {BATCH_NS}",
                f"ServiceAccount {BATCH_NS}/validate",
                "PodGroup validate-r1-research-batch/validate-r1-gang",
                f"Pod {BATCH_NS}/validate-r1-gang-0",
                f"Pod {BATCH_NS}/validate-r1-gang-1",
            ),
            pool="gpu-spot",
            instance_types=("g6.xlarge",),
            nodes=2,
            max_minutes=30.0,
        ),
        Planned(
            "scheduling",
            "over-limit-stays-pending",
            (
                f"Namespace {SERVING_NS}",
                f"ServiceAccount {SERVING_NS}/validate",
                f"Pod {SERVING_NS}/validate-r1-over-limit",
            ),
            pool="inference",
            instance_types=("g6.48xlarge",),
            nodes=1,
            max_minutes=3.0,
        ),
    ]


def test_a_gang_left_out_by_checks_creates_nothing(prices, render_dir):
    kube = FakeKube([])
    ctx = ctx_for(kube, render_dir)
    ctx.wants = lambda check: check == "system-pods-not-annotated"
    assert [r.name for r in scheduling.run(ctx)] == ["system-pods-not-annotated"]
    assert not [c for c in kube.calls if c[0] == "create"]


def test_over_limit_window_shorter_than_its_minimum_fails(render_dir):
    # KAI marks the pod at once; a 30 s cap leaves 30 s of the 60 s watch: a fail with the
    # reason, never a pass (review L1: the window was max(0, cap - waited), so 0 s passed).
    kube = FakeKube([])
    kai_marks(kube)
    r = over_limit.over_limit_check(ctx_for(kube, render_dir, time_cap_s=30.0))
    assert (r.status, r.reason) == (
        "fail",
        "the time cap (30 s) leaves 30 s to watch after KAI's marks (0 s), less than the 60 s "
        "the check must watch Karpenter: raise --time-cap-minutes",
    )
    assert ("v1", "Pod", SERVING_NS, "validate-r1-over-limit") not in kube.objects
