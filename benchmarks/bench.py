"""Benchmark the offline render against the SDK-import floor, per node pool, and the test suite.

``make bench`` prints a table and judges the targets (2-core machine); it exits 1 when one is
missed, and the verdict names the figure and the floor each target is judged against:

- **prod render / floor, same settings <= 1.25.** The floor is a Python process (same
  interpreter, same virtualenv) that imports exactly the SDK classes the library names (every
  ``aws.<module>.<Class>``, ``k8s.<group>.<version>.<Class>`` and ``eks.<Class>`` in
  ``components/``, found by scanning the source, plus ``pulumi``, ``pulumi.runtime.mocks`` and
  ``yaml``) and exits: what any program using those resources pays before doing any work. The
  render switches the cyclic garbage collector off and skips interpreter teardown
  (``eks_gpu_platform.offline.__main__``/``render.cli``), so the floor the target is judged
  against does the same ("floor, same settings"): the ratio is the program's own work, like
  for like. The plain floor ("SDK-import floor", without those settings) pays a teardown and
  collector passes the render does not; a ratio to it would flatter the render, so the table
  shows that floor for information only and no target is judged against it. The cases run
  alternately (floor, render, floor, render, ...) so that drift of the machine hits all alike;
  the medians are compared.
- **Marginal cost per node pool <= 8 ms**: the slope of the median time between generated
  stacks of 1 and 500 GPU/EFA pools (GPU pools of several GPU classes, every tenth an EFA pool).
- **500 node pools under 400 MB** peak resident set size (the process's ``ru_maxrss``).
- **Test suite <= 30 s** wall time: ``pytest`` exactly as ``make test`` runs it (the parallel
  workers come from ``addopts`` in pyproject.toml).

The two time targets are judged on CPU time (user + system, from ``wait4``): the work of the
process itself, which other load on a shared machine disturbs far less than wall time (a
render waits on nothing but the CPU, so on a quiet machine the two agree). The wall-time ratio
and slope are printed beside them. Each render runs in its own process (``python -m
eks_gpu_platform.offline``), so both include interpreter start, imports and exit. ``--write``
rewrites the benchmark table and the verdict in ``docs/benchmarks.md``.

The targets hold on a quiet machine. How quiet this one was is measured, not assumed: a fixed
piece of pure-Python CPU work (``CALIBRATION``, in a process of its own) runs in every round
beside the cases, and again just before and just after the test suite. Its CPU time does not
depend on the project; how far it moves over the run (the slowest over the fastest) is printed
and written with the verdict, and a spread over ``QUIET_SPREAD`` is reported as a machine that
was not quiet. It changes no verdict: a target missed on a noisy machine is still missed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
POOL_COUNTS = (1, 100, 500)
GPU_CLASSES = (["l4"], ["l40s"], ["a10g"], ["a100"], ["h100"], ["l4", "l40s"])
TARGETS = {"ratio": 1.25, "per_pool_ms": 8.0, "pools500_mb": 400.0, "suite_s": 30.0}
# Fixed CPU work, independent of the project: about half a second of pure Python (loops,
# integer arithmetic, dict and list operations, as the render does). Its own process, like a
# case.
CALIBRATION = (
    "d = {}\n"
    "for i in range(1_500_000):\n"
    "    d[i % 1000] = d.get(i % 1000, 0) + i * 3 % 7\n"
    "    [i, i + 1].append(i)\n"
)
CALIBRATION_CASE = "calibration (fixed CPU work, information)"
# The calibration's slowest run over its fastest, above which the machine was not quiet.
QUIET_SPREAD = 1.10
SDK_ALIASES = {"aws": "pulumi_aws", "k8s": "pulumi_kubernetes", "eks": "pulumi_eks"}
SDK_USE = re.compile(r"\b(aws|k8s|eks)((?:\.[a-z_0-9]+)*)\.([A-Z][A-Za-z0-9]+)\b")
SDK_IMPORT = re.compile(r"^\s*import (pulumi_aws|pulumi_kubernetes|pulumi_eks) as (\w+)$", re.M)


def sdk_classes(root: Path = REPO / "components") -> list[tuple[str, str]]:
    """(module, class) for every SDK class the library names, in modules that import the SDK
    under the aliases ``aws``, ``k8s`` and ``eks``."""
    found: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        aliases = {alias: module for module, alias in SDK_IMPORT.findall(text)}
        for alias, submodule, name in SDK_USE.findall(text):
            if aliases.get(alias) == SDK_ALIASES[alias]:
                found.add((SDK_ALIASES[alias] + submodule, name))
    return sorted(found)


def floor_program(*, like_render: bool = False) -> str:
    """The SDK-import floor: import what the library uses, then exit. ``like_render``: with the
    render's process settings (garbage collector off, no interpreter teardown)."""
    lines = ["import gc", "gc.disable()"] if like_render else []
    lines += ["import pulumi", "import yaml", "from pulumi.runtime import mocks"]
    lines += [f"from {module} import {name}" for module, name in sdk_classes()]
    if like_render:
        lines += ["import os", "os._exit(0)"]
    return "\n".join(lines) + "\n"


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


