"""NVIDIA AICR's NCCL all-reduce floor in the performance phase: the parsing of a 16 GiB
nccl-tests table, pass and fail at the floor, the exact messages, the MPIJob's message sizes.

The expected figures are written here from the sources, never read from ``nccl_floor``: the
floor ">= 300" (NVIDIA/aicr v0.11.1 recipes/overlays/h100-eks-ubuntu-training.yaml L59-60;
ea7c37ce recipes/overlays/h200-eks-training.yaml L93-94), read as the out-of-place busbw of the
16 GiB row (v0.11.1 validators/performance/nccl_all_reduce_bw_constraint.go L45, L495-520).

``nccl-allreduce-p5-2nodes-16gib-written.log`` is written to nccl-tests v2.18.3's format, not
recorded (tests/validate/data/PROVENANCE.md): ``src/util.cu`` L516-521 (version, test, options
lines), L550 and L570-571 (devices), L627-632 (table header), L424-427 and L472-486 (a row: size,
count, type, redop, root, then time, algbw, busbw, #wrong out-of-place and in-place), L648-651
(footer), behind mpirun's ``--tag-output`` prefix.
"""

from __future__ import annotations

from eks_gpu_platform.validate import nccl
from eks_gpu_platform.validate.nccl import Row

from .gpu_cluster import DATA, Clock
from .test_performance import NS, cluster, run

LOG_16GIB = (DATA / "nccl-allreduce-p5-2nodes-16gib-written.log").read_text()
ROW_16GIB = (
    "[1,0]<stdout>: 17179869184    4294967296     float     sum      -1  66955.9  256.58  481.10"
    "       0  66975.6  256.51  480.96       0"
)
H100 = "NVIDIA/aicr v0.11.1 recipes/overlays/h100-eks-ubuntu-training.yaml L55-60"
H200 = "NVIDIA/aicr ea7c37ce recipes/overlays/h200-eks-training.yaml L83-94"
REFERENCE = "AICR's reference result 489.8 GB/s (2 x p5.48xlarge)"


def with_16gib_row(oop: str, ip: str) -> str:
    """The fixture with its 16 GiB row's time/algbw/busbw columns replaced (written by hand)."""
    assert ROW_16GIB in LOG_16GIB
    row = (
        "[1,0]<stdout>: 17179869184    4294967296     float     sum      -1  "
        f"{oop}       0  {ip}       0"
    )
    return LOG_16GIB.replace(ROW_16GIB, row)


def test_the_16gib_table_parses_row_by_row():
    table = nccl.parse_all_reduce(LOG_16GIB)
    assert [r.size_bytes for r in table.rows] == [2**k for k in range(3, 35)]
    assert table.rows[0] == Row(8, 2, "float", "sum", -1, 38.0, 0.0, 0.0, 0, 37.6, 0.0, 0.0, 0)
    assert table.rows[-1] == Row(
        17179869184, 4294967296, "float", "sum", -1,
        66955.9, 256.58, 481.10, 0, 66975.6, 256.51, 480.96, 0,
    )  # fmt: skip
    assert (table.avg_busbw, table.out_of_bounds) == (169.817, 0)
    assert nccl.ofi_providers(LOG_16GIB) == ["efa", "efa"]


def test_p5_at_or_above_the_floor_passes_with_the_measured_value_floor_and_reference():
    clock = Clock()
    [res] = run(cluster(clock, LOG_16GIB), clock)
    assert (res.status, res.reason) == (
        "pass",
        "NCCL over efa on 2 x p5.48xlarge: busbw 481.1 GB/s out-of-place at 17179869184 B "
        f"(16 GiB), at or above the floor 300 GB/s (NVIDIA AICR, H100 on EKS: {H100}); "
        f"{REFERENCE}",
    )
    assert res.details[-3:] == (
        "17179869184 B: busbw 481.1 GB/s out-of-place, 480.96 GB/s in-place",
        "reference (not a floor): 438.85 GB/s at 2147483648 B, aws-samples/aws-do-eks "
        'Container-Root/eks/deployment/nccl-test/README.md "Expected results", p5.48xlarge two '
        "nodes",
        "average busbw 169.817 GB/s over every message size",
    )


def test_p5_exactly_at_the_floor_passes():
    clock = Clock()
    log = with_16gib_row("107374  160.00  300.00", "107374  160.00  300.00")
    [res] = run(cluster(clock, log), clock)
    assert (res.status, res.reason) == (
        "pass",
        "NCCL over efa on 2 x p5.48xlarge: busbw 300 GB/s out-of-place at 17179869184 B "
        f"(16 GiB), at or above the floor 300 GB/s (NVIDIA AICR, H100 on EKS: {H100}); "
        f"{REFERENCE}",
    )


def test_p5_below_the_floor_fails():
    clock = Clock()
    log = with_16gib_row("107381  159.99  299.98", "107381  159.99  299.98")
    [res] = run(cluster(clock, log), clock)
    assert (res.status, res.reason) == (
        "fail",
        "NCCL over efa on 2 x p5.48xlarge: busbw 299.98 GB/s out-of-place at 17179869184 B "
        f"(16 GiB) is below the floor 300 GB/s (NVIDIA AICR, H100 on EKS: {H100}); {REFERENCE}",
    )


