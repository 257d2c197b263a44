"""Shared helpers of the capacity tests: a stack's NodePools as Karpenter models, and generated
stack configurations (time-sliced, MIG single and mixed, plain, EFA pools; queues routed to one
or several pools, with or without explicit shares)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from karpenter_model import NodePoolModel

from eks_gpu_platform.budget import capacity_of
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.gpu_operator import mig_profiles_for_family
from eks_gpu_platform.nodepool import (
    gpu_overlay_manifests,
    nodeoverlay_manifest,
    nodepool_groups,
    nodepool_manifest,
)
from eks_gpu_platform.offline.run import load_stack_file, validate
from eks_gpu_platform.spec import SpecError

REPO = Path(__file__).resolve().parents[1]


def stack_config(stack: str) -> PlatformConfig:
    config = validate(load_stack_file(REPO, stack, None))
    assert config is not None
    return config


def pool_models(config: PlatformConfig, pool_name: str) -> list[NodePoolModel]:
    """The pool's NodePools (one, or one per type for an EFA pool) as Karpenter models, with the
    NodeOverlays the platform renders and what the device plugin advertises."""
    domain = config.cluster.label_domain
    pool = next(p for p in config.gpu_pools if p.name == pool_name)
    capacity = capacity_of(pool, config.gpu_operator)
    gpus = config.gpu_limits[pool.name]
    overlays = gpu_overlay_manifests(pool, capacity, label_domain=domain)
    if pool.kind == "efa":
        overlays.append(nodeoverlay_manifest(pool, label_domain=domain))
    advertised = {t.name: dict(t.advertised) for t in capacity.types}
    if pool.kind == "efa":
        variants = [
            (g.name, list(g.instance_types), g.gpus, list(g.instance_types))
            for g in nodepool_groups(pool, gpus)
        ]
    else:
        variants = [(pool.name, None, gpus, [t.name for t in capacity.types])]
    return [
        NodePoolModel(
            manifest=nodepool_manifest(
                pool,
                name=name,
                node_class=name,
                label_domain=domain,
                gpu_limit=share,
                instance_type=itype,
                per_gpu=capacity.per_gpu,
            ),
            instance_types=types,
            overlays=overlays,
            advertised=lambda t, a=advertised: dict(a[t]),
        )
        for name, itype, share, types in variants
    ]


def unit_pod(config: PlatformConfig, pool_name: str) -> dict[str, int]:
    """A pod of the smallest request the pool serves: one nvidia.com/gpu (a whole GPU, a slice
    or a MIG device), or one device of the mixed layout's smallest profile."""
    pool = next(p for p in config.gpu_pools if p.name == pool_name)
    capacity = capacity_of(pool, config.gpu_operator)
    if capacity.mode == "mig-mixed":
        resource = min(capacity.per_gpu, key=lambda r: (r.split("-", 1)[1], r))
        return {resource: 1}
    return {"nvidia.com/gpu": 1}


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
            "cpu": {"quota": 8, "limit": 8, "overQuotaWeight": 1},
            "memory": {"quota": 32, "limit": 32, "overQuotaWeight": 1},
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


def generated_configs(count: int) -> tuple[list[PlatformConfig], list[str]]:
    """``count`` seeds: the configurations that validate, and the errors of the others."""
    ok, errors = [], []
    for seed in range(count):
        try:
            ok.append(PlatformConfig.load(generated_values(seed), "us-east-1"))
        except SpecError as err:
            errors.append(f"seed {seed}: {err.lines[0]}")
    return ok, errors
