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
    # is 6 GPUs (research's limit 12 less its siblings' 4 and 2), below its gpu.limit 8; the
    # cause is research's limit split in proportion, a design choice (review L6).
    assert tail(section) == [
        cut[0],
        "- queue research-batch: limit not reachable: Karpenter can buy at most 6 GPU units for "
        "it (the budgets of gpu-spot), below its gpu.limit 8, because the gpu.limit of research "
        "(12) is split among the queues under it in proportion (a design choice: KAI lets any "
        "one of them use all of the ancestor's free limit, kai-scheduler v0.16.8 "
        "max_allowed_check.go L19-45, but pools sized for that would together buy more than "
        "the ancestor admits); its pods beyond the budget stay pending even when its siblings "
        "are idle (raise the ancestor's gpu.limit, or lower gpu.limit to the budget)",
        *cut[1:],
        # Queue CPU and memory (issue 30 point 8), by hand: research-batch's training pods on
        # gpu-spot (smallest node 1 L4) ask 2 cores and 8 GiB a GPU, 6 GPUs; research-serving's
        # inference pods the same, 4 GPUs, non-preemptible (quotas count); research-notebooks'
        # pods 1 core and 4 GiB a slice, 2 slices (a g6.xlarge holds 4, the budget 2).
        "- queue research-batch: cpu 12 cores for its GPU budget (2 for one node) within "
        "research.cpu.limit 128, research-batch.cpu.limit 64; memory 48 GiB for its GPU budget "
        "(8 for one node) within research.memory.limit 512, research-batch.memory.limit 256",
        "- queue research-serving: cpu 8 cores for its GPU budget (2 for one node) within "
        "research.cpu.limit 128, research.cpu.quota 64, research-serving.cpu.limit 16, "
        "research-serving.cpu.quota 16; memory 32 GiB for its GPU budget (8 for one node) "
        "within research.memory.limit 512, research.memory.quota 256, "
        "research-serving.memory.limit 64, research-serving.memory.quota 64",
        "- queue research-notebooks: cpu 2 cores for its GPU budget (2 for one node) within "
        "research.cpu.limit 128, research.cpu.quota 64, research-notebooks.cpu.limit 8, "
        "research-notebooks.cpu.quota 8; memory 8 GiB for its GPU budget (8 for one node) "
        "within research.memory.limit 512, research.memory.quota 256, "
        "research-notebooks.memory.limit 32, research-notebooks.memory.quota 32",
    ]


def test_prod_summary_shows_the_largest_gang_and_the_stranded_gpus():
    section = capacity_markdown(validate(fixture_stack("prod")))
    assert tail(section) == [
        "- queue llm-training: largest gang 64 GPUs",
        # By hand: llm-training's EFA pod is a p5.48xlarge (8 GPUs) of 32 cores and 256 GiB, 8
        # of them; research's training pods 2 cores and 8 GiB a GPU, 32 GPUs (preemptible: no
        # quota counts); serving's inference pods the same, 16 GPUs. ml's limits are -1.
        "- queue llm-training: cpu 256 cores for its GPU budget (32 for one node) within "
        "ml.cpu.quota 1000, llm-training.cpu.limit 800, llm-training.cpu.quota 700; memory "
        "2048 GiB for its GPU budget (256 for one node) within ml.memory.quota 8000, "
        "llm-training.memory.limit 7000, llm-training.memory.quota 6000",
        "- queue research: cpu 64 cores for its GPU budget (2 for one node) within "
        "research.cpu.limit 400; memory 256 GiB for its GPU budget (8 for one node) within "
        "research.memory.limit 3000",
        "- queue serving: cpu 32 cores for its GPU budget (2 for one node) within "
        "ml.cpu.quota 1000, serving.cpu.limit 200, serving.cpu.quota 200; memory 128 GiB for "
        "its GPU budget (8 for one node) within ml.memory.quota 8000, serving.memory.limit 1200, "
        "serving.memory.quota 1200",
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
    # Its cpu.limit 8 is below what the training pods on its 8 GPUs ask (2 cores each).
    assert tail(section) == [
        "- queue team: quota reachable per pool a 6, b 2 (pods pinned to one pool see only its "
        "part)",
        "- queue team: cpu 16 cores for its GPU budget (2 for one node) within team.cpu.limit 8 "
        "(below); memory 64 GiB for its GPU budget (8 for one node) within team.memory.limit 8 "
        "(below)",
        "- warning: scheduler.queues[0](team).cpu.limit is 8 cores, below the 16 cores the "
        "workload templates' pods request on the GPU budget under it ('team' 6 GPU units on 'a' "
        "x 2; 'team' 2 GPU units on 'b' x 2 cores per GPU unit): KAI refuses a job when any of "
        "its CPU, memory or GPU requests would pass the limit of its queue or of an ancestor, so "
        "GPUs Karpenter buys for them can stay idle; raise it to 16 (or -1), or lower the "
        "queues' GPU budget",
        "- warning: scheduler.queues[0](team).memory.limit is 8 GiB, below the 64 GiB the "
        "workload templates' pods request on the GPU budget under it ('team' 6 GPU units on 'a' "
        "x 8; 'team' 2 GPU units on 'b' x 8 GiB per GPU unit): KAI refuses a job when any of "
        "its CPU, memory or GPU requests would pass the limit of its queue or of an ancestor, so "
        "GPUs Karpenter buys for them can stay idle; raise it to 64 (or -1), or lower the "
        "queues' GPU budget",
    ]
