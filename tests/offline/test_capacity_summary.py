"""The capacity section of ``summary.md``: the ancestors' cut, per-pool reachable quota (item
8), largest gangs and the stranded-GPU warnings, as exact lines."""

from pathlib import Path

from stack_files import fixture_stack

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.capacity import capacity_markdown
from eks_gpu_platform.offline.run import validate

REPO = Path(__file__).resolve().parents[2]


def tail(section: str) -> list[str]:
    """The section's lines after its last table, less the hourly cost block (issue 28, point
    12: tests/budget/test_cost.py, and dev's in tests/offline/test_capacity.py)."""
    lines = section.splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("|"))
    start = next(i for i, line in enumerate(lines) if line.startswith("Hourly cost at full"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("- stack: "))
    return [line for line in lines[last + 1 : start] + lines[end + 1 :] if line]


def test_dev_summary_names_the_parent_that_cuts_the_budgets():
    section = capacity_markdown(validate(fixture_stack("dev")))
    cut = [
        f"- queue {q}: its pools' budgets are cut to the gpu.limit of research (12); effective "
        f"limit {limit}"
        for q, limit in (("research-batch", 8), ("research-serving", 4), ("research-notebooks", 2))
    ]
    # research-batch's "Limit reachable: no", explained (issue 28, point 13): gpu-spot's budget
    # is 6 GPUs (research's limit 12 less its siblings' 4 and 2), below its gpu.limit 8.
    assert tail(section) == [
        cut[0],
        "- queue research-batch: limit not reachable: Karpenter can buy at most 6 GPU units for "
        "it (the budgets of gpu-spot), below its gpu.limit 8; KAI admits its pods up to the "
        "limit, and those beyond what the pools hold stay pending (raise the pools' "
        "limits.gpus, or lower gpu.limit)",
        *cut[1:],
    ]


def test_prod_summary_shows_the_largest_gang_and_the_stranded_gpus():
    section = capacity_markdown(validate(fixture_stack("prod")))
    assert tail(section) == [
        "- queue llm-training: largest gang 64 GPUs",
        "- warning: pool 'train-efa' offers h100 only on 8-GPU or larger nodes (p5.48xlarge): "
        "Karpenter charges the pool's limit a whole node, so a 1-GPU h100 pod uses 8 of it",
        "- warning: pool 'train-efa' offers h200 only on 8-GPU or larger nodes (p5e.48xlarge): "
        "Karpenter charges the pool's limit a whole node, so a 1-GPU h200 pod uses 8 of it",
        "- warning: pool 'train-spot' offers a100 only on 8-GPU or larger nodes (p4d.24xlarge, "
        "p4de.24xlarge): Karpenter charges the pool's limit a whole node, so a 1-GPU a100 pod "
        "uses 8 of it",
    ]


def test_a_multi_pool_queue_shows_its_quota_per_pool():
    res = {"quota": 8, "limit": 8, "overQuotaWeight": 1}
    values = {
        "cluster": {"name": "gpu-test"},
        "nodePools": [
            {"name": "a", "gpus": ["l4"], "capacityTypes": ["spot"], "preemptible": True},
            {"name": "b", "gpus": ["l40s"], "capacityTypes": ["spot"], "preemptible": True},
        ],
        "scheduler": {
            "queues": [
                {
                    "name": "team",
                    "nodePools": ["a", "b"],
                    "poolShares": {"a": 6, "b": 2},
                    "gpu": {"quota": 8, "limit": 8, "overQuotaWeight": 1},
                    "cpu": res,
                    "memory": res,
                }
            ]
        },
    }
    section = capacity_markdown(PlatformConfig.load(values, "us-east-1"))
    # KAI's quota 8 is not per pool: pods pinned to pool b only ever see its 2.
    assert tail(section) == [
        "- queue team: quota reachable per pool a 6, b 2 (pods pinned to one pool see only its "
        "part)"
    ]
