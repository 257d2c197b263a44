"""Issue 13, items 7 and 8: the cost and scheduling policies detect their intent (several
violating mutations of the compliant stack each, and compliant controls); see intent_cases.py."""

from typing import Any

import pytest
from intent_cases import (
    EFA_NP,
    LABELS,
    NP,
    TEMPLATE,
    TYPE,
    V,
    at,
    both,
    found_messages,
    gpu_pool_by,
    params,
    req,
)

CASES: list[Any] = [
    # gpu-nodepool-gpu-limit
    ("gpu-nodepool-gpu-limit", "no-limit", at(NP, "spec", "limits", value={}), V),
    ("gpu-nodepool-gpu-limit", "zero", at(NP, "spec", "limits", value={"nvidia.com/gpu": "0"}), V),
    (
        "gpu-nodepool-gpu-limit",
        "fraction",
        at(NP, "spec", "limits", value={"nvidia.com/gpu": "1.5"}),
        V,
    ),
    (
        "gpu-nodepool-gpu-limit",
        "p5-by-instance-type-only",
        gpu_pool_by(req(TYPE, "In", "p5.48xlarge")),
        V,
    ),
    (
        "gpu-nodepool-gpu-limit",
        "family-only",
        gpu_pool_by(req("karpenter.k8s.aws/instance-family", "In", "g6e")),
        V,
    ),
    (
        "gpu-nodepool-gpu-limit",
        "uncatalogued-p-family",
        gpu_pool_by(req(TYPE, "In", "p3.2xlarge")),
        V,
    ),
    (
        "gpu-nodepool-gpu-limit",
        "gpu-count",
        gpu_pool_by(req("karpenter.k8s.aws/instance-gpu-count", "Gt", "0")),
        V,
    ),
    (
        "gpu-nodepool-gpu-limit",
        "control-gpu-types-excluded",
        gpu_pool_by(req("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist")),
        [],
    ),
    (
        "gpu-nodepool-gpu-limit",
        "control-arm-cpu-families",
        gpu_pool_by(req("karpenter.k8s.aws/instance-family", "In", "m7g", "c7g")),
        [],
    ),
    # spot-only-on-preemptible-pools
    (
        "spot-only-on-preemptible-pools",
        "label-false",
        at(NP, *LABELS, "eks-gpu-platform.io/preemptible", value="false"),
        V,
    ),
    (
        "spot-only-on-preemptible-pools",
        "label-removed",
        at(NP, *LABELS, "eks-gpu-platform.io/preemptible", delete=True),
        V,
    ),
    (
        "spot-only-on-preemptible-pools",
        "spot-by-default-universe",
        at(
            EFA_NP,
            *TEMPLATE,
            "requirements",
            3,
            value=req("karpenter.sh/capacity-type", "NotIn", "reserved"),
        ),
        V,
    ),
    (
        "spot-only-on-preemptible-pools",
        "control-spot-excluded",
        at(
            EFA_NP,
            *TEMPLATE,
            "requirements",
            3,
            value=req("karpenter.sh/capacity-type", "NotIn", "spot"),
        ),
        [],
    ),
    # non-preemptible-consolidate-when-empty
    (
        "non-preemptible-consolidate-when-empty",
        "underutilized",
        at(EFA_NP, "spec", "disruption", "consolidationPolicy", value="WhenEmptyOrUnderutilized"),
        V,
    ),
    (
        "non-preemptible-consolidate-when-empty",
        "default-policy",
        at(EFA_NP, "spec", "disruption", "consolidationPolicy", delete=True),
        V,
    ),
    (
        "non-preemptible-consolidate-when-empty",
        "preemptible-label-dropped",
        at(NP, *LABELS, "eks-gpu-platform.io/preemptible", delete=True),
        V,
    ),
    (
        "non-preemptible-consolidate-when-empty",
        "control-preemptible",
        at(NP, "spec", "disruption", "consolidationPolicy", value="WhenEmptyOrUnderutilized"),
        [],
    ),
    # nodepool-gpu-limit-within-queue-capacity
    (
        "nodepool-gpu-limit-within-queue-capacity",
        "cap-above-what-queues-admit",
        at(NP, "spec", "limits", "nvidia.com/gpu", value="40"),
        V,
    ),
    (
        "nodepool-gpu-limit-within-queue-capacity",
        "no-queue-routes-to-the-pool",
        at(
            "platform-queue-llm",
            "metadata",
            "annotations",
            "eks-gpu-platform.io/node-pools",
            value="train-efa",
        ),
        V,
    ),
    (
        "nodepool-gpu-limit-within-queue-capacity",
        "route-to-an-unknown-pool",
        at(
            "platform-queue-vision",
            "metadata",
            "annotations",
            "eks-gpu-platform.io/node-pools",
            value="train-efaa,train-efa",
        ),
        V,
    ),
    (
        "nodepool-gpu-limit-within-queue-capacity",
        "control-unlimited-queue",
        both(
            at(NP, "spec", "limits", "nvidia.com/gpu", value="40"),
            at("platform-queue-llm", "spec", "resources", "gpu", "limit", value=-1),
        ),
        [],
    ),
]
EXPECTED: dict[str, list[str]] = {
    "gpu-nodepool-gpu-limit/no-limit": [
        'NodePool "train-spot" launches NVIDIA GPU nodes without a '
        'spec.limits["nvidia.com/gpu"] cap; pending pods (over-quota KAI pods included) can '
        "launch GPUs without bound",
    ],
    "gpu-nodepool-gpu-limit/zero": [
        'NodePool "train-spot": spec.limits["nvidia.com/gpu"] is "0"; expected a positive '
        "whole number of GPUs",
    ],
    "gpu-nodepool-gpu-limit/fraction": [
        'NodePool "train-spot": spec.limits["nvidia.com/gpu"] is "1.5"; expected a '
        "positive whole number of GPUs",
    ],
    "gpu-nodepool-gpu-limit/p5-by-instance-type-only": [
        'NodePool "x" launches NVIDIA GPU nodes without a spec.limits["nvidia.com/gpu"] cap; '
        "pending pods (over-quota KAI pods included) can launch GPUs without bound",
    ],
    "gpu-nodepool-gpu-limit/family-only": [
        'NodePool "x" launches NVIDIA GPU nodes without a spec.limits["nvidia.com/gpu"] cap; '
        "pending pods (over-quota KAI pods included) can launch GPUs without bound",
    ],
    "gpu-nodepool-gpu-limit/uncatalogued-p-family": [
        'NodePool "x" launches NVIDIA GPU nodes without a spec.limits["nvidia.com/gpu"] cap; '
        "pending pods (over-quota KAI pods included) can launch GPUs without bound",
    ],
    "gpu-nodepool-gpu-limit/gpu-count": [
        'NodePool "x" launches NVIDIA GPU nodes without a spec.limits["nvidia.com/gpu"] cap; '
        "pending pods (over-quota KAI pods included) can launch GPUs without bound",
    ],
    "spot-only-on-preemptible-pools/label-false": [
        'NodePool "train-spot" allows spot capacity but its '
        '"eks-gpu-platform.io/preemptible" label is "false", not "true"; non-preemptible '
        "work must not run where AWS reclaims nodes with two minutes' notice",
    ],
    "spot-only-on-preemptible-pools/label-removed": [
        'NodePool "train-spot" allows spot capacity but its '
        '"eks-gpu-platform.io/preemptible" label is not set, not "true"; non-preemptible '
        "work must not run where AWS reclaims nodes with two minutes' notice",
    ],
    "spot-only-on-preemptible-pools/spot-by-default-universe": [
        'NodePool "train-efa-p5-48xlarge" allows spot capacity but its '
        '"eks-gpu-platform.io/preemptible" label is "false", not "true"; non-preemptible '
        "work must not run where AWS reclaims nodes with two minutes' notice",
    ],
    "non-preemptible-consolidate-when-empty/underutilized": [
        'NodePool "train-efa-p5-48xlarge" is not preemptible '
        '("eks-gpu-platform.io/preemptible" is "false") but its consolidationPolicy is '
        '"WhenEmptyOrUnderutilized"; use "WhenEmpty" so Karpenter never evicts running pods '
        "to repack nodes",
    ],
    "non-preemptible-consolidate-when-empty/default-policy": [
        'NodePool "train-efa-p5-48xlarge" is not preemptible '
        '("eks-gpu-platform.io/preemptible" is "false") but its consolidationPolicy is '
        '"WhenEmptyOrUnderutilized" (default); use "WhenEmpty" so Karpenter never evicts '
        "running pods to repack nodes",
    ],
    "non-preemptible-consolidate-when-empty/preemptible-label-dropped": [
        'NodePool "train-spot" is not preemptible ("eks-gpu-platform.io/preemptible" is not '
        'set) but its consolidationPolicy is "WhenEmptyOrUnderutilized"; use "WhenEmpty" so '
        "Karpenter never evicts running pods to repack nodes",
    ],
    "nodepool-gpu-limit-within-queue-capacity/cap-above-what-queues-admit": [
        'pool "train-spot" (NodePools "train-spot") caps 40 GPUs, but the queues routed to '
        'this preemptible pool ("llm") admit only 32 (sum of gpu.limit); Karpenter would '
        "launch GPUs no queue can use",
    ],
    "nodepool-gpu-limit-within-queue-capacity/no-queue-routes-to-the-pool": [
        'pool "train-spot" (NodePools "train-spot") caps 32 GPUs but no leaf Queue routes to '
        "it (eks-gpu-platform.io/node-pools), so no queue can admit work there",
    ],
    "nodepool-gpu-limit-within-queue-capacity/route-to-an-unknown-pool": [
        'Queue "vision" routes to pool "train-efaa" (eks-gpu-platform.io/node-pools), but no '
        'NodePool in this stack has the label eks-gpu-platform.io/pool: "train-efaa"',
    ],
}


@pytest.mark.parametrize(("policy", "mutate", "expected"), params(CASES, EXPECTED))
def test_policy_intent(policy, mutate, expected):
    assert found_messages(policy, mutate) == expected
