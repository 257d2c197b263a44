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


def _dra(limits):
    """Issue 31 point 4: a DRA pool's NodePool (label <domain>/dra) with these limits."""
    pool = change(gpu_nodepool(), ("spec", "limits"), limits)
    pool["spec"]["template"]["metadata"]["labels"]["eks-gpu-platform.io/dra"] = "true"
    return pool


def test_a_dra_pool_is_capped_in_cpu():
    assert check(_dra({"cpu": "384"}), CONFIG) == []


@pytest.mark.parametrize(
    ("limits", "shown"),
    [
        ({"nvidia.com/gpu": "16"}, '{"nvidia.com/gpu": "16"}'),
        ({"cpu": "384", "nvidia.com/gpu": "16"}, '{"cpu": "384", "nvidia.com/gpu": "16"}'),
        ({"cpu": "0"}, '{"cpu": "0"}'),
    ],
    ids=["gpu-only", "gpu-and-cpu", "zero-cpu"],
)
def test_a_dra_pool_without_a_cpu_cap_or_with_a_gpu_limit_is_refused(limits, shown):
    assert check(_dra(limits), CONFIG) == [
        'DRA NodePool "inference": expected a positive whole spec.limits.cpu (its GPU budget) '
        'and no spec.limits["nvidia.com/gpu"], which its nodes never advertise; limits are '
        f"{shown}"
    ]
