"""``budget.capacity_of`` keeps its answer for the specs last asked (one configuration's checks,
plan and components ask for each pool many times): the same specs get the same answer, other
specs (another operator, another pool) their own, and a full table starts again."""

import dataclasses

from eks_gpu_platform.budget import stack
from eks_gpu_platform.budget.capacity import pool_capacity
from eks_gpu_platform.gpu_operator.spec import GpuOperatorSpec
from eks_gpu_platform.nodepool.spec import NodePoolSpec


def pool(name: str, **extra) -> NodePoolSpec:
    return NodePoolSpec(name=name, kind="gpu", instance_families=("g6",), **extra)


def test_the_same_specs_get_the_kept_answer():
    p, operator = pool("a", time_slicing="ts-4"), GpuOperatorSpec(time_slicing={"ts-4": 4})
    first = stack.capacity_of(p, operator)
    assert stack.capacity_of(p, operator) is first
    # What the pool's nodes advertise: 4 slices per GPU (the uncached computation).
    assert first == pool_capacity(p, replicas=4, mig_strategy="none", mig_layouts=None)
    assert first.units_per_gpu == 4
    assert first.mode == "time-sliced"


def test_another_operator_or_pool_gets_its_own_answer():
    p = pool("a", time_slicing="ts-4")
    four = GpuOperatorSpec(time_slicing={"ts-4": 4})
    two = dataclasses.replace(four, time_slicing={"ts-4": 2})
    assert stack.capacity_of(p, four).units_per_gpu == 4
    assert stack.capacity_of(p, two).units_per_gpu == 2
    whole = pool("b")
    assert stack.capacity_of(whole, four).units_per_gpu == 1
    assert stack.capacity_of(whole, four).pool == "b"


def test_a_full_table_starts_again(monkeypatch):
    monkeypatch.setattr(stack, "_CAPACITIES_KEPT", 2)
    monkeypatch.setattr(stack, "_CAPACITIES", {})
    operator = GpuOperatorSpec()
    pools = [pool(n) for n in "abc"]
    answers = [stack.capacity_of(p, operator) for p in pools]
    assert list(stack._CAPACITIES) == [(id(pools[2]), id(operator))]
    assert stack.capacity_of(pools[2], operator) is answers[2]
    assert [a.pool for a in answers] == ["a", "b", "c"]
