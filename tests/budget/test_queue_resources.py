"""Queue CPU and memory against the GPU budget (issue 30 point 8, review L5).

KAI v0.16.8 refuses a job when any of its CPU, memory or GPU requests would pass the ``limit``
of its queue or an ancestor, and a non-preemptible one when any would pass their ``quota``
(kai-scheduler ``pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go``
L19-46 and L51-65, ``quota_check.go`` L35-56 and L61-77: loops over the ancestors and over
``rs.AllResources``). Expected values are worked out by hand from the fixture stacks and the
catalogue facts named beside them, never read from capacity.json or the code under test.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from capacity_cases import report_args, stack_specs
from kai_model import Kai
from stack_files import fixture_stack

from eks_gpu_platform.budget import capacity_warnings
from eks_gpu_platform.budget.report import capacity_document
from eks_gpu_platform.offline.run import validate
from eks_gpu_platform.offline.stackfile import StackFile
from eks_gpu_platform.scheduler.manifests import queue_manifest
from eks_gpu_platform.spec import SpecError

SCHEDULER = "eks-gpu-platform:scheduler"
LIMIT_WHY = (
    "KAI refuses a job when any of its CPU, memory or GPU requests would pass the limit of its "
    "queue or of an ancestor"
)
QUOTA_WHY = (
    "KAI refuses a non-preemptible job when any of its CPU, memory or GPU requests would pass "
    "the quota of its queue or of an ancestor"
)


def _stack(name: str, **edits: dict[str, Any]) -> StackFile:
    """The fixture stack ``name`` with queue ``q``'s keys replaced (``{q: {"cpu": {...}}}``)."""
    stack = fixture_stack(name)
    config = copy.deepcopy(stack.config)
    for queue in config[SCHEDULER]["queues"]:
        queue.update(edits.get(queue["name"], {}))
    return StackFile(stack.name, stack.project, config, [])


def _errors(stack: StackFile) -> list[str]:
    with pytest.raises(SpecError) as err:
        validate(stack)
    return err.value.lines


def _res(quota: float, limit: float) -> dict[str, float]:
    return {"quota": quota, "limit": limit, "overQuotaWeight": 1}


def test_a_cpu_limit_below_one_node_of_the_pool_is_a_configuration_error():
    # prod's research trains on train-spot (a100, h100), whose smallest node is p5.4xlarge
    # (1 H100, EC2's instance data); the training template asks 2 cores per GPU.
    lines = _errors(_stack("prod", research={"cpu": _res(1.5, 1.5)}))
    assert lines == [
        "scheduler.queues[2](research).cpu.limit: 1.5 cores of queue 'research' cannot hold one "
        "node of pool 'train-spot' for the training template of 'research': 1 pod(s) x 2 cores "
        f"= 2 cores; {LIMIT_WHY}, so the GPUs Karpenter buys for them stay idle; raise "
        "cpu.limit to at least 2, or -1"
    ]


def test_an_ancestors_memory_limit_and_quota_count():
    # prod's llm-training (under ml) runs the EFA template: one pod of 256 GiB per p5 node, and
    # non-preemptible (train-efa is not preemptible: priority build), so ml's quota counts too.
    # Its siblings' pods ask less (research 8 GPUs x 8 GiB = 64, serving 8 GiB).
    lines = _errors(
        _stack(
            "prod",
            ml={"memory": _res(200, 200)},
            **{"llm-training": {"memory": _res(200, 200)}},
            research={"memory": _res(64, 64)},
            serving={"memory": _res(64, 64)},
        )
    )
    one_node = "1 pod(s) x 256 GiB = 256 GiB"
    assert lines == [
        "scheduler.queues[0](ml).memory.limit: 200 GiB of queue 'ml' (an ancestor of "
        "'llm-training') cannot hold one node of pool 'train-efa' for the training template of "
        f"'llm-training': {one_node}; {LIMIT_WHY}, so the GPUs Karpenter buys for them stay "
        "idle; raise memory.limit to at least 256, or -1",
        "scheduler.queues[0](ml).memory.quota: 200 GiB of queue 'ml' (an ancestor of "
        "'llm-training') cannot hold one node of pool 'train-efa' for the training template of "
        f"'llm-training': {one_node}; {QUOTA_WHY}, so the GPUs Karpenter buys for them stay "
        "idle; raise memory.quota to at least 256, or -1",
        "scheduler.queues[1](llm-training).memory.limit: 200 GiB of queue 'llm-training' cannot "
        "hold one node of pool 'train-efa' for the training template of 'llm-training': "
        f"{one_node}; {LIMIT_WHY}, so the GPUs Karpenter buys for them stay idle; raise "
        "memory.limit to at least 256, or -1",
        "scheduler.queues[1](llm-training).memory.quota: 200 GiB of queue 'llm-training' cannot "
        "hold one node of pool 'train-efa' for the training template of 'llm-training': "
        f"{one_node}; {QUOTA_WHY}, so the GPUs Karpenter buys for them stay idle; raise "
        "memory.quota to at least 256, or -1",
    ]


