"""Benchmark the offline render: wall time and peak memory, per stack and per node pool.

``make bench`` prints a table. Each render runs in its own process (``python -m
eks_gpu_platform.offline``), so wall time includes interpreter start and imports, and peak memory
is that process's maximum resident set size. Generated stacks hold 1, 10, 50 and 100 node pools
(GPU pools of several GPU classes, every tenth an EFA pool); the marginal cost of a pool is the
slope between the smallest and the largest. Targets (2-core machine): prod under 6 s, each extra
pool under 25 ms, 100 pools under 10 s and 700 MB.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
POOL_COUNTS = (1, 10, 50, 100)
GPU_CLASSES = (["l4"], ["l40s"], ["a10g"], ["a100"], ["h100"], ["l4", "l40s"])
TARGETS = {"prod_s": 6.0, "per_pool_ms": 25.0, "pools100_s": 10.0, "pools100_mb": 700.0}


def generated_stack(pools: int) -> dict:
    """A stack with ``pools`` node pools (plus the default CPU pool)."""
    node_pools = []
    for i in range(pools):
        if i % 10 == 9:
            node_pools.append(
                {
                    "name": f"efa-{i}",
                    "kind": "efa",
                    "instanceTypes": ["p5.48xlarge"],
                    "zone": "us-west-2a",
                    "capacityTypes": ["on-demand"],
                    "limits": {"gpus": 16},
                }
            )
            continue
        spot = i % 2 == 0
        node_pools.append(
            {
                "name": f"gpu-{i}",
                "kind": "gpu",
                "gpus": GPU_CLASSES[i % len(GPU_CLASSES)],
                "capacityTypes": ["spot"] if spot else ["on-demand"],
                "preemptible": spot,
                "limits": {"gpus": 8},
            }
        )
    return {
        "config": {
            "aws:region": "us-west-2",
            "eks-gpu-platform:cluster": {"name": f"bench-{pools}"},
            "eks-gpu-platform:nodePools": node_pools,
        }
    }


def measure(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(args)}\n{proc.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024  # Linux reports KiB


def render_args(out: Path, *, stack: str | None = None, config_file: Path | None = None) -> list:
    args = [sys.executable, "-m", "eks_gpu_platform.offline", "--out", str(out)]
    if stack:
        args += ["--stack", stack]
    if config_file:
        args += ["--config-file", str(config_file), "--stack", config_file.stem]
    return args


def best_of(runs: int, args: list[str]) -> tuple[float, float]:
    results = [measure(args) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per case; the best is kept")
    parser.add_argument("--skip-tests", action="store_true", help="do not time the test suite")
    args = parser.parse_args(argv)
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        stacks = sorted(p.name.split(".")[1] for p in REPO.glob("Pulumi.*.yaml"))
        for stack in stacks:
            wall, mem = best_of(args.runs, render_args(tmpdir / stack, stack=stack))
            rows.append((f"stack {stack}", wall, mem))
        generated: dict[int, tuple[float, float]] = {}
        for pools in POOL_COUNTS:
            path = tmpdir / f"pools{pools}.yaml"
            path.write_text(yaml.safe_dump(generated_stack(pools)))
            generated[pools] = best_of(args.runs, render_args(tmpdir / path.stem, config_file=path))
            rows.append((f"{pools} node pools", *generated[pools]))
    per_pool_ms = (
        (generated[POOL_COUNTS[-1]][0] - generated[POOL_COUNTS[0]][0])
        / (POOL_COUNTS[-1] - POOL_COUNTS[0])
        * 1000
    )
    print(f"{'case':<24} {'wall (s)':>9} {'peak RSS (MB)':>14}")
    for name, wall, mem in rows:
        print(f"{name:<24} {wall:>9.2f} {mem:>14.0f}")
    print(f"{'marginal cost per pool':<24} {per_pool_ms:>8.1f}ms")
    if not args.skip_tests:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q"], cwd=REPO, check=True, stdout=subprocess.DEVNULL
        )
        print(f"{'test suite':<24} {time.perf_counter() - started:>9.2f}")
    prod = next((w for n, w, _ in rows if n == "stack prod"), None)
    checks = {
        f"prod render < {TARGETS['prod_s']} s": prod is not None and prod < TARGETS["prod_s"],
        f"per pool < {TARGETS['per_pool_ms']} ms": per_pool_ms < TARGETS["per_pool_ms"],
        f"100 pools < {TARGETS['pools100_s']} s": generated[100][0] < TARGETS["pools100_s"],
        f"100 pools < {TARGETS['pools100_mb']} MB": generated[100][1] < TARGETS["pools100_mb"],
    }
    for label, ok in checks.items():
        print(f"target {label:<28} {'met' if ok else 'MISSED'}")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
