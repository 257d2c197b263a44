"""The tenants' access entries and the queue namespaces' GPU quotas (issue 29, point 5), as the
program registers them: exact manifests and inputs, written out here.

- ``AmazonEKSEditPolicy`` namespace-scoped (https://docs.aws.amazon.com/eks/latest/userguide/
  access-policies.html; AccessScope API: https://docs.aws.amazon.com/eks/latest/APIReference/
  API_AccessScope.html); one entry per principal (CreateAccessEntry's ResourceInUseException).
- Quotas in ``requests.<extended resource>`` only (https://kubernetes.io/docs/concepts/policy/
  resource-quotas/, "Resource quota for extended resources"), in KAI's units: 1 per
  ``nvidia.com/gpu``, g per ``nvidia.com/mig-<g>g.*`` (kai-scheduler v0.16.8
  ``pkg/scheduler/api/common_info/resources/mig.go`` L13-15).
"""

from __future__ import annotations

import copy
from typing import Any

from render_cache import shared_render
from stack_files import REPO, fixture_stack

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.stackfile import StackFile
from eks_gpu_platform.platform import stack_config_values
from eks_gpu_platform.tenants import resource_quota_manifests

ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
QUOTA = "kubernetes:core/v1:ResourceQuota"
PROVIDER = "pulumi:providers:kubernetes"


def quota(namespace: str, hard: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "gpu-budget", "namespace": namespace},
        "spec": {"hard": hard},
    }


def fixture_config(name: str) -> PlatformConfig:
    stack = fixture_stack(name)
    return PlatformConfig.load(stack_config_values(stack.config), stack.region)


def test_dev_quotas_cap_each_leaf_queue_at_its_limit():
    # research-batch: limit 8 (parent research 12); research-serving 4; research-notebooks 2
    # time-slices of the notebooks pool (KAI charges one nvidia.com/gpu per slice).
    assert resource_quota_manifests(fixture_config("dev")) == [
        quota("research-batch", {"requests.nvidia.com/gpu": "8"}),
        quota("research-serving", {"requests.nvidia.com/gpu": "4"}),
        quota("research-notebooks", {"requests.nvidia.com/gpu": "2"}),
    ]


def test_prod_quotas_cap_each_leaf_queue_at_its_limit():
    # ml is unlimited (-1); its children's own limits apply.
    assert resource_quota_manifests(fixture_config("prod")) == [
        quota("llm-training", {"requests.nvidia.com/gpu": "64"}),
        quota("research", {"requests.nvidia.com/gpu": "32"}),
        quota("serving", {"requests.nvidia.com/gpu": "16"}),
    ]


def res(quota_: float, limit: float) -> dict[str, Any]:
    return {"quota": quota_, "limit": limit, "overQuotaWeight": 1}


def mig_config(queues: list[dict], **pool: Any) -> PlatformConfig:
    values = {
        "cluster": {"name": "gpu-mig"},
        "nodePools": [
            {
                "name": "mig",
                "kind": "gpu",
                "instanceTypes": ["p4d.24xlarge"],
                "migProfile": "all-balanced",
                "preemptible": True,
                **pool,
            }
        ],
        "gpuOperator": {"migStrategy": "mixed"},
        "scheduler": {"queues": queues},
    }
    return PlatformConfig.load(values, "us-east-1")


def leaf(name: str, gpu: dict, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "nodePools": ["mig"],
        "gpu": gpu,
        # Unbounded: a queue's CPU and memory must hold one node (budget.resources).
        "cpu": res(-1, -1),
        "memory": res(-1, -1),
        **extra,
    }


