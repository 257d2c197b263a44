"""The EFA builders: one NodePool and EC2NodeClass per EFA layout (here one type), the
NodeOverlay, the Bottlerocket variants, hugepages user data and instance-type slugs (the split of
the GPU limit: tests/budget/test_nodepools.py).
"""

import re

import pytest
from crd_validation import validate

from eks_gpu_platform import catalog
from eks_gpu_platform.nodepool.manifests import hugepages_user_data, type_slug

from .pools import (
    AL2023,
    AL2023_EFA_USER_DATA,
    AL2023_HUGEPAGES,
    BOTTLEROCKET,
    BOTTLEROCKET_EFA_USER_DATA,
    BOTTLEROCKET_HUGEPAGES,
    BOTTLEROCKET_USER_DATA,
    DISCOVERY,
    DOMAIN_ANNOTATION,
    EFA_SG,
    EFA_TAINT,
    GPU_RESOURCE,
    GPU_ROOT,
    GPU_TAINT,
    IMDS,
    MANIFESTS,
    ON_DEMAND,
    PLACEMENT_GROUP,
    ROLE,
    STABLE_DISRUPTION,
    class_manifest,
    efa_interfaces,
    node_class_ref,
    req,
)

# --- (d) one EFA type of an EFA pool -----------------------------------------------------------


def test_efa_nodepool_for_one_type_exactly():
    assert MANIFESTS["efa-p5/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"annotations": DOMAIN_ANNOTATION, "name": "train-p5-48xlarge"},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {
                        "example.com/pool": "train",
                        "example.com/preemptible": "false",
                        "example.com/efa": "true",
                    }
                },
                "spec": {
                    "nodeClassRef": node_class_ref("train-p5-48xlarge"),
                    "requirements": [
                        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
                        req("node.kubernetes.io/instance-type", "p5.48xlarge"),
                        req("kubernetes.io/arch", "amd64"),
                        req("kubernetes.io/os", "linux"),
                        req("karpenter.sh/capacity-type", "on-demand"),
                        req("topology.kubernetes.io/zone", "us-east-1a"),
                    ],
                    "expireAfter": "720h",
                    "terminationGracePeriod": "48h",
                    "taints": [GPU_TAINT, EFA_TAINT],
                },
            },
            "disruption": STABLE_DISRUPTION,
            "limits": {GPU_RESOURCE: "32"},
        },
    }


def test_efa_ec2nodeclass_for_p5_exactly():
    assert MANIFESTS["efa-p5/EC2NodeClass"]() == {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "train-p5-48xlarge"},
        "spec": {
            "role": ROLE,
            "amiSelectorTerms": [{"alias": AL2023}],
            "subnetSelectorTerms": [DISCOVERY],
            "securityGroupSelectorTerms": [DISCOVERY, {"id": EFA_SG}],
            "metadataOptions": IMDS,
            "blockDeviceMappings": [GPU_ROOT],
            "instanceStorePolicy": "RAID0",
            "networkInterfaces": efa_interfaces(range(32)),
            "associatePublicIPAddress": False,
            "userData": AL2023_EFA_USER_DATA,
            "placementGroupSelector": {"name": PLACEMENT_GROUP},
            "tags": {"team": "ml", "eks-gpu-platform/pool": "train"},
        },
    }


def test_p5_layout_has_33_interfaces_and_32_efa_only():
    interfaces = MANIFESTS["efa-p5/EC2NodeClass"]()["spec"]["networkInterfaces"]
    assert len(interfaces) == 33
    assert sum(i["interfaceType"] == "efa-only" for i in interfaces) == 32
    assert interfaces == catalog.efa_network_interfaces("p5.48xlarge")


def test_nodeoverlay_exactly():
    assert MANIFESTS["efa/NodeOverlay"]() == {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "train-hugepages"},
        "spec": {
            "requirements": [
                req("example.com/pool", "train"),
                req("node.kubernetes.io/instance-type", "p5.48xlarge", "p5e.48xlarge"),
            ],
            "capacity": {"hugepages-2Mi": "5120Mi"},
        },
    }


# --- (e) Bottlerocket --------------------------------------------------------------------------


