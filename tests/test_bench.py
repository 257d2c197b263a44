"""``make bench`` (benchmarks/bench.py): the SDK-import floor imports exactly the SDK classes
the library names, the generated stacks load, and the table of docs/benchmarks.md is rewritten in
place."""

import importlib.util
from pathlib import Path

import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.platform import stack_config_values

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench", REPO / "benchmarks" / "bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_the_floor_names_the_sdk_classes_the_library_uses():
    classes = bench.sdk_classes()
    for expected in [
        ("pulumi_aws.iam", "Role"),
        ("pulumi_aws.ec2", "Vpc"),
        ("pulumi_eks", "Cluster"),
        ("pulumi_kubernetes.apiextensions", "CustomResource"),
        ("pulumi_kubernetes.helm.v3", "Release"),
    ]:
        assert expected in classes
    assert all(
        m.split(".")[0] in ("pulumi_aws", "pulumi_eks", "pulumi_kubernetes") for m, _ in classes
    )


def test_the_sdk_scan_reads_only_modules_that_import_the_sdk_under_the_alias(tmp_path):
    (tmp_path / "a.py").write_text("import pulumi_aws as aws\nx = aws.iam.Role\n")
    (tmp_path / "b.py").write_text("aws = object()\ny = aws.s3.Bucket\n")
    assert bench.sdk_classes(tmp_path) == [("pulumi_aws.iam", "Role")]


def test_the_floor_programs_import_and_exit():
    plain = bench.floor_program()
    assert "gc.disable()" not in plain and "os._exit(0)" not in plain
    like = bench.floor_program(like_render=True)
    assert like.startswith("import gc\ngc.disable()\n") and like.endswith("os._exit(0)\n")
    # Both import the same classes, the render's settings around them.
    assert like == f"import gc\ngc.disable()\n{plain}import os\nos._exit(0)\n"
    # Every import resolves: the plain one runs in this process (the SDK modules the library
    # imports are loaded already; a process would import them again, a second of CPU), the
    # other is compiled (run here, its os._exit would end the test process).
    exec(compile(plain, "floor.py", "exec"), {})
    compile(like, "floor.py", "exec")


@pytest.mark.parametrize("pools", [1, 10])
def test_generated_stacks_are_valid_configuration(pools):
    stack = bench.generated_stack(pools)["config"]
    config = PlatformConfig.load(stack_config_values(stack), stack["aws:region"])
    names = [p.name for p in config.node_pools]
    assert names[:pools] == [f"gpu-{i}" if i % 10 != 9 else f"efa-{i}" for i in range(pools)]


def test_the_benchmarks_page_holds_the_bench_markers():
    page = (bench.REPO / "docs" / "benchmarks.md").read_text()
    assert page.count("<!-- BEGIN BENCH -->\n") == 1 and page.count("<!-- END BENCH -->") == 1
    assert "BENCH" not in (bench.REPO / "README.md").read_text()


def test_the_table_is_rewritten_between_its_markers_in_docs_benchmarks(tmp_path, monkeypatch):
    page = tmp_path / "docs" / "benchmarks.md"
    page.parent.mkdir()
    page.write_text("head\n<!-- BEGIN BENCH -->\nold\n<!-- END BENCH -->\ntail\n")
    monkeypatch.setattr(bench, "REPO", tmp_path)
    bench.write_page(bench.table([("stack prod", "1.00", "140", "0.90")]))
    assert page.read_text() == (
        "head\n<!-- BEGIN BENCH -->\n| Case | Wall (s) | Peak RSS (MB) | CPU (s) |\n"
        "|---|---:|---:|---:|\n| stack prod | 1.00 | 140 | 0.90 |\n<!-- END BENCH -->\ntail\n"
    )


# Medians as ``alternate`` returns them: (wall s, peak RSS MB, CPU s). The plain floor pays a
# teardown the render skips: prod is 0.75x of it but 1.5x of the floor with the same settings.
RESULTS = {
    "SDK-import floor": (2.0, 121.0, 1.6),
    "floor, same settings": (1.0, 121.0, 0.8),
    "stack dev": (1.4, 134.0, 1.1),
    "stack prod": (1.5, 136.0, 1.2),
    "1 node pool": (1.3, 132.0, 1.0),
    "100 node pools": (2.3, 156.0, 1.7),
    "500 node pools": (11.28, 244.0, 4.992),
}


def test_the_ratio_is_judged_against_the_floor_with_the_renders_settings_on_cpu_time():
    verdict = bench.judge(RESULTS)
    assert verdict == [
        ("prod / floor, same settings <= 1.25 (CPU time)", "1.50x", False),
        ("per pool <= 8.0 ms (1 -> 500 pools, CPU time)", "8.0 ms", True),
        ("500 pools < 400 MB (peak RSS)", "244 MB", True),
    ]
    # Against the plain floor prod would pass (0.75x): no target is judged against it.
    assert bench.ratios(RESULTS, "SDK-import floor") == pytest.approx((0.75, 0.75))


def test_the_per_pool_target_is_the_cpu_slope_between_1_and_500_pools():
    # Wall slope 20 ms (a loaded machine), CPU slope 8.0 ms: met on CPU, missed just above.
    assert bench.per_pool_ms(RESULTS) == pytest.approx((20.0, 8.0))
    slower = {**RESULTS, "500 node pools": (11.28, 244.0, 5.0)}
    assert bench.judge(slower)[1] == (
        "per pool <= 8.0 ms (1 -> 500 pools, CPU time)",
        "8.0 ms",
        False,
    )


