"""Queues routed to several pools share one budget (issue 12, item 3), and the capacity plan of
``budget.plan``: purchasable min/max, reachable quota and limit, the warning."""

import pytest
from scheduler.helpers import queue

from eks_gpu_platform.budget.plan import plan_problems, plan_warnings, queue_plans
from eks_gpu_platform.budget.queues import (
    PoolRouting,
    pool_gpu_limits,
    queue_shares,
    routing_problems,
)
from eks_gpu_platform.scheduler.spec import QueueSpec
from eks_gpu_platform.spec import SpecError

SPOT = PoolRouting(preemptible=True, gpu_cap=None)
OD = PoolRouting(preemptible=False, gpu_cap=None)
CPU = PoolRouting(preemptible=True, gpu_cap=None, gpu=False)
POOLS = {"spot": SPOT, "spot-2": SPOT, "od": OD, "cpu": CPU}


def with_shares(q: QueueSpec, **shares: float) -> QueueSpec:
    return QueueSpec(
        name=q.name,
        gpu=q.gpu,
        cpu=q.cpu,
        memory=q.memory,
        parent=q.parent,
        node_pools=q.node_pools,
        pool_shares={k.replace("_", "-"): v for k, v in shares.items()},
    )


@pytest.mark.parametrize(
    ("pools", "gpu", "expected"),
    [
        (("spot",), (2, 8), {"spot": 8}),  # one preemptible pool: the limit
        (("od",), (2, 8), {"od": 2}),  # one non-preemptible pool: the quota
        (("spot", "spot-2"), (2, 8), {"spot": 4, "spot-2": 4}),  # the limit, split evenly
        (("spot", "od"), (2, 8), {"spot": 4, "od": 1}),  # od: at most quota / 2
        (("od", "cpu"), (2, 8), {"od": 2}),  # a cpu pool takes no GPU budget
        (("spot", "spot-2"), (-1, -1), {"spot": None, "spot-2": None}),
    ],
)
def test_queue_shares(pools, gpu, expected):
    assert queue_shares(queue("a", pools=pools, gpu=gpu), POOLS) == expected


def test_explicit_shares_win():
    q = with_shares(queue("a", pools=("spot", "spot-2"), gpu=(2, 8)), spot=6, spot_2=2)
    assert queue_shares(q, POOLS) == {"spot": 6, "spot-2": 2}
    assert pool_gpu_limits([q], {"spot": SPOT, "spot-2": SPOT}) == {"spot": 6, "spot-2": 2}


@pytest.mark.parametrize(
    ("shares", "expected"),
    [
        (
            {"spot": 8},
            [
                "scheduler.queues[0].poolShares: has no share for 'od'; give every GPU pool of "
                "the queue a share, or set none for an even split",
                "scheduler.queues: the GPU limit of node pool 'od' comes to 0 (it is "
                "non-preemptible, and gpu.quota of its queues (a) sums to 0), so Karpenter would "
                "never provision it",
            ],
        ),
        (
            {"spot": 4, "od": 4, "cpu": 1},
            [
                "scheduler.queues[0].poolShares: 'cpu' is a cpu pool; shares split GPU budgets",
                "scheduler.queues[0].poolShares: give the non-preemptible pool(s) 'od' 4, more "
                "than gpu.quota 2: work there runs in quota only",
            ],
        ),
        (
            {"spot": 8, "od": 2},
            [
                "scheduler.queues[0].poolShares: sum to 10, more than gpu.limit 8: Karpenter "
                "would buy GPUs the queue can never use"
            ],
        ),
        ({"spot": 6, "od": 2}, []),
    ],
)
def test_share_problems(shares, expected):
    q = queue("a", pools=("spot", "od", "cpu"), gpu=(2, 8))
    q = QueueSpec(
        name=q.name, gpu=q.gpu, cpu=q.cpu, memory=q.memory, node_pools=q.node_pools,
        pool_shares=shares,
    )  # fmt: skip
    pools = {"spot": SPOT, "od": OD, "cpu": CPU}
    lines = SpecError("scheduler", routing_problems([q], pools), config=True).lines
    assert lines == expected


