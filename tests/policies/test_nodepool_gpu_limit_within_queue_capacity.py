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
        'non-preemptible pool ("vision") admit only 32 (sum of gpu.quota); Karpenter would '
        "launch GPUs no queue can use"
    ]
    assert findings[0].urn == urn_of(stack, "platform-pool-train-efa-p5-48xlarge")


def test_non_preemptible_pool_uses_quota_not_limit():
    stack = compliant_stack()
    change(props_of(stack, VISION), (*GPU, "quota"), 28)
    assert check_stack(stack, CONFIG) == [
        f'pool "train-efa" (NodePools {EFA_POOLS}) caps 32 GPUs, but the queues routed to this '
        'non-preemptible pool ("vision") admit only 28 (sum of gpu.quota); Karpenter would '
        "launch GPUs no queue can use"
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
            'this non-preemptible pool ("vision") admit only 32 (sum of gpu.quota); '
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
    change(props_of(stack, VISION), (*GPU, "quota"), 31.5)
    assert check_stack(stack, CONFIG) == []
    change(props_of(stack, VISION), (*GPU, "quota"), 30.5)
    assert check_stack(stack, CONFIG) == [
        f'pool "train-efa" (NodePools {EFA_POOLS}) caps 32 GPUs, but the queues routed to this '
        'non-preemptible pool ("vision") admit only 30.5 (sum of gpu.quota); Karpenter would '
        "launch GPUs no queue can use"
    ]


def test_parent_queues_do_not_add_capacity():
    stack = compliant_stack()
    change(
        props_of(stack, "platform-queue-research"),
        ("metadata", "annotations"),
        {f"{DOMAIN}/node-pools": "train-efa"},
    )
    change(props_of(stack, "platform-queue-research"), (*GPU, "quota"), 100)
    change(props_of(stack, VISION), (*GPU, "quota"), 24)
    assert check_stack(stack, CONFIG) == [
        f'pool "train-efa" (NodePools {EFA_POOLS}) caps 32 GPUs, but the queues routed to this '
        'non-preemptible pool ("vision") admit only 24 (sum of gpu.quota); Karpenter would '
        "launch GPUs no queue can use"
    ]


# --- issue 12: one budget across pools, advertised units, whole nodes --------------------------


def test_a_queue_routed_to_two_pools_counts_its_share_in_each():
    """llm (limit 32) routed to train-spot too: each pool gets half, as the platform sizes them;
    train-spot's 32 is then twice what llm can use there."""
    stack = compliant_stack()
    change(props_of(stack, LLM), ("metadata", "annotations", f"{DOMAIN}/node-pools"), (
        "train-spot,train-efa"))  # fmt: skip
    change(props_of(stack, VISION), (*GPU, "quota"), 20)
    assert check_stack(stack, CONFIG) == [
        'pool "train-spot" (NodePools "train-spot") caps 32 GPUs, but the queues routed to this '
        'preemptible pool ("llm") admit only 16 (sum of gpu.limit); Karpenter would launch GPUs '
        "no queue can use"
    ]
    # Explicit shares (scheduler.queues[].poolShares, annotated by the platform) win.
    change(
        props_of(stack, LLM),
        ("metadata", "annotations", f"{DOMAIN}/pool-shares"),
        "train-spot=32,train-efa=0",
    )
    change(props_of(stack, VISION), (*GPU, "quota"), 32)
    assert check_stack(stack, CONFIG) == []


def overlay(pool: str, itype: str, capacity: dict) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": f"{pool}-{itype}"},
        "spec": {
            "requirements": [
                {"key": f"{DOMAIN}/pool", "operator": "In", "values": [pool]},
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [itype]},
            ],
            "capacity": capacity,
        },
    }


def sliced_stack(limit: str, quota: float) -> list:
    """train-spot becomes a g6.xlarge pool time-sliced 4 ways (the NodeOverlay says so)."""
    stack = compliant_stack()
    requirements = ("spec", "template", "spec", "requirements")
    change(props_of(stack, "platform-pool-train-spot"), requirements, [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge"]}
    ])  # fmt: skip
    change(props_of(stack, "platform-pool-train-spot"), LIMIT, limit)
    change(props_of(stack, LLM), (*GPU, "limit"), quota)
    change(props_of(stack, LLM), (*GPU, "quota"), quota)
    stack.append(
        resource(
            "kubernetes:karpenter.sh/v1alpha1:NodeOverlay",
            "platform-pool-train-spot-g6-xlarge-gpus",
            overlay("train-spot", "g6.xlarge", {"nvidia.com/gpu": "4"}),
        )
    )
    return stack


def test_time_sliced_pool_is_counted_in_slices_and_whole_nodes():
    # 2 slices admitted: one 4-slice node, so a limit of 4 is right (not 2, and not 1).
    assert check_stack(sliced_stack("4", 2), CONFIG) == []
    assert check_stack(sliced_stack("8", 4), CONFIG) == [
        'pool "train-spot" (NodePools "train-spot") caps 8 GPUs (2 physical, 4 KAI units '
        'each), but the queues routed to this preemptible pool ("llm") admit only 4 (sum of '
        "gpu.limit); Karpenter would launch GPUs no queue can use"
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
