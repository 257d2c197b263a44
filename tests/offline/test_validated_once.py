"""The offline render loads a stack's configuration once: the command line validates it before
the program runs, and the program's own load of the same values (``platform.read_stack_config``)
gets that configuration back (``config_load.reusing``, ``run.reusing_validated``), never one
loaded from other values."""

import copy

import pytest
from stack_files import fixture_stack

from eks_gpu_platform import config_load
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.run import reusing_validated, validate
from eks_gpu_platform.platform import stack_config_values
from eks_gpu_platform.spec import SpecError


def inputs(stack) -> tuple:
    """What the program's ``read_stack_config`` hands ``PlatformConfig.load`` (fresh copies)."""
    raw = copy.deepcopy(stack.config)
    return stack_config_values(raw), raw.get("aws:region"), raw


def test_the_programs_load_of_the_same_values_gets_the_validated_config():
    stack = fixture_stack("dev")
    config = validate(stack)
    with reusing_validated(stack, config):
        assert PlatformConfig.load(*inputs(stack)) is config
    again = PlatformConfig.load(*inputs(stack))
    assert again is not config
    assert again == config
    assert config_load._LOADED == []


def test_other_values_are_loaded_again():
    stack = fixture_stack("dev")
    config = validate(stack)
    values, region, raw = inputs(stack)
    other_region = "us-east-1" if region != "us-east-1" else "us-west-2"
    renamed = copy.deepcopy(values)
    renamed["cluster"]["name"] = "renamed"
    with reusing_validated(stack, config):
        assert PlatformConfig.load(values, other_region, raw).region == other_region
        assert PlatformConfig.load(renamed, region, raw).cluster.name == "renamed"
        assert PlatformConfig.load(values, region, [*raw, "aws:profile"]) is not config


def test_equal_values_of_other_types_are_loaded_again():
    """``True == 1`` and ``1 == 1.0`` in Python, but a configuration loads each differently."""
    assert config_load._same({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not config_load._same({"a": [1]}, {"a": [True]})
    assert not config_load._same({"a": [1]}, {"a": [1.0]})
    assert not config_load._same({"a": [1]}, {"a": (1,)})
    assert not config_load._same({"a": 1}, {"a": 1, "b": 2})
    stack = fixture_stack("dev")
    config = validate(stack)
    values, region, raw = inputs(stack)
    assert values["nodePools"][0]["preemptible"] is True
    values["nodePools"][0]["preemptible"] = 1
    with reusing_validated(stack, config), pytest.raises(SpecError) as err:
        PlatformConfig.load(values, region, raw)
    assert err.value.lines == [
        "nodePools[0](gpu-spot).preemptible: 1 is not a boolean; use true or false"
    ]
