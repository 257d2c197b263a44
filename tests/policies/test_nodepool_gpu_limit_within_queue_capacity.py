import pytest
from policy_baselines import (
    DOMAIN,
    KAI_QUEUE,
    change,
    compliant_stack,
    kai_queue,
    props_of,
    resource,
    urn_of,
)

from eks_gpu_platform.policies.rules.nodepool_gpu_limit_within_queue_capacity import (
    RULE,
    check_stack,
)

CONFIG = RULE.config()
EFA_POOLS = '"train-efa-p5-48xlarge", "train-efa-p5e-48xlarge"'
LLM, VISION = "platform-queue-llm", "platform-queue-vision"
GPU = ("spec", "resources", "gpu")
LIMIT = ("spec", "limits", "nvidia.com/gpu")


def test_compliant_stack():
    assert check_stack(compliant_stack(), CONFIG) == []


def test_no_queues_nothing_to_compare():
    stack = [r for r in compliant_stack() if r.type != KAI_QUEUE]
    assert check_stack(stack, CONFIG) == []


def test_split_efa_pool_compares_the_sum_of_its_nodepools():
    """Each EFA NodePool caps 16 (<= 32 quota), but together they cap 40 > 32."""
    stack = compliant_stack()
    change(props_of(stack, "platform-pool-train-efa-p5e-48xlarge"), LIMIT, "24")
    findings = check_stack(stack, CONFIG)
    assert findings == [
        f'pool "train-efa" (NodePools {EFA_POOLS}) caps 40 GPUs, but the queues routed to this '
        'non-preemptible pool ("llm", "vision") admit only 32 (sum of gpu.quota); Karpenter '
        "would launch GPUs no queue can use"
    ]
    assert findings[0].urn == urn_of(stack, "platform-pool-train-efa-p5-48xlarge")


def test_non_preemptible_pool_uses_quota_not_limit():
    stack = compliant_stack()
    change(props_of(stack, VISION), (*GPU, "quota"), 4)
    assert check_stack(stack, CONFIG) == [
        f'pool "train-efa" (NodePools {EFA_POOLS}) caps 32 GPUs, but the queues routed to this '
        'non-preemptible pool ("llm", "vision") admit only 28 (sum of gpu.quota); Karpenter '
        "would launch GPUs no queue can use"
    ]


def test_preemptible_pool_uses_limit_not_quota():
    stack = compliant_stack()
    change(props_of(stack, LLM), (*GPU, "limit"), 16.5)
    assert check_stack(stack, CONFIG) == [
        'pool "train-spot" (NodePools "train-spot") caps 32 GPUs, but the queues routed to this '
        'preemptible pool ("llm") admit only 16.5 (sum of gpu.limit); Karpenter would launch '
        "GPUs no queue can use"
    ]


@pytest.mark.parametrize(
    ("queue", "field", "expected"),
    [
        (
            LLM,
            "limit",
            f'pool "train-efa" (NodePools {EFA_POOLS}) caps 80 GPUs, but the queues routed to '
            'this non-preemptible pool ("llm", "vision") admit only 32 (sum of gpu.quota); '
            "Karpenter would launch GPUs no queue can use",
        ),
        (
            VISION,
            "quota",
            'pool "train-spot" (NodePools "train-spot") caps 64 GPUs, but the queues routed to '
            'this preemptible pool ("llm") admit only 32 (sum of gpu.limit); Karpenter would '
            "launch GPUs no queue can use",
        ),
    ],
    ids=["unlimited-limit-skips-train-spot", "unlimited-quota-skips-train-efa"],
)
def test_unlimited_queue_skips_the_pool(queue, field, expected):
    """Both pools exceed their queues; the pool with an unlimited (-1) queue is not compared."""
    stack = compliant_stack()
    change(props_of(stack, queue), (*GPU, field), -1)
    change(props_of(stack, "platform-pool-train-spot"), LIMIT, "64")
    change(props_of(stack, "platform-pool-train-efa-p5e-48xlarge"), LIMIT, "64")
    assert check_stack(stack, CONFIG) == [expected]


def test_fractional_admission_rounds_up_to_whole_gpus():
    stack = compliant_stack()
    change(props_of(stack, VISION), (*GPU, "quota"), 7.5)
    assert check_stack(stack, CONFIG) == []
    change(props_of(stack, VISION), (*GPU, "quota"), 6.5)
    assert check_stack(stack, CONFIG) == [
        f'pool "train-efa" (NodePools {EFA_POOLS}) caps 32 GPUs, but the queues routed to this '
        'non-preemptible pool ("llm", "vision") admit only 30.5 (sum of gpu.quota); Karpenter '
        "would launch GPUs no queue can use"
    ]


def test_parent_queues_do_not_add_capacity():
    stack = compliant_stack()
    change(
        props_of(stack, "platform-queue-research"),
        ("metadata", "annotations"),
        {f"{DOMAIN}/node-pools": "train-efa"},
    )
    change(props_of(stack, "platform-queue-research"), (*GPU, "quota"), 100)
    change(props_of(stack, VISION), (*GPU, "quota"), 0)
    assert check_stack(stack, CONFIG) == [
        f'pool "train-efa" (NodePools {EFA_POOLS}) caps 32 GPUs, but the queues routed to this '
        'non-preemptible pool ("llm", "vision") admit only 24 (sum of gpu.quota); Karpenter '
        "would launch GPUs no queue can use"
    ]


def test_pool_no_queue_routes_to():
    stack = compliant_stack()
    change(props_of(stack, LLM), ("metadata", "annotations", f"{DOMAIN}/node-pools"), "train-efa")
    findings = check_stack(stack, CONFIG)
    assert findings == [
        f'pool "train-spot" (NodePools "train-spot") caps 32 GPUs but no leaf Queue routes to it '
        f"({DOMAIN}/node-pools), so no queue can admit work there"
    ]
    assert findings[0].urn == urn_of(stack, "platform-pool-train-spot")


def test_queue_routing_to_an_unknown_pool():
    stack = compliant_stack()
    stack.append(
        resource(KAI_QUEUE, "platform-queue-typo", kai_queue("typo", " train-spt ", limit=1))
    )
    findings = check_stack(stack, CONFIG)
    assert findings == [
        f'Queue "typo" routes to pool "train-spt" ({DOMAIN}/node-pools), but no NodePool in this '
        f'stack has the label {DOMAIN}/pool: "train-spt"'
    ]
    assert findings[0].urn == urn_of(stack, "platform-queue-typo")


def test_label_domain_is_configurable():
    config = RULE.config({"labelDomain": "example.com"})
    # No NodePool carries example.com/pool, and no queue routes via example.com/node-pools.
    assert check_stack(compliant_stack(), config) == []