def test_a_cpu_quota_of_0_refuses_a_non_preemptible_template():
    # dev's research-serving: inference (non-preemptible) on l4, whose smallest node
    # (g6.xlarge) has 1 GPU: one pod of 2 cores. A quota of 0 is KAI's Deserved 0.
    lines = _errors(_stack("dev", **{"research-serving": {"cpu": _res(0, 16)}}))
    assert lines == [
        "scheduler.queues[2](research-serving).cpu.quota: 0 cores of queue 'research-serving' "
        "cannot hold one node of pool 'inference' for the inference template of "
        f"'research-serving': 1 pod(s) x 2 cores = 2 cores; {QUOTA_WHY}, so the GPUs Karpenter "
        "buys for them stay idle; raise cpu.quota to at least 2, or -1"
    ]


def test_a_quota_does_not_bound_preemptible_pods():
    # research-batch's pool gpu-spot is preemptible (priority train): its cpu.quota 0 is fine.
    assert validate(_stack("dev", **{"research-batch": {"cpu": _res(0, 64)}})) is not None


def test_a_cpu_limit_below_the_gpu_budget_is_a_warning():
    # dev: research's gpu.limit 12 cuts research-batch to 6 GPUs (its quota 2 + 4): at the
    # training template's 2 cores per GPU, 12 cores; a limit of 10 holds 5 of them.
    config = validate(_stack("dev", **{"research-batch": {"cpu": _res(10, 10)}}))
    assert capacity_warnings(*stack_specs(config), config.workload_kinds) == [
        "warning: scheduler.queues[1](research-batch).cpu.limit is 10 cores, below the 12 cores "
        "the workload templates' pods request on the GPU budget under it ('research-batch' 6 "
        f"GPU units on 'gpu-spot' x 2 cores per GPU unit): {LIMIT_WHY}, so GPUs Karpenter buys "
        "for them can stay idle; raise it to 12 (or -1), or lower the queues' GPU budget"
    ]
    # KAI (tests/kai_model.py) admits 5 one-GPU pods of 2 cores and 8 GiB, not the 6 bought.
    kai = Kai.of_manifests({q.name: queue_manifest(q) for q in config.scheduler.queues})
    admitted = 0
    while kai.admit("research-batch", 1, millicpu=2000, memory_bytes=8 * 2**30):
        admitted += 1
    assert admitted == 5
    assert kai.refusal("research-batch", 1, millicpu=2000) == (
        "OverLimit: queue 'research-batch' (CPU)"
    )


def test_an_ancestors_limit_sums_its_leaves_budgets():
    # dev's research: batch 6 GPUs x 2 cores, serving 4 x 2, notebooks 2 slices x 1 = 22 cores;
    # its limit 20 is above every one node (2, 2 and 2 x 1) but below their sum.
    config = validate(_stack("dev", research={"cpu": _res(20, 20)}))
    assert capacity_warnings(*stack_specs(config), config.workload_kinds) == [
        "warning: scheduler.queues[0](research).cpu.limit is 20 cores, below the 22 cores the "
        "workload templates' pods request on the GPU budget under it ('research-batch' 6 GPU "
        "units on 'gpu-spot' x 2; 'research-serving' 4 GPU units on 'inference' x 2; "
        "'research-notebooks' 2 GPU units on 'notebooks' x 1 cores per GPU unit): "
        f"{LIMIT_WHY}, so GPUs Karpenter buys for them can stay idle; raise it to 22 (or -1), "
        "or lower the queues' GPU budget"
    ]


