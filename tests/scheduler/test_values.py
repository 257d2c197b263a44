"""Tests for ``eks_gpu_platform.scheduler.values``: the kai-scheduler chart values."""

import re

import pytest
from crd_validation import reference_dir
from values_check import load_defaults, unknown_keys

from eks_gpu_platform.scheduler import values
from eks_gpu_platform.scheduler.spec import SchedulerSpec

from .helpers import POOL_LABEL, SYSTEM_SELECTOR, SYSTEM_TOLERATIONS, queue

# --- KAI values ------------------------------------------------------------------------------


def kai_values(**spec_fields) -> dict:
    spec = SchedulerSpec(queues=(queue("team", pools=("gpu-spot",)),), **spec_fields)
    return values.kai_values(
        spec=spec,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        pool_label_key=POOL_LABEL,
    )


def test_kai_values_exactly():
    assert kai_values() == {
        "global": {
            "gpuSharing": True,
            "blockNvidiaVisibleDevices": True,
            "clusterAutoscaling": True,
            "nodeSelector": SYSTEM_SELECTOR,
            "tolerations": SYSTEM_TOLERATIONS,
        },
        "defaultPriorityClasses": {"enabled": False},
        "defaultQueue": {"createDefaultQueue": False},
    }


def test_kai_values_switches():
    out = kai_values(gpu_sharing=False, cluster_autoscaling=False)
    assert (out["global"]["gpuSharing"], out["global"]["clusterAutoscaling"]) == (False, False)


@pytest.mark.parametrize("gpu_sharing", [True, False])
def test_kai_values_block_nvidia_visible_devices_whatever_the_sharing(gpu_sharing):
    # Chart default false (reference/kai-scheduler/chart-values-v0.16.8.yaml, global); KAI
    # v0.16.8 turns it into the admission webhook's --block-nvidia-visible-devices=true.
    defaults = load_defaults(reference_dir() / "kai-scheduler" / "chart-values-v0.16.8.yaml")
    assert defaults["global"]["blockNvidiaVisibleDevices"] is False
    assert kai_values(gpu_sharing=gpu_sharing)["global"]["blockNvidiaVisibleDevices"] is True


def test_kai_values_keys_exist_in_the_chart_and_leave_the_shard_key_alone():
    defaults = load_defaults(reference_dir() / "kai-scheduler" / "chart-values-v0.16.8.yaml")
    out = kai_values()
    assert unknown_keys(out, defaults) == []
    assert "nodePoolLabelKey" not in out["global"]
    assert defaults["global"]["nodePoolLabelKey"] == ""


def test_kai_values_reject_the_shard_key_as_pool_label():
    message = (
        "kai_values: pool_label_key 'kai.scheduler/node-pool' is KAI's scheduling-shard key; "
        "nodes carrying it without a matching SchedulingShard are invisible to the default "
        "shard; use a label in your own domain, e.g. 'example.com/pool'"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        values.kai_values(
            spec=SchedulerSpec(queues=(queue("team", pools=("gpu",)),)),
            system_node_selector={},
            system_tolerations=[],
            pool_label_key="kai.scheduler/node-pool",
        )