def test_the_floor_is_read_out_of_place_as_aicr_reads_it():
    # in-place above the floor, out-of-place below: AICR's regex captures the out-of-place
    # busbw (v0.11.1 nccl_all_reduce_bw_constraint.go L77-80)
    clock = Clock()
    log = with_16gib_row("111035  154.72  290.10", "103920  165.32  309.97")
    [res] = run(cluster(clock, log), clock)
    assert res.status == "fail"
    assert res.reason.startswith(
        "NCCL over efa on 2 x p5.48xlarge: busbw 290.1 GB/s out-of-place at 17179869184 B "
        "(16 GiB) is below the floor 300 GB/s"
    )


def test_a_p5_run_that_stops_before_16gib_fails():
    clock = Clock()
    log = LOG_16GIB.replace(ROW_16GIB + "\n", "")
    [res] = run(cluster(clock, log), clock)
    assert (res.status, res.reason) == (
        "fail",
        "NCCL over efa on 2 x p5.48xlarge: no result at 17179869184 B (16 GiB), the message size "
        f"of the floor 300 GB/s (NVIDIA AICR, H100 on EKS: {H100})",
    )


def test_a_stricter_stack_floor_fails_what_aicr_s_passes_and_names_the_key():
    clock = Clock()
    [res] = run(cluster(clock, LOG_16GIB), clock, nccl_floors={"p5.48xlarge": 490.0})
    assert (res.status, res.reason) == (
        "fail",
        "NCCL over efa on 2 x p5.48xlarge: busbw 481.1 GB/s out-of-place at 17179869184 B "
        "(16 GiB) is below the floor 490 GB/s (the stack's validation.ncclFloorGbps; AICR's is "
        f"300 GB/s, NVIDIA AICR, H100 on EKS: {H100}); {REFERENCE}",
    )


def test_h200_types_carry_the_h200_recipe_s_floor():
    from eks_gpu_platform.validate import nccl_floor  # the judgement alone

    table = nccl.parse_all_reduce(with_16gib_row("107381  159.99  299.98", "1  1  1"))
    for itype in ("p5e.48xlarge", "p5en.48xlarge"):
        assert nccl_floor.judge(table, itype, 2, {}) == nccl_floor.Verdict(
            False,
            f"NCCL over efa on 2 x {itype}: busbw 299.98 GB/s out-of-place at 17179869184 B "
            f"(16 GiB) is below the floor 300 GB/s (NVIDIA AICR, H200 on EKS: {H200}); "
            f"{REFERENCE}",
        )


def test_types_without_an_aicr_floor_are_reported_not_judged():
    from eks_gpu_platform.validate import nccl_floor  # the judgement alone

    # a p4d run far below 300 GB/s, and a p5.4xlarge (one H100: AICR's floor false-fails small
    # H100 SKUs, NVIDIA/aicr#1256), are reports
    table = nccl.parse_all_reduce(with_16gib_row("107381  15.99  29.98", "107381  15.99  29.98"))
    for itype in ("p4d.24xlarge", "p5.4xlarge", "p6-b200.48xlarge"):
        assert nccl_floor.judge(table, itype, 2, {}) == nccl_floor.Verdict(
            True,
            f"NCCL over efa on 2 x {itype}: busbw 29.98 GB/s out-of-place at 17179869184 B "
            "(16 GiB), average 169.817 GB/s (report only: NVIDIA AICR publishes no floor for "
            f"{itype})",
        )


def test_the_floor_is_for_two_nodes():
    from eks_gpu_platform.validate import nccl_floor  # the judgement alone

    table = nccl.parse_all_reduce(LOG_16GIB)
    assert nccl_floor.judge(table, "p5.48xlarge", 4, {}) == nccl_floor.Verdict(
        False,
        "NCCL over efa on 4 x p5.48xlarge: busbw 481.1 GB/s out-of-place at 17179869184 B "
        f"(16 GiB); the floor 300 GB/s (NVIDIA AICR, H100 on EKS: {H100}) is for 2 nodes, not 4",
    )


def test_the_mpijob_runs_to_16gib_as_aicr_does():
    from eks_gpu_platform.validate import gpu_specs

    from .test_performance import efa_render

    render_ = efa_render()
    pool = gpu_specs.pools(render_.capacity, render_.manifests)["train-efa"]
    job = nccl.mpijob(pool, instance_type="p5.48xlarge", name="j", namespace=NS, labels={})
    args = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"]
    i = args.index("/opt/nccl-tests/build/all_reduce_perf")
    # AICR: -b 1K -e 16G -f 2 -g 1 (nccl_all_reduce_bw_constraint.go L44-45, runtime.yaml
    # L119-127); the platform's smallest message (8) and iteration count stay
    assert args[i:] == ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G", "-f",
                        "2", "-g", "1", "-c", "1", "-n", "100"]  # fmt: skip
    assert args[2:4] == ["-np", "16"]  # 2 nodes x 8 GPUs, one rank per GPU as AICR
