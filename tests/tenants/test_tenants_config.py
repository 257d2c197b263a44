"""``scheduler.queues[].tenants`` (issue 29, point 5): every bad value with an exact message
naming the queue and the value, all at once; who gets which namespaces; the principals a
pre-flight must look up. Expected values are written out here, never read from the code."""

from __future__ import annotations

from typing import Any

import pytest

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.spec import SpecError
from eks_gpu_platform.tenants import TenantBinding, tenant_bindings, tenant_principal_keys

REGION = "us-west-2"
FORM = (
    "is not an IAM role or user; expected an ARN such as "
    "'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME' / 'user/NAME'"
)


def res(quota: Any = 4, limit: Any = 8) -> dict[str, Any]:
    return {"quota": quota, "limit": limit, "overQuotaWeight": 1}


def queue(name: str, pools: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "nodePools": pools,
        "gpu": extra.pop("gpu", res()),
        "cpu": res(16, 16),
        "memory": res(64, 64),
        **extra,
    }


def values(queues: list[dict], **cluster: Any) -> dict[str, Any]:
    return {
        "cluster": {"name": "gpu-dev", **cluster},
        "nodePools": [{"name": "gpu", "kind": "gpu", "gpus": ["l4"], "preemptible": True}],
        "scheduler": {"queues": queues},
    }


def errors(config: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(config, REGION)
    return err.value.lines


def test_bad_tenants_are_reported_together_naming_queue_and_value():
    lines = errors(
        values(
            [
                queue("org", [], gpu=res(-1, -1)),
                queue("a", ["gpu"], parent="org", tenants=["rol/alice", "role/Bob", "role/x/bob"]),
                queue("b", ["gpu"], parent="org", tenants=["role/team/Alice2", "user/"]),
            ]
        )
    )
    assert lines == [
        f"scheduler.queues[1](a).tenants[0]: 'rol/alice' {FORM}",
        "scheduler.queues[1](a).tenants[2]: 'role/x/bob' names the same IAM principal as "
        "tenants[1] 'role/Bob'; list it once",
        f"scheduler.queues[2](b).tenants[1]: 'user/' {FORM}",
    ]


def test_tenants_of_a_parent_queue_are_refused():
    lines = errors(
        values(
            [
                queue("org", [], gpu=res(-1, -1), tenants=["role/Lead"]),
                queue("a", ["gpu"], parent="org"),
            ]
        )
    )
    assert lines == [
        "scheduler.queues[0](org).tenants: is set, but 'org' is a parent queue; only leaf queues "
        "take workloads and have a namespace to grant",
    ]


def test_a_newline_in_a_tenant_stays_on_its_line():
    lines = errors(values([queue("a", ["gpu"], tenants=["role/x\nscheduler.queues: ok"])]))
    assert lines == [f"scheduler.queues[0](a).tenants[0]: 'role/x\\nscheduler.queues: ok' {FORM}"]


def test_one_principal_written_two_ways_in_two_queues_is_refused():
    lines = errors(
        values(
            [
                queue("a", ["gpu"], tenants=["role/ml/Alice"]),
                queue("b", ["gpu"], tenants=["role/alice"]),
            ]
        )
    )
    assert lines == [
        "scheduler.queues[1](b).tenants[0]: 'role/alice' names the same IAM principal as "
        "queues[0].tenants[0] 'role/ml/Alice', written differently; a principal has one access "
        "entry, so write it the same way in every queue",
    ]


@pytest.mark.parametrize(
    ("cluster", "tenant", "where"),
    [
        ({"admins": ["role/PlatformAdmin"]}, "role/PlatformAdmin", "cluster.admins"),
        (
            {"admins": ["role/PlatformAdmin"], "viewers": ["role/Preview"]},
            "arn:aws:iam::111122223333:role/Preview",
            "cluster.viewers",
        ),
        (
            {"admins": ["role/PlatformAdmin"], "breakGlassRole": "role/BreakGlass"},
            "role/path/breakglass",
            "cluster.breakGlassRole",
        ),
    ],
)
def test_a_tenant_that_already_has_an_entry_is_refused(cluster, tenant, where):
    lines = errors(values([queue("a", ["gpu"], tenants=[tenant])], **cluster))
    assert lines == [
        f"scheduler.queues[0](a).tenants[0]: '{tenant}' is also in {where}, whose access entry "
        "already reaches every namespace; a principal has one access entry, so list it in one "
        "of the two",
    ]


def test_a_tenant_in_another_partition_is_refused():
    lines = errors(values([queue("a", ["gpu"], tenants=["arn:aws-cn:iam::111122223333:user/x"])]))
    assert lines == [
        "scheduler.queues[0](a).tenants[0]: 'arn:aws-cn:iam::111122223333:user/x' is in "
        "partition 'aws-cn', but region us-west-2 is in 'aws'",
    ]


def loaded(queues: list[dict]) -> PlatformConfig:
    return PlatformConfig.load(values(queues), REGION)


def test_a_principal_in_two_queues_is_one_binding_with_both_namespaces():
    config = loaded(
        [
            queue("org", [], gpu=res(-1, -1)),
            queue("a", ["gpu"], parent="org", tenants=["role/Alice", "user/bob"]),
            queue("b", ["gpu"], parent="org", namespace="team-b", tenants=["role/Alice"]),
        ]
    )
    assert tenant_bindings(config.scheduler.queues) == [
        TenantBinding("role/Alice", ("a", "b"), ("a", "team-b")),
        TenantBinding("user/bob", ("a",), ("a",)),
    ]
    assert tenant_bindings(config.scheduler.queues)[0].association_scope() == {
        "type": "namespace",
        "namespaces": ["a", "team-b"],
    }
    # Each principal once, at the key it was first written at (the pre-flight's lookups).
    assert tenant_principal_keys(config) == [
        ("scheduler.queues[1](a).tenants[0]", "role/Alice"),
        ("scheduler.queues[1](a).tenants[1]", "user/bob"),
    ]


def test_no_tenants_no_principals():
    assert tenant_principal_keys(loaded([queue("a", ["gpu"])])) == []
