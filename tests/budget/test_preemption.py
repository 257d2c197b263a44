"""Issue 31, point 3: KAI v0.17.0's preemption delay on the templates of queues that share pools
with preemptible work, sized from the pool's node start (``budget.node_start``), with the stack
override ``scheduler.queues[].preemptionDelaySeconds``.

Expected values are worked out by hand from the fixture stacks and the estimate table's figures
(written here again, not read from the module): g6/gr6/g4dn/g5/g5g/g6f 120+60 s, g6e/g7e
150+90 s, p4d/p4de 300+120 s, p5/p5e/p5en/p6-b200/p6-b300 360+120 s, plus Karpenter's 10 s
batch window (karpenter v1.15.0 options.go L231).
"""

import copy
from types import SimpleNamespace

import pytest
import yaml
from capacity_cases import report_args, stack_config, stack_specs
from stack_files import fixture_stack_path

from eks_gpu_platform import catalog
from eks_gpu_platform.budget import capacity_document
from eks_gpu_platform.budget.node_start import NODE_START, pool_node_start
from eks_gpu_platform.budget.preemption import preemptible_pools, preemption_delays
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.platform import stack_config_values
from eks_gpu_platform.spec import SpecError

DEV_SOURCE = (
    "Karpenter batch window 10 s + estimate for g6e (PCIe, up to 8 GPUs and EFA on the largest "
    "sizes): 150 s launch to Ready + 90 s to GPUs allocatable"
)
PROD_SOURCE = (
    "Karpenter batch window 10 s + estimate for p5 (8 SXM GPUs, NVSwitch, 8-32 network cards, "
    "8 NVMe): 360 s launch to Ready + 120 s to GPUs allocatable"
)


def test_every_catalogued_family_has_one_estimate():
    assert set(NODE_START) == set(catalog.GPU_FAMILIES)


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        # dev: research-batch -> gpu-spot (preemptible; l4, l40s: g6, gr6 180 s, g6e 240 s).
        # research-serving -> inference and research-notebooks -> notebooks: not preemptible.
        ("dev", [("research-batch", "gpu-spot", 250, "250s", DEV_SOURCE)]),
        # prod: research -> train-spot (preemptible; a100, h100: p4d, p4de 420 s, p5 480 s).
        # llm-training -> train-efa and serving -> inference: not preemptible.
        ("prod", [("research", "train-spot", 490, "490s", PROD_SOURCE)]),
    ],
)
def test_fixture_stacks_delay_the_queues_on_preemptible_pools(stack, expected):
    config = stack_config(stack)
    got = [
        (d.queue, d.pool, d.seconds, d.annotation, d.source)
        for d in preemption_delays(config.gpu_pools, config.scheduler)
    ]
    assert got == expected


def test_capacity_json_shows_each_delay_and_its_source():
    config = stack_config("prod")
    document = capacity_document(*stack_specs(config), **report_args(config))
    assert document["preemptionDelays"] == [
        {
            "queue": "research",
            "pool": "train-spot",
            "seconds": 490,
            "annotation": "490s",
            "source": PROD_SOURCE,
        }
    ]


def pool(preemptible: bool):
    return SimpleNamespace(preemptible=preemptible)


@pytest.mark.parametrize(
    ("routing", "expected"),
    [
        (("spot",), ("spot",)),
        (("od",), ()),
        (("od", "spot", "spot-2"), ("spot", "spot-2")),
        (("cpu", "od"), ()),  # a CPU pool is not a GPU pool, whatever its preemptibility
    ],
)
def test_preemptible_pools_follow_routing_and_pool_preemptibility(routing, expected):
    pools = {"spot": pool(True), "spot-2": pool(True), "od": pool(False)}
    assert preemptible_pools(SimpleNamespace(node_pools=routing), pools) == expected


def types(*names: str):
    return tuple(catalog.INSTANCE_TYPES[n] for n in names)


