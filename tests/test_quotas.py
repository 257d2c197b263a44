"""The EC2 vCPU quota check (issue 28, point 12): vCPUs per type against EC2's own answers, and
the exact judgements."""

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from eks_gpu_platform import catalog
from eks_gpu_platform.quotas import ClassNeed, judge, vcpus


def _moto_types() -> dict | None:
    spec = importlib.util.find_spec("moto")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)))
    with gzip.open(path / "ec2/resources/instance_types.json.gz", "rt") as f:
        return json.load(f)


MOTO = _moto_types()


@pytest.mark.skipif(MOTO is None, reason="moto (requirements-dev.txt) is not installed")
@pytest.mark.parametrize("name", sorted(catalog.INSTANCE_TYPES))
def test_vcpus_are_ec2s(name):
    """EC2 DescribeInstanceTypes ``VCpuInfo.DefaultVCpus``, as the moto 5.2.5 wheel copies it
    (an independent source for Karpenter's instance-cpu label the table cites)."""
    assert vcpus(name) == MOTO[name]["VCpuInfo"]["DefaultVCpus"]


def need(capacity=("on-demand",), klass="g", largest=("g6.12xlarge", 48), budget=(8, 384)):
    return ClassNeed("p", "nodePools[0](p)", klass, *largest, *budget, capacity)


OD_G = "Running On-Demand G and VT instances (L-DB2E81BA)"
CMD = "aws service-quotas request-service-quota-increase --service-code ec2 --quota-code"


@pytest.mark.parametrize(
    ("needs", "values", "refusals", "warnings"),
    [
        pytest.param([need()], {"L-DB2E81BA": 384.0}, [], [], id="fits"),
        pytest.param(
            [need()],
            {"L-DB2E81BA": 64.0},
            [],
            [
                "nodePools[0](p): at its full budget (8 GPUs) the pool may run up to 384 vCPUs, "
                f"above the EC2 quota {OD_G} is 64 vCPUs in us-east-1; launches beyond it fail; "
                f"raise it: `{CMD} L-DB2E81BA --desired-value 384 --region us-east-1`"
            ],
            id="budget-above-quota",
        ),
        pytest.param(
            [need()],
            {"L-DB2E81BA": 32.0},
            [
                "nodePools[0](p): its largest node (g6.12xlarge, 48 vCPUs) can never launch: the "
                f"EC2 quota {OD_G} is 32 vCPUs in us-east-1; raise it: `{CMD} L-DB2E81BA "
                "--desired-value 48 --region us-east-1`"
            ],
            [],
            id="node-above-quota",
        ),
        pytest.param(
            [need(capacity=("on-demand", "spot"))],
            {"L-DB2E81BA": 0.0, "L-3819A6DF": 400.0},
            [],
            [
                "nodePools[0](p): its largest node (g6.12xlarge, 48 vCPUs) cannot launch under "
                f"the EC2 quota {OD_G} is 0 vCPUs in us-east-1; raise it: `{CMD} L-DB2E81BA "
                "--desired-value 48 --region us-east-1`",
            ],
            id="spot-holds-it",
        ),
        pytest.param(
            [need(capacity=("spot",), klass="p", largest=("p5.48xlarge", 192), budget=(8, 192))],
            {"L-7212CCBC": 0.0},
            [],
            [
                "nodePools[0](p): its largest node (p5.48xlarge, 192 vCPUs) cannot launch under "
                "the EC2 quota All P Spot Instance Requests (L-7212CCBC) is 0 vCPUs in "
                f"us-east-1; raise it: `{CMD} L-7212CCBC --desired-value 192 --region us-east-1`"
            ],
            id="p-spot-warns-only",
        ),
        pytest.param([need()], {}, [], [], id="not-read"),
    ],
)
def test_judge(needs, values, refusals, warnings):
    assert judge(needs, values, "us-east-1") == (refusals, warnings)


def test_pools_sharing_a_quota_are_summed():
    """dev's inference (4 GPUs: at most 4 x g6.16xlarge, 64 vCPUs each) and notebooks (1 GPU:
    one g6.16xlarge), both on-demand L4 pools, against one On-Demand G quota of 300 vCPUs."""
    needs = [
        ClassNeed(
            "inference", "nodePools[1](inference)", "g", "g6.24xlarge", 96, 4, 256, ("on-demand",)
        ),
        ClassNeed(
            "notebooks", "nodePools[2](notebooks)", "g", "g6.16xlarge", 64, 1, 64, ("on-demand",)
        ),
    ]
    assert judge(needs, {"L-DB2E81BA": 300.0}, "us-west-2") == (
        [],
        [
            "nodePools[1](inference), nodePools[2](notebooks): at their full budgets together "
            "these pools may run up to 320 vCPUs, above the EC2 quota Running On-Demand G and VT "
            "instances (L-DB2E81BA) is 300 vCPUs in us-west-2; launches beyond it fail; raise it: "
            f"`{CMD} L-DB2E81BA --desired-value 320 --region us-west-2`"
        ],
    )
