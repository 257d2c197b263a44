"""The stranded-GPU warning (issue 19 item 8) on MIG and time-sliced pools: a pod there takes
one MIG device or one slice, not a GPU, and the node it launches charges the pool's limit all
of its devices (kubernetes-sigs/karpenter v1.15.0 ``pkg/controllers/state/statenode.go``
L458-474: the node's capacity, which the device plugin reports per MIG device or slice)."""

from typing import Any

import pytest

from eks_gpu_platform.budget import stranded_gpu_warnings
from eks_gpu_platform.offline.run import validate
from eks_gpu_platform.offline.stackfile import StackFile

HEAD = "warning: pool 'p' offers a100 only on 8-GPU or larger nodes (p4d.24xlarge)"


def _config(strategy: str, **pool: Any):
    values = {
        "cluster": {"name": "stranded"},
        "nodePools": [
            {"name": "p", "kind": "gpu", "instanceFamilies": ["p4d"], "capacityTypes": ["spot"]}
            | pool
        ],
        "gpuOperator": {"migStrategy": strategy, "timeSlicing": {"ts-4": 4}},
        "scheduler": {
            "queues": [
                {
                    "name": "q",
                    "nodePools": ["p"],
                    "gpu": {"quota": 0, "limit": 8, "overQuotaWeight": 1},
                    # Unbounded: GPUs are what this checks (CPU and memory: budget.resources).
                    "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                    "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                }
            ]
        },
    }
    config: dict[str, Any] = {"aws:region": "us-east-1"}
    config.update({f"eks-gpu-platform:{k}": v for k, v in values.items()})
    return validate(StackFile("stranded", "eks-gpu-platform", config, []))


@pytest.mark.parametrize(
    ("strategy", "profile", "devices"),
    [
        ("single", "all-1g.5gb", "56 nvidia.com/gpu"),
        ("mixed", "all-1g.5gb", "56 nvidia.com/mig-1g.5gb"),
        (
            "mixed",
            "all-balanced",
            "16 nvidia.com/mig-1g.5gb, 8 nvidia.com/mig-2g.10gb, 8 nvidia.com/mig-3g.20gb",
        ),
    ],
)
def test_a_mig_pod_takes_one_device_and_its_node_charges_all_of_them(strategy, profile, devices):
    # Before: "so a 1-GPU a100 pod uses 8 of it", though a MIG pod asks for one device.
    config = _config(strategy, migProfile=profile, preemptible=True)
    assert stranded_gpu_warnings(config.pools, config.gpu_operator) == [
        f"{HEAD}, its GPUs split into MIG devices: a pod takes one device, a slice of a GPU, "
        "but Karpenter charges the pool's limit a whole node, so a pod asking for one MIG "
        f"device uses all of a p4d.24xlarge's {devices} (8 GPUs)"
    ]


def test_a_time_sliced_pod_takes_one_slice():
    config = _config("single", timeSlicing="ts-4", preemptible=True)
    assert stranded_gpu_warnings(config.pools, config.gpu_operator) == [
        f"{HEAD}, its GPUs time-sliced: a pod takes one slice, but Karpenter charges the pool's "
        "limit a whole node, so a pod asking for one slice uses all of a p4d.24xlarge's 32 "
        "nvidia.com/gpu (8 GPUs)"
    ]


def test_a_whole_gpu_pool_keeps_the_1_gpu_pod_message():
    config = _config("single", preemptible=True)
    assert stranded_gpu_warnings(config.pools, config.gpu_operator) == [
        f"{HEAD}: Karpenter charges the pool's limit a whole node, so a 1-GPU a100 pod uses 8 of it"
    ]
