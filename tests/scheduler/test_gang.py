"""Gangs on pools with several zones or instance types (issue 19 item 7, review F8): the training
template pins one zone and one type by required node affinity; the default is deterministic and
a queue's gangZone / gangInstanceType override it."""

import copy
from pathlib import Path
from typing import Any

import pytest
from stack_files import fixture_stack

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.scheduler import gang_node_affinity, gang_placement
from eks_gpu_platform.spec import SpecError

REPO = Path(__file__).resolve().parents[2]
POOL = "eks-gpu-platform.io/pool"
ZONE = "topology.kubernetes.io/zone"
TYPE = "node.kubernetes.io/instance-type"


@pytest.mark.parametrize(
    ("zones", "types", "overrides", "expected"),
    [
        (["us-east-1a"], ["p5.48xlarge"], {}, (None, None)),
        (["us-east-1a"], ["p5.48xlarge", "p5e.48xlarge"], {}, ("us-east-1a", "p5.48xlarge")),
        (["us-west-2a", "us-west-2b"], ["g6.xlarge"], {}, ("us-west-2a", "g6.xlarge")),
        (
            ["us-west-2a", "us-west-2b"],
            ["g6.xlarge", "g6.2xlarge"],
            {"zone": "us-west-2b", "instance_type": "g6.2xlarge"},
            ("us-west-2b", "g6.2xlarge"),
        ),
        # An existing VPC before deployment: the zone is unknown unless configured.
        ([], ["g6.xlarge", "g6.2xlarge"], {}, (None, "g6.xlarge")),
        (["us-east-1a"], ["p5.48xlarge"], {"zone": "us-east-1a"}, ("us-east-1a", "p5.48xlarge")),
    ],
)
def test_gang_placement(zones, types, overrides, expected):
    assert gang_placement(zones, types, **overrides) == expected


def test_gang_node_affinity_adds_one_zone_and_one_type_to_the_pool_term():
    assert gang_node_affinity(POOL, "gpu-spot", zone="us-west-2a", instance_type="g6.xlarge") == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": POOL, "operator": "In", "values": ["gpu-spot"]},
                        {"key": ZONE, "operator": "In", "values": ["us-west-2a"]},
                        {"key": TYPE, "operator": "In", "values": ["g6.xlarge"]},
                    ]
                }
            ]
        }
    }


def stack_config(stack: str, **queue_changes: Any) -> PlatformConfig:
    loaded = fixture_stack(stack)
    prefix = f"{loaded.project}:"
    values = copy.deepcopy(
        {k.removeprefix(prefix): v for k, v in loaded.config.items() if k.startswith(prefix)}
    )
    for queue in values["scheduler"]["queues"]:
        queue.update(queue_changes.get(queue["name"], {}))
    return PlatformConfig.load(values, loaded.config["aws:region"])


def gang_affinity(config: PlatformConfig, template: str) -> dict:
    job = example_workloads(config)[template].kind("Job")
    return job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]


def affinity(pool: str, zone: str, instance_type: str) -> dict:
    return gang_node_affinity(POOL, pool, zone=zone, instance_type=instance_type)


def test_dev_gang_template_pins_the_vpcs_first_zone_and_the_smallest_type():
    # gpu-spot: L4 and L40S types in two zones; the fewest GPUs (1), then the smallest size.
    config = stack_config("dev")
    assert gang_affinity(config, "training-research-batch") == affinity(
        "gpu-spot", "us-west-2a", "g6.xlarge"
    )


def test_prod_gang_templates():
    config = stack_config("prod")
    # train-efa: one zone, two types of 8 GPUs (p5 before p5e by name).
    assert gang_affinity(config, "training-llm-training") == affinity(
        "train-efa", "us-east-1a", "p5.48xlarge"
    )
    # train-spot: three zones; p4d, p4de, p5.4xlarge, p5.48xlarge: the 1-GPU p5.4xlarge.
    assert gang_affinity(config, "training-research") == affinity(
        "train-spot", "us-east-1a", "p5.4xlarge"
    )


def test_a_queue_overrides_the_gang_zone_and_type():
    config = stack_config(
        "prod", research={"gangZone": "us-east-1c", "gangInstanceType": "p5.48xlarge"}
    )
    assert gang_affinity(config, "training-research") == affinity(
        "train-spot", "us-east-1c", "p5.48xlarge"
    )
    job = example_workloads(config)["training-research"].kind("Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    # The pod asks for the whole pinned node's GPUs.
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"


def test_bad_gang_settings_name_the_queue_key_and_value():
    with pytest.raises(SpecError) as err:
        stack_config(
            "prod",
            research={"gangZone": "us-west-2a", "gangInstanceType": "g6.xlarge"},
            **{"llm-training": {"gangZone": "us-east-1b"}},
        )
    assert err.value.lines == [
        "scheduler.queues[1](llm-training).gangZone: 'us-east-1b' is not the zone of efa pool "
        "'train-efa' (us-east-1a), where the queue's gangs run",
        "scheduler.queues[2](research).gangInstanceType: 'g6.xlarge' is not an instance type of "
        "pool 'train-spot', where the queue's gangs run; expected one of p5.4xlarge, "
        "p4d.24xlarge, p4de.24xlarge, p5.48xlarge",
        "scheduler.queues[2](research).gangZone: 'us-west-2a' is not in region us-east-1",
    ]


def test_a_gang_zone_must_look_like_a_zone():
    with pytest.raises(SpecError) as err:
        stack_config("dev", **{"research-batch": {"gangZone": "west"}})
    assert err.value.lines == [
        "scheduler.queues[1](research-batch).gangZone: 'west' is not an availability zone like "
        "'us-west-2a'"
    ]
