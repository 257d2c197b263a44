"""Parent queue limits (issue 19 item 4): KAI checks every ancestor's ``gpu.limit`` before it
admits a job (kai-scheduler v0.16.8 ``pkg/scheduler/plugins/proportion/capacity_policy/
max_allowed_check.go`` L16-49), so the pools' budgets under an ancestor are cut to its limit."""

from pathlib import Path

import pytest
from scheduler.helpers import queue
from stack_files import fixture_stack

from eks_gpu_platform.budget import (
    AncestorCap,
    PoolRouting,
    capped_shares,
    plan_problems,
    pool_gpu_limits,
    queue_plans,
    routing_problems,
)
from eks_gpu_platform.offline.run import validate

REPO = Path(__file__).resolve().parents[2]
SPOT = PoolRouting(preemptible=True, gpu_cap=None)
OD = PoolRouting(preemptible=False, gpu_cap=None)


def test_no_budget_under_devs_research_exceeds_its_limit_of_12():
    # dev: research (gpu.limit 12) <- research-batch (gpu-spot, limit 8), research-serving
    # (inference, quota 4), research-notebooks (notebooks, quota 2 slices of a 4-way L4).
    # Before: 8 + 4 + 1 = 13 physical GPUs for a parent that admits 12.
    config = validate(fixture_stack("dev"))
    limits = config.gpu_limits
    assert limits == {"gpu-spot": 6, "inference": 4, "notebooks": 1}
    assert sum(limits.values()) <= 12
    by_name = {p.name: p for p in queue_plans(config.scheduler.queues, config._routing())}
    assert by_name["research-batch"].ancestors == (AncestorCap("research", 12.0, 8.0, ("limit",)),)


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
    assert caps["a"] == (
        AncestorCap("team", 6.0, 4.0, ("limit",)),
        AncestorCap("org", 10.0, 4.0, ("limit",)),
    )
    assert caps["c"] == (AncestorCap("org", 10.0, 4.0, ("limit",)),)
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
    assert caps == {"a": (AncestorCap("ml", -1.0, 8.0),)}


def test_quotas_above_the_parents_limit_are_scaled_and_reported():
    # p's quota and limit both bind (each would cut 4 + 4 to 4 on its own): both are named.
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
            "it when the queues sharing them use their shares (the gpu.quota of its ancestors "
            "'p' (4) and the gpu.limit of its ancestors 'p' (4) cap their shares); raise the "
            "pools' caps or their shares",
        )
        for i, name, pool in ((1, "a", "o1"), (2, "b", "o2"))
    ]


def test_a_lone_unlimited_leaf_is_cut_to_its_parents_limit():
    # Review: an only child with gpu.limit -1 fits the parent's limit when counted as L, so
    # the cut was skipped and its share stayed unlimited: the pool got its own cap (100) and
    # the routing check said nothing bounded it, though KAI's max_allowed_check.go L19 loop
    # stops the parent's subtree at 12.
    queues = [
        queue("p", gpu=(4, 12)),
        queue("u", parent="p", pools=("s1",), gpu=(4, -1)),
    ]
    shares, caps = capped_shares(queues, {"s1": SPOT})
    assert shares == {"u": {"s1": 12.0}}
    assert caps == {"u": (AncestorCap("p", 12.0, 4.0, ("limit",)),)}
    assert routing_problems(queues, {"s1": SPOT}) == []
    assert pool_gpu_limits(queues, {"s1": PoolRouting(preemptible=True, gpu_cap=100)}) == {"s1": 12}
    zero = [queue("p", gpu=(0, 12)), queue("u", parent="p", pools=("s1",), gpu=(0, -1))]
    assert pool_gpu_limits(zero, {"s1": PoolRouting(preemptible=True, gpu_cap=100)}) == {"s1": 12}


# KAI admits a non-preemptible job only while, for its queue and every ancestor,
# AllocatedNotPreemptible + the request stays within Deserved (kai-scheduler v0.16.8
# pkg/scheduler/plugins/proportion/capacity_policy/quota_check.go L35-56, L73), Deserved being
# the queue's gpu.quota (proportion.go L344-347), AllocatedNotPreemptible summed up the tree
# (proportion.go L386-399, L455-470).


