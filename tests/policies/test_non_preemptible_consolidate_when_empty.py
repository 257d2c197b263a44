import pytest
from policy_baselines import DELETE, DOMAIN, change, cpu_nodepool, gpu_nodepool

from eks_gpu_platform.policies.rules.non_preemptible_consolidate_when_empty import RULE, check

CONFIG = RULE.config()
POLICY = ("spec", "disruption", "consolidationPolicy")
PREEMPTIBLE = ("spec", "template", "metadata", "labels", f"{DOMAIN}/preemptible")


def test_baselines_are_compliant():
    assert check(gpu_nodepool(), CONFIG) == []
    assert check(cpu_nodepool(), CONFIG) == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("WhenEmptyOrUnderutilized", '"WhenEmptyOrUnderutilized"'),
        ("Balanced", '"Balanced"'),
        (DELETE, '"WhenEmptyOrUnderutilized" (default)'),
    ],
    ids=["underutilized", "balanced", "default"],
)
def test_non_preemptible_pool_consolidating_underutilized_nodes(value, shown):
    assert check(change(gpu_nodepool(), POLICY, value), CONFIG) == [
        f'NodePool "inference" is not preemptible ("{DOMAIN}/preemptible" is "false") but its '
        f'consolidationPolicy is {shown}; use "WhenEmpty" so Karpenter never evicts running '
        "pods to repack nodes"
    ]


def test_pool_without_the_preemptible_label_counts_as_non_preemptible():
    assert check(change(cpu_nodepool(), PREEMPTIBLE, DELETE), CONFIG) == [
        f'NodePool "general" is not preemptible ("{DOMAIN}/preemptible" is not set) but its '
        'consolidationPolicy is "WhenEmptyOrUnderutilized"; use "WhenEmpty" so Karpenter never '
        "evicts running pods to repack nodes"
    ]