def measure(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds (user + system) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(args)}\n{proc.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # maxrss in KiB


def render_args(out: Path, *, stack: str | None = None, config_file: Path | None = None) -> list:
    args = [sys.executable, "-m", "eks_gpu_platform.offline", "--out", str(out)]
    if stack:
        args += ["--stack", stack]
    if config_file:
        args += ["--config-file", str(config_file), "--stack", config_file.stem]
    return args


def alternate(
    cases: dict[str, list[str]], runs: int, samples: dict[str, list[float]] | None = None
) -> dict[str, tuple[float, float, float]]:
    """Run the cases in turn, ``runs`` rounds; per case the median wall time, the peak RSS and
    the median CPU time (which other load on the machine disturbs less than wall time).
    ``samples``, when given, gets every run's CPU time per case."""
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, args in cases.items():
            results[name].append(measure(args))
    if samples is not None:
        for name, rs in results.items():
            samples.setdefault(name, []).extend(r[2] for r in rs)
    return {
        name: (
            statistics.median(r[0] for r in rs),
            max(r[1] for r in rs),
            statistics.median(r[2] for r in rs),
        )
        for name, rs in results.items()
    }


def suite_wall() -> tuple[float, str]:
    """The test suite as ``make test`` runs it: wall seconds and pytest's summary line."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest"], cwd=REPO, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0:
        # Still timed (the table says how many failed), but make bench then exits 1.
        print(f"the test suite failed:\n{proc.stdout[-3000:]}", file=sys.stderr)
    return elapsed, lines[-1] if lines else ""


def pools_label(pools: int) -> str:
    return f"{pools} node pool{'s' if pools > 1 else ''}"


def table(rows: list[tuple[str, str, str, str]]) -> str:
    out = ["| Case | Wall (s) | Peak RSS (MB) | CPU (s) |", "|---|---:|---:|---:|"]
    out += [f"| {name} | {wall} | {mem} | {cpu} |" for name, wall, mem, cpu in rows]
    return "\n".join(out)


# The floor the ratio target is judged against: the SDK imports with the render's own process
# settings (gc off, no teardown). The plain floor is shown for information only: it pays a
# teardown and collector passes the render skips, so a ratio to it flatters the render.
FLOOR = "floor, same settings"
PLAIN_FLOOR = "SDK-import floor"


def ratios(results: dict[str, tuple[float, float, float]], floor: str) -> tuple[float, float]:
    """The prod render's median time over ``floor``'s: (wall, CPU)."""
    prod, base = results["stack prod"], results[floor]
    return prod[0] / base[0], prod[2] / base[2]


def per_pool_ms(results: dict[str, tuple[float, float, float]]) -> tuple[float, float]:
    """Milliseconds per extra node pool between the smallest and the largest generated stack:
    (wall, CPU)."""
    first, last = results[pools_label(POOL_COUNTS[0])], results[pools_label(POOL_COUNTS[-1])]
    span = POOL_COUNTS[-1] - POOL_COUNTS[0]
    return (last[0] - first[0]) / span * 1000, (last[2] - first[2]) / span * 1000


def calibration_args() -> list[str]:
    return [sys.executable, "-c", CALIBRATION]


def machine_note(calibration: list[float]) -> str:
    """The calibration's CPU times over the run, and whether the machine was quiet."""
    fastest, slowest = min(calibration), max(calibration)
    spread = slowest / fastest
    line = (
        f"calibration CPU {fastest:.2f} to {slowest:.2f} s over {len(calibration)} runs "
        f"(slowest / fastest {spread:.2f})"
    )
    if spread > QUIET_SPREAD:
        return f"{line}: the machine was not quiet (over {QUIET_SPREAD:.2f})"
    return f"{line}: quiet (at most {QUIET_SPREAD:.2f})"


def judge(
    results: dict[str, tuple[float, float, float]],
    suite: float | None = None,
    summary: str | None = None,
) -> list[tuple[str, str, bool]]:
    """Each target as (what is judged against what, the measured figure, met): the ratio
    against the floor with the render's settings and the per-pool slope on CPU time (see the
    module's documentation), the memory on peak RSS, the suite on wall time."""
    _, ratio = ratios(results, FLOOR)
    _, slope = per_pool_ms(results)
    mb = results[pools_label(POOL_COUNTS[-1])][1]
    span = f"{POOL_COUNTS[0]} -> {POOL_COUNTS[-1]} pools"
    verdict = [
        (
            f"prod / {FLOOR} <= {TARGETS['ratio']} (CPU time)",
            f"{ratio:.2f}x",
            ratio <= TARGETS["ratio"],
        ),
        (
            f"per pool <= {TARGETS['per_pool_ms']} ms ({span}, CPU time)",
            f"{slope:.1f} ms",
            slope <= TARGETS["per_pool_ms"],
        ),
        (
            f"{POOL_COUNTS[-1]} pools < {TARGETS['pools500_mb']:.0f} MB (peak RSS)",
            f"{mb:.0f} MB",
            mb < TARGETS["pools500_mb"],
        ),
    ]
    if suite is not None:
        verdict.append(
            (
                f"test suite <= {TARGETS['suite_s']:.0f} s (wall time)",
                f"{suite:.2f} s",
                suite <= TARGETS["suite_s"],
            )
        )
        passed = summary is not None and "failed" not in summary and "error" not in summary
        verdict.append(("test suite passes", "", passed))
    return verdict


def verdict_table(verdict: list[tuple[str, str, bool]]) -> str:
    out = ["| Target | Measured | Verdict |", "|---|---:|---|"]
    out += [f"| {t} | {f} | {'met' if ok else '**missed**'} |" for t, f, ok in verdict]
    return "\n".join(out)


# The page holding the benchmark table, between its BENCH markers.
PAGE = Path("docs") / "benchmarks.md"


def write_page(text: str) -> None:
    page = REPO / PAGE
    current = page.read_text()
    begin, end = "<!-- BEGIN BENCH -->\n", "<!-- END BENCH -->"
    if begin not in current or end not in current:
        raise SystemExit(f"{PAGE} has no BENCH markers")
    head, _, rest = current.partition(begin)
    _, _, tail = rest.partition(end)
    page.write_text(f"{head}{begin}{text}\n{end}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds per case; medians are kept")
    parser.add_argument("--skip-tests", action="store_true", help="do not time the test suite")
    parser.add_argument("--write", action="store_true", help=f"rewrite the table in {PAGE}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        floor = tmpdir / "floor.py"
        floor.write_text(floor_program())
        floor_like = tmpdir / "floor_like_render.py"
        floor_like.write_text(floor_program(like_render=True))
        cases = {
            CALIBRATION_CASE: calibration_args(),
            PLAIN_FLOOR: [sys.executable, str(floor)],
            FLOOR: [sys.executable, str(floor_like)],
        }
        stacks = sorted(p.name.split(".")[1] for p in REPO.glob("Pulumi.*.yaml"))
        for stack in stacks:
            cases[f"stack {stack}"] = render_args(tmpdir / stack, stack=stack)
        for pools in POOL_COUNTS:
            path = tmpdir / f"pools{pools}.yaml"
            path.write_text(yaml.safe_dump(generated_stack(pools)))
            cases[pools_label(pools)] = render_args(tmpdir / path.stem, config_file=path)
        samples: dict[str, list[float]] = {}
        results = alternate(cases, args.runs, samples)
    calibration = samples.get(CALIBRATION_CASE, [])
    rows = [
        (name, f"{wall:.2f}", f"{mem:.0f}", f"{cpu:.2f}")
        for name, (wall, mem, cpu) in results.items()
    ]
    for floor, note in ((PLAIN_FLOOR, " (information, no target)"), (FLOOR, "")):
        wall, cpu = ratios(results, floor)
        rows.append((f"prod / {floor}{note}", f"{wall:.2f}x", "", f"{cpu:.2f}x"))
    wall, cpu = per_pool_ms(results)
    rows.append(
        (
            f"marginal cost per pool ({POOL_COUNTS[0]} -> {POOL_COUNTS[-1]})",
            f"{wall:.1f} ms",
            "",
            f"{cpu:.1f} ms",
        )
    )
    suite = summary = None
    if not args.skip_tests:
        calibration.append(measure(calibration_args())[2])
        suite, summary = suite_wall()
        calibration.append(measure(calibration_args())[2])
        counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|error)", summary)}
        tests = f" ({sum(counts.values()):,} tests" if counts else ""
        tests += f", {counts['failed']} failed)" if counts.get("failed") else ")" if counts else ""
        rows.append((f"test suite{tests}, {os.cpu_count()} cores", f"{suite:.2f}", "", ""))
    print(f"{'case':<40} {'wall (s)':>10} {'peak RSS (MB)':>14} {'CPU (s)':>10}")
    for name, wall, mem, cpu in rows:
        print(f"{name:<40} {wall:>10} {mem:>14} {cpu:>10}")
    verdict = judge(results, suite, summary)
    for target, figure, ok in verdict:
        print(f"target {target:<58} {figure:>9}  {'met' if ok else 'MISSED'}")
    missed = [target for target, _, ok in verdict if not ok]
    machine = f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, medians of {args.runs}"
    quiet = machine_note(calibration) if calibration else "no calibration runs"
    print(f"machine: {machine}")
    print(f"machine: {quiet}")
    print(f"verdict: missed: {'; '.join(missed)}" if missed else "verdict: every target met")
    if args.write:
        write_page(
            table(rows)
            + f"\n\nMachine: {machine} alternating runs; {quiet}.\n\n"
            + verdict_table(verdict)
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
