import pytest
from policy_baselines import DELETE, change, compliant_stack, props_of, urn_of, without

from eks_gpu_platform.policies.rules.interruption_queue_for_spot_or_reserved import (
    RULE,
    check_stack,
)

CONFIG = RULE.config()
RELEASE = "platform-karpenter-chart"
QUEUE = ("values", "settings", "interruptionQueue")


def test_compliant_stack():
    assert check_stack(compliant_stack(), CONFIG) == []


@pytest.mark.parametrize("value", ["", " ", DELETE], ids=["empty", "blank", "unset"])
def test_no_queue(value):
    stack = compliant_stack()
    change(props_of(stack, RELEASE), QUEUE, value)
    findings = check_stack(stack, CONFIG)
    assert findings == [
        'Karpenter release "karpenter" sets no values.settings.interruptionQueue, but NodePools '
        '"train-efa-p5-48xlarge", "train-efa-p5e-48xlarge", "train-spot" allow spot or reserved '
        "capacity; their interruptions and reservation expiries would not be drained ahead of time"
    ]
    assert findings[0].urn == urn_of(stack, RELEASE)


def test_on_demand_only_needs_no_queue():
    stack = without(
        without(
            without(compliant_stack(), "platform-pool-train-spot"),
            "platform-pool-train-efa-p5-48xlarge",
        ),
        "platform-pool-train-efa-p5e-48xlarge",
    )
    change(props_of(stack, RELEASE), QUEUE, "")
    assert check_stack(stack, CONFIG) == []


def test_reserved_alone_needs_the_queue():
    stack = without(compliant_stack(), "platform-pool-train-spot")
    change(props_of(stack, RELEASE), ("values", "settings"), {"clusterName": "gpu-test"})
    assert check_stack(stack, CONFIG) == [
        'Karpenter release "karpenter" sets no values.settings.interruptionQueue, but NodePools '
        '"train-efa-p5-48xlarge", "train-efa-p5e-48xlarge" allow spot or reserved capacity; '
        "their interruptions and reservation expiries would not be drained ahead of time"
    ]
