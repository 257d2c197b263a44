"""Shared helpers of the capacity tests: a stack's render as Karpenter sees it, and generated
stack configurations (time-sliced, MIG single and mixed, plain, EFA pools; queues routed to one
or several pools, with or without explicit shares)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from karpenter_model import Render
from render_cache import shared_render
from stack_files import fixture_stack, user_stack

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.gpu_operator import mig_profiles_for_family
from eks_gpu_platform.offline.run import validate
from eks_gpu_platform.offline.stackfile import StackFile
from eks_gpu_platform.offline.write import helm_releases, kubernetes_objects
from eks_gpu_platform.spec import SpecError

REPO = Path(__file__).resolve().parents[1]


def stack_config(stack: str) -> PlatformConfig:
    """The fixture stack ``stack``'s configuration (tests/fixtures/stacks)."""
    config = validate(fixture_stack(stack))
    assert config is not None
    return config


def user_stack_config(stack: str) -> PlatformConfig:
    """The user's stack ``stack``'s configuration (the project root's Pulumi.<stack>.yaml)."""
    config = validate(user_stack(stack))
    assert config is not None
    return config


def render_of(stack: StackFile) -> Render:
    """What Karpenter sees of a stack: its offline render's Kubernetes objects and the GPU
    Operator's values (the device plugin's and MIG manager's configuration), shared per
    process (tests/render_cache.py)."""
    recording = shared_render(REPO, stack)
    (operator,) = [r for r in helm_releases(recording) if r["chart"] == "gpu-operator"] or [
        {"values": {}}
    ]
    return Render.of(kubernetes_objects(recording), operator["values"], stack.config["aws:region"])


def stack_render(stack: str) -> Render:
    """The fixture stack ``stack`` as Karpenter sees it."""
    return render_of(fixture_stack(stack))


def user_stack_render(stack: str) -> Render:
    """The user's stack ``stack`` as Karpenter sees it."""
    return render_of(user_stack(stack))


def values_render(values: dict[str, Any], region: str = "us-east-1") -> Render:
    config: dict[str, Any] = {"aws:region": region}
    config.update({f"eks-gpu-platform:{k}": v for k, v in values.items()})
    return render_of(StackFile("generated", "eks-gpu-platform", config, []))


# --- generated configurations ---------------------------------------------------------------

MIG_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p6-b200", "p6-b300")


def _pool(rng: random.Random, i: int, strategy: str) -> dict[str, Any]:
    kind = rng.choice(["plain", "plain", "sliced", "mig", "efa"])
    name = f"p{i}-{kind}"
    preemptible = rng.random() < 0.5
    base: dict[str, Any] = {
        "name": name,
        "capacityTypes": ["spot"] if preemptible else ["on-demand"],
        "preemptible": preemptible,
    }
    if rng.random() < 0.2:
        base["limits"] = {"gpus": rng.choice([8, 16, 64])}
    if kind == "plain":
        return {**base, "gpus": rng.sample(["l4", "l40s", "a10g", "h100"], rng.randint(1, 2))}
    if kind == "sliced":
        return {**base, "gpus": ["l4"], "timeSlicing": f"ts-{rng.choice([2, 4, 7])}"}
    if kind == "mig":
        family = rng.choice(MIG_FAMILIES)
        profiles = [
            p
            for p in mig_profiles_for_family(family)
            if p != "all-disabled" and (strategy == "mixed" or p != "all-balanced")
        ]
        return {**base, "instanceFamilies": [family], "migProfile": rng.choice(profiles)}
    return {
        "name": name,
        "kind": "efa",
        "instanceTypes": rng.choice([["p5.48xlarge"], ["p5.48xlarge", "p5e.48xlarge"]]),
        "zone": "us-east-1a",
        "capacityTypes": ["on-demand"],
    }


def generated_values(seed: int) -> dict[str, Any]:
    """A random stack configuration: 2-5 GPU pools, 1-4 leaf queues under one parent."""
    rng = random.Random(seed)
    strategy = rng.choice(["single", "mixed"])
    pools = [_pool(rng, i, strategy) for i in range(rng.randint(2, 5))]
    names = [p["name"] for p in pools]
    queues: list[dict[str, Any]] = [
        {
            "name": "org",
            "gpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
            "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
            "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
        }
    ]
    routed: set[str] = set()
    for j in range(rng.randint(1, 4)):
        targets = rng.sample(names, rng.choice([1, 1, 2]))
        routed.update(targets)
        quota = rng.choice([0, 2, 8, 16, 32])
        limit = quota + rng.choice([0, 1, 6, 16, 32]) or 8
        queue: dict[str, Any] = {
            "name": f"q{j}",
            "parent": "org",
            "nodePools": targets,
            "gpu": {"quota": quota, "limit": limit, "overQuotaWeight": 1},
            # Unbounded: GPUs are what the generated stacks check (CPU and memory against
            # the templates: budget.resources, tests/budget/test_queue_resources.py).
            "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
            "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
        }
        if len(targets) == 2 and rng.random() < 0.5:
            first = rng.choice([quota, limit // 2, limit])
            queue["poolShares"] = {targets[0]: first, targets[1]: limit - first}
        queues.append(queue)
    for pool in pools:  # every GPU pool needs a leaf queue routed to it
        if pool["name"] not in routed:
            queues[-1]["nodePools"].append(pool["name"])
            queues[-1].pop("poolShares", None)
    return {
        "cluster": {"name": "gpu-gen"},
        "nodePools": pools,
        "gpuOperator": {
            "migStrategy": strategy,
            "timeSlicing": {"ts-2": 2, "ts-4": 4, "ts-7": 7},
        },
        "scheduler": {"queues": queues},
    }


def generated_configs(
    count: int, *, first: int | None = None
) -> tuple[list[PlatformConfig], list[str], list[int]]:
    """``count`` seeds: the configurations that validate, the errors of the others, and the
    seeds of those that validate; with ``first``, stop once that many validate (the same
    configurations as the head of the full list)."""
    ok, errors, seeds = [], [], []
    for seed in range(count):
        if first is not None and len(ok) == first:
            break
        try:
            ok.append(PlatformConfig.load(generated_values(seed), "us-east-1"))
            seeds.append(seed)
        except SpecError as err:
            errors.append(f"seed {seed}: {err.lines[0]}")
    return ok, errors, seeds


def stack_specs(config: PlatformConfig) -> tuple[Any, Any, Any]:
    """What the budget's stack-wide functions read of a stack (``budget.stack``): its pools
    (the default cpu pool included), the GPU Operator's settings and the scheduler's."""
    return (config.pools, config.gpu_operator, config.scheduler)


def cost_args(config: PlatformConfig) -> dict[str, Any]:
    """The rest of what ``budget.cost.cost_document`` reads: the region, the system node group
    and the names of the configured cpu pools."""
    return {
        "region": config.region,
        "system_node_group": config.system_node_group,
        "cpu_pools": [p.name for p in config.node_pools if p.kind == "cpu"],
    }


def report_args(config: PlatformConfig) -> dict[str, Any]:
    """The rest of what ``budget.report.capacity_document`` reads: ``cost_args`` and the leaf
    queues' workload kinds."""
    return {"kinds": config.workload_kinds, **cost_args(config)}
