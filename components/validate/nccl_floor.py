"""The published NCCL all-reduce floor the performance phase enforces: NVIDIA AICR's EKS
training recipes, as one cited table (``FLOORS``) and the judgement of a parsed nccl-tests table
against it (``judge``). Pure: plain data in, plain data out.

What AICR publishes (read at the commits below; the facts in this project's words):

- **The floor.** Recipe ``h100-eks-ubuntu-training`` (criteria ``service: eks``,
  ``accelerator: h100``) runs the performance check ``nccl-all-reduce-bw`` with the constraint
  ``>= 300`` (GB/s bus bandwidth): NVIDIA/aicr v0.11.1 (commit
  ``bc05c6be7859cee7ce6680b93333ed03ba795f88``) ``recipes/overlays/h100-eks-ubuntu-training.yaml``
  L55-60 (raised from 100 by NVIDIA/aicr#350). Recipe ``h200-eks-training`` (``accelerator:
  h200``) carries the same ``>= 300``, "inherited from h100-eks-training" and called loose for
  H200 in its own comment: commit ``ea7c37ce55e79b71780475656df1c2fd2b846842``
  ``recipes/overlays/h200-eks-training.yaml`` L83-94.
- **Where it is read.** AICR's validator takes the out-of-place ``busbw`` column of the last
  result row, the largest message (v0.11.1
  ``validators/performance/nccl_all_reduce_bw_constraint.go`` L77-80, L495-520), and on EKS
  runs ``all_reduce_perf -b 1K -e 16G -f 2 -g 1`` (L42-45; the
  runtime ``validators/performance/testdata/h100/eks/runtime.yaml`` L119-127): the figure is the
  out-of-place bus bandwidth at 16 GiB (17179869184 B).
- **The shape.** One MPI rank per GPU, every GPU of every schedulable GPU node (L258-291; at
  least two nodes, else skipped, L142-148), each worker on the nodes' instance type with the EFA
  interfaces the node advertises (L327-340; runtime.yaml L149, L179-185), ``FI_PROVIDER=efa``,
  ``FI_EFA_USE_DEVICE_RDMA=1``, ``FI_EFA_FORK_SAFE=1``, ``NCCL_SOCKET_IFNAME=eth0``,
  ``NCCL_IGNORE_DISABLED_P2P=1`` (runtime.yaml L107-118), image
  ``public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9``.
  AICR's reference EKS cluster is two or more p5.48xlarge (``demos/cuj1-training.md`` at commit
  ``332c5c98858ffccb7409a2624a8f10300135571a``, "2+ H100 (p5.48xlarge) nodes").
- **Tolerance.** AICR passes a run from 90 % of the constraint (v0.11.1 L166-167,
  ``bandwidth >= threshold * 0.9``). This project applies the recipe's value itself: a run
  between 270 and 300 GB/s passes AICR and fails here.
- **Coverage.** The recipes name accelerators, not instance types. AICR's EKS runtime was written
  for the 8-GPU, 32-EFA p5.48xlarge (commit ``6f6893581ec038ffb7ebabf56dc364a434a23010``
  ``validators/performance/testdata/h100/eks/runtime.yaml``: ``node.kubernetes.io/instance-type:
  p5.48xlarge``, ``vpc.amazonaws.com/efa: "32"``; v0.11.1 reads both from the nodes), and AICR's
  own issue NVIDIA/aicr#1256 says the floor false-fails smaller H100 SKUs. So the floor applies to
  the 8-GPU EC2 types of those two accelerators (``catalog``: p5.48xlarge is H100; p5e.48xlarge
  and p5en.48xlarge are H200); every other type (p5.4xlarge, p4d, p6-b200...) has no AICR floor
  and is reported, not judged.
- **Reference result.** 489.8 GB/s on two p5.48xlarge, the figure this project's issue 31
  quotes for AICR; the source of that figure was not located in the AICR files read (the two
  recipes, the validator and its runtime at the commits above, NVIDIA/aicr#350, #1256, #1565,
  #2787). It is printed for context and never judged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import catalog
from ..errors import did_you_mean

if TYPE_CHECKING:  # types only: validate.spec reads FLOORS without importing the phase
    from .nccl import AllReduce, Row

H100_RECIPE = "NVIDIA/aicr v0.11.1 recipes/overlays/h100-eks-ubuntu-training.yaml L55-60"
H200_RECIPE = "NVIDIA/aicr ea7c37ce recipes/overlays/h200-eks-training.yaml L83-94"
# the stack setting that raises a floor (validate.spec.ValidationSpec.nccl_floor_gbps)
STACK_KEY = "validation.ncclFloorGbps"
# AICR's EKS maxMessageSize "16G" (nccl_all_reduce_bw_constraint.go L45): the row it reads.
FLOOR_MESSAGE_BYTES = 16 * 1024**3
# The nodes of AICR's reference EKS cluster, and of this phase's MPIJob (nccl.NODES).
FLOOR_NODES = 2
AICR_TOLERANCE = 0.9  # v0.11.1 nccl_all_reduce_bw_constraint.go L167: not applied here


@dataclass(frozen=True)
class Floor:
    gpu: str  # the recipe's accelerator
    gbps: float  # the recipe's constraint: out-of-place busbw at FLOOR_MESSAGE_BYTES, at least
    recipe: str  # where the constraint is
    reference_gbps: float  # the reference result quoted for AICR (not judged)


_H100 = Floor("H100", 300.0, H100_RECIPE, 489.8)
_H200 = Floor("H200", 300.0, H200_RECIPE, 489.8)
# instance type -> floor (the module docstring says why these three types and no others)
FLOORS: dict[str, Floor] = {
    "p5.48xlarge": _H100,
    "p5e.48xlarge": _H200,
    "p5en.48xlarge": _H200,
}


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str


def floor_problem(itype: str, gbps: float) -> str | None:
    """Why ``gbps`` cannot be ``itype``'s floor (a stack's stricter floor), or None: only a
    type with a published floor, and only raised."""
    floor = FLOORS.get(itype)
    if floor is None:
        # a catalogued type is meant as written: no did-you-mean for it
        hint = "" if itype in catalog.INSTANCE_TYPES else did_you_mean(itype, FLOORS)
        return (
            f"{itype!r} has no published NCCL floor to raise; expected one of "
            f"{', '.join(FLOORS)}{hint}"
        )
    if not math.isfinite(gbps) or gbps < floor.gbps:
        return (
            f"{gbps:g} GB/s is below NVIDIA AICR's floor for {itype}, {floor.gbps:g} GB/s "
            f"({floor.recipe}); a stack may only raise it"
        )
    return None


def _size(n: int) -> str:
    return f"{n} B ({n // 1024**3} GiB)" if n % 1024**3 == 0 else f"{n} B"


def read_row(table: AllReduce, itype: str) -> Row | None:
    """The row the figure is read at: 16 GiB for a type with a floor (absent if the run did not
    reach it), else the largest message (what AICR reads on any run)."""
    if itype in FLOORS:
        return next((r for r in table.rows if r.size_bytes == FLOOR_MESSAGE_BYTES), None)
    return table.peak


def judge(table: AllReduce, itype: str, nodes: int, floors: Mapping[str, float]) -> Verdict:
    """The phase's verdict on a complete nccl-tests table (provider, wrong values and summary
    already checked) of ``nodes`` x ``itype``: the out-of-place bus bandwidth at the floor's
    message size against the floor (``floors`` may raise it per type: the stack's stricter
    floor), or a report without a floor."""
    head = f"NCCL over efa on {nodes} x {itype}"
    floor = FLOORS.get(itype)
    row = read_row(table, itype)
    if floor is None:
        assert row is not None  # a complete table has rows
        return Verdict(
            True,
            f"{head}: busbw {row.oop_busbw:g} GB/s out-of-place at {_size(row.size_bytes)}, "
            f"average {table.avg_busbw:g} GB/s (report only: NVIDIA AICR publishes no floor "
            f"for {itype})",
        )
    aicr = f"NVIDIA AICR, {floor.gpu} on EKS: {floor.recipe}"
    gbps = max(floor.gbps, floors.get(itype, 0.0))
    against = (
        f"floor {gbps:g} GB/s (the stack's {STACK_KEY}; AICR's is {floor.gbps:g} GB/s, {aicr})"
        if gbps > floor.gbps
        else f"floor {gbps:g} GB/s ({aicr})"
    )
    reference = f"AICR's reference result {floor.reference_gbps:g} GB/s (2 x p5.48xlarge)"
    if row is None:
        return Verdict(
            False,
            f"{head}: no result at {_size(FLOOR_MESSAGE_BYTES)}, the message size of the {against}",
        )
    measured = f"busbw {row.oop_busbw:g} GB/s out-of-place at {_size(row.size_bytes)}"
    if nodes != FLOOR_NODES:
        return Verdict(
            False, f"{head}: {measured}; the {against} is for {FLOOR_NODES} nodes, not {nodes}"
        )
    if row.oop_busbw < gbps:
        return Verdict(False, f"{head}: {measured} is below the {against}; {reference}")
    return Verdict(True, f"{head}: {measured}, at or above the {against}; {reference}")


__all__ = [
    "AICR_TOLERANCE",
    "FLOORS",
    "FLOOR_MESSAGE_BYTES",
    "FLOOR_NODES",
    "STACK_KEY",
    "Floor",
    "Verdict",
    "floor_problem",
    "judge",
    "read_row",
]
