"""Parent queue limits (issue 19 item 4): KAI checks every ancestor's ``gpu.limit`` before it
admits a job (kai-scheduler v0.16.8 ``pkg/scheduler/plugins/proportion/capacity_policy/
max_allowed_check.go`` L16-49), so the pools' budgets under an ancestor are cut to its limit."""

from pathlib import Path

import pytest
from scheduler.helpers import queue

from eks_gpu_platform.budget import (
    AncestorCap,
    PoolRouting,
    capped_shares,
    plan_problems,
    pool_gpu_limits,
    queue_plans,
    routing_problems,
)
from eks_gpu_platform.offline.run import load_stack_file, validate

REPO = Path(__file__).resolve().parents[2]
SPOT = PoolRouting(preemptible=True, gpu_cap=None)
OD = PoolRouting(preemptible=False, gpu_cap=None)


def test_no_budget_under_devs_research_exceeds_its_limit_of_12():
    # dev: research (gpu.limit 12) <- research-batch (gpu-spot, limit 8), research-serving
    # (inference, quota 4), research-notebooks (notebooks, quota 2 slices of a 4-way L4).
    # Before: 8 + 4 + 1 = 13 physical GPUs for a parent that admits 12.
    config = validate(load_stack_file(REPO, "dev", None))
    limits = config.gpu_limits
    assert limits == {"gpu-spot": 6, "inference": 4, "notebooks": 1}
    assert sum(limits.values()) <= 12
    by_name = {p.name: p for p in queue_plans(config.scheduler.queues, config._routing())}
    assert by_name["research-batch"].ancestors == (AncestorCap("research", 12.0, True),)


def test_nested_ancestors_cut_deepest_first_keeping_quotas():
    queues = [
        queue("org", gpu=(4, 10)),
        queue("team", parent="org", gpu=(4, 6)),
        queue("a", parent="team", pools=("s1",), gpu=(2, 8)),
        queue("b", parent="team", pools=("s2",), gpu=(2, 8)),
        queue("c", parent="org", pools=("s3",), gpu=(1, 8)),
    ]
    pools = {"s1": SPOT, "s2": SPOT, "s3": SPOT}
    shares, caps = capped_shares(queues, pools)
    # team (6): quotas 2 + 2 stay, the over-quota 6 + 6 share the 2 left: 3 and 3.
    # org (10): quotas 2 + 2 + 1 stay, the over-quota 1 + 1 + 7 share the 5 left (x 5/9).
    assert shares == {
        "a": {"s1": pytest.approx(2 + 5 / 9)},
        "b": {"s2": pytest.approx(2 + 5 / 9)},
        "c": {"s3": pytest.approx(1 + 35 / 9)},
    }
    assert caps["a"] == (AncestorCap("team", 6.0, True), AncestorCap("org", 10.0, True))
    assert caps["c"] == (AncestorCap("org", 10.0, True),)
    # Whole GPUs: 3 + 3 + 5 = 11, org's 10 plus the rounding.
    assert pool_gpu_limits(queues, pools) == {"s1": 3, "s2": 3, "s3": 5}


def test_an_unlimited_leaf_is_bounded_by_its_parent():
    queues = [
        queue("p", gpu=(4, 6)),
        queue("u", parent="p", pools=("s1",), gpu=(2, -1)),
        queue("v", parent="p", pools=("s2",), gpu=(2, 4)),
    ]
    pools = {"s1": SPOT, "s2": SPOT}
    # u's unlimited over-quota part counts as the parent's 6: 4 and 2 share the 2 left.
    assert pool_gpu_limits(queues, pools) == {"s1": 4, "s2": 3}
    assert routing_problems(queues, pools) == []
    # Without a finite ancestor, nothing bounds it.
    alone = [queue("u", pools=("s1",), gpu=(2, -1))]
    assert routing_problems(alone, {"s1": SPOT}) == [
        (
            ("queues", 0, "gpu", "limit"),
            "is -1 (unlimited) and the queue routes to node pool 's1', which has no GPU cap, so "
            "nothing bounds its scale-up; set a finite gpu.limit or cap the pool's GPUs",
        )
    ]


def test_an_unlimited_ancestor_cuts_nothing():
    queues = [
        queue("ml", gpu=(8, -1)),
        queue("a", parent="ml", pools=("s1",), gpu=(2, 8)),
    ]
    shares, caps = capped_shares(queues, {"s1": SPOT})
    assert shares == {"a": {"s1": 8}}
    assert caps == {"a": (AncestorCap("ml", -1.0, False),)}


def test_quotas_above_the_parents_limit_are_scaled_and_reported():
    queues = [
        queue("p", gpu=(4, 4)),
        queue("a", parent="p", pools=("o1",), gpu=(4, 4)),
        queue("b", parent="p", pools=("o2",), gpu=(4, 4)),
    ]
    pools = {"o1": OD, "o2": OD}
    assert pool_gpu_limits(queues, pools) == {"o1": 2, "o2": 2}
    plans = queue_plans(queues, pools)
    assert [p.as_json()["effectiveLimit"] for p in plans] == [4, 4]
    assert plan_problems(plans) == [
        (
            ("queues", i, "gpu", "quota"),
            f"4 of queue '{name}' is not reachable: its pools ('{pool}') can buy only 2 GPUs for "
            "it when the queues sharing them use their shares (the gpu.limit of its ancestors "
            "'p' (4) caps their shares); raise the pools' caps or their shares",
        )
        for i, name, pool in ((1, "a", "o1"), (2, "b", "o2"))
    ]
