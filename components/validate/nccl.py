"""Pure helpers of the performance phase: the two-node NCCL all-reduce MPIJob over EFA, and the
parsers of its launcher log (the aws-ofi-nccl provider line, the nccl-tests table).

The job is the platform's own reference test (``eks_gpu_platform.efa.nccl_test_manifest``, the
aws-samples/aws-do-eks ``Container-Root/eks/deployment/nccl-test/`` approach: a Kubeflow MPIJob,
``all_reduce_perf -b 8 -e 8G -f 2 -g 1``, every GPU, EFA interface and the reserved hugepages
of each node, ``FI_PROVIDER=efa``, ``FI_EFA_USE_DEVICE_RDMA=1``, ``NCCL_DEBUG=INFO``...), built
from the render instead of the stack config, its largest message raised to 16 GiB (``MAX_MESSAGE``,
where NVIDIA AICR's floor is read: ``nccl_floor``). Plain data in, dicts out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ..efa import MPIJOB_API, NCCL_TESTS_IMAGE, nccl_test_manifest
from .gpu_specs import EFA_RESOURCE, GPU_RESOURCE, Pool

MPIJOB_KIND = "MPIJob"
NODES = 2
# The launcher waits for the workers: efa.manifests.nccl_test_manifest sets the MPIJob's
# launcherCreationPolicy to WaitForWorkersReady (cited there).
# aws-ofi-nccl logs the provider it picked through NCCL's INFO logger (shown with
# ``NCCL_DEBUG=INFO``), prefixed "NET/OFI " (include/nccl_ofi_log.h:21-25 at v1.19.0):
#   v1.19.0 (the pinned image's "ofiv1.19.0"): src/nccl_ofi_net.cpp:594
#     "Selected provider is %s, fabric is %s (found %d nics)"
#   v1.6.0-v1.13.x: src/nccl_ofi_net.c "Selected Provider is %s (found %d nics)"
#   up to v1.5.0-aws: src/nccl_ofi_net.c:1460 "Selected Provider is %s"
# Provider names are libfabric's (``efa``, ``tcp``, ``sockets``...).
OFI_SELECTED = re.compile(r"NET/OFI Selected [Pp]rovider is ([A-Za-z0-9_;+-]+)")
EFA_PROVIDER = "efa"
# mpirun --tag-output prefixes each line with "[<job>,<rank>]<stdout>:" (or <stderr>).
_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
# nccl-tests v2.18.3 src/util.cu: a result row is writeBenchmarkLinePreamble (L424-427,
# "%12li  %12li  %8s  %6s  %6s": size, count, type, redop, root) then writeBenchmarkLineBody
# twice (L471-486, out-of-place then in-place: "  %7s  %6s  %6s  %6g" time, algbw, busbw,
# #wrong, or "    N/A" for #wrong); the footer (writeResultFooter, L647-649):
# "# %-20s : %d %s" Out of bounds values, "# %-20s : %g %s" Avg bus bandwidth.
_ROW = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)"
    r"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"
)
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?")

# The largest message of the phase's run: AICR reads its floor at 16 GiB on EKS (nccl_floor, with
# the citations), while the platform's example stops at 8G; the phase's MPIJob goes to 16G so the
# floor is read at the size it was set at.
MAX_MESSAGE = "16G"
# Bus bandwidth observed in public runs, shown beside the measured value for context; never
# judged (the floors are in nccl_floor.FLOORS).
REFERENCES: dict[str, tuple[int, float, str]] = {
    # instance type: (message size in bytes, busbw GB/s observed, where)
    "p5.48xlarge": (
        2147483648,
        438.85,
        "aws-samples/aws-do-eks Container-Root/eks/deployment/nccl-test/README.md "
        '"Expected results", p5.48xlarge two nodes',
    ),
    "p6-b200.48xlarge": (
        8589934592,
        523.8,
        "aws-samples/aws-do-eks Container-Root/eks/deployment/nccl-test/*.yaml-template line 12 "
        '"VERIFIED on 2x p6-b200" (the same header line in the all-reduce, all-gather, '
        "reduce-scatter, all-reduce-pair and fi-info templates: its collective is not stated)",
    ),
}


@dataclass(frozen=True)
class Row:
    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    oop_time_us: float
    oop_algbw: float
    oop_busbw: float
    oop_wrong: float | None
    ip_time_us: float
    ip_algbw: float
    ip_busbw: float
    ip_wrong: float | None


@dataclass(frozen=True)
class AllReduce:
    rows: tuple[Row, ...]
    avg_busbw: float | None
    out_of_bounds: int | None

    @property
    def peak(self) -> Row | None:
        """The row of the largest message (the one bus bandwidth is judged at)."""
        return max(self.rows, key=lambda r: r.size_bytes) if self.rows else None


def _wrong(value: str) -> float | None:
    return None if value == "N/A" else float(value)


def untag(line: str) -> str:
    return _TAG.sub("", line)


def ofi_providers(log: str) -> list[str]:
    """The providers aws-ofi-nccl says it selected, one per line that says so (every rank)."""
    return OFI_SELECTED.findall(log)


def parse_all_reduce(log: str) -> AllReduce:
    """The nccl-tests table, ``# Avg bus bandwidth`` and ``# Out of bounds values`` of a log
    (mpirun's ``--tag-output`` prefixes removed)."""
    rows: list[Row] = []
    avg = oob = None
    for raw in log.splitlines():
        line = untag(raw)
        if match := _AVG.match(line):
            avg = float(match.group(1))
        elif match := _OOB.match(line):
            oob = int(match.group(1))
        elif not line.lstrip().startswith("#") and (match := _ROW.match(line)):
            g = match.groups()
            try:
                rows.append(
                    Row(
                        int(g[0]),
                        int(g[1]),
                        g[2],
                        g[3],
                        int(g[4]),
                        float(g[5]),
                        float(g[6]),
                        float(g[7]),
                        _wrong(g[8]),
                        float(g[9]),
                        float(g[10]),
                        float(g[11]),
                        _wrong(g[12]),
                    )
                )
            except ValueError:
                continue  # an NCCL INFO line that happens to have 13 fields
    return AllReduce(tuple(rows), avg, oob)


def mpijob(
    pool: Pool, *, instance_type: str, name: str, namespace: str, labels: dict[str, str]
) -> dict[str, Any]:
    """The platform's NCCL all-reduce MPIJob (``efa.nccl_test_manifest``) for two nodes of
    ``instance_type`` in the pool, named and placed for this run, its largest message raised to
    ``MAX_MESSAGE``: the pool's rendered taints stand in for the stack config's (the builder
    tolerates the GPU and EFA taints and every taint of ``pool.taints``)."""
    spec = SimpleNamespace(
        kind="efa",
        name=pool.name,
        efa_types=tuple(pool.instance_types),
        taints=tuple(
            SimpleNamespace(key=t["key"], effect=t["effect"])
            for t in pool.taints
            if t["key"] not in (GPU_RESOURCE, EFA_RESOURCE)  # the builder tolerates these itself
        ),
    )
    job = nccl_test_manifest(
        spec,  # type: ignore[arg-type]  # the four fields the builder reads
        instance_type=instance_type,
        label_domain=pool.pool_label.rsplit("/", 1)[0],
        nodes=NODES,
        namespace=namespace,
    )
    job["metadata"] = {"name": name, "namespace": namespace, "labels": dict(labels)}
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    args = launcher["args"]
    args[args.index("-e") + 1] = MAX_MESSAGE
    return job


__all__ = [
    "EFA_PROVIDER",
    "MAX_MESSAGE",
    "MPIJOB_API",
    "MPIJOB_KIND",
    "NCCL_TESTS_IMAGE",
    "REFERENCES",
    "AllReduce",
    "Row",
    "mpijob",
    "ofi_providers",
    "parse_all_reduce",
]
