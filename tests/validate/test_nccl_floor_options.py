"""A stricter NCCL floor than NVIDIA AICR's: the stack setting ``validation.ncclFloorGbps`` and the
command's ``--nccl-floor``, refused with the key, the bad value and what is allowed (exact
messages); only a type with a published floor, only raised (AICR's 300 GB/s: NVIDIA/aicr v0.11.1
recipes/overlays/h100-eks-ubuntu-training.yaml L59-60; ea7c37ce h200-eks-training.yaml L93-94)."""

from __future__ import annotations

import io

import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.spec import SpecError
from eks_gpu_platform.validate import cli
from eks_gpu_platform.validate.spec import ValidationSpec, validate_args

H100 = "NVIDIA/aicr v0.11.1 recipes/overlays/h100-eks-ubuntu-training.yaml L55-60"
H200 = "NVIDIA/aicr ea7c37ce recipes/overlays/h200-eks-training.yaml L83-94"
TYPES = "p5.48xlarge, p5e.48xlarge, p5en.48xlarge"


def load(validation):
    values = {"cluster": {"name": "gpu-dev"}, "validation": validation}
    return PlatformConfig.load(values, "us-west-2")


def test_a_stricter_floor_loads_and_becomes_the_workflows_option():
    loaded = load({"afterDeploy": ["performance"], "ncclFloorGbps": {"p5en.48xlarge": 420}})
    assert loaded.validation == ValidationSpec(
        after_deploy=("performance",), nccl_floor_gbps={"p5en.48xlarge": 420.0}
    )
    assert validate_args(loaded.validation) == (
        "performance",
        "--nccl-floor p5en.48xlarge=420",
    )


def test_bad_stack_floors_are_reported_exactly_with_the_key():
    with pytest.raises(SpecError) as err:
        load(
            {
                "afterDeploy": ["deployment"],
                "ncclFloorGbps": {
                    "p5.48xlarge": 250,
                    "p6-b200.48xlarge": 500,
                    "p5e.48xlarge": 299.9,
                },
            }
        )
    assert err.value.lines == [
        "validation.ncclFloorGbps.p5.48xlarge: 250 GB/s is below NVIDIA AICR's floor for "
        f"p5.48xlarge, 300 GB/s ({H100}); a stack may only raise it",
        "validation.ncclFloorGbps.p6-b200.48xlarge: 'p6-b200.48xlarge' has no published NCCL "
        f"floor to raise; expected one of {TYPES}",
        "validation.ncclFloorGbps.p5e.48xlarge: 299.9 GB/s is below NVIDIA AICR's floor for "
        f"p5e.48xlarge, 300 GB/s ({H200}); a stack may only raise it",
        "validation.ncclFloorGbps: is set but afterDeploy does not run performance, the phase "
        "that uses it",
    ]


def test_a_floor_that_is_not_a_number_names_its_key():
    with pytest.raises(SpecError) as err:
        load({"afterDeploy": ["performance"], "ncclFloorGbps": {"p5en.48xlarge": "fast"}})
    assert err.value.lines == ["validation.ncclFloorGbps.p5en.48xlarge: 'fast' is not a number"]


def test_the_command_s_floors_are_checked_with_every_problem_at_once():
    problems: list[str] = []
    given = [
        "p5.48xlarge",
        "p5.48xlarge=fast",
        "p5.48xlarg=400",
        "p5.48xlarge=299",
        "p5e.48xlarge=310",
        "p5e.48xlarge=320",
        "p5.48xlarge=450",
    ]
    assert cli.nccl_floors(problems, given) == {"p5e.48xlarge": 310.0, "p5.48xlarge": 450.0}
    assert problems == [
        "--nccl-floor: 'p5.48xlarge' is not INSTANCE_TYPE=GBPS, e.g. p5.48xlarge=400",
        "--nccl-floor: 'p5.48xlarge=fast' is not INSTANCE_TYPE=GBPS, e.g. p5.48xlarge=400",
        f"--nccl-floor: 'p5.48xlarg' has no published NCCL floor to raise; expected one of {TYPES}"
        "; did you mean 'p5.48xlarge'?",
        "--nccl-floor: 299 GB/s is below NVIDIA AICR's floor for p5.48xlarge, 300 GB/s "
        f"({H100}); a stack may only raise it",
        "--nccl-floor: p5e.48xlarge is given more than once",
    ]


def test_the_command_passes_the_floors_to_the_run(render_dir):
    ns = cli.parser().parse_args(
        ["--stack", "dev", "--render", str(render_dir("dev")), "--nccl-floor", "p5.48xlarge=400"]
    )
    assert cli.check_args(ns).options.nccl_floors == {"p5.48xlarge": 400.0}


def test_a_bad_floor_is_a_usage_error_with_exit_2(render_dir, capsys):
    argv = ["--stack", "dev", "--render", str(render_dir("dev")), "--nccl-floor", "p4d.24xlarge=1"]
    assert cli.main(argv, out=io.StringIO()) == 2
    assert capsys.readouterr().err == (
        "eks-gpu-platform-validate: --nccl-floor: 'p4d.24xlarge' has no published NCCL floor to "
        f"raise; expected one of {TYPES}\n"
    )