@pytest.mark.parametrize(
    ("names", "mig", "expected"),
    [
        (("g6.xlarge",), False, (180, "g6")),
        (("g6.xlarge", "g6e.xlarge"), False, (240, "g6e")),
        (("p4d.24xlarge", "p5.48xlarge"), False, (480, "p5")),
        (("p5.48xlarge", "p5e.48xlarge"), False, (480, "p5")),  # a tie: the first family
        (("p4d.24xlarge",), True, (720, "p4d")),  # MIG reboots: 300 + 120 + 300
        (("p5.48xlarge",), True, (840, "p5")),  # 360 + 120 + 360
    ],
)
def test_pool_node_start_is_the_slowest_family(names, mig, expected):
    start = pool_node_start(types(*names), mig)
    assert (start.seconds, start.family) == expected


def test_pool_node_start_without_types_is_refused():
    with pytest.raises(ValueError, match="pool_node_start: the pool selects no instance type"):
        pool_node_start((), False)


def dev_with(**queue_keys) -> dict:
    config = yaml.safe_load(fixture_stack_path("dev").read_text())["config"]
    config = copy.deepcopy(config)
    for index, keys in queue_keys.items():
        config["eks-gpu-platform:scheduler"]["queues"][int(index[1:])].update(keys)
    return config


def load(config: dict) -> PlatformConfig:
    return PlatformConfig.load(stack_config_values(config), config["aws:region"], config)


@pytest.mark.parametrize(("value", "annotation"), [(120, "120s"), (0, None)])
def test_the_stack_override_replaces_the_estimate(value, annotation):
    config = load(dev_with(q1={"preemptionDelaySeconds": value}))
    assert [d.as_json() for d in preemption_delays(config.gpu_pools, config.scheduler)] == [
        {
            "queue": "research-batch",
            "pool": "gpu-spot",
            "seconds": value,
            "annotation": annotation,
            "source": "stack override scheduler.queues[1](research-batch).preemptionDelaySeconds",
        }
    ]


RANGE = "expected whole seconds from 0 (no delay) to 900 (Karpenter's node registration timeout)"


KEY = "scheduler.queues[1](research-batch).preemptionDelaySeconds"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (901, f"901 is not allowed; {RANGE}"),
        (-1, f"-1 is not allowed; {RANGE}"),
        (1.5, "1.5 is not an integer"),
        (True, "true is not an integer"),
        ("5m", "'5m' is not an integer"),  # seconds, not a Go duration
    ],
)
def test_a_bad_override_names_the_queue_the_value_and_what_is_allowed(value, message):
    with pytest.raises(SpecError) as err:
        load(dev_with(q1={"preemptionDelaySeconds": value}))
    assert err.value.lines == [f"{KEY}: {message}"]


def test_an_override_on_a_queue_without_preemptible_pools_is_refused():
    with pytest.raises(SpecError) as err:
        load(dev_with(q2={"preemptionDelaySeconds": 60}))
    assert err.value.lines == [
        "scheduler.queues[2](research-serving).preemptionDelaySeconds: is 60, but queue "
        "'research-serving' shares no pool with preemptible work (its GPU pools: inference; "
        "none is preemptible), so its workloads never evict anyone; remove it"
    ]


def test_an_override_on_a_parent_queue_is_refused():
    with pytest.raises(SpecError) as err:
        load(dev_with(q0={"preemptionDelaySeconds": 60}))
    assert err.value.lines == [
        "scheduler.queues[0](research).preemptionDelaySeconds: is set, but 'research' is a parent "
        "queue; only leaf queues run workloads, so set it on the leaf queues below it"
    ]


def annotations_of(template, kind: str) -> dict:
    (obj,) = [d for d in template.documents if d["kind"] == kind]
    return obj["metadata"].get("annotations", {})


def test_templates_carry_the_delay_only_on_preemptible_pools():
    examples = example_workloads(stack_config("dev"))
    batch = annotations_of(examples["training-research-batch"], "Job")
    assert batch["kai.scheduler/preemption-delay"] == "250s"
    serving = annotations_of(examples["inference-research-serving"], "Deployment")
    assert "kai.scheduler/preemption-delay" not in serving
    notebook = annotations_of(examples["notebook-research-notebooks"], "Pod")
    assert "kai.scheduler/preemption-delay" not in notebook
    assert examples["training-research-batch"].notes[-2:] == (
        "kai.scheduler/preemption-delay: 250s: pending, this workload evicts nobody for that",
        "long, so Karpenter can add a node first (capacity.json preemptionDelays).",
    )
