"""``scheduler.queues[].priorityClasses`` (issue 29 point 3): the classes each queue may use, by
default from its workload kind and its pools' preemptibility, and the exact errors a bad list
gets before anything is registered."""

from typing import Any

import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.scheduler.tenancy import queue_tenancy
from eks_gpu_platform.spec import SpecError


def res(quota: Any = 4, limit: Any = 8, weight: Any = 1) -> dict[str, Any]:
    return {"quota": quota, "limit": limit, "overQuotaWeight": weight}


def _queue(name: str, pools: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "nodePools": pools,
        "gpu": res(),
        "cpu": res(16, 16),
        "memory": res(64, 64),
        **extra,
    }


SPOT = {"name": "spot", "gpus": ["l4"], "capacityTypes": ["spot"], "preemptible": True}
ONDEMAND = {"name": "ondemand", "gpus": ["l4"]}


def _stack(*queues: dict[str, Any], classes: dict[str, int] | None = None) -> dict[str, Any]:
    scheduler: dict[str, Any] = {"queues": list(queues)}
    if classes:
        scheduler["priorityClasses"] = classes
    used = {pool for q in queues for pool in q["nodePools"]}
    pools = [p for p in (SPOT, ONDEMAND) if p["name"] in used]
    return {"cluster": {"name": "gpu-dev"}, "nodePools": pools, "scheduler": scheduler}


def _classes(values: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    config = PlatformConfig.load(values, "us-west-2")
    return {
        q.queue: q.classes
        for q in queue_tenancy(
            config.scheduler.queues,
            config.workload_kinds,
            {p.name: p.preemptible for p in config.gpu_pools},
            config.scheduler.priority_classes,
        )
    }


def test_default_classes_follow_the_workload_kind_and_drop_non_preemptible_on_spot():
    assert _classes(
        _stack(
            _queue("batch", ["spot"]),
            _queue("serve", ["ondemand"], workloadKind="inference"),
            _queue("train", ["ondemand"], workloadKind="training"),
            _queue("lab", ["ondemand"], workloadKind="notebook"),
            _queue("spot-serve", ["spot"], workloadKind="inference"),
        )
    ) == {
        "batch": ("train", "build-preemptible"),
        "serve": ("inference", "build", "build-preemptible", "train"),
        "train": ("train", "build-preemptible", "build"),
        "lab": ("build", "build-preemptible", "train"),
        "spot-serve": ("build-preemptible", "train"),
    }


def test_a_listed_set_replaces_the_default():
    assert _classes(
        _stack(
            _queue("serve", ["ondemand"], priorityClasses=["inference", "gold"]),
            classes={"gold": 300},
        )
    ) == {"serve": ("inference", "gold")}


BAD = [
    pytest.param(
        _queue("batch", ["spot"], priorityClasses=["train", "inference"]),
        "scheduler.queues[0](batch).priorityClasses: queue 'batch': 'inference' is "
        "non-preemptible (value 125 >= 100) but every pool of the queue is preemptible; "
        "allowed: train, build-preemptible",
        id="non-preemptible-on-spot",
    ),
    pytest.param(
        _queue("serve", ["ondemand"], priorityClasses=["gold"]),
        "scheduler.queues[0](serve).priorityClasses: queue 'serve': 'gold' is not a known "
        "priority class; allowed: train, build-preemptible, build, inference (list classes you "
        "create under scheduler.priorityClasses first)",
        id="unknown",
    ),
    pytest.param(
        _queue("serve", ["ondemand"], priorityClasses=["system-node-critical"]),
        "scheduler.queues[0](serve).priorityClasses: queue 'serve': 'system-node-critical' is a "
        "system class, which outranks every tenant pod; allowed: train, build-preemptible, "
        "build, inference",
        id="system",
    ),
    pytest.param(
        _queue("serve", ["ondemand"], priorityClasses=[]),
        "scheduler.queues[0](serve).priorityClasses: is empty, so queue 'serve' could use no "
        "class; list some of train, build-preemptible, build, inference, or remove it for the "
        "default",
        id="empty",
    ),
    pytest.param(
        _queue("serve", ["ondemand"], priorityClasses=["train", "train"]),
        "scheduler.queues[0](serve).priorityClasses: queue 'serve' lists the same class twice",
        id="twice",
    ),
]


@pytest.mark.parametrize(("queue", "line"), BAD)
def test_a_bad_class_list_names_the_queue_the_class_and_the_allowed_ones(queue, line):
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(_stack(queue), "us-west-2")
    assert err.value.lines == [line]
