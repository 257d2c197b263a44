"""Issue 13: hostile values at every key of the shipped stacks' configuration. Each one either
loads or is refused with a ``SpecError`` whose every line starts with the key path (never
another exception, which the render would show as a traceback); what loads gives the program
the numbers it computes with (GPU limits) without an error."""

import copy
import math
from typing import Any

import pytest
import yaml
from stack_files import fixture_stack_path

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.platform import stack_config_values
from eks_gpu_platform.spec import SpecError, camel

HOSTILE = [math.nan, math.inf, -1, "", [], {}, True, None, "x" * 300]


def leaves(obj: Any, path: tuple = ()) -> list[tuple]:
    out = [path] if path else []
    if isinstance(obj, dict):
        for key, value in obj.items():
            out += leaves(value, (*path, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out += leaves(value, (*path, i))
    return out


def replaced(values: dict[str, Any], path: tuple, value: Any) -> dict[str, Any]:
    """``values`` with ``value`` at ``path``: the containers on the path are copied, the rest is
    shared with ``values`` (``PlatformConfig.load`` changes nothing it is given; deep-copying
    the whole configuration for each of the ~550 loads was a tenth of the test)."""
    out = copy.copy(values)
    target = out
    for key in path[:-1]:
        target[key] = copy.copy(target[key])
        target = target[key]
    target[path[-1]] = value
    return out


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_hostile_values_at_every_key(repo, stack):
    document = yaml.safe_load(fixture_stack_path(stack).read_text())
    values = stack_config_values(document["config"])
    region = document["config"]["aws:region"]
    keys = {camel(f) for f in PlatformConfig.__dataclass_fields__ if f != "region"}
    pristine = copy.deepcopy(values)  # the loads share what ``replaced`` does not copy
    refused = loaded = 0
    for k, path in enumerate(leaves(values)):
        # Two hostile values per key, rotating through the list (the suite stays fast).
        for value in (HOSTILE[k % len(HOSTILE)], HOSTILE[(k + 4) % len(HOSTILE)]):
            try:
                config = PlatformConfig.load(replaced(values, path, value), region)
            except SpecError as err:
                refused += 1
                for line in err.lines:
                    head = line.split(":", 1)[0].split(".", 1)[0].split("[", 1)[0]
                    assert head in keys or line.startswith("eks-gpu-platform:"), (path, line)
                continue
            loaded += 1
            assert all(v is None or v >= 0 for v in config.gpu_limits.values()), path
    assert refused > 5 * loaded > 0
    assert values == pristine
