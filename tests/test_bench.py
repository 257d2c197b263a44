"""``make bench`` (benchmarks/bench.py): the SDK-import floor imports exactly the SDK classes
the library names, the generated stacks load, and the table of docs/benchmarks.md is rewritten in
place."""

import importlib.util
import subprocess
import sys
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
    # Both import the same classes: run one (the faster), compile the other.
    compile(plain, "floor.py", "exec")
    proc = subprocess.run([sys.executable, "-c", like], timeout=120, check=False)
    assert proc.returncode == 0


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
