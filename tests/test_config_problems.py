"""Issue 13, configuration classes 1, 2 and 5: every number finite, every problem of a file in
one run (cross-section checks over the sections that are individually valid), and messages that
name the key path and, inside lists, the pool's or queue's name.

Each table row is a whole stack configuration and the exact, complete list of error lines.
"""

import math
from typing import Any

import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.errors import Item, format_path, named
from eks_gpu_platform.scheduler.spec import QueueResourceSpec, QueueSpec, SchedulerSpec
from eks_gpu_platform.spec import SpecError

REGION = "us-west-2"
K8S_VERSIONS = "1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36"
FINITE = "is not a finite number; expected a number such as 1 or 0.5"


def res(quota: Any = 4, limit: Any = 8, weight: Any = 1) -> dict[str, Any]:
    return {"quota": quota, "limit": limit, "overQuotaWeight": weight}


def queue(name: str, pools: list[str], **resources: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "nodePools": pools,
        "gpu": resources.get("gpu", res()),
        # Unbounded unless a test sets them: a queue's CPU and memory must hold one node of
        # its pool (budget.resources), which is not what most tests here check.
        "cpu": resources.get("cpu", res(-1, -1)),
        "memory": resources.get("memory", res(-1, -1)),
    }


GPU = {"name": "gpu", "gpus": ["l4"], "limits": {"gpus": 8}}


def stack(**sections: Any) -> dict[str, Any]:
    return {"cluster": {"name": "gpu-dev"}, **sections}


def errors(values: dict[str, Any], region: Any = REGION) -> list[str]:
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, region)
    return err.value.lines


# --- class 1: every number in configuration is finite ------------------------------------------

NON_FINITE = [
    pytest.param(
        "gpu", res(math.nan, 8), [f"scheduler.queues[0](team).gpu.quota: nan {FINITE}"], id="nan"
    ),
    pytest.param(
        "gpu", res(4, math.inf), [f"scheduler.queues[0](team).gpu.limit: inf {FINITE}"], id="inf"
    ),
    pytest.param(
        "cpu",
        res(16, 16, -math.inf),
        [f"scheduler.queues[0](team).cpu.overQuotaWeight: -inf {FINITE}"],
        id="minus-inf-weight",
    ),
    pytest.param(
        "memory",
        res(math.nan, math.inf),
        [
            f"scheduler.queues[0](team).memory.quota: nan {FINITE}",
            f"scheduler.queues[0](team).memory.limit: inf {FINITE}",
        ],
        id="both",
    ),
]


@pytest.mark.parametrize(("resource", "value", "lines"), NON_FINITE)
def test_non_finite_numbers_are_refused(resource, value, lines):
    values = stack(
        nodePools=[GPU], scheduler={"queues": [queue("team", ["gpu"], **{resource: value})]}
    )
    assert errors(values) == lines


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused_from_python(value):
    with pytest.raises(SpecError) as err:
        QueueResourceSpec(quota=1, limit=value, over_quota_weight=1)
    assert err.value.lines == [f"QueueResourceSpec.limit: {value} {FINITE}"]


# --- class 2: one run reports every problem ------------------------------------------------------

ALL_AT_ONCE = [
    pytest.param(
        stack(
            cluster={"name": "gpu-dev", "kubernetesVersion": "1.99"},
            nodePools=[
                {
                    **GPU,
                    "kind": "efa",
                    "gpus": ["h100"],
                    # One EFA layout (p5.4xlarge's differs: two would leave one NodePool empty).
                    "instanceTypes": ["p5.48xlarge"],
                    "zone": "eu-west-1a",
                    "limits": {},
                }
            ],
        ),
        [
            f"cluster.kubernetesVersion: '1.99' is not supported; expected one of {K8S_VERSIONS}",
            "nodePools[0](gpu).zone: 'eu-west-1a' is not in region us-west-2",
            "nodePools[0](gpu).limits.gpus: is not set; GPU pool 'gpu' needs a GPU cap (or "
            "scheduler queues routed to it, which size it)",
        ],
        id="bad-version-and-zone-outside-the-region",
    ),
    pytest.param(
        stack(nodePools=[{**GPU, "capacityTypes": ["spot"], "rootVolume": {"sizeGib": 5}}]),
        [
            "nodePools[0](gpu).rootVolume.sizeGib: 5 is out of range; expected a number from 20 "
            "to 16384",
            "nodePools[0](gpu).capacityTypes: includes 'spot' but the pool is not preemptible; "
            "spot reclaims nodes at two minutes' notice, so set preemptible: true or drop 'spot'",
        ],
        id="bad-root-volume-and-spot-on-a-stable-pool",
    ),
    pytest.param(
        stack(
            nodePools=[GPU],
            gpuOperator={"timeSlicing": {"shared": 100}},
            scheduler={"queues": [queue("team", ["gpus"])]},
        ),
        [
            "gpuOperator.timeSlicing: replicas of 'shared' is 100; expected a number from 2 to 48",
            "scheduler.queues[0](team).nodePools[0]: 'gpus' is not a node pool; expected one of "
            "general, gpu; did you mean 'gpu'?",
            "scheduler.queues: no leaf queue routes to GPU node pool 'gpu'; its GPU limit would "
            "be 0, so Karpenter would never provision it; add it to a leaf queue's nodePools",
        ],
        id="time-slicing-and-a-queue-routed-to-an-unknown-pool",
    ),
    pytest.param(
        stack(
            cluster={"name": "-bad"},
            tags={"aws:team": "ml"},
            karpenter={"replicas": 3},
        ),
        [
            "cluster.name: '-bad' is not a valid EKS cluster name; expected 1-100 letters, "
            "digits, '-' or '_', starting with a letter or digit",
            "tags: 'aws:team' is not a valid tag key; expected 1-128 letters, digits, spaces or "
            "_.:/=+-@, not starting with 'aws:'",
            "karpenter.replicas: 3 replicas need 3 system nodes (one per node), but "
            "systemNodeGroup.minSize is 2",
        ],
        id="bad-cluster-and-a-bad-tag-key",
    ),
    pytest.param(
        stack(
            nodePools=[{**GPU, "weight": "high", "capacityTypes": ["spot"]}],
            karpenter={"interruptionHandling": False},
        ),
        [
            "nodePools[0](gpu).weight: 'high' is not an integer",
            "nodePools[0](gpu).capacityTypes: includes 'spot' but the pool is not preemptible; "
            "spot reclaims nodes at two minutes' notice, so set preemptible: true or drop 'spot'",
        ],
        id="wrong-type-and-a-pool-check",
    ),
]


