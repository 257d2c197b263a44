"""Tests for ``eks_gpu_platform.scheduler.values``: the kai-scheduler chart values."""

import re

import pytest
from values_check import unknown_keys

from eks_gpu_platform.scheduler import values
from eks_gpu_platform.scheduler.spec import SchedulerSpec

from .helpers import POOL_LABEL, SYSTEM_SELECTOR, SYSTEM_TOLERATIONS, queue
from .kai_chart import CHART_DEFAULTS

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
    # Chart default false (v0.17.0 values.yaml L21, tests/scheduler/kai_chart.py); KAI v0.17.0
    # turns it into the admission webhook's --block-nvidia-visible-devices=true.
    assert CHART_DEFAULTS["global"]["blockNvidiaVisibleDevices"] is False
    assert kai_values(gpu_sharing=gpu_sharing)["global"]["blockNvidiaVisibleDevices"] is True


def test_kai_values_keys_exist_in_the_chart_and_leave_the_shard_key_alone():
    # Every key, with the namespace labels and the scaling pods' labels too, is one the v0.17.0
    # chart declares (the cited table of its defaults).
    out = values.kai_values(
        spec=SchedulerSpec(queues=(queue("team", pools=("gpu-spot",)),)),
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        pool_label_key=POOL_LABEL,
        system_namespace_labels={"pod-security.kubernetes.io/enforce": "privileged"},
    )
    assert unknown_keys(out, CHART_DEFAULTS) == []
    assert "nodePoolLabelKey" not in out["global"]
    assert CHART_DEFAULTS["global"]["nodePoolLabelKey"] == ""


def test_kai_values_keep_the_reservation_namespace_created():
    # v0.17.0 creates the GPU reservation namespace only while
    # global.resourceReservation.createNamespace (templates/services/
    # resourcereservation-namespace.yaml L5, default true at values.yaml L51): the values must
    # not turn it off, or the namespace labels (Pod Security) land nowhere.
    out = values.kai_values(
        spec=SchedulerSpec(queues=(queue("team", pools=("gpu-spot",)),)),
        system_node_selector={},
        system_tolerations=[],
        pool_label_key=POOL_LABEL,
        system_namespace_labels={"a": "b"},
    )
    assert out["global"]["resourceReservation"] == {"namespaceLabels": {"a": "b"}}
    assert CHART_DEFAULTS["global"]["resourceReservation"]["createNamespace"] is True


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
