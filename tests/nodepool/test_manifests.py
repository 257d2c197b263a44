"""The NodePool and EC2NodeClass builders, compared with exact expected dicts: a spot GPU pool,
an on-demand GPU pool with its disruption defaults and overrides, and CPU pools.
"""

import pytest
from crd_validation import validate

from eks_gpu_platform.nodepool.manifests import pool_requirements
from eks_gpu_platform.nodepool.parts import LimitsSpec
from eks_gpu_platform.nodepool.spec import NodePoolSpec, default_cpu_pool

from .pools import (
    AL2023,
    AL2023_USER_DATA,
    DISCOVERY,
    DOMAIN_ANNOTATION,
    GPU_RESOURCE,
    GPU_ROOT,
    GPU_TAINT,
    IMDS,
    MANIFESTS,
    ON_DEMAND,
    PREEMPTIBLE_DISRUPTION,
    ROLE,
    STABLE_DISRUPTION,
    node_class_ref,
    pool_manifest,
    req,
    spec,
)

# --- (a) preemptible spot GPU pool -------------------------------------------------------------


def test_spot_gpu_nodepool_exactly():
    assert MANIFESTS["spot/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"annotations": DOMAIN_ANNOTATION, "name": "gpu-spot"},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {
                        "example.com/pool": "gpu-spot",
                        "example.com/preemptible": "true",
                    }
                },
                "spec": {
                    "nodeClassRef": node_class_ref("gpu-spot"),
                    "requirements": [
                        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
                        req("karpenter.k8s.aws/instance-gpu-count", "0", operator="Gt"),
                        req("karpenter.k8s.aws/instance-gpu-name", "l4", "l40s"),
                        req("kubernetes.io/arch", "amd64"),
                        req("kubernetes.io/os", "linux"),
                        req("karpenter.sh/capacity-type", "spot"),
                    ],
                    "expireAfter": "168h",
                    "terminationGracePeriod": "4h",
                    "taints": [GPU_TAINT],
                },
            },
            "disruption": PREEMPTIBLE_DISRUPTION,
            "limits": {GPU_RESOURCE: "8"},
        },
    }


def test_spot_gpu_ec2nodeclass_exactly():
    assert MANIFESTS["spot/EC2NodeClass"]() == {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu-spot"},
        "spec": {
            "role": ROLE,
            "amiSelectorTerms": [{"alias": AL2023}],
            "subnetSelectorTerms": [DISCOVERY],
            "securityGroupSelectorTerms": [DISCOVERY],
            "metadataOptions": IMDS,
            "blockDeviceMappings": [GPU_ROOT],
            "instanceStorePolicy": "RAID0",
            "associatePublicIPAddress": False,
            "userData": AL2023_USER_DATA,
            "tags": {"team": "ml", "eks-gpu-platform/pool": "gpu-spot"},
        },
    }


# --- (b) non-preemptible on-demand GPU pool with defaults --------------------------------------


def test_on_demand_gpu_nodepool_exactly():
    assert MANIFESTS["on-demand/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"annotations": DOMAIN_ANNOTATION, "name": "inference"},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {
                        "example.com/pool": "inference",
                        "example.com/preemptible": "false",
                    }
                },
                "spec": {
                    "nodeClassRef": node_class_ref("inference"),
                    "requirements": [
                        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
                        req("karpenter.k8s.aws/instance-gpu-count", "0", operator="Gt"),
                        req("karpenter.k8s.aws/instance-gpu-name", "l4"),
                        req("kubernetes.io/arch", "amd64"),
                        req("kubernetes.io/os", "linux"),
                        req("karpenter.sh/capacity-type", "on-demand"),
                    ],
                    "expireAfter": "720h",
                    "terminationGracePeriod": "48h",
                    "taints": [GPU_TAINT],
                },
            },
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "5m",
                "budgets": [
                    {"nodes": "1"},
                    {
                        "nodes": "0",
                        "reasons": ["Drifted"],
                        "schedule": "0 8 * * mon-fri",
                        "duration": "10h",
                    },
                ],
            },
            "limits": {GPU_RESOURCE: "4"},
        },
    }


def test_on_demand_gpu_ec2nodeclass_exactly():
    assert MANIFESTS["on-demand/EC2NodeClass"]() == {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "inference"},
        "spec": {
            "role": ROLE,
            "amiSelectorTerms": [{"alias": AL2023}],
            "subnetSelectorTerms": [DISCOVERY],
            "securityGroupSelectorTerms": [DISCOVERY],
            "metadataOptions": IMDS,
            "blockDeviceMappings": [GPU_ROOT],
            "instanceStorePolicy": "RAID0",
            "associatePublicIPAddress": False,
            "userData": AL2023_USER_DATA,
            "tags": {"team": "ml", "eks-gpu-platform/pool": "inference"},
        },
    }


