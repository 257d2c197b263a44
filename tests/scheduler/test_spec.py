"""Tests for ``eks_gpu_platform.scheduler.spec``: the ``scheduler`` configuration key."""

import re

import pytest

from eks_gpu_platform.scheduler.spec import QueueSpec, SchedulerSpec, leaf_queue_names
from eks_gpu_platform.spec import SpecError, load_spec

from .helpers import res


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


# --- spec --------------------------------------------------------------------------------------


def test_scheduler_spec_from_config():
    spec = load_spec(
        SchedulerSpec,
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
    assert spec.queues[1] == QueueSpec(
        name="team-a",
        parent="org",
        gpu=res(4, 8),
        cpu=res(64, -1),
        memory=res(512, -1),
        node_pools=("gpu-spot", "gpu-od"),
    )
    assert leaf_queue_names(spec.queues) == {"team-a"}


def test_disabled_scheduler_needs_no_queues():
    assert load_spec(SchedulerSpec, {"enabled": False}, "scheduler").queues == ()


BAD_SCHEDULER = [
    (
        {"queues": [raw_queue("a"), raw_queue("a")]},
        "scheduler.queues[1](a).name: 'a' is already the name of queues[0]",
    ),
    (
        {"queues": [raw_queue("org", pools=()), raw_queue("a", parent="orgg")]},
        "scheduler.queues[1](a).parent: 'orgg' is not a queue; expected one of a, org; "
        "did you mean 'org'?",
    ),
    (
        {"queues": [raw_queue("org"), raw_queue("a", parent="org")]},
        "scheduler.queues[1](a).parent: 'org' lists nodePools, so it is a leaf queue and cannot be "
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
        "scheduler.queues[0](a).parent: 'b' closes a cycle: a -> b -> a",
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
        "scheduler.queues[1](c).parent: 'a' closes a cycle: c -> a -> b -> c",
    ),
    (
        {"queues": [raw_queue("a", parent="a")]},
        "scheduler.queues[0](a).parent: 'a' is the queue itself",
    ),
    (
        {"queues": [raw_queue("a", pools=())]},
        "scheduler.queues[0](a).nodePools: is empty, but 'a' is a leaf queue; list the node pools "
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
        "scheduler.queues[0](a).gpu.limit: 0 admits nothing: the queue's pods would stay pending "
        "and Karpenter would keep scaling up for them; use -1 for no limit or a positive number",
    ),
    (
        {"queues": [raw_queue("a", cpu=raw_res(-2, -1))]},
        "scheduler.queues[0](a).cpu.quota: -2 is not allowed; expected -1 (unlimited) or a number "
        "from 0 up",
    ),
    (
        {"queues": [raw_queue("a", memory=raw_res(0, -0.5))]},
        "scheduler.queues[0](a).memory.limit: -0.5 is not allowed; expected -1 (unlimited) or a "
        "number from 0 up",
    ),
    (
        {"queues": [raw_queue("a", gpu=raw_res(8, 4))]},
        "scheduler.queues[0](a).gpu.limit: 4 is below quota 8",
    ),
    (
        {"queues": [raw_queue("a", gpu=raw_res(-1, 4))]},
        "scheduler.queues[0](a).gpu.quota: is -1 (unlimited) but limit is 4; set a quota up to the "
        "limit, or limit -1",
    ),
    (
        {"queues": [raw_queue("a", gpu=raw_res(1, 2, -1))]},
        "scheduler.queues[0](a).gpu.overQuotaWeight: -1 is negative; expected a number from 0 up",
    ),
    (
        {"queues": [{k: v for k, v in raw_queue("a").items() if k != "memory"}]},
        "scheduler.queues[0](a).memory: is required",
    ),
    (
        {"queues": [raw_queue("a", gpu={"limit": 4, "overQuotaWeight": 1})]},
        "scheduler.queues[0](a).gpu.quota: is required",
    ),
    (
        {"queues": [raw_queue("Team_A")]},
        "scheduler.queues[0](Team_A).name: 'Team_A' is not a queue name; expected 1-63 lowercase "
        "letters, digits or '-', starting and ending with a letter or digit",
    ),
    (
        {"queues": [raw_queue("a", pools=("gpu", "gpu"))]},
        "scheduler.queues[0](a).nodePools: lists the same pool twice",
    ),
    (
        {"queues": [raw_queue("a", pools=("GPU",))]},
        "scheduler.queues[0](a).nodePools[0]: 'GPU' is not a node pool name; expected 1-63 "
        "lowercase letters, digits or '-', starting and ending with a letter or digit",
    ),
    (
        {"queues": [raw_queue("a", nodePool=["gpu"])]},
        "scheduler.queues[0](a).nodePool: unknown key; did you mean 'nodePools'?",
    ),
]


@pytest.mark.parametrize(("raw", "message"), BAD_SCHEDULER)
def test_bad_scheduler_config(raw, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(SchedulerSpec, raw, "scheduler")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: res(1, 0), "QueueResourceSpec.limit: 0 admits nothing"),
        (lambda: res(4, 2), "QueueResourceSpec.limit: 2 is below quota 4"),
        (
            lambda: QueueSpec(name="a", parent="a", gpu=res(1, 1), cpu=res(1, 1), memory=res(1, 1)),
            "QueueSpec.parent: 'a' is the queue itself",
        ),
        (lambda: SchedulerSpec(), "SchedulerSpec.queues: is empty"),
    ],
)
def test_bad_specs_from_python(build, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        build()