ALL_AT_ONCE.append(
    pytest.param(
        stack(
            karpenter={"interruptionHandling": False},
            nodePools=[
                {**GPU, "weight": 0},
                {
                    "name": "b",
                    "kind": "efa",
                    "gpus": ["h100"],
                    "zone": "eu-west-1a",
                    "limits": {"gpus": 16},
                },
                {"name": "c", "kind": "cpu", "capacityTypes": ["spot"], "preemptible": True},
            ],
        ),
        [
            "nodePools[0](gpu).weight: 0 is out of range; expected a number from 1 to 100",
            "nodePools[1](b).zone: 'eu-west-1a' is not in region us-west-2",
            "karpenter.interruptionHandling: is false but nodePools[2] (c) uses spot capacity; "
            "Karpenter needs the interruption queue to drain those nodes before EC2 reclaims them",
        ],
        id="one-bad-pool-does-not-hide-the-others",
    )
)


ALL_AT_ONCE.append(
    pytest.param(
        stack(
            nodePools=[GPU],
            scheduler={
                "queues": [
                    queue("bad", ["gpu"], gpu=res(math.nan, 8)),
                    queue("team", ["gpus"]),
                ]
            },
        ),
        [
            f"scheduler.queues[0](bad).gpu.quota: nan {FINITE}",
            "scheduler.queues[1](team).nodePools[0]: 'gpus' is not a node pool; expected one of "
            "general, gpu; did you mean 'gpu'?",
        ],
        id="one-bad-queue-does-not-hide-another-queues-unknown-pool",
    )
)


@pytest.mark.parametrize(("values", "lines"), ALL_AT_ONCE)
def test_every_problem_in_one_run(values, lines):
    assert errors(values) == lines


NO_FALSE_ALARMS = [
    pytest.param(
        # The pool is invalid (its kind), so the queue routed to it is not "unknown".
        stack(
            nodePools=[{**GPU, "kind": "gpuu"}],
            scheduler={"queues": [queue("team", ["gpu"])]},
        ),
        [
            "nodePools[0](gpu).kind: 'gpuu' is not allowed; expected one of gpu, efa, cpu; did "
            "you mean 'gpu'?"
        ],
        id="queue-routed-to-an-invalid-pool",
    ),
    pytest.param(
        # A wrong kind chooses what the other fields mean: nothing more is checked on the pool.
        stack(nodePools=[{"name": "cpu", "kind": "cpuu", "instanceFamilies": ["m7i"]}]),
        [
            "nodePools[0](cpu).kind: 'cpuu' is not allowed; expected one of gpu, efa, cpu; did "
            "you mean 'cpu'?"
        ],
        id="invalid-kind-hides-no-problem-it-would-invent",
    ),
    pytest.param(
        # capacityReservations is invalid: 'reserved' without reservations is not reported.
        stack(
            nodePools=[
                {
                    **GPU,
                    "capacityTypes": ["reserved", "on-demand"],
                    "capacityReservations": [{"id": "bad"}],
                }
            ]
        ),
        [
            "nodePools[0](gpu).capacityReservations[0].id: 'bad' is not a reservation id like "
            "'cr-0123'"
        ],
        id="invalid-field-the-check-depends-on",
    ),
    pytest.param(
        # The region is wrong: no zone or partition is compared with it.
        stack(
            nodePools=[
                {
                    **GPU,
                    "kind": "efa",
                    "gpus": ["h100"],
                    # One EFA layout (p5.4xlarge's differs: two would leave one NodePool empty).
                    "instanceTypes": ["p5.48xlarge"],
                    "zone": "eu-west-1a",
                    "limits": {},
                }
            ],
            scheduler={"queues": [queue("team", ["gpu"], gpu=res(16, 16))]},
        ),
        None,
        id="bad-region-compares-no-zone",
    ),
]