@pytest.mark.parametrize(
    ("overrides", "disruption", "expire", "grace"),
    [
        (
            {"disruption": {"consolidateAfter": "30m", "budgets": [{"nodes": "2"}]}},
            {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "30m",
                "budgets": [{"nodes": "2"}],
            },
            "720h",
            "48h",
        ),
        (
            {"expireAfter": "Never", "terminationGracePeriod": "24h"},
            STABLE_DISRUPTION,
            "Never",
            "24h",
        ),
        (
            {"preemptible": True, "disruption": {"consolidationPolicy": "Balanced"}},
            {**PREEMPTIBLE_DISRUPTION, "consolidationPolicy": "Balanced"},
            "168h",
            "4h",
        ),
        (
            {"disruption": {"budgets": []}},
            {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m", "budgets": []},
            "720h",
            "48h",
        ),
    ],
    ids=["own-budgets", "never-expire", "balanced", "no-budgets"],
)
def test_disruption_overrides(overrides, disruption, expire, grace):
    manifest = pool_manifest({**ON_DEMAND, **overrides}, 4)
    assert manifest["spec"]["disruption"] == disruption
    assert manifest["spec"]["template"]["spec"]["expireAfter"] == expire
    assert manifest["spec"]["template"]["spec"]["terminationGracePeriod"] == grace
    assert validate(manifest) == []


def test_weight_and_cpu_memory_limits():
    manifest = pool_manifest(
        {**ON_DEMAND, "weight": 50, "limits": {"gpus": 8, "cpu": "1000", "memory": "4000Gi"}}, 6
    )
    assert manifest["spec"]["weight"] == 50
    # The nvidia.com/gpu limit is the one the caller computed (queues), not limits.gpus.
    assert manifest["spec"]["limits"] == {"cpu": "1000", "memory": "4000Gi", GPU_RESOURCE: "6"}
    assert validate(manifest) == []


# --- (c) cpu pool ------------------------------------------------------------------------------


def test_cpu_nodepool_exactly():
    assert MANIFESTS["cpu/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"annotations": DOMAIN_ANNOTATION, "name": "general"},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {"example.com/pool": "general", "example.com/preemptible": "true"}
                },
                "spec": {
                    "nodeClassRef": node_class_ref("general"),
                    "requirements": [
                        req("karpenter.k8s.aws/instance-category", "c", "m", "r"),
                        req("karpenter.k8s.aws/instance-generation", "5", operator="Gt"),
                        req("kubernetes.io/arch", "amd64"),
                        req("kubernetes.io/os", "linux"),
                        req("karpenter.sh/capacity-type", "spot", "on-demand"),
                    ],
                    "expireAfter": "168h",
                    "terminationGracePeriod": "4h",
                },
            },
            "disruption": PREEMPTIBLE_DISRUPTION,
            "limits": {"cpu": "64", "memory": "256Gi"},
        },
    }


def test_cpu_ec2nodeclass_exactly():
    assert MANIFESTS["cpu/EC2NodeClass"]() == {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "general"},
        "spec": {
            "role": ROLE,
            "amiSelectorTerms": [{"alias": AL2023}],
            "subnetSelectorTerms": [DISCOVERY],
            "securityGroupSelectorTerms": [DISCOVERY],
            "metadataOptions": IMDS,
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "rootVolume": True,
                    "ebs": {
                        "volumeSize": "100Gi",
                        "volumeType": "gp3",
                        "iops": 3000,
                        "throughput": 125,
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                }
            ],
            "associatePublicIPAddress": False,
            "userData": AL2023_USER_DATA,
            "tags": {"team": "ml", "eks-gpu-platform/pool": "general"},
        },
    }


@pytest.mark.parametrize(
    ("selection", "first"),
    [
        (
            {"instanceFamilies": ["m7i", "c7i"]},
            [req("karpenter.k8s.aws/instance-family", "m7i", "c7i")],
        ),
        (
            {"instanceTypes": ["m7i.large"], "instanceFamilies": ["m7i"]},
            [req("node.kubernetes.io/instance-type", "m7i.large")],
        ),
    ],
    ids=["families", "types-win-over-families"],
)
def test_cpu_requirements_with_a_selection(selection, first):
    s = spec({"name": "c", "kind": "cpu", **selection})
    assert pool_requirements(s) == [
        *first,
        req("kubernetes.io/arch", "amd64"),
        req("kubernetes.io/os", "linux"),
        req("karpenter.sh/capacity-type", "on-demand"),
    ]


def test_default_cpu_pool():
    assert default_cpu_pool() == NodePoolSpec(
        name="general",
        kind="cpu",
        capacity_types=("spot", "on-demand"),
        preemptible=True,
        limits=LimitsSpec(cpu="256", memory="1024Gi"),
    )
    manifest = MANIFESTS["default-cpu/NodePool"]()
    assert manifest["spec"]["limits"] == {"cpu": "256", "memory": "1024Gi"}
    assert "taints" not in manifest["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    ("selection", "arches"),
    [
        ({"instanceFamilies": ["m7g"]}, ["arm64"]),
        ({"instanceFamilies": ["m7g", "m7i"]}, ["amd64", "arm64"]),
        ({"instanceTypes": ["c7gn.large"]}, ["arm64"]),
        ({}, ["amd64"]),
    ],
    ids=["graviton", "mixed", "graviton-type", "default"],
)
def test_cpu_pool_architecture_follows_its_families(selection, arches):
    s = spec({"name": "arm", "kind": "cpu", **selection})
    arch = next(r for r in pool_requirements(s) if r["key"] == "kubernetes.io/arch")
    assert arch["values"] == arches
