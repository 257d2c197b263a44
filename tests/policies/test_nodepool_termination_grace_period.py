import pytest
from policy_baselines import DELETE, change, gpu_nodepool

from eks_gpu_platform.policies.rules.nodepool_termination_grace_period import RULE, check

CONFIG = RULE.config()
TEMPLATE = ("spec", "template", "spec")


def test_baseline_is_compliant():
    assert check(gpu_nodepool(), CONFIG) == []


def test_nodes_that_never_expire_need_no_grace_period():
    props = change(gpu_nodepool(), (*TEMPLATE, "expireAfter"), "Never")
    assert check(change(props, (*TEMPLATE, "terminationGracePeriod"), DELETE), CONFIG) == []


@pytest.mark.parametrize(
    ("expire", "shown"), [("168h", '"168h"'), (DELETE, '"720h"')], ids=["set", "default"]
)
def test_expiring_nodes_without_grace_period(expire, shown):
    props = change(gpu_nodepool(), (*TEMPLATE, "terminationGracePeriod"), DELETE)
    assert check(change(props, (*TEMPLATE, "expireAfter"), expire), CONFIG) == [
        f'NodePool "inference" expires nodes after {shown} but sets no '
        "spec.template.spec.terminationGracePeriod; a pod with karpenter.sh/do-not-disrupt or a "
        "blocking PodDisruptionBudget keeps an expired node (and its GPUs) draining indefinitely"
    ]