def test_a_parents_quota_bounds_its_non_preemptible_pools():
    # Review probe: before, {o1: 4, o2: 4} and no problem, though KAI admits only 4
    # non-preemptible GPUs in all under parent.
    queues = [
        queue("parent", gpu=(4, 12)),
        queue("a", parent="parent", pools=("o1",), gpu=(4, 8)),
        queue("b", parent="parent", pools=("o2",), gpu=(4, 8)),
    ]
    pools = {"o1": OD, "o2": OD}
    assert pool_gpu_limits(queues, pools) == {"o1": 2, "o2": 2}
    shares, caps = capped_shares(queues, pools)
    assert shares == {"a": {"o1": 2.0}, "b": {"o2": 2.0}}
    cap = AncestorCap("parent", limit=12.0, quota=4.0, cut_by=("quota",))
    assert caps == {"a": (cap,), "b": (cap,)}
    assert routing_problems(queues, pools) == []
    plans = queue_plans(queues, pools)
    assert plan_problems(plans) == [
        (
            ("queues", i, "gpu", "quota"),
            f"4 of queue '{name}' is not reachable: its pools ('{pool}') can buy only 2 GPUs for "
            "it when the queues sharing them use their shares (the gpu.quota of its ancestors "
            "'parent' (4) caps their shares); raise the pools' caps or their shares",
        )
        for i, name, pool in ((1, "a", "o1"), (2, "b", "o2"))
    ]
    assert [p.as_json()["ancestors"] for p in plans] == [
        [{"name": "parent", "gpuLimit": 12, "gpuQuota": 4, "capsShares": True, "cutBy": ["quota"]}]
    ] * 2


def test_the_quota_cut_comes_first_and_leaves_the_rest_of_the_limit_to_preemptible_pools():
    # a (non-preemptible, quota 8) is cut to parent's quota 4, then the limit 12 keeps the
    # in-quota 4 and gives b's over-quota 12 the 8 left. Before: a 8, b 12 x 4/12 = 4.
    queues = [
        queue("parent", gpu=(4, 12)),
        queue("a", parent="parent", pools=("o1",), gpu=(8, 8)),
        queue("b", parent="parent", pools=("s1",), gpu=(0, 12)),
    ]
    pools = {"o1": OD, "s1": SPOT}
    shares, caps = capped_shares(queues, pools)
    assert shares == {"a": {"o1": 4.0}, "b": {"s1": 8.0}}
    assert caps["b"] == (AncestorCap("parent", 12.0, 4.0, ("quota", "limit")),)
    assert pool_gpu_limits(queues, pools) == {"o1": 4, "s1": 8}


def test_an_unlimited_non_preemptible_leaf_is_cut_to_its_parents_quota():
    queues = [
        queue("p", gpu=(6, 12)),
        queue("u", parent="p", pools=("o1",), gpu=(-1, -1)),
    ]
    pools = {"o1": PoolRouting(preemptible=False, gpu_cap=100)}
    # Before: the limit rule counted it as 12, and KAI admits 6 non-preemptible GPUs.
    assert pool_gpu_limits(queues, pools) == {"o1": 6}
    assert capped_shares(queues, pools)[1] == {
        "u": (AncestorCap("p", 12.0, 6.0, ("quota", "limit")),)
    }


def test_a_pool_left_none_by_a_parents_quota_names_the_quota():
    queues = [
        queue("p", gpu=(0, 8)),
        queue("a", parent="p", pools=("o1",), gpu=(2, 2)),
        queue("b", parent="p", pools=("s1",), gpu=(0, 4)),
    ]
    pools = {"o1": OD, "s1": SPOT}
    assert pool_gpu_limits(queues, pools) == {"o1": 0, "s1": 4}
    assert routing_problems(queues, pools) == [
        (
            ("queues",),
            "the GPU limit of node pool 'o1' comes to 0 (the gpu.quota of the ancestors 'p' (0) "
            "of its queues (a) leaves it none), so Karpenter would never provision it",
        )
    ]