def test_pool_shares_must_name_the_queues_pools():
    with pytest.raises(SpecError) as err:
        with_shares(queue("a", pools=("spot",), gpu=(2, 8)), other=1, spot=-1)
    assert [line.split(": ", 1)[1] for line in err.value.lines] == [
        "'other' is not one of the queue's nodePools (spot)",
        "the share of 'spot' is -1; expected 0 up",
    ]


def test_budgets_are_whole_nodes_of_the_smallest_type():
    eight = PoolRouting(preemptible=True, gpu_cap=None, node_gpus=8)
    assert pool_gpu_limits([queue("a", pools=("p5",), gpu=(2, 12))], {"p5": eight}) == {"p5": 16}
    sliced = PoolRouting(preemptible=False, gpu_cap=None, slices_per_gpu=4, node_gpus=4)
    assert pool_gpu_limits([queue("a", pools=("nb",), gpu=(6, 6))], {"nb": sliced}) == {"nb": 4}


def test_plan_of_a_queue_alone():
    (plan,) = queue_plans([queue("a", pools=("spot",), gpu=(2, 6.5))], {"spot": SPOT})
    assert plan.as_json() == {
        "name": "a",
        "quota": 2,
        "limit": 6.5,
        "pools": ["spot"],
        "purchasableMin": 7,
        "purchasableMax": 7,
        "quotaReachable": True,
        "limitReachable": True,
        "ancestors": [],
        "effectiveLimit": 6.5,
        "reachablePerPool": {"spot": 7},
    }
    assert plan.rounding == 0.5
    assert plan_warnings([plan]) == [] and plan_problems([plan]) == []


def test_plan_of_a_mixed_mig_pool_warns_about_the_other_profiles():
    # all-balanced on H100: 1g x2 + 2g x1 + 3g x1 per GPU, KAI units 2 + 2 + 3 = 7; a queue
    # using one profile surely gets 2 units per GPU: 8 units need 4 GPUs, one 8-GPU node.
    mixed = PoolRouting(
        preemptible=True, gpu_cap=None, slices_per_gpu=2, node_gpus=8, max_units_per_gpu=7
    )
    (plan,) = queue_plans([queue("a", pools=("mig",), gpu=(8, 8))], {"mig": mixed})
    assert (plan.purchasable_min, plan.purchasable_max, plan.rounding) == (16, 56, 8)
    assert plan_warnings([plan]) == [
        "warning: Karpenter can buy up to 56 GPUs for queue 'a' across 'mig', 48 above its "
        "gpu.limit 8, of which whole-node rounding accounts for 8 (the pools' other MIG "
        "profiles come with every node)"
    ]


def test_plan_problems_for_an_unlimited_guarantee():
    capped = PoolRouting(preemptible=True, gpu_cap=8)
    (plan,) = queue_plans([queue("a", pools=("spot",), gpu=(-1, -1))], {"spot": capped})
    assert (plan.quota_reachable, plan.limit_reachable) == (False, False)
    assert SpecError("scheduler", plan_problems([plan]), config=True).lines == [
        "scheduler.queues[0].gpu.quota: -1 of queue 'a' is not reachable: an unlimited "
        "guarantee (-1) can never be bought; set a finite gpu.quota"
    ]


def test_explicit_shares_are_annotated_for_the_policy_pack():
    from eks_gpu_platform.scheduler.manifests import queue_manifest

    q = with_shares(queue("a", pools=("spot", "spot-2"), gpu=(2, 8)), spot=6, spot_2=2.5)
    assert queue_manifest(q, label_domain="example.com")["metadata"]["annotations"] == {
        "example.com/node-pools": "spot,spot-2",
        "example.com/pool-shares": "spot=6,spot-2=2.5",
    }