@pytest.mark.parametrize(("values", "lines"), NO_FALSE_ALARMS)
def test_invalid_sections_raise_no_cross_section_alarms(values, lines):
    if lines is None:
        assert errors(values, "mars-1") == [
            "aws:region: 'mars-1' is not an AWS region such as 'us-west-2'"
        ]
    else:
        assert errors(values) == lines


# --- class 5: messages name the key path and the item ------------------------------------------

MESSAGES = [
    pytest.param(stack(), 5, ["aws:region: 5 is not an AWS region such as 'us-west-2'"], id="int"),
    pytest.param(
        stack(),
        None,
        ["aws:region: is required; set it with `pulumi config set aws:region`"],
        id="missing-region",
    ),
    pytest.param(
        stack(nodePools=[{**GPU, "migProfile": "all-1g.10gb"}]),
        REGION,
        [
            "nodePools[0](gpu).migProfile: 'all-1g.10gb' does not apply to the pool's GPUs: l4 has "
            "no MIG"
        ],
        id="mig-one-message-naming-the-gpu",
    ),
    pytest.param(
        stack(nodePools=[{**GPU, "gpus": ["h100", "l4", "l40s"], "migProfile": "all-1g.10gb"}]),
        REGION,
        [
            "nodePools[0](gpu).migProfile: 'all-1g.10gb' does not apply to every GPU the pool "
            "selects: l4, l40s have no MIG; select only GPUs it fits"
        ],
        id="mig-some-gpus-fit",
    ),
    pytest.param(
        stack(nodePools=[{**GPU, "gpus": ["a100"], "migProfile": "all-1g.5gb"}]),
        REGION,
        [
            "nodePools[0](gpu).migProfile: 'all-1g.5gb' does not apply to every GPU the pool "
            "selects: a100 80 GiB takes all-disabled, all-balanced, all-1g.10gb, all-1g.20gb, "
            "all-2g.20gb, all-3g.40gb, all-4g.40gb, all-7g.80gb; select only GPUs it fits"
        ],
        id="mig-two-memory-sizes-of-one-gpu",
    ),
    pytest.param(
        stack(nodePools=[GPU, {"name": "cpu", "kind": "cpu", "weight": 0}]),
        REGION,
        ["nodePools[1](cpu).weight: 0 is out of range; expected a number from 1 to 100"],
        id="pool-named",
    ),
    pytest.param(
        stack(
            nodePools=[GPU],
            scheduler={"queues": [queue("team", ["gpu"]), queue("ops", ["gpu"], gpu=res(8, 4))]},
        ),
        REGION,
        ["scheduler.queues[1](ops).gpu.limit: 4 is below quota 8"],
        id="queue-named",
    ),
    pytest.param(
        stack(nodePools=[{"gpus": ["l4"]}]),
        REGION,
        ["nodePools[0].name: is required"],
        id="unnamed-item-keeps-its-index",
    ),
]


@pytest.mark.parametrize(("values", "region", "lines"), MESSAGES)
def test_messages_name_the_key_and_the_item(values, region, lines):
    assert errors(values, region) == lines


def test_python_built_specs_name_their_items_too():
    def q(name: str, parent: str | None = None) -> QueueSpec:
        r = QueueResourceSpec(quota=1, limit=2, over_quota_weight=1)
        pools = () if parent is None else ("gpu",)
        return QueueSpec(name=name, parent=parent, gpu=r, cpu=r, memory=r, node_pools=pools)

    with pytest.raises(SpecError) as err:
        SchedulerSpec(queues=(q("org"), q("team", parent="orgg")))
    assert err.value.lines == [
        "SchedulerSpec.queues[1](team).parent: 'orgg' is not a queue; expected one of org, "
        "team; did you mean 'org'?",
        "SchedulerSpec.queues[0](org).node_pools: is empty, but 'org' is a leaf queue; list the "
        "node pools its workloads run on",
    ]


def test_named_paths():
    data = {"nodePools": [{"name": "a"}, {"kind": "gpu"}], "tags": {"x": "y"}}
    path = named(("node_pools", 0, "zone"), data)
    assert isinstance(path[1], Item) and path[1].label == "a"
    assert format_path("", path, config=True) == "nodePools[0](a).zone"
    assert format_path("", named(("node_pools", 1, "kind"), data), config=True) == (
        "nodePools[1].kind"
    )
    assert format_path("", named(("node_pools", 5), data), config=True) == "nodePools[5]"
    assert named(("tags",), data) == ("tags",)
