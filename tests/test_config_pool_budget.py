"""Issue 28, point 13: a queue GPU limit too large for a pool is reported in the keys the user
wrote (the pool and the queues routed to it), not as the program's internal argument
(``NodePoolArgs.gpu_limit: 199994 is out of range``)."""

import pytest
import yaml
from stack_files import fixture_stack_path

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.platform import stack_config_values
from eks_gpu_platform.spec import SpecError


def test_a_huge_queue_limit_names_the_pool_and_the_queue():
    config = yaml.safe_load(fixture_stack_path("dev").read_text())["config"]
    queues = config["eks-gpu-platform:scheduler"]["queues"]
    queues[0]["gpu"]["limit"] = 200000  # research
    queues[1]["gpu"]["limit"] = 200000  # research-batch, routed to gpu-spot
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(stack_config_values(config), config["aws:region"], config)
    # gpu-spot's budget: research's 200000 less research-serving's 4 and -notebooks' 2.
    assert err.value.lines == [
        "nodePools[0](gpu-spot): the GPU budget its queues allow (199994) is above the most a "
        "pool may get (100000); lower scheduler.queues[1](research-batch).gpu.limit 200000 (or "
        "their parents' gpu.limit), or cap the pool with limits.gpus"
    ]
