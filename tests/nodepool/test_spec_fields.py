"""Validation of single pool settings, each with its exact message: GPU types in a cpu pool,
taint and label syntax, capacity reservation tags, gp3 ratios; an EFA pool's types.
"""

import pytest

from eks_gpu_platform.spec import SpecError

from .pools import ON_DEMAND, RESERVED, spec


@pytest.mark.parametrize("itype", ["g6.xlarge", "p5.48xlarge"])
def test_cpu_pool_rejects_gpu_instance_types(itype):
    with pytest.raises(SpecError) as err:
        spec({"name": "c", "kind": "cpu", "instanceTypes": [itype]})
    assert str(err.value) == (
        f"nodePools[0].instanceTypes[0]: '{itype}' has GPUs; GPU capacity belongs in a gpu pool"
    )


@pytest.mark.parametrize(
    ("taint", "message"),
    [
        (
            {"key": "bad key!", "value": "x"},
            "nodePools[0].taints[0].key: 'bad key!' is not a valid taint key: the name 'bad "
            "key!' must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a "
            "letter or digit",
        ),
        (
            {"key": "example.com/x", "value": "two words"},
            "nodePools[0].taints[0].value: 'two words' is not a label value; expected at most 63 "
            "letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
        ),
    ],
    ids=["key", "value"],
)
def test_taint_syntax_is_validated(taint, message):
    with pytest.raises(SpecError) as err:
        spec({**ON_DEMAND, "taints": [taint]})
    assert str(err.value) == message


@pytest.mark.parametrize("value", ["two words", "-leading-dash", "trailing."])
def test_label_value_syntax_is_validated(value):
    with pytest.raises(SpecError) as err:
        spec({**ON_DEMAND, "labels": {"example.org/team": value}})
    assert str(err.value) == (
        f"nodePools[0].labels: the value {value!r} of 'example.org/team' is not a label value; "
        "expected at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter "
        "or digit"
    )


def test_capacity_reservation_empty_tag_value_is_rejected():
    with pytest.raises(SpecError) as err:
        spec({**RESERVED, "capacityReservations": [{"tags": {"purpose": ""}}]})
    assert str(err.value) == (
        "nodePools[0].capacityReservations[0].tags: 'purpose': '' has an empty key or value; "
        "EC2NodeClass selector tags must both be set"
    )


@pytest.mark.parametrize(
    ("pool", "root_volume", "message"),
    [
        # An instance-store pool's default 3,000 IOPS cannot carry 1,000 MiB/s.
        (
            ON_DEMAND,
            {"throughput": 1000},
            "nodePools[0].rootVolume: 1000 MiB/s with 3000 IOPS exceeds gp3's 0.25 MiB/s per "
            "IOPS; raise iops to at least 4000 or lower throughput",
        ),
        # A pool without instance store defaults to 1,000 MiB/s: lowering iops alone breaks it.
        (
            {"name": "a", "gpus": ["t4g"]},
            {"iops": 3000},
            "nodePools[0].rootVolume: 1000 MiB/s with 3000 IOPS exceeds gp3's 0.25 MiB/s per "
            "IOPS; raise iops to at least 4000 or lower throughput",
        ),
    ],
    ids=["throughput-on-baseline", "low-iops-without-instance-store"],
)
def test_root_volume_defaults_stay_within_gp3_limits(pool, root_volume, message):
    with pytest.raises(SpecError) as err:
        spec({**pool, "rootVolume": root_volume})
    assert str(err.value) == message


def test_efa_pool_keeps_only_efa_capable_types():
    s = spec({"name": "t", "kind": "efa", "gpus": ["h100"], "zone": "us-east-1a"})
    assert s.efa_types == ("p5.4xlarge", "p5.48xlarge")