def test_mig_mixed_devices_are_capped_in_kai_units_and_the_ancestor_limit_wins():
    # all-balanced on an A100 40GB: 1g.5gb x2, 2g.10gb x1, 3g.20gb x1 per GPU. Limit 8 (the
    # parent's 7.5 is smaller: 7 whole units): 7 of 1g, 3 of 2g, 2 of 3g.
    config = mig_config(
        [
            {"name": "org", "gpu": res(4, 7.5), "cpu": res(-1, -1), "memory": res(-1, -1)},
            leaf("team", res(2, 8), parent="org"),
        ]
    )
    assert resource_quota_manifests(config) == [
        quota(
            "team",
            {
                "requests.nvidia.com/gpu": "7",
                "requests.nvidia.com/mig-1g.5gb": "7",
                "requests.nvidia.com/mig-2g.10gb": "3",
                "requests.nvidia.com/mig-3g.20gb": "2",
            },
        )
    ]


def test_an_unlimited_queue_gets_no_quota():
    config = mig_config([leaf("team", res(4, -1))], limits={"gpus": 16})
    assert resource_quota_manifests(config) == []


TENANTS = {
    "research-batch": ["role/Alice", "user/bob"],
    "research-notebooks": ["role/Alice"],
}


def dev_with_tenants() -> Any:
    stack = fixture_stack("dev")
    config = copy.deepcopy(stack.config)
    for q in config["eks-gpu-platform:scheduler"]["queues"]:
        if q["name"] in TENANTS:
            q["tenants"] = TENANTS[q["name"]]
    return shared_render(REPO, StackFile("dev", stack.project, config, list(stack.secret_keys)))


def test_each_tenant_gets_one_entry_and_one_namespace_scoped_edit_association():
    rec = dev_with_tenants()
    entries = {r.name: r for r in rec.of_type(ENTRY) if "-tenants-" in r.name}
    assert {n: (r.inputs["principalArn"], r.inputs["type"]) for n, r in entries.items()} == {
        "platform-tenants-role-Alice": ("arn:aws:iam::123456789012:role/Alice", "STANDARD"),
        "platform-tenants-user-bob": ("arn:aws:iam::123456789012:user/bob", "STANDARD"),
    }
    assert all(r.inputs["tags"]["eks-gpu-platform/cluster"] == "gpu-dev" for r in entries.values())
    associations = {r.name: r for r in rec.of_type(ASSOCIATION) if "-tenants-" in r.name}
    assert {
        n: (r.inputs["policyArn"], r.inputs["accessScope"]) for n, r in associations.items()
    } == {
        "platform-tenants-role-Alice-edit": (
            "arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy",
            {"type": "namespace", "namespaces": ["research-batch", "research-notebooks"]},
        ),
        "platform-tenants-user-bob-edit": (
            "arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy",
            {"type": "namespace", "namespaces": ["research-batch"]},
        ),
    }
    # Each association is a child of its entry (deleted before it).
    assert {r.parent for r in associations.values()} == {r.urn for r in entries.values()}


def test_entries_wait_for_their_quotas_and_namespaces_and_the_provider_waits_for_no_tenant():
    rec = dev_with_tenants()
    by_urn = {r.urn: r for r in rec.resources}
    alice = rec.named("platform-tenants-role-Alice")
    after = sorted((by_urn[u].type, by_urn[u].name) for u in alice.dependencies if u in by_urn)
    assert after == [
        ("eks:index:Cluster", "platform-cluster-eks"),
        ("kubernetes:core/v1:Namespace", "platform-scheduler-queue-namespace-research-batch"),
        ("kubernetes:core/v1:Namespace", "platform-scheduler-queue-namespace-research-notebooks"),
        (QUOTA, "platform-tenants-quota-research-batch"),
        (QUOTA, "platform-tenants-quota-research-notebooks"),
    ]
    tenant_urns = {r.urn for r in rec.resources if "-tenants-" in r.name}
    for provider in rec.of_type(PROVIDER):
        assert not tenant_urns & set(provider.dependencies)
    quota_ns = rec.named("platform-tenants-quota-research-batch")
    assert [by_urn[u].name for u in quota_ns.dependencies] == [
        "platform-scheduler-queue-namespace-research-batch"
    ]
    assert quota_ns.inputs["spec"] == {"hard": {"requests.nvidia.com/gpu": "8"}}
