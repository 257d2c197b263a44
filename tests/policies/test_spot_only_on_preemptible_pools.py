import pytest
from policy_baselines import DELETE, DOMAIN, change, cpu_nodepool, gpu_nodepool

from eks_gpu_platform.policies.rules.spot_only_on_preemptible_pools import RULE, check

CONFIG = RULE.config()
PREEMPTIBLE = ("spec", "template", "metadata", "labels", f"{DOMAIN}/preemptible")
CAPACITY = ("spec", "template", "spec", "requirements", 3)


def spot_pool():
    return gpu_nodepool("train-spot", preemptible=True, capacity_types=("spot",))


def test_baselines_are_compliant():
    assert check(gpu_nodepool(), CONFIG) == []
    assert check(spot_pool(), CONFIG) == []
    assert check(cpu_nodepool(), CONFIG) == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [("false", '"false"'), (DELETE, "not set"), ("yes", '"yes"')],
    ids=["false", "unset", "yes"],
)
def test_spot_on_a_pool_not_labelled_preemptible(value, shown):
    assert check(change(spot_pool(), PREEMPTIBLE, value), CONFIG) == [
        f'NodePool "train-spot" allows spot capacity but its "{DOMAIN}/preemptible" label is '
        f'{shown}, not "true"; non-preemptible work must not run where AWS reclaims nodes with '
        "two minutes' notice"
    ]


@pytest.mark.parametrize(
    "requirement",
    [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
        {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["reserved"]},
        {"key": "karpenter.sh/capacity-type", "operator": "Exists"},
    ],
    ids=["in", "not-in", "exists"],
)
def test_every_way_of_allowing_spot(requirement):
    props = change(gpu_nodepool(), CAPACITY, requirement)
    assert check(props, CONFIG) == [
        f'NodePool "inference" allows spot capacity but its "{DOMAIN}/preemptible" label is '
        '"false", not "true"; non-preemptible work must not run where AWS reclaims nodes with '
        "two minutes' notice"
    ]


def test_no_capacity_type_requirement_means_on_demand():
    props = gpu_nodepool()
    del props["spec"]["template"]["spec"]["requirements"][3]
    assert check(props, CONFIG) == []
