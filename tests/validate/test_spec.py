"""The stack setting ``eks-gpu-platform:validation`` (validate/spec.py): loaded and checked with
the rest of the configuration (exact messages, did-you-mean, the pools against the stack's GPU
pools), and turned into the deploy workflow's options."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.spec import SpecError
from eks_gpu_platform.validate.core import PHASES
from eks_gpu_platform.validate.spec import Phase, ValidationSpec, validate_args

PHASE_LIST = "deployment, capacity, scheduling, performance, security"
POOLS = [
    {"name": "gpu-spot", "gpus": ["l4"], "limits": {"gpus": 8}},
    {"name": "inference", "gpus": ["l4"], "limits": {"gpus": 4}},
    {"name": "general", "kind": "cpu"},
]


def load(validation: Any) -> PlatformConfig:
    values = {"cluster": {"name": "gpu-dev"}, "nodePools": POOLS, "validation": validation}
    return PlatformConfig.load(values, "us-west-2")


def errors(validation: Any) -> list[str]:
    with pytest.raises(SpecError) as err:
        load(validation)
    return err.value.lines


def test_the_phases_are_the_validations_own():
    assert get_args(Phase) == PHASES


def test_absent_is_off():
    values = {"cluster": {"name": "gpu-dev"}}
    assert PlatformConfig.load(values, "us-west-2").validation == ValidationSpec()
    assert validate_args(ValidationSpec()) == ("", "")


def test_a_full_setting_loads_and_becomes_the_workflows_options():
    loaded = load(
        {
            "afterDeploy": ["deployment", "scheduling", "capacity"],
            "pools": ["inference"],
            "costCapUsd": 5,
            "timeCapMinutes": 20,
        }
    )
    assert loaded.validation == ValidationSpec(
        after_deploy=("deployment", "scheduling", "capacity"),
        pools=("inference",),
        cost_cap_usd=5.0,
        time_cap_minutes=20.0,
    )
    assert validate_args(loaded.validation) == (
        "deployment,scheduling,capacity",
        "--pool inference --cost-cap-usd 5 --time-cap-minutes 20",
    )


@pytest.mark.parametrize(
    ("validation", "lines"),
    [
        (
            {"afterDeploy": ["deployment", "schedulng"]},
            [
                "validation.afterDeploy[1]: 'schedulng' is not allowed; expected one of "
                f"{PHASE_LIST}; did you mean 'scheduling'?"
            ],
        ),
        (
            {"afterdeploy": ["deployment"]},
            [
                "validation.afterdeploy: unknown key; did you mean 'afterDeploy'?; allowed keys "
                "are afterDeploy, costCapUsd, ncclFloorGbps, pools, principal, timeCapMinutes"
            ],
        ),
        (
            {"afterDeploy": "deployment"},
            [
                "validation.afterDeploy: 'deployment' is not a list; expected a list of one of "
                "'deployment', 'capacity', 'scheduling', 'performance', 'security'"
            ],
        ),
        (
            {"afterDeploy": ["deployment", "deployment"], "costCapUsd": -1, "timeCapMinutes": 0},
            [
                "validation.afterDeploy[1]: 'deployment' is listed twice",
                "validation.costCapUsd: -1.0 is not a number >= 0",
                "validation.timeCapMinutes: 0.0 is not a number > 0",
            ],
        ),
        (
            {"afterDeploy": ["deployment"], "pools": ["inference"]},
            [
                "validation.pools: is set but afterDeploy runs neither capacity nor performance, "
                "the phases that use it"
            ],
        ),
        (
            {"afterDeploy": ["capacity"], "pools": ["inferense", "general", "inference"]},
            [
                "validation.pools[0]: 'inferense' is not a GPU pool of this stack; expected one "
                "of gpu-spot, inference; did you mean 'inference'?",
                "validation.pools[1]: 'general' is not a GPU pool of this stack; expected one of "
                "gpu-spot, inference",
            ],
        ),
    ],
    ids=["phase", "key", "not-a-list", "twice-and-caps", "pools-unused", "pools-unknown"],
)
def test_bad_settings_are_reported_exactly(validation, lines):
    assert errors(validation) == lines