def test_bottlerocket_efa_ec2nodeclass_exactly():
    assert MANIFESTS["bottlerocket/EC2NodeClass"]() == {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "train-br-p5en-48xlarge"},
        "spec": {
            "role": ROLE,
            "amiSelectorTerms": [{"alias": BOTTLEROCKET}],
            "subnetSelectorTerms": [DISCOVERY],
            "securityGroupSelectorTerms": [DISCOVERY, {"id": EFA_SG}],
            "metadataOptions": IMDS,
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "ebs": {
                        "volumeSize": "4Gi",
                        "volumeType": "gp3",
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                },
                {
                    "deviceName": "/dev/xvdb",
                    "rootVolume": True,
                    "ebs": {
                        "volumeSize": "1000Gi",
                        "volumeType": "gp3",
                        "iops": 3000,
                        "throughput": 125,
                        "encrypted": True,
                        "deleteOnTermination": True,
                        "kmsKeyID": (
                            "arn:aws:kms:us-east-1:123456789012:key/"
                            "0f0e0d0c-0b0a-0908-0706-050403020100"
                        ),
                    },
                },
            ],
            "instanceStorePolicy": "RAID0",
            "networkInterfaces": efa_interfaces(range(16)),
            "associatePublicIPAddress": False,
            "userData": BOTTLEROCKET_EFA_USER_DATA,
            "placementGroupSelector": {"name": PLACEMENT_GROUP},
            "tags": {"team": "ml", "eks-gpu-platform/pool": "train-br"},
        },
    }


def test_bottlerocket_efa_nodepool_exactly():
    assert MANIFESTS["bottlerocket/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"annotations": DOMAIN_ANNOTATION, "name": "train-br-p5en-48xlarge"},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {
                        "example.com/pool": "train-br",
                        "example.com/preemptible": "false",
                        "example.com/efa": "true",
                        # Bottlerocket runs its own device plugin: no GPU Operator operands.
                        "nvidia.com/gpu.deploy.operands": "false",
                    }
                },
                "spec": {
                    "nodeClassRef": node_class_ref("train-br-p5en-48xlarge"),
                    "requirements": [
                        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
                        req("node.kubernetes.io/instance-type", "p5en.48xlarge"),
                        req("kubernetes.io/arch", "amd64"),
                        req("kubernetes.io/os", "linux"),
                        req("karpenter.sh/capacity-type", "on-demand"),
                        req("topology.kubernetes.io/zone", "us-east-1a"),
                    ],
                    "expireAfter": "720h",
                    "terminationGracePeriod": "48h",
                    "taints": [GPU_TAINT, EFA_TAINT],
                },
            },
            "disruption": STABLE_DISRUPTION,
            "limits": {GPU_RESOURCE: "8"},
        },
    }


def test_bottlerocket_gpu_pool_without_efa_has_only_the_pull_settings():
    manifest = class_manifest(
        {**ON_DEMAND, "ami": {"family": "bottlerocket", "version": "v1.60.1"}}
    )
    assert manifest["spec"]["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.60.1"}]
    assert manifest["spec"]["userData"] == BOTTLEROCKET_USER_DATA
    assert [b["deviceName"] for b in manifest["spec"]["blockDeviceMappings"]] == [
        "/dev/xvda",
        "/dev/xvdb",
    ]
    assert validate(manifest) == []


# --- pure helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "quantity", "text"),
    [
        ("al2023", "5120Mi", AL2023_HUGEPAGES),
        ("bottlerocket", "5120Mi", BOTTLEROCKET_HUGEPAGES),
        ("bottlerocket", "1Gi", '[settings.kernel.sysctl]\n"vm.nr_hugepages" = "512"\n'),
    ],
    ids=["al2023", "bottlerocket", "bottlerocket-1Gi"],
)
def test_hugepages_user_data_exactly(family, quantity, text):
    assert hugepages_user_data(family, quantity) == text


def test_hugepages_user_data_needs_a_binary_quantity():
    with pytest.raises(ValueError, match=re.escape("not a binary quantity: '5G'")):
        hugepages_user_data("al2023", "5G")


def types(*names: str) -> list[catalog.InstanceType]:
    return [catalog.INSTANCE_TYPES[n] for n in names]


@pytest.mark.parametrize(
    ("itype", "slug"),
    [
        ("p5.48xlarge", "p5-48xlarge"),
        ("p6-b200.48xlarge", "p6-b200-48xlarge"),
        ("g6e.xlarge", "g6e-xlarge"),
    ],
)
def test_type_slug(itype, slug):
    assert type_slug(itype) == slug