def test_the_suite_is_judged_on_wall_time_and_on_passing():
    verdict = bench.judge(RESULTS, 31.0, "2 failed, 2270 passed in 31.00s")
    assert verdict[3:] == [
        ("test suite <= 30 s (wall time)", "31.00 s", False),
        ("test suite passes", "", False),
    ]
    assert bench.judge(RESULTS, 24.5, "2272 passed in 24.50s")[3:] == [
        ("test suite <= 30 s (wall time)", "24.50 s", True),
        ("test suite passes", "", True),
    ]


def test_make_bench_fails_and_writes_the_verdict_when_a_target_is_missed(
    tmp_path, monkeypatch, capsys
):
    page = tmp_path / "docs" / "benchmarks.md"
    page.parent.mkdir()
    page.write_text("head\n<!-- BEGIN BENCH -->\nold\n<!-- END BENCH -->\ntail\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "Pulumi.prod.yaml").write_text("config: {}\n")
    monkeypatch.setattr(bench, "REPO", tmp_path)
    seen: list[list[str]] = []

    def alternate(cases, runs, samples):
        seen.append(list(cases))
        samples[bench.CALIBRATION_CASE] = [0.50, 0.58, 0.52]
        return RESULTS

    monkeypatch.setattr(bench, "alternate", alternate)
    assert bench.main(["--skip-tests", "--write", "--runs", "3"]) == 1
    # The calibration runs in the rounds, first, beside the floors and the renders.
    assert seen == [
        [
            "calibration (fixed CPU work, information)",
            "SDK-import floor",
            "floor, same settings",
            "stack dev",
            "stack prod",
            "1 node pool",
            "100 node pools",
            "500 node pools",
        ]
    ]
    out = capsys.readouterr().out
    assert "verdict: missed: prod / floor, same settings <= 1.25 (CPU time)\n" in out
    assert "prod / SDK-import floor (information, no target)" in out
    assert (
        "machine: calibration CPU 0.50 to 0.58 s over 3 runs (slowest / fastest 1.16): "
        "the machine was not quiet (over 1.10)\n"
    ) in out
    written = page.read_text()
    assert (
        "Machine: 2 cores, Python 3.11.7, medians of 3 alternating runs; calibration CPU 0.50 "
        "to 0.58 s over 3 runs (slowest / fastest 1.16): the machine was not quiet (over "
        "1.10).\n\n"
    ).replace("2 cores", f"{bench.os.cpu_count()} cores").replace(
        "3.11.7", bench.sys.version.split()[0]
    ) in written
    assert (
        "| Target | Measured | Verdict |\n|---|---:|---|\n"
        "| prod / floor, same settings <= 1.25 (CPU time) | 1.50x | **missed** |\n"
        "| per pool <= 8.0 ms (1 -> 500 pools, CPU time) | 8.0 ms | met |\n"
        "| 500 pools < 400 MB (peak RSS) | 244 MB | met |\n<!-- END BENCH -->\ntail\n"
    ) in written
    monkeypatch.setattr(
        bench,
        "alternate",
        lambda cases, runs, samples: {**RESULTS, "stack prod": (1.2, 136.0, 0.96)},
    )
    assert bench.main(["--skip-tests"]) == 0
    assert capsys.readouterr().out.endswith("verdict: every target met\n")


def test_the_calibration_says_whether_the_machine_was_quiet():
    assert bench.machine_note([0.50, 0.55, 0.52]) == (
        "calibration CPU 0.50 to 0.55 s over 3 runs (slowest / fastest 1.10): quiet (at most 1.10)"
    )
    assert bench.machine_note([0.92, 1.38]) == (
        "calibration CPU 0.92 to 1.38 s over 2 runs (slowest / fastest 1.50): the machine was "
        "not quiet (over 1.10)"
    )


def test_alternate_keeps_every_runs_cpu_time_and_the_calibration_runs_before_and_after_the_suite(
    tmp_path, monkeypatch, capsys
):
    (tmp_path / "Pulumi.prod.yaml").write_text("config: {}\n")
    monkeypatch.setattr(bench, "REPO", tmp_path)
    times = iter([0.4, 0.6, 0.5, 0.7])
    monkeypatch.setattr(bench, "measure", lambda args: (1.0, 10.0, next(times)))
    samples: dict[str, list[float]] = {}
    medians = bench.alternate({"a": ["x"], "b": ["y"]}, 2, samples)
    assert samples == {"a": [0.4, 0.5], "b": [0.6, 0.7]}
    assert medians == {"a": (1.0, 10.0, pytest.approx(0.45)), "b": (1.0, 10.0, pytest.approx(0.65))}
    # main: the calibration once before and once after the suite, into the same figures.
    calls: list[str] = []
    monkeypatch.setattr(
        bench,
        "alternate",
        lambda cases, runs, samples: samples.update({bench.CALIBRATION_CASE: [0.5]}) or RESULTS,
    )
    monkeypatch.setattr(
        bench,
        "measure",
        lambda args: calls.append("calibration") or (0.5, 10.0, 0.5 if len(calls) == 1 else 0.6),
    )
    monkeypatch.setattr(
        bench, "suite_wall", lambda: calls.append("suite") or (29.0, "4000 passed in 29.00s")
    )
    assert bench.main([]) == 1  # the ratio of RESULTS is missed
    assert calls == ["calibration", "suite", "calibration"]
    assert "machine: calibration CPU 0.50 to 0.60 s over 3 runs (slowest / fastest 1.20)" in (
        capsys.readouterr().out
    )
