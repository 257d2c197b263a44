"""Where a queue's gangs run (issue 30, points 3 and 4; review H3, M1, L1): the type the pool can
buy first (reserved capacity, then instanceTypes order, among types whose NodePool holds a
node), the pool the template uses for the overrides' checks, and the largest gang of the pinned
type. Expected values are worked out by hand from the prod fixture stack
(tests/fixtures/stacks/Pulumi.prod.yaml): train-efa [p5.48xlarge, p5e.48xlarge] in us-east-1a,
64 GPUs from llm-training; train-spot (a100, h100) fed by research (limit 32); a new VPC of
three zones us-east-1a..c."""

import copy
from typing import Any

import pytest
from capacity_cases import stack_specs
from stack_files import fixture_stack

from eks_gpu_platform.budget import capacity_plan
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.capacity import capacity_document
from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.scheduler import gang_node_affinity
from eks_gpu_platform.spec import SpecError

POOL = "eks-gpu-platform.io/pool"
RESERVATION_TAGS = {"eks-gpu-platform/reservation": "train-efa"}


def prod(
    pools: dict[str, dict[str, Any]] | None = None,
    extra: tuple[dict[str, Any], ...] = (),
    **queues: dict[str, Any],
):
    """The prod fixture with pool and queue keys replaced (by name), ``extra`` pools added."""
    loaded = fixture_stack("prod")
    prefix = f"{loaded.project}:"
    values = copy.deepcopy(
        {k.removeprefix(prefix): v for k, v in loaded.config.items() if k.startswith(prefix)}
    )
    for pool in values["nodePools"]:
        pool.update((pools or {}).get(pool["name"], {}))
    values["nodePools"] += copy.deepcopy(list(extra))
    for queue in values["scheduler"]["queues"]:
        queue.update(queues.get(queue["name"], {}))
    return PlatformConfig.load(values, loaded.config["aws:region"])


def job(config: PlatformConfig, queue: str) -> dict:
    return example_workloads(config)[f"training-{queue}"].kind("Job")


