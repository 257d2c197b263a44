"""Tests for ``eks_gpu_platform.budget.queues``: pool GPU limits from the queue routing."""

import re

import pytest
from scheduler.helpers import queue

from eks_gpu_platform.budget.queues import PoolRouting, pool_gpu_limits, routing_problems
from eks_gpu_platform.spec import SpecError

# --- friction point 1: pool GPU limits -----------------------------------------------------------

POOLS = {
    "gpu-spot": PoolRouting(preemptible=True, gpu_cap=None),
    "gpu-od": PoolRouting(preemptible=False, gpu_cap=None),
    "gpu-capped": PoolRouting(preemptible=True, gpu_cap=16),
    "cpu": PoolRouting(preemptible=True, gpu_cap=None, gpu=False),
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
            # a routes to two GPU pools: they share its budget (limit 8, as gpu-spot is
            # preemptible), split evenly, gpu-od's half at most quota / 2: 4 and 2; b has one
            # GPU pool (cpu has no GPU budget): 6. Not 8 + 6 and 4 (each pool its whole budget).
            # Then their parent org's gpu.limit 8 cuts those 12: the in-quota parts (a's quota
            # 4 over 4 + 2 in proportion: 8/3 and 4/3; b's 2) stay, the over-quota parts (4/3,
            # 2/3, 4) share the 8 - 6 = 2 left: gpu-spot 8/3 + 4/9 + 2 + 4/3 = 6.44 -> 7,
            # gpu-od 4/3 + 2/9 = 1.56 -> 2 (was 10 and 2 without the parent's limit).
            {"gpu-spot": 7, "gpu-od": 2, "gpu-capped": 16},
        ),
        (
            [queue("a", pools=("od",), gpu=(0.5, 1)), queue("b", pools=("od",), gpu=(0.25, 1))],
            {"od": PoolRouting(preemptible=False, gpu_cap=None)},
            {"od": 1},
        ),
        (
            [queue("a", pools=("spot",), gpu=(4, 24)), queue("b", pools=("spot",), gpu=(4, 24))],
            {"spot": PoolRouting(preemptible=True, gpu_cap=32)},
            {"spot": 32},
        ),
        (
            [
                queue("a", pools=("spot",), gpu=(0.1, 0.1)),
                queue("b", pools=("spot",), gpu=(0.2, 0.2)),
            ],
            {"spot": PoolRouting(preemptible=True, gpu_cap=None)},
            {"spot": 1},
        ),
        (
            [queue("a", pools=("spot",))],
            {
                "spot": PoolRouting(preemptible=True, gpu_cap=None),
                "unused": PoolRouting(preemptible=True, gpu_cap=8),
            },
            {"spot": 8, "unused": 0},
        ),
        (
            # A parent's pools never count: only leaf queues take workloads.
            [
                queue("org", pools=("spot",), gpu=(100, 100)),
                queue("a", parent="org", pools=("spot",)),
            ],
            {"spot": PoolRouting(preemptible=True, gpu_cap=None)},
            {"spot": 8},
        ),
    ],
)
def test_pool_gpu_limits(queues, pools, expected):
    assert pool_gpu_limits(queues, pools) == expected


def test_pool_gpu_limits_need_a_cap_for_unlimited_queues():
    message = (
        "pool_gpu_limits: node pool 'gpu-spot' is fed by a queue with unlimited GPUs and has no "
        "GPU cap; see routing_problems"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        pool_gpu_limits([queue("a", pools=("gpu-spot",), gpu=(1, -1))], POOLS)


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
            {"spot": PoolRouting(preemptible=True, gpu_cap=0)},
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
    assert routing_problems(queues, pools) == expected


def test_routing_problems_read_as_configuration_keys():
    problems = routing_problems([queue("a", pools=("gpu-spto",))], {"gpu-spot": POOLS["gpu-spot"]})
    assert SpecError("scheduler", problems, config=True).lines == [
        "scheduler.queues[0].nodePools[0]: 'gpu-spto' is not a node pool; expected one of "
        "gpu-spot; did you mean 'gpu-spot'?",
        "scheduler.queues: no leaf queue routes to GPU node pool 'gpu-spot'; its GPU limit would "
        "be 0, so Karpenter would never provision it; add it to a leaf queue's nodePools",
    ]


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
    pools = {"shared": PoolRouting(preemptible, cap, slices_per_gpu=slices)}
    assert pool_gpu_limits(queues, pools) == {"shared": expected}