def test_prod_capacity_json_shows_llm_trainings_cpu_and_memory():
    # llm-training: the EFA template, one pod per p5.48xlarge (8 GPUs) of 32 cores and 256 GiB,
    # non-preemptible; its budget 64 GPUs = 8 pods = 256 cores, 2048 GiB. Bounds, in the
    # queues' order: ml's quotas (1000 cores, 8000 GiB; its limits are -1) over llm-training's
    # and serving's non-preemptible pods (serving: 16 one-GPU pods of 2 cores, 8 GiB), then
    # llm-training's own limit and quota.
    config = validate(fixture_stack("prod"))
    entry = next(
        q
        for q in capacity_document(*stack_specs(config), **report_args(config))["queueResources"]
        if q["name"] == "llm-training"
    )

    def bound(queue, key, value, one_node, budget):
        return {
            "queue": queue,
            "key": key,
            "value": value,
            "oneNode": one_node,
            "budget": budget,
            "holdsOneNode": True,
            "holdsBudget": True,
        }

    assert entry == {
        "name": "llm-training",
        "pods": {
            "train-efa": {
                "gpuUnits": 8,
                "cpu": 32,
                "memoryGiB": 256,
                "preemptible": False,
                "budgetGpuUnits": 64,
            }
        },
        "cpu": {
            "oneNode": 32,
            "budget": 256,
            "bounds": [
                bound("ml", "quota", 1000, 32, 256 + 32),
                bound("llm-training", "limit", 800, 32, 256),
                bound("llm-training", "quota", 700, 32, 256),
            ],
            "reachable": True,
        },
        "memory": {
            "oneNode": 256,
            "budget": 2048,
            "bounds": [
                bound("ml", "quota", 8000, 256, 2048 + 128),
                bound("llm-training", "limit", 7000, 256, 2048),
                bound("llm-training", "quota", 6000, 256, 2048),
            ],
            "reachable": True,
        },
    }


def test_kai_model_checks_cpu_and_memory_in_kais_units():
    # dev's research-serving: cpu.limit 16 cores = 16000 millicores; memory.limit 64 GiB,
    # rendered as 68719.476736 MB of 10^6 bytes = 64 x 2^30 bytes.
    config = validate(fixture_stack("dev"))
    kai = Kai.of_manifests({q.name: queue_manifest(q) for q in config.scheduler.queues})
    assert kai.refusal("research-serving", 1, millicpu=16000, memory_bytes=64 * 2**30) is None
    assert kai.refusal("research-serving", 1, millicpu=16001) == (
        "OverLimit: queue 'research-serving' (CPU)"
    )
    assert kai.refusal("research-serving", 1, memory_bytes=64 * 2**30 + 1) == (
        "OverLimit: queue 'research-serving' (Memory)"
    )
    # CPU is checked before GPU (rs.AllResources order), the limit before the quota.
    assert kai.refusal("research-serving", 5, millicpu=16001) == (
        "OverLimit: queue 'research-serving' (CPU)"
    )
    # research-batch: cpu quota 16 cores under limit 64 (research: 128). A non-preemptible
    # job passes the limits and stops at the quota; a preemptible one does not see it.
    assert kai.refusal("research-batch", 1, preemptible=False, millicpu=16001) == (
        "NonPreemptibleOverQuota: queue 'research-batch' (CPU)"
    )
    assert kai.refusal("research-batch", 1, millicpu=16001) is None
    assert kai.refusal("research-batch", 1, preemptible=False, millicpu=16000) is None


def test_plan_md_shows_the_queues_cpu_and_memory(tmp_path):
    from eks_gpu_platform.offline.plan_report import resources_section

    def bound(queue, key, value, holds_budget, holds_one_node=True):
        return {
            "queue": queue,
            "key": key,
            "value": value,
            "holdsBudget": holds_budget,
            "holdsOneNode": holds_one_node,
        }

    entry = {
        "name": "a",
        "cpu": {"oneNode": 16, "budget": 64, "bounds": [bound("org", "limit", 32, False)]},
        "memory": {
            "oneNode": 64,
            "budget": 256,
            "bounds": [bound("a", "quota", 32, False, False)],
        },
    }
    (tmp_path / "capacity.json").write_text(json.dumps({"queueResources": [entry]}))
    assert resources_section(tmp_path).splitlines() == [
        "",
        "## Queue CPU and memory",
        "",
        "- queue a: cpu 64 cores for its GPU budget (16 for one node) within org.cpu.limit 32 "
        "(below); memory 256 GiB for its GPU budget (64 for one node) within a.memory.quota 32 "
        "(below one node)",
    ]
    assert resources_section(tmp_path / "none") == ""
