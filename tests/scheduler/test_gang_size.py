"""The gang training template is sized to what its queue can get (conformance pool-shapes/gen-6):
on a queue's EFA pool with the largest budget, at most the queue's largest gang (capacity.json
``largestGang``), a single-node Job when that is one node."""

import copy
from typing import Any

import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.examples import example_workloads

POOL = "eks-gpu-platform.io/pool"
ZONE = "topology.kubernetes.io/zone"
TYPE = "node.kubernetes.io/instance-type"


def caps(quota: int, limit: int) -> dict:
    return {"quota": quota, "limit": limit, "overQuotaWeight": 1}


def efa_pool(name: str) -> dict:
    return {
        "name": name,
        "kind": "efa",
        "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"],
        "zone": "us-east-1a",
        "capacityTypes": ["on-demand"],
    }


# The generated conformance stack gen-6 (tests/conformance/stacks.py): queue q0 routes to two
# time-sliced pools, a MIG pool and two EFA pools whose budgets are one p5 node (8 GPUs) each.
GEN_6: dict[str, Any] = {
    "cluster": {"name": "gpu-gen"},
    "nodePools": [
        {
            "name": "p0-sliced",
            "capacityTypes": ["spot"],
            "preemptible": True,
            "limits": {"gpus": 64},
            "gpus": ["l4"],
            "timeSlicing": "ts-4",
        },
        {
            "name": "p1-sliced",
            "capacityTypes": ["spot"],
            "preemptible": True,
            "limits": {"gpus": 16},
            "gpus": ["l4"],
            "timeSlicing": "ts-2",
        },
        {
            "name": "p2-mig",
            "capacityTypes": ["on-demand"],
            "preemptible": False,
            "instanceFamilies": ["p4d"],
            "migProfile": "all-1g.10gb",
        },
        efa_pool("p3-efa"),
        efa_pool("p4-efa"),
    ],
    "gpuOperator": {"migStrategy": "single", "timeSlicing": {"ts-2": 2, "ts-4": 4, "ts-7": 7}},
    "scheduler": {
        "queues": [
            {"name": "org", "gpu": caps(-1, -1), "cpu": caps(-1, -1), "memory": caps(-1, -1)},
            {
                "name": "q0",
                "parent": "org",
                "nodePools": ["p3-efa", "p0-sliced", "p1-sliced", "p2-mig", "p4-efa"],
                "gpu": caps(8, 24),
                "cpu": caps(-1, -1),  # unbounded: must hold one node (budget.resources)
                "memory": caps(-1, -1),
            },
        ]
    },
}

# A second queue on p4-efa only raises p4-efa's budget to 24 GPUs (three nodes): q0's largest
# gang is there.
Q1 = {
    "name": "q1",
    "parent": "org",
    "nodePools": ["p4-efa"],
    "gpu": caps(16, 16),
    "cpu": caps(-1, -1),
    "memory": caps(-1, -1),
}


def training(values: dict, queue: str = "q0"):
    config = PlatformConfig.load(copy.deepcopy(values), "us-east-1")
    return example_workloads(config)[f"training-{queue}"]


def with_q1() -> dict:
    values = copy.deepcopy(GEN_6)
    values["scheduler"]["queues"].append(Q1)
    return values


def node_affinity(pool: str) -> dict:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": POOL, "operator": "In", "values": [pool]},
                        {"key": ZONE, "operator": "In", "values": ["us-east-1a"]},
                        {"key": TYPE, "operator": "In", "values": ["p5.48xlarge"]},
                    ]
                }
            ]
        }
    }


def torchrun(nodes: int) -> list[str]:
    return [
        "torchrun",
        f"--nnodes={nodes}",
        "--nproc-per-node=8",
        "--node-rank=$(JOB_COMPLETION_INDEX)",
        "--rdzv-id=train-q0",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=train-q0-0.train-q0.q0.svc.cluster.local:29400",
        "train.py",
    ]


@pytest.mark.parametrize(
    ("values", "pool", "pods"),
    [
        # Both EFA pools hold one node: the first in routing order, a single-node Job.
        (GEN_6, "p3-efa", 1),
        # p4-efa holds three nodes: it, and two pods (the template's default, within the gang).
        (with_q1(), "p4-efa", 2),
    ],
)
def test_gang_template_on_the_efa_pool_with_the_largest_gang(values, pool, pods):
    job = training(values).kind("Job")
    assert job["metadata"]["annotations"] == {"kai.scheduler/batch-min-member": str(pods)}
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"]) == (pods, pods)
    pod = spec["template"]["spec"]
    assert pod["affinity"]["nodeAffinity"] == node_affinity(pool)
    (container,) = pod["containers"]
    assert container["command"] + container.get("args", []) == torchrun(pods)
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "8"


def test_single_node_gang_notes():
    assert training(GEN_6).notes[-7:] == (
        "Pool p3-efa holds at most one node for this queue's gang (capacity.json",
        "largestGang: 8 GPUs), so this is a single-pod Job of 8 GPUs",
        "(torchrun --nnodes=1; NCCL stays inside the node).",
        "Karpenter may spread a gang over the pool's zones or instance types, so the Job pins",
        "zone us-east-1a (the efa pool's zone) and",
        "instance type p5.48xlarge (first in instanceTypes with budget); override with",
        "scheduler.queues[q0].gangZone / gangInstanceType (capacity.json gangs).",
    )


def test_multi_node_gang_notes():
    assert training(with_q1()).notes[-7:-4] == (
        "2 pods x 8 GPUs; pool p4-efa holds a gang of up to 24 GPUs for",
        "this queue (capacity.json largestGang): raise parallelism, completions,",
        "kai.scheduler/batch-min-member and --nnodes together to grow it.",
    )