def pins(config: PlatformConfig, queue: str) -> dict:
    return job(config, queue)["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]


def affinity(pool: str, zone: str, instance_type: str) -> dict:
    return gang_node_affinity(POOL, pool, zone=zone, instance_type=instance_type)


def reservation(instance_type: str, zone: str) -> dict:
    return {"tags": RESERVATION_TAGS, "instanceType": instance_type, "zone": zone}


# --- point 3: the type the pool can buy first ------------------------------------------------


def test_the_reservation_type_listed_first_is_pinned():
    # The review's p5efirst stack: [p5e, p5] and a p5e reservation; the old order (GPUs, size,
    # name) pinned p5.48xlarge, on-demand, with the p5e reservation idle.
    config = prod(
        {
            "train-efa": {
                "instanceTypes": ["p5e.48xlarge", "p5.48xlarge"],
                "capacityReservations": [reservation("p5e.48xlarge", "us-east-1a")],
            }
        }
    )
    assert pins(config, "llm-training") == affinity("train-efa", "us-east-1a", "p5e.48xlarge")
    assert capacity_document(config)["gangs"]["llm-training"] == {
        "pool": "train-efa",
        "nodePool": "train-efa",
        "instanceType": "p5e.48xlarge",
        "reason": "reserved capacity",
        "zone": "us-east-1a",
        "zoneReason": "the efa pool's zone",
        "nodePoolGpus": 64,
        "pinned": True,
    }


def test_instance_types_order_without_a_declared_reservation_type():
    # The reservation's tags alone do not say its type: the first type in instanceTypes is
    # pinned (the docs: list the reservation's type first).
    config = prod({"train-efa": {"instanceTypes": ["p5e.48xlarge", "p5.48xlarge"]}})
    assert pins(config, "llm-training") == affinity("train-efa", "us-east-1a", "p5e.48xlarge")
    gang = capacity_document(config)["gangs"]["llm-training"]
    assert (gang["instanceType"], gang["reason"]) == (
        "p5e.48xlarge",
        "first in instanceTypes with budget",
    )


def test_a_declared_reservation_type_comes_before_instance_types_order():
    # p5.48xlarge is listed first, but the reservation is for p5e.48xlarge.
    config = prod(
        {"train-efa": {"capacityReservations": [reservation("p5e.48xlarge", "us-east-1a")]}}
    )
    assert pins(config, "llm-training") == affinity("train-efa", "us-east-1a", "p5e.48xlarge")


def test_reserved_capacity_on_a_gpu_pool_pins_the_reservation_zone():
    # train-spot made an on-demand pool with an H100 Capacity Block in us-east-1b: the gang
    # pins p5.48xlarge (not the 1-GPU p5.4xlarge) in us-east-1b (not the VPC's first zone).
    config = prod(
        {
            "train-spot": {
                "capacityTypes": ["reserved", "on-demand"],
                "preemptible": False,
                "capacityReservations": [
                    {
                        "id": "cr-0123456789abcdef0",
                        "instanceType": "p5.48xlarge",
                        "zone": "us-east-1b",
                    }
                ],
            }
        }
    )
    assert pins(config, "research") == affinity("train-spot", "us-east-1b", "p5.48xlarge")
    gang = capacity_document(config)["gangs"]["research"]
    assert (gang["reason"], gang["zoneReason"]) == ("reserved capacity", "the reservation's zone")


def test_a_type_whose_nodepool_cannot_hold_a_node_is_skipped():
    # inference, 16 GPUs from serving, listing an 8-GPU g6e.48xlarge and then g6.12xlarge
    # (4 x L4) and g6.xlarge: 16 GPUs hold two g6e.48xlarge, so it is pinned. With serving's
    # budget cut to 4 (quota and limit 4), the first type with a node's budget is g6.12xlarge:
    # neither the first listed (8 GPUs > 4) nor the old default, the 1-GPU g6.xlarge.
    listed = {"instanceTypes": ["g6e.48xlarge", "g6.12xlarge", "g6.xlarge"], "gpus": []}
    caps = {"quota": 4, "limit": 4, "overQuotaWeight": 1}
    config = prod({"inference": listed}, serving={"gpu": caps, "workloadKind": "training"})
    assert pins(config, "serving") == affinity("inference", "us-east-1a", "g6.12xlarge")
    gang = capacity_document(config)["gangs"]["serving"]
    assert (gang["reason"], gang["nodePoolGpus"]) == ("first in instanceTypes with budget", 4)


def test_largest_gang_is_the_pinned_types():
    # A preemptible train-efa (its budget: llm-training's limit 64) with two layouts split by
    # typeShares: p5en.48xlarge 16, p5/p5e 48. The gang pins p5en (first listed, with budget),
    # so one gang gets 16 GPUs: not 48, the best NodePool's.
    config = prod(
        {
            "train-efa": {
                "preemptible": True,
                "instanceTypes": ["p5en.48xlarge", "p5.48xlarge", "p5e.48xlarge"],
                "typeShares": {"p5en.48xlarge": 16},
            }
        },
        **{"llm-training": {"gpu": {"quota": 16, "limit": 64, "overQuotaWeight": 1}}},
    )
    assert pins(config, "llm-training") == affinity("train-efa", "us-east-1a", "p5en.48xlarge")
    (plan,) = [p for p in capacity_plan(*stack_specs(config)) if p.name == "llm-training"]
    assert plan.largest_gang == 16
    assert capacity_document(config)["gangs"]["llm-training"]["nodePool"] == (
        "train-efa-p5en-48xlarge"
    )


def test_the_quota_check_uses_the_pinned_type():
    # Non-preemptible, the pool's budget is llm-training's quota 24: p5en.48xlarge 8, p5/p5e
    # 16. The gang pins p5en, whose NodePool holds 8: a quota-only queue of 24 is refused
    # with 8 (the best NodePool's 16 would have been named before).
    with pytest.raises(SpecError) as err:
        prod(
            {
                "train-efa": {
                    "instanceTypes": ["p5en.48xlarge", "p5.48xlarge", "p5e.48xlarge"],
                    "typeShares": {"p5en.48xlarge": 8},
                }
            },
            **{"llm-training": {"gpu": {"quota": 24, "limit": 64, "overQuotaWeight": 1}}},
        )
    assert err.value.lines == [
        "scheduler.queues[1](llm-training).gpu.quota: 24 of queue 'llm-training' is more than "
        "one gang can get (8 GPUs): it runs in quota only on its non-preemptible EFA pool(s) "
        "'train-efa', and a gang runs on one instance type of one NodePool, whose budget holds "
        "at most that many; give the pool's types one EFA layout, raise its budget, or set its "
        "typeShares so one NodePool holds the quota"
    ]


# --- overrides the chosen pool cannot launch -------------------------------------------------


def test_a_gang_instance_type_whose_nodepool_holds_no_node_is_refused():
    listed = {"instanceTypes": ["g6.12xlarge", "g6.xlarge", "g6e.48xlarge"], "gpus": []}
    caps = {"quota": 4, "limit": 4, "overQuotaWeight": 1}
    with pytest.raises(SpecError) as err:
        prod({"inference": listed}, serving={"gpu": caps, "gangInstanceType": "g6e.48xlarge"})
    assert err.value.lines == [
        "scheduler.queues[3](serving).gangInstanceType: 'g6e.48xlarge' cannot be launched in "
        "pool 'inference', where the queue's gangs run: its NodePool 'inference' has a budget "
        "of 4 GPUs, less than one 8-GPU node, so the gang would never start; expected one of "
        "g6.12xlarge, g6.xlarge"
    ]


def test_a_gang_zone_outside_the_vpc_or_the_reservation_is_refused():
    reserved = {
        "capacityTypes": ["reserved", "on-demand"],
        "preemptible": False,
        "capacityReservations": [
            {"id": "cr-0123456789abcdef0", "instanceType": "p5.48xlarge", "zone": "us-east-1b"}
        ],
    }
    with pytest.raises(SpecError) as err:
        prod(
            {"train-spot": reserved},
            research={"gangZone": "us-east-1c"},
            serving={"gangZone": "us-east-1d"},
        )
    assert err.value.lines == [
        "scheduler.queues[2](research).gangZone: 'us-east-1c' is not the zone of the "
        "p5.48xlarge capacity reservation of pool 'train-spot', where the queue's gangs run "
        "(us-east-1b); the gang pins p5.48xlarge for its reserved capacity; expected "
        "us-east-1b, or remove gangZone",
        "scheduler.queues[3](serving).gangZone: 'us-east-1d' is not one of the VPC's zones "
        "(us-east-1a, us-east-1b, us-east-1c), where the nodes of pool 'inference', where the "
        "queue's gangs run launch",
    ]


def test_a_reservation_type_or_zone_the_pool_cannot_launch_is_refused():
    with pytest.raises(SpecError) as err:
        prod({"train-efa": {"capacityReservations": [reservation("p4d.24xlarge", "us-east-1b")]}})
    assert err.value.lines == [
        "nodePools[0](train-efa).capacityReservations[0].instanceType: 'p4d.24xlarge' is not an "
        "instance type of pool 'train-efa'; expected one of p5.48xlarge, p5e.48xlarge",
        "nodePools[0](train-efa).capacityReservations[0].zone: 'us-east-1b' is not the zone of "
        "efa pool 'train-efa' (us-east-1a): its nodes launch only there",
    ]


# --- point 4: the overrides are checked against the pool the template uses -------------------


def test_gang_overrides_are_checked_against_the_gang_pool():
    # The review's gangtest: research routed to [train-spot, train-efa]; the template runs on
    # train-efa (its only EFA pool), so p4d.24xlarge (a train-spot type) and us-east-1b are
    # refused there. The old check used train-spot, the first GPU pool, and passed.
    with pytest.raises(SpecError) as err:
        prod(
            {"train-efa": {"limits": {"gpus": 128}}},
            research={
                "nodePools": ["train-spot", "train-efa"],
                "gangZone": "us-east-1b",
                "gangInstanceType": "p4d.24xlarge",
            },
        )
    assert err.value.lines == [
        "scheduler.queues[2](research).gangInstanceType: 'p4d.24xlarge' is not an instance type "
        "of pool 'train-efa', where the queue's gangs run; expected one of p5.48xlarge, "
        "p5e.48xlarge",
        "scheduler.queues[2](research).gangZone: 'us-east-1b' is not the zone of efa pool "
        "'train-efa' (us-east-1a), where the queue's gangs run",
    ]


def test_valid_overrides_on_the_gang_pool_are_what_the_template_pins():
    config = prod(
        {"train-efa": {"limits": {"gpus": 128}}},
        research={"nodePools": ["train-spot", "train-efa"], "gangInstanceType": "p5e.48xlarge"},
    )
    assert pins(config, "research") == affinity("train-efa", "us-east-1a", "p5e.48xlarge")
    assert capacity_document(config)["gangs"]["research"]["reason"] == "gangInstanceType"


# --- review L1: the in-quota gang check reads the non-preemptible EFA pools only --------------


def test_a_preemptible_efa_pool_does_not_hold_the_quota_of_a_gang():
    # llm-training routed to train-efa (capped at 8 GPUs, one node) and a preemptible spot EFA
    # pool of 64: its quota 16 runs in quota only on train-efa, where one gang gets 8. The old
    # check took the best EFA pool (64, preemptible) and passed.
    spot = {
        "name": "efa-spot",
        "kind": "efa",
        "instanceTypes": ["p5.48xlarge"],
        "zone": "us-east-1a",
        "capacityTypes": ["spot"],
        "preemptible": True,
        "limits": {"gpus": 64},
    }
    with pytest.raises(SpecError) as err:
        prod(
            {"train-efa": {"limits": {"gpus": 8}}},
            (spot,),
            **{
                "llm-training": {
                    "nodePools": ["train-efa", "efa-spot"],
                    "gpu": {"quota": 16, "limit": 64, "overQuotaWeight": 1},
                }
            },
        )
    assert err.value.lines == [
        "scheduler.queues[1](llm-training).gpu.quota: 16 of queue 'llm-training' is more than "
        "one gang can get (8 GPUs): it runs in quota only on its non-preemptible EFA pool(s) "
        "'train-efa', and a gang runs on one instance type of one NodePool, whose budget holds "
        "at most that many; give the pool's types one EFA layout, raise its budget, or set its "
        "typeShares so one NodePool holds the quota"
    ]
