"""``values._yaml`` writes the device-plugin and mig-parted documents with PyYAML's libyaml
emitter (where PyYAML has it): every document it is given is the same text as the pure-Python
``yaml.safe_dump`` writes (PyYAML's reference emitter is the oracle), so the Helm values and
renders stay byte-identical."""

import pytest
import yaml

from eks_gpu_platform.gpu_operator import values
from eks_gpu_platform.gpu_operator.mig import mig_parted_config
from eks_gpu_platform.gpu_operator.spec import (
    MAX_TIME_SLICING_REPLICAS,
    MIG_STRATEGIES,
    MIN_TIME_SLICING_REPLICAS,
)


def _reference(data: dict) -> str:
    return yaml.dump(data, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False)


def test_libyaml_emitter():
    assert yaml.__with_libyaml__  # the locked PyYAML wheels are built with libyaml
    assert values._DUMPER is yaml.CSafeDumper


def test_mig_parted_config_text_as_pure_python_emitter():
    text = values._yaml(mig_parted_config())
    assert text == _reference(mig_parted_config())
    assert text.startswith("version: v1\nmig-configs:\n  all-disabled:\n  - devices: all\n")


@pytest.mark.parametrize("strategy", MIG_STRATEGIES)
def test_no_sharing_config_text(strategy):
    data = values.no_sharing_config(strategy)
    assert values._yaml(data) == _reference(data)
    assert values._yaml(data) == f"version: v1\nflags:\n  migStrategy: {strategy}\n"


def test_time_slicing_config_text_every_replica_count():
    for replicas in range(MIN_TIME_SLICING_REPLICAS, MAX_TIME_SLICING_REPLICAS + 1):
        data = values.time_slicing_config(replicas)
        assert values._yaml(data) == _reference(data), replicas
        assert values._yaml(data) == (
            "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: false\n"
            f"    resources:\n    - name: nvidia.com/gpu\n      replicas: {replicas}\n"
        )
