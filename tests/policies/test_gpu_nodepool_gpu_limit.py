import pytest
from policy_baselines import DELETE, change, cpu_nodepool, gpu_nodepool

from eks_gpu_platform.policies.rules.gpu_nodepool_gpu_limit import RULE, check

CONFIG = RULE.config()
LIMIT = ("spec", "limits", "nvidia.com/gpu")


def test_baselines_are_compliant():
    assert check(gpu_nodepool(), CONFIG) == []
    assert check(cpu_nodepool(), CONFIG) == []


def test_numeric_limit_is_accepted():
    assert check(change(gpu_nodepool(), LIMIT, 16.0), CONFIG) == []


def test_no_limit():
    assert check(change(gpu_nodepool(), LIMIT, DELETE), CONFIG) == [
        'NodePool "inference" launches NVIDIA GPU nodes without a spec.limits["nvidia.com/gpu"] '
        "cap; pending pods (over-quota KAI pods included) can launch GPUs without bound"
    ]


def test_no_limits_at_all():
    assert check(change(gpu_nodepool(), ("spec", "limits"), DELETE), CONFIG) == [
        'NodePool "inference" launches NVIDIA GPU nodes without a spec.limits["nvidia.com/gpu"] '
        "cap; pending pods (over-quota KAI pods included) can launch GPUs without bound"
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [("0", '"0"'), ("eight", '"eight"'), (2.5, "2.5")],
    ids=["zero", "word", "fraction"],
)
def test_invalid_limit(value, shown):
    assert check(change(gpu_nodepool(), LIMIT, value), CONFIG) == [
        f'NodePool "inference": spec.limits["nvidia.com/gpu"] is {shown}; expected a positive '
        "whole number of GPUs"
    ]


def test_a_mixed_mig_pool_is_capped_by_its_mig_resources():
    """Issue 12: under MIG strategy mixed a pool's limits are its nvidia.com/mig-* devices."""
    mig = change(gpu_nodepool(), LIMIT, DELETE)
    mig["spec"]["limits"]["nvidia.com/mig-1g.10gb"] = "56"
    assert check(mig, CONFIG) == []
    mig["spec"]["limits"]["nvidia.com/mig-3g.40gb"] = "0"
    assert check(mig, CONFIG) == [
        'NodePool "inference": spec.limits["nvidia.com/mig-3g.40gb"] is "0"; expected a '
        "positive whole number of MIG devices"
    ]
