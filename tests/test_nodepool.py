"""Tests for ``eks_gpu_platform.nodepool``: pure builders, spec validation, and the component.

Three layers (STYLE.md): the builders compared with exact expected dicts (every manifest built
here also passes the upstream Karpenter v1.14.1 CRDs, schema and CEL); a table of bad pool specs
loaded as configuration, each with its exact message; the ``NodePool`` component under the
recording mocks (children, names, parents, dependencies, provider).
"""

import copy
import re
from collections.abc import Callable

import pulumi
import pulumi_kubernetes as k8s
import pytest
from crd_validation import validate

from eks_gpu_platform import catalog
from eks_gpu_platform import nodepool as np
from eks_gpu_platform.spec import SpecError, load_value

DOMAIN = "example.com"
CLUSTER = "gpu-test"
ROLE = "KarpenterNodeRole-gpu-test"
TAGS = {"team": "ml"}
EFA_SG = "sg-0123456789abcdef0"
PLACEMENT_GROUP = "gpu-test-train"
KEY = "nodePools[0]"

# The same value the builders take from versions.py, written out so that a bump shows up here.
AL2023 = "al2023@v20260903"
BOTTLEROCKET = "bottlerocket@v1.65.0"


def spec(raw: dict) -> np.NodePoolSpec:
    """A pool spec loaded the way the stack configuration loads it."""
    return load_value(np.NodePoolSpec, raw, KEY)


# --- shared expected pieces --------------------------------------------------------------------

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
EFA_TAINT = {"key": "vpc.amazonaws.com/efa", "value": "true", "effect": "NoSchedule"}
DISCOVERY = {"tags": {"karpenter.sh/discovery": CLUSTER}}
IMDS = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}
GPU_ROOT = {
    "deviceName": "/dev/xvda",
    "rootVolume": True,
    "ebs": {
        "volumeSize": "500Gi",
        "volumeType": "gp3",
        "iops": 16000,
        "throughput": 1000,
        "encrypted": True,
        "deleteOnTermination": True,
    },
}
STABLE_DISRUPTION = {
    "consolidationPolicy": "WhenEmpty",
    "consolidateAfter": "5m",
    "budgets": [
        {"nodes": "1"},
        {"nodes": "0", "reasons": ["Drifted"], "schedule": "0 8 * * mon-fri", "duration": "10h"},
    ],
}
PREEMPTIBLE_DISRUPTION = {
    "consolidationPolicy": "WhenEmptyOrUnderutilized",
    "consolidateAfter": "5m",
    "budgets": [{"nodes": "10%"}],
}
GPU_RESOURCE = "nvidia.com/gpu"


def req(key: str, *values: str, operator: str = "In") -> dict:
    return {"key": key, "operator": operator, "values": list(values)}


def node_class_ref(name: str) -> dict:
    return {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name}


def efa_interfaces(cards: range) -> list[dict]:
    """ENA at card 0 / device 0, then one efa-only at device 1 on each card."""
    return [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}] + [
        {"networkCardIndex": c, "deviceIndex": 1, "interfaceType": "efa-only"} for c in cards
    ]


AL2023_HUGEPAGES = (
    "MIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="//"\n'
    "\n"
    "--//\n"
    'Content-Type: text/x-shellscript; charset="us-ascii"\n'
    "\n"
    "#!/bin/bash\n"
    "set -euo pipefail\n"
    "# Reserve 2 MiB hugepages for EFA (libfabric/NCCL) before the kubelet starts.\n"
    'echo "vm.nr_hugepages = 2560" > /etc/sysctl.d/90-efa-hugepages.conf\n'
    "sysctl -p /etc/sysctl.d/90-efa-hugepages.conf\n"
    "--//--\n"
)
BOTTLEROCKET_HUGEPAGES = '[settings.kernel.sysctl]\n"vm.nr_hugepages" = "2560"\n'


# --- the pools under test ----------------------------------------------------------------------

SPOT = {"name": "gpu-spot", "gpus": ["l4", "l40s"], "capacityTypes": ["spot"], "preemptible": True}
ON_DEMAND = {"name": "inference", "gpus": ["l4"]}
CPU = {
    "name": "general",
    "kind": "cpu",
    "capacityTypes": ["spot", "on-demand"],
    "preemptible": True,
    "limits": {"cpu": "64", "memory": "256Gi"},
}
EFA = {
    "name": "train",
    "kind": "efa",
    "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"],
    "zone": "us-east-1a",
    "limits": {"gpus": 64},
}
BOTTLEROCKET_EFA = {
    "name": "train-br",
    "kind": "efa",
    "instanceTypes": ["p5en.48xlarge"],
    "zone": "us-east-1a",
    "ami": {"family": "bottlerocket"},
    "rootVolume": {
        "sizeGib": 1000,
        "kmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/0f0e0d0c-0b0a-0908-0706-050403020100",
    },
}
RESERVED = {
    "name": "reserved",
    "gpus": ["h100"],
    "capacityTypes": ["reserved", "on-demand"],
    "capacityReservations": [
        {"id": "cr-0123456789abcdef0"},
        {"tags": {"purpose": "training"}, "ownerId": "111122223333"},
    ],
}
MIG = {
    "name": "mig",
    "gpus": ["h100"],
    "migProfile": "all-1g.10gb",
    "labels": {"example.org/team": "research"},
    "kubelet": {
        "maxPods": 110,
        "systemReserved": {"cpu": "500m", "memory": "1Gi"},
        "kubeReserved": {"cpu": "200m", "ephemeral-storage": "10Gi"},
    },
}
TIME_SLICED = {"name": "notebooks", "gpus": ["l4"], "timeSlicing": "shared-4"}


def pool_manifest(raw: dict, gpu_limit: int | None, instance_type: str | None = None) -> dict:
    s = spec(raw)
    name = s.name if instance_type is None else f"{s.name}-{np.type_slug(instance_type)}"
    return np.nodepool_manifest(
        s,
        name=name,
        node_class=name,
        label_domain=DOMAIN,
        gpu_limit=gpu_limit,
        instance_type=instance_type,
    )


def class_manifest(raw: dict, instance_type: str | None = None) -> dict:
    s = spec(raw)
    name = s.name if instance_type is None else f"{s.name}-{np.type_slug(instance_type)}"
    efa = instance_type is not None
    return np.ec2nodeclass_manifest(
        s,
        name=name,
        cluster_name=CLUSTER,
        node_role=ROLE,
        tags=TAGS,
        extra_security_group_ids=[EFA_SG] if efa else [],
        placement_group=PLACEMENT_GROUP if efa else None,
        instance_type=instance_type,
    )


# Every manifest these tests build, by id: each is compared exactly below and validated against
# the CRDs by ``test_every_built_manifest_passes_the_crds``.
MANIFESTS: dict[str, Callable[[], dict]] = {
    "spot/NodePool": lambda: pool_manifest(SPOT, 8),
    "spot/EC2NodeClass": lambda: class_manifest(SPOT),
    "on-demand/NodePool": lambda: pool_manifest(ON_DEMAND, 4),
    "on-demand/EC2NodeClass": lambda: class_manifest(ON_DEMAND),
    "cpu/NodePool": lambda: pool_manifest(CPU, None),
    "cpu/EC2NodeClass": lambda: class_manifest(CPU),
    "efa-p5/NodePool": lambda: pool_manifest(EFA, 32, "p5.48xlarge"),
    "efa-p5/EC2NodeClass": lambda: class_manifest(EFA, "p5.48xlarge"),
    "efa-p5e/NodePool": lambda: pool_manifest(EFA, 32, "p5e.48xlarge"),
    "efa-p5e/EC2NodeClass": lambda: class_manifest(EFA, "p5e.48xlarge"),
    "efa/NodeOverlay": lambda: np.nodeoverlay_manifest(spec(EFA), label_domain=DOMAIN),
    "bottlerocket/NodePool": lambda: pool_manifest(BOTTLEROCKET_EFA, 8, "p5en.48xlarge"),
    "bottlerocket/EC2NodeClass": lambda: class_manifest(BOTTLEROCKET_EFA, "p5en.48xlarge"),
    "bottlerocket/NodeOverlay": lambda: np.nodeoverlay_manifest(
        spec(BOTTLEROCKET_EFA), label_domain=DOMAIN
    ),
    "reserved/NodePool": lambda: pool_manifest(RESERVED, 16),
    "reserved/EC2NodeClass": lambda: class_manifest(RESERVED),
    "mig/NodePool": lambda: pool_manifest(MIG, 8),
    "mig/EC2NodeClass": lambda: class_manifest(MIG),
    "time-sliced/NodePool": lambda: pool_manifest(TIME_SLICED, 2),
    "default-cpu/NodePool": lambda: np.nodepool_manifest(
        np.default_cpu_pool(),
        name="general",
        node_class="general",
        label_domain=DOMAIN,
        gpu_limit=None,
    ),
    "default-cpu/EC2NodeClass": lambda: np.ec2nodeclass_manifest(
        np.default_cpu_pool(), name="general", cluster_name=CLUSTER, node_role=ROLE, tags={}
    ),
}


# --- (a) preemptible spot GPU pool -------------------------------------------------------------


def test_spot_gpu_nodepool_exactly():
    assert MANIFESTS["spot/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu-spot"},
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
            "tags": {"team": "ml", "eks-gpu-platform/pool": "gpu-spot"},
        },
    }


# --- (b) non-preemptible on-demand GPU pool with defaults --------------------------------------


def test_on_demand_gpu_nodepool_exactly():
    assert MANIFESTS["on-demand/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "inference"},
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
        "metadata": {"name": "general"},
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
    assert np.pool_requirements(s) == [
        *first,
        req("kubernetes.io/arch", "amd64"),
        req("kubernetes.io/os", "linux"),
        req("karpenter.sh/capacity-type", "on-demand"),
    ]


def test_default_cpu_pool():
    assert np.default_cpu_pool() == np.NodePoolSpec(
        name="general",
        kind="cpu",
        capacity_types=("spot", "on-demand"),
        preemptible=True,
        limits=np.LimitsSpec(cpu="256", memory="1024Gi"),
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
    arch = next(r for r in np.pool_requirements(s) if r["key"] == "kubernetes.io/arch")
    assert arch["values"] == arches


@pytest.mark.parametrize("itype", ["g6.xlarge", "p5.48xlarge"])
def test_cpu_pool_rejects_gpu_instance_types(itype):
    with pytest.raises(SpecError) as err:
        spec({"name": "c", "kind": "cpu", "instanceTypes": [itype]})
    assert str(err.value) == (
        f"nodePools[0].instanceTypes[0]: '{itype}' has GPUs; GPU capacity belongs in a gpu pool"
    )


# --- (d) one EFA type of an EFA pool -----------------------------------------------------------


def test_efa_nodepool_for_one_type_exactly():
    assert MANIFESTS["efa-p5/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "train-p5-48xlarge"},
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
            "userData": AL2023_HUGEPAGES,
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
                        "iops": 16000,
                        "throughput": 1000,
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
            "userData": BOTTLEROCKET_HUGEPAGES,
            "placementGroupSelector": {"name": PLACEMENT_GROUP},
            "tags": {"team": "ml", "eks-gpu-platform/pool": "train-br"},
        },
    }


def test_bottlerocket_efa_nodepool_exactly():
    assert MANIFESTS["bottlerocket/NodePool"]() == {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "train-br-p5en-48xlarge"},
        "spec": {
            "template": {
                "metadata": {
                    "labels": {
                        "example.com/pool": "train-br",
                        "example.com/preemptible": "false",
                        "example.com/efa": "true",
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


def test_bottlerocket_gpu_pool_without_efa_has_no_user_data():
    manifest = class_manifest(
        {**ON_DEMAND, "ami": {"family": "bottlerocket", "version": "v1.60.1"}}
    )
    assert manifest["spec"]["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.60.1"}]
    assert "userData" not in manifest["spec"]
    assert [b["deviceName"] for b in manifest["spec"]["blockDeviceMappings"]] == [
        "/dev/xvda",
        "/dev/xvdb",
    ]
    assert validate(manifest) == []


# --- (f) capacity reservations -----------------------------------------------------------------


def test_capacity_reservations_by_id_and_by_tags_with_owner():
    node_class = MANIFESTS["reserved/EC2NodeClass"]()
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [
        {"id": "cr-0123456789abcdef0"},
        {"tags": {"purpose": "training"}, "ownerID": "111122223333"},
    ]
    assert node_class == {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "reserved"},
        "spec": {
            "role": ROLE,
            "amiSelectorTerms": [{"alias": AL2023}],
            "subnetSelectorTerms": [DISCOVERY],
            "securityGroupSelectorTerms": [DISCOVERY],
            "metadataOptions": IMDS,
            "blockDeviceMappings": [GPU_ROOT],
            "instanceStorePolicy": "RAID0",
            "capacityReservationSelectorTerms": [
                {"id": "cr-0123456789abcdef0"},
                {"tags": {"purpose": "training"}, "ownerID": "111122223333"},
            ],
            "tags": {"team": "ml", "eks-gpu-platform/pool": "reserved"},
        },
    }
    pool = MANIFESTS["reserved/NodePool"]()
    assert pool["spec"]["template"]["spec"]["requirements"] == [
        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
        req("karpenter.k8s.aws/instance-gpu-name", "h100"),
        req("kubernetes.io/arch", "amd64"),
        req("kubernetes.io/os", "linux"),
        req("karpenter.sh/capacity-type", "reserved", "on-demand"),
    ]


@pytest.mark.parametrize(
    ("raw", "manifest"),
    [
        ({"id": "cr-0abc"}, {"id": "cr-0abc"}),
        ({"tags": {"a": "b"}}, {"tags": {"a": "b"}}),
        (
            {"tags": {"a": "*"}, "ownerId": "111122223333"},
            {"tags": {"a": "*"}, "ownerID": "111122223333"},
        ),
    ],
    ids=["id", "tags", "tags-owner"],
)
def test_capacity_reservation_manifest(raw, manifest):
    cr = load_value(np.CapacityReservationSpec, raw, "cr")
    assert cr.manifest() == manifest


# --- (g) MIG, time slicing, kubelet ------------------------------------------------------------


def test_mig_profile_labels_and_kubelet():
    pool = MANIFESTS["mig/NodePool"]()
    assert pool["spec"]["template"]["metadata"]["labels"] == {
        "example.com/pool": "mig",
        "example.com/preemptible": "false",
        "nvidia.com/mig.config": "all-1g.10gb",
        "example.org/team": "research",
    }
    node_class = MANIFESTS["mig/EC2NodeClass"]()
    assert node_class["spec"]["kubelet"] == {
        "maxPods": 110,
        "systemReserved": {"cpu": "500m", "memory": "1Gi"},
        "kubeReserved": {"cpu": "200m", "ephemeral-storage": "10Gi"},
    }
    assert list(node_class["spec"]) == [
        "role",
        "amiSelectorTerms",
        "subnetSelectorTerms",
        "securityGroupSelectorTerms",
        "metadataOptions",
        "blockDeviceMappings",
        "instanceStorePolicy",
        "kubelet",
        "tags",
    ]


def test_time_slicing_label():
    labels = MANIFESTS["time-sliced/NodePool"]()["spec"]["template"]["metadata"]["labels"]
    assert labels == {
        "example.com/pool": "notebooks",
        "example.com/preemptible": "false",
        "nvidia.com/device-plugin.config": "shared-4",
    }


def test_extra_taints_follow_the_gpu_taint():
    s = spec({**ON_DEMAND, "taints": [{"key": "example.com/dedicated", "value": "ml"}]})
    assert np.pool_taints(s) == [
        GPU_TAINT,
        {"key": "example.com/dedicated", "value": "ml", "effect": "NoSchedule"},
    ]
    assert (
        validate(
            np.nodepool_manifest(s, name="p", node_class="p", label_domain=DOMAIN, gpu_limit=4)
        )
        == []
    )


def test_taint_without_a_value_passes_the_crd():
    s = spec({**ON_DEMAND, "taints": [{"key": "example.com/dedicated"}]})
    manifest = np.nodepool_manifest(s, name="p", node_class="p", label_domain=DOMAIN, gpu_limit=4)
    assert validate(manifest) == []


@pytest.mark.parametrize(
    ("taint", "message"),
    [
        (
            {"key": "bad key!", "value": "x"},
            "nodePools[0].taints[0].key: 'bad key!' is not a label or taint key such as "
            "'example.com/dedicated'",
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


# --- root volume -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root_volume", "ebs"),
    [
        ({}, {"volumeSize": "500Gi", "iops": 16000, "throughput": 1000}),
        ({"sizeGib": 200}, {"volumeSize": "200Gi", "iops": 16000, "throughput": 1000}),
        (
            {"sizeGib": 100, "iops": 6000, "throughput": 500},
            {"volumeSize": "100Gi", "iops": 6000, "throughput": 500},
        ),
    ],
    ids=["default", "size", "all"],
)
def test_gpu_root_volume(root_volume, ebs):
    (mapping,) = np.block_device_mappings(spec({**ON_DEMAND, "rootVolume": root_volume}))
    assert mapping == {
        "deviceName": "/dev/xvda",
        "rootVolume": True,
        "ebs": {
            "volumeType": "gp3",
            "encrypted": True,
            "deleteOnTermination": True,
            **ebs,
        },
    }


@pytest.mark.parametrize(
    ("root_volume", "message"),
    [
        (
            {"sizeGib": 20},
            "nodePools[0].rootVolume: 16000 IOPS on 20 GiB exceeds gp3's 500 IOPS per GiB; "
            "raise sizeGib to at least 32 or lower iops",
        ),
        (
            {"iops": 3000},
            "nodePools[0].rootVolume: 1000 MiB/s with 3000 IOPS exceeds gp3's 0.25 MiB/s per "
            "IOPS; raise iops to at least 4000 or lower throughput",
        ),
    ],
    ids=["small-size", "low-iops"],
)
def test_root_volume_defaults_stay_within_gp3_limits(root_volume, message):
    with pytest.raises(SpecError) as err:
        spec({**ON_DEMAND, "rootVolume": root_volume})
    assert str(err.value) == message


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
    assert np.hugepages_user_data(family, quantity) == text


def test_hugepages_user_data_needs_a_binary_quantity():
    with pytest.raises(ValueError, match=re.escape("not a binary quantity: '5G'")):
        np.hugepages_user_data("al2023", "5G")


def types(*names: str) -> list[catalog.InstanceType]:
    return [catalog.INSTANCE_TYPES[n] for n in names]


@pytest.mark.parametrize(
    ("total", "names", "expected"),
    [
        (None, ("p5.48xlarge", "p5e.48xlarge"), [None, None]),
        (64, ("p5.48xlarge", "p5e.48xlarge"), [32, 32]),
        (65, ("p5.48xlarge", "p5e.48xlarge"), [33, 32]),
        (7, ("p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"), [3, 2, 2]),
        (16, ("p5.48xlarge",), [16]),
    ],
    ids=["none", "64-over-2", "65-over-2", "7-over-3", "one-type"],
)
def test_split_gpu_limit(total, names, expected):
    assert np.split_gpu_limit(total, types(*names)) == expected


@pytest.mark.parametrize(
    ("itype", "slug"),
    [
        ("p5.48xlarge", "p5-48xlarge"),
        ("p6-b200.48xlarge", "p6-b200-48xlarge"),
        ("g6e.xlarge", "g6e-xlarge"),
    ],
)
def test_type_slug(itype, slug):
    assert np.type_slug(itype) == slug


@pytest.mark.parametrize(
    ("raw", "arch"),
    [
        ({"name": "a", "gpus": ["t4g"]}, ["arm64"]),
        ({"name": "a", "gpus": ["l4"]}, ["amd64"]),
        ({"name": "a", "gpus": ["t4g", "t4"]}, ["amd64", "arm64"]),
    ],
    ids=["graviton", "x86", "both"],
)
def test_gpu_pool_architectures_follow_the_selected_types(raw, arch):
    reqs = np.pool_requirements(spec(raw))
    assert next(r for r in reqs if r["key"] == "kubernetes.io/arch")["values"] == arch


def test_gpu_selection_filters_are_all_written():
    s = spec(
        {"name": "a", "gpus": ["l4"], "instanceFamilies": ["g6"], "instanceTypes": ["g6.xlarge"]}
    )
    assert np.pool_requirements(s)[:4] == [
        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
        req("karpenter.k8s.aws/instance-gpu-name", "l4"),
        req("karpenter.k8s.aws/instance-family", "g6"),
        req("node.kubernetes.io/instance-type", "g6.xlarge"),
    ]


def test_efa_pool_keeps_only_efa_capable_types():
    s = spec({"name": "t", "kind": "efa", "gpus": ["h100"], "zone": "us-east-1a"})
    assert s.efa_types == ("p5.4xlarge", "p5.48xlarge")


# --- every built manifest passes the CRDs; broken ones do not ----------------------------------


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_every_built_manifest_passes_the_crds(name):
    assert validate(MANIFESTS[name]()) == []


def _labels(m: dict) -> dict:
    return m["spec"]["template"]["metadata"]["labels"]


BROKEN = [
    (
        "nodepool-label-karpenter-nodepool",
        "spot/NodePool",
        lambda m: _labels(m).update({"karpenter.sh/nodepool": "gpu-spot"}),
        ['spec.template.metadata.labels: label "karpenter.sh/nodepool" is restricted'],
    ),
    (
        "requirement-instance-pods",
        "spot/NodePool",
        lambda m: m["spec"]["template"]["spec"]["requirements"].append(
            req("karpenter.k8s.aws/instance-pods", "10", operator="Gt")
        ),
        ['spec.template.spec.requirements[5].key: label domain "karpenter.k8s.aws" is restricted'],
    ),
    (
        "gt-with-two-values",
        "spot/NodePool",
        lambda m: m["spec"]["template"]["spec"]["requirements"].append(
            req("karpenter.k8s.aws/instance-gpu-count", "1", "2", operator="Gt")
        ),
        [
            "spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' "
            "must have a single positive integer value"
        ],
    ),
    (
        "budget-schedule-without-duration",
        "on-demand/NodePool",
        lambda m: m["spec"]["disruption"]["budgets"].append({"nodes": "0", "schedule": "@daily"}),
        ["spec.disruption.budgets: 'schedule' must be set with 'duration'"],
    ),
    (
        "weight-0",
        "spot/NodePool",
        lambda m: m["spec"].update({"weight": 0}),
        ["spec.weight: 0 is less than the minimum of 1"],
    ),
    (
        "hop-limit-0",
        "spot/EC2NodeClass",
        lambda m: m["spec"]["metadataOptions"].update({"httpPutResponseHopLimit": 0}),
        ["spec.metadataOptions.httpPutResponseHopLimit: 0 is less than the minimum of 1"],
    ),
    (
        "two-root-volumes",
        "bottlerocket/EC2NodeClass",
        lambda m: m["spec"]["blockDeviceMappings"][0].update({"rootVolume": True}),
        ["spec.blockDeviceMappings: must have only one blockDeviceMappings with rootVolume"],
    ),
    (
        "amifamily-mismatch",
        "spot/EC2NodeClass",
        lambda m: m["spec"].update({"amiFamily": "Bottlerocket"}),
        ["spec: if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"],
    ),
    (
        "no-primary-interface",
        "efa-p5/EC2NodeClass",
        lambda m: m["spec"].update({"networkInterfaces": m["spec"]["networkInterfaces"][1:]}),
        [
            "spec.networkInterfaces: networkInterfaces must include a primary interface with "
            "interfaceType='interface'"
        ],
    ),
    (
        "two-efa-only-on-a-card",
        "efa-p5/EC2NodeClass",
        lambda m: m["spec"]["networkInterfaces"].append(
            {"networkCardIndex": 0, "deviceIndex": 2, "interfaceType": "efa-only"}
        ),
        [
            "spec.networkInterfaces: networkInterfaces must not have duplicate networkCardIndex "
            "and deviceIndex pairs, and can have at most one efa device per network card"
        ],
    ),
    (
        "placement-group-name-and-id",
        "efa-p5/EC2NodeClass",
        lambda m: m["spec"]["placementGroupSelector"].update({"id": "pg-0123"}),
        ["spec.placementGroupSelector: 'name' and 'id' are mutually exclusive"],
    ),
    (
        "reservation-id-with-owner",
        "reserved/EC2NodeClass",
        lambda m: m["spec"].update(
            {"capacityReservationSelectorTerms": [{"id": "cr-0123", "ownerID": "111122223333"}]}
        ),
        [
            "spec.capacityReservationSelectorTerms: 'id' is mutually exclusive, cannot be set "
            "along with other fields in a capacity reservation selector term"
        ],
    ),
    (
        "restricted-tag",
        "spot/EC2NodeClass",
        lambda m: m["spec"]["tags"].update({"karpenter.sh/nodepool": "gpu-spot"}),
        ["spec.tags: tag contains a restricted tag matching karpenter.sh/nodepool"],
    ),
    (
        "role-and-instance-profile",
        "spot/EC2NodeClass",
        lambda m: m["spec"].update({"instanceProfile": "profile"}),
        ["spec: must specify exactly one of ['role', 'instanceProfile']"],
    ),
]


@pytest.mark.parametrize(
    ("base", "mutate", "errors"),
    [case[1:] for case in BROKEN],
    ids=[case[0] for case in BROKEN],
)
def test_the_validator_catches_broken_manifests(base, mutate, errors):
    manifest = copy.deepcopy(MANIFESTS[base]())
    mutate(manifest)
    assert validate(manifest) == errors


# --- validation: bad pool specs, exact messages ------------------------------------------------

G = {"name": "p", "gpus": ["l4"]}
E = {"name": "t", "kind": "efa", "instanceTypes": ["p5.48xlarge"], "zone": "us-east-1a"}
C = {"name": "c", "kind": "cpu"}
EFA_CAPABLE = ", ".join(catalog.efa_instance_types())

BAD_SPECS = [
    (
        "unknown-gpu",
        {**G, "gpus": ["h1000"]},
        "nodePools[0].gpus[0]: 'h1000' is not a known NVIDIA GPU; expected one of a100, a10g, "
        "b200, b300, h100, h200, l4, l40s, rtx-pro-server-6000, t4, t4g",
    ),
    (
        "non-gpu-family",
        {"name": "p", "instanceFamilies": ["m5"]},
        "nodePools[0].instanceFamilies[0]: 'm5' is not a GPU family; expected one of g4dn, g5, "
        "g5g, g6, g6e, g6f, g7e, gr6, p4d, p4de, p5, p5e, p5en, p6-b200, p6-b300",
    ),
    (
        "gpu-family-in-cpu-pool",
        {**C, "instanceFamilies": ["m7i", "g6"]},
        "nodePools[0].instanceFamilies[1]: 'g6' is a GPU family; GPU capacity belongs in a gpu "
        "pool",
    ),
    (
        "gpus-in-cpu-pool",
        {**C, "gpus": ["l4"]},
        "nodePools[0].gpus: a cpu pool selects no GPUs; use kind: gpu",
    ),
    (
        "unknown-instance-type",
        {"name": "p", "instanceTypes": ["p5.96xlarge"]},
        "nodePools[0].instanceTypes[0]: 'p5.96xlarge' is not a known NVIDIA GPU instance type",
    ),
    (
        "efa-on-type-without-efa",
        {**E, "instanceTypes": ["g6.xlarge"]},
        f"nodePools[0].instanceTypes[0]: 'g6.xlarge' has no EFA; EFA-capable types: {EFA_CAPABLE}",
    ),
    (
        "efa-without-zone",
        {"name": "t", "kind": "efa", "instanceTypes": ["p5.48xlarge"]},
        "nodePools[0].zone: is required for an efa pool: EFA nodes share one AZ and one cluster "
        "placement group",
    ),
    (
        "zone-on-gpu-pool",
        {**G, "zone": "us-east-1a"},
        "nodePools[0].zone: only applies to efa pools; this pool is 'gpu'",
    ),
    (
        "bad-zone",
        {**E, "zone": "us-east-1"},
        "nodePools[0].zone: 'us-east-1' is not an availability zone like 'us-west-2a'",
    ),
    (
        "reserved-without-reservations",
        {**G, "capacityTypes": ["reserved", "on-demand"]},
        "nodePools[0].capacityTypes: includes 'reserved' but capacityReservations is empty; "
        "select the reservations or Capacity Blocks by id or tags",
    ),
    (
        "reservations-without-reserved",
        {**G, "capacityReservations": [{"id": "cr-0123"}]},
        "nodePools[0].capacityReservations: is set but capacityTypes lacks 'reserved'; add it "
        "(first) to use them",
    ),
    (
        "empty-capacity-types",
        {**G, "capacityTypes": []},
        "nodePools[0].capacityTypes: is empty; list at least one of reserved, spot, on-demand",
    ),
    (
        "duplicate-capacity-type",
        {**G, "capacityTypes": ["on-demand", "on-demand"]},
        "nodePools[0].capacityTypes: ['on-demand', 'on-demand'] lists a capacity type twice",
    ),
    (
        "on-demand-before-spot",
        {**G, "capacityTypes": ["on-demand", "spot"], "preemptible": True},
        "nodePools[0].capacityTypes: ['on-demand', 'spot'] cannot be honoured: within a NodePool "
        "Karpenter tries reserved, then spot, then on-demand; write ['spot', 'on-demand'], or use "
        "a second pool with a lower weight for the fallback",
    ),
    (
        "spot-on-non-preemptible",
        {**G, "capacityTypes": ["spot"]},
        "nodePools[0].capacityTypes: includes 'spot' but the pool is not preemptible; spot "
        "reclaims nodes at two minutes' notice, so set preemptible: true or drop 'spot'",
    ),
    (
        "unknown-capacity-type",
        {**G, "capacityTypes": ["ondemand"]},
        "nodePools[0].capacityTypes[0]: 'ondemand' is not allowed; expected one of reserved, "
        "spot, on-demand; did you mean 'on-demand'?",
    ),
    (
        "non-preemptible-underutilized",
        {**G, "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized"}},
        "nodePools[0].disruption.consolidationPolicy: 'WhenEmptyOrUnderutilized' moves running "
        "pods; a non-preemptible pool consolidates only WhenEmpty",
    ),
    (
        "non-preemptible-balanced",
        {**G, "disruption": {"consolidationPolicy": "Balanced"}},
        "nodePools[0].disruption.consolidationPolicy: 'Balanced' moves running pods; a "
        "non-preemptible pool consolidates only WhenEmpty",
    ),
    (
        "nothing-selected",
        {"name": "p"},
        "nodePools[0].gpus: a gpu pool must select GPUs: set gpus, instanceFamilies or "
        "instanceTypes",
    ),
    (
        "selection-matches-nothing",
        {"name": "p", "gpus": ["h100"], "instanceFamilies": ["g6"]},
        "nodePools[0].gpus: no instance type matches gpus ['h100'], instanceFamilies ['g6'] and "
        "instanceTypes [] together",
    ),
    (
        "types-match-nothing",
        {"name": "p", "gpus": ["h100"], "instanceTypes": ["g6.xlarge"]},
        "nodePools[0].instanceTypes: no instance type matches gpus ['h100'], instanceFamilies [] "
        "and instanceTypes ['g6.xlarge'] together",
    ),
    (
        "efa-selection-matches-nothing",
        {"name": "t", "kind": "efa", "zone": "us-east-1a", "gpus": ["t4g"]},
        "nodePools[0].gpus: no EFA-capable instance type matches gpus ['t4g'], instanceFamilies "
        "[] and instanceTypes [] together",
    ),
    (
        "efa-limit-too-small-to-split",
        {**E, "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"], "limits": {"gpus": 8}},
        "nodePools[0].limits.gpus: 8 is split over 2 instance type(s) and leaves 4 for "
        "p5.48xlarge, less than one 8-GPU node; raise it or select fewer types",
    ),
    (
        "gpu-limit-below-one-node",
        {**G, "instanceTypes": ["g6.12xlarge"], "limits": {"gpus": 2}},
        "nodePools[0].limits.gpus: 2 is less than one node of the smallest type (g6.12xlarge, "
        "4 GPUs); raise it or select fewer types",
    ),
    (
        "budget-nodes",
        {**G, "disruption": {"budgets": [{"nodes": "101%"}]}},
        "nodePools[0].disruption.budgets[0].nodes: '101%' is not a node count or percentage such "
        "as '10%'",
    ),
    (
        "budget-schedule-without-duration",
        {**G, "disruption": {"budgets": [{"nodes": "0", "schedule": "@daily"}]}},
        "nodePools[0].disruption.budgets[0].schedule: and duration must be set together",
    ),
    (
        "budget-reason",
        {**G, "disruption": {"budgets": [{"nodes": "1", "reasons": ["Expired"]}]}},
        "nodePools[0].disruption.budgets[0].reasons[0]: 'Expired' is not allowed; expected one "
        "of Underutilized, Empty, Drifted",
    ),
    (
        "budget-cron",
        {**G, "disruption": {"budgets": [{"nodes": "1", "schedule": "0 8 * *", "duration": "1h"}]}},
        "nodePools[0].disruption.budgets[0].schedule: '0 8 * *' is not a 5-field cron or an "
        "@daily macro",
    ),
    (
        "budget-duration-seconds",
        {**G, "disruption": {"budgets": [{"nodes": "1", "schedule": "@daily", "duration": "30s"}]}},
        "nodePools[0].disruption.budgets[0].duration: '30s' is not a duration in hours and "
        "minutes such as '8h' or '1h30m'",
    ),
    (
        "consolidate-after",
        {**G, "disruption": {"consolidateAfter": "5 minutes"}},
        "nodePools[0].disruption.consolidateAfter: '5 minutes' is not a duration or 'Never'",
    ),
    (
        "expire-after-days",
        {**G, "expireAfter": "30d"},
        "nodePools[0].expireAfter: '30d' is not a duration or 'Never'",
    ),
    (
        "grace-never",
        {**G, "terminationGracePeriod": "Never"},
        "nodePools[0].terminationGracePeriod: 'Never' is not a duration like '4h'",
    ),
    (
        "weight-0",
        {**G, "weight": 0},
        "nodePools[0].weight: 0 is out of range; expected a number from 1 to 100",
    ),
    (
        "weight-101",
        {**G, "weight": 101},
        "nodePools[0].weight: 101 is out of range; expected a number from 1 to 100",
    ),
    (
        "name",
        {**G, "name": "GPU_pool"},
        "nodePools[0].name: 'GPU_pool' is not a pool name; expected 1-42 lowercase letters, "
        "digits or '-'",
    ),
    (
        "label-karpenter-domain",
        {**G, "labels": {"karpenter.sh/nodepool": "p"}},
        "nodePools[0].labels: 'karpenter.sh/nodepool' is in a domain Kubernetes or Karpenter "
        "reserves; use your own label domain",
    ),
    (
        "label-kubernetes-subdomain",
        {**G, "labels": {"node.kubernetes.io/instance-type": "x"}},
        "nodePools[0].labels: 'node.kubernetes.io/instance-type' is in a domain Kubernetes or "
        "Karpenter reserves; use your own label domain",
    ),
    (
        "label-value-too-long",
        {**G, "labels": {"example.org/team": "x" * 64}},
        "nodePools[0].labels: the value '" + "x" * 64 + "' of 'example.org/team' is not a label "
        "value; expected at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
        "letter or digit",
    ),
    (
        "gpu-taint-by-hand",
        {**G, "taints": [{"key": "nvidia.com/gpu", "value": "true"}]},
        "nodePools[0].taints[0].key: 'nvidia.com/gpu' is added automatically; remove it",
    ),
    (
        "efa-taint-by-hand",
        {**E, "taints": [{"key": "example.com/a", "value": "b"}, {"key": "vpc.amazonaws.com/efa"}]},
        "nodePools[0].taints[1].key: 'vpc.amazonaws.com/efa' is added automatically; remove it",
    ),
    (
        "ami-latest",
        {**G, "ami": {"version": "latest"}},
        "nodePools[0].ami.version: 'latest' drifts every node on each AMI release; pin a version "
        "such as 'v20260903'",
    ),
    (
        "ami-bottlerocket-latest",
        {**G, "ami": {"family": "bottlerocket", "version": "latest"}},
        "nodePools[0].ami.version: 'latest' drifts every node on each AMI release; pin a version "
        "such as 'v1.65.0'",
    ),
    (
        "ami-bottlerocket-format",
        {**G, "ami": {"family": "bottlerocket", "version": "v20260903"}},
        "nodePools[0].ami.version: 'v20260903' is not a bottlerocket release like 'v1.65.0'",
    ),
    (
        "ami-al2",
        {**G, "ami": {"family": "al2"}},
        "nodePools[0].ami.family: 'al2' is not allowed; expected one of al2023, bottlerocket; did "
        "you mean 'al2023'?",
    ),
    (
        "iops-per-gib",
        {**G, "rootVolume": {"sizeGib": 20, "iops": 12000}},
        "nodePools[0].rootVolume.iops: 12000 exceeds gp3's 500 IOPS per GiB for 20 GiB",
    ),
    (
        "iops-range",
        {**G, "rootVolume": {"iops": 20000}},
        "nodePools[0].rootVolume.iops: 20000 is out of range; expected a number from 3000 to 16000",
    ),
    (
        "throughput-range",
        {**G, "rootVolume": {"throughput": 100}},
        "nodePools[0].rootVolume.throughput: 100 is out of range; expected a number from 125 to "
        "1000",
    ),
    (
        "size-range",
        {**G, "rootVolume": {"sizeGib": 10}},
        "nodePools[0].rootVolume.sizeGib: 10 is out of range; expected a number from 20 to 16384",
    ),
    (
        "max-pods",
        {**G, "kubelet": {"maxPods": 0}},
        "nodePools[0].kubelet.maxPods: 0 is out of range; expected a number from 1 to 737",
    ),
    (
        "reserved-key",
        {**G, "kubelet": {"systemReserved": {"gpu": "1"}}},
        "nodePools[0].kubelet.systemReserved: key 'gpu' is not allowed; expected one of cpu, "
        "memory, ephemeral-storage, pid",
    ),
    (
        "reserved-quantity",
        {**G, "kubelet": {"kubeReserved": {"memory": "1 GiB"}}},
        "nodePools[0].kubelet.kubeReserved: memory: '1 GiB' is not a Kubernetes quantity",
    ),
    (
        "reservation-id-and-tags",
        {
            **G,
            "capacityTypes": ["reserved"],
            "capacityReservations": [{"id": "cr-0123", "tags": {"a": "b"}}],
        },
        "nodePools[0].capacityReservations[0].id: cannot be combined with tags or ownerId",
    ),
    (
        "reservation-bad-id",
        {**G, "capacityTypes": ["reserved"], "capacityReservations": [{"id": "cr-ABC"}]},
        "nodePools[0].capacityReservations[0].id: 'cr-ABC' is not a reservation id like 'cr-0123'",
    ),
    (
        "reservation-bad-owner",
        {
            **G,
            "capacityTypes": ["reserved"],
            "capacityReservations": [{"tags": {"a": "b"}, "ownerId": "1234"}],
        },
        "nodePools[0].capacityReservations[0].ownerId: '1234' is not a 12-digit account id",
    ),
    (
        "reservation-empty",
        {**G, "capacityTypes": ["reserved"], "capacityReservations": [{}]},
        "nodePools[0].capacityReservations[0]: needs an id or tags",
    ),
    (
        "mig-on-cpu-pool",
        {**C, "migProfile": "all-1g.10gb"},
        "nodePools[0].migProfile: only applies to gpu and efa pools; this pool is 'cpu'",
    ),
    (
        "time-slicing-on-cpu-pool",
        {**C, "timeSlicing": "shared-4"},
        "nodePools[0].timeSlicing: only applies to gpu and efa pools; this pool is 'cpu'",
    ),
    (
        "mig-and-time-slicing",
        {**G, "migProfile": "all-1g.10gb", "timeSlicing": "shared-4"},
        "nodePools[0].timeSlicing: cannot be combined with migProfile on the same pool",
    ),
    (
        "gpu-limit-on-cpu-pool",
        {**C, "limits": {"gpus": 4}},
        "nodePools[0].limits.gpus: only applies to gpu and efa pools",
    ),
    (
        "gpu-limit-0",
        {**G, "limits": {"gpus": 0}},
        "nodePools[0].limits.gpus: 0 is out of range; expected a number from 1 to 100000",
    ),
    (
        "cpu-limit",
        {**C, "limits": {"cpu": "lots"}},
        "nodePools[0].limits.cpu: 'lots' is not a Kubernetes quantity such as '1000'",
    ),
    (
        "bad-kind",
        {**G, "kind": "gpus"},
        "nodePools[0].kind: 'gpus' is not allowed; expected one of gpu, efa, cpu; did you mean "
        "'gpu'?",
    ),
    (
        "name-missing",
        {"gpus": ["l4"]},
        "nodePools[0].name: is required",
    ),
]


@pytest.mark.parametrize(
    ("raw", "message"), [case[1:] for case in BAD_SPECS], ids=[case[0] for case in BAD_SPECS]
)
def test_bad_pool_spec(raw, message):
    with pytest.raises(SpecError) as err:
        spec(raw)
    assert str(err.value) == message
    assert err.value.lines == [message]


def test_every_problem_of_a_pool_is_reported_at_once():
    with pytest.raises(SpecError) as err:
        spec(
            {
                "name": "p",
                "gpus": ["l4"],
                "capacityTypes": ["spot"],
                "weight": 0,
                "zone": "us-east-1a",
            }
        )
    assert err.value.lines == [
        "nodePools[0].capacityTypes: includes 'spot' but the pool is not preemptible; spot "
        "reclaims nodes at two minutes' notice, so set preemptible: true or drop 'spot'",
        "nodePools[0].weight: 0 is out of range; expected a number from 1 to 100",
        "nodePools[0].zone: only applies to efa pools; this pool is 'gpu'",
    ]


def test_python_construction_names_python_fields():
    with pytest.raises(SpecError) as err:
        np.NodePoolSpec(name="p", gpus=("l4",), weight=0)
    assert (
        str(err.value) == "NodePoolSpec.weight: 0 is out of range; expected a number from 1 to 100"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"name": "t", "kind": "efa", "zone": "us-east-1a"},
            "nodePools[0].gpus: an efa pool must select GPUs: set gpus, instanceFamilies or "
            "instanceTypes",
        ),
        (
            {**G, "ami": {"version": "20260903"}},
            "nodePools[0].ami.version: '20260903' is not an al2023 release like 'v20260903'",
        ),
    ],
    ids=["efa-pool", "al2023-release"],
)
def test_messages_use_the_right_article(raw, message):
    with pytest.raises(SpecError) as err:
        spec(raw)
    assert str(err.value) == message


# --- component ---------------------------------------------------------------------------------

TYPE = "eks-gpu-platform:index:NodePool"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
OVERLAY = "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"
PG = "aws:ec2/placementGroup:PlacementGroup"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
VPC_ID = "vpc-0123456789abcdef0"


def make_pool(raw: dict, gpu_limit: int | None, vpc_id: str | None = VPC_ID):
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        marker = k8s.core.v1.ConfigMap(
            "karpenter-ready", opts=pulumi.ResourceOptions(provider=provider)
        )
        np.NodePool(
            "pool",
            np.NodePoolArgs(
                spec=spec(raw),
                cluster_name=CLUSTER,
                label_domain=DOMAIN,
                node_role=ROLE,
                k8s_provider=provider,
                vpc_id=vpc_id,
                gpu_limit=gpu_limit,
                depends_on=[marker],
                tags=TAGS,
            ),
        )

    return program


def component_and_children(recording):
    component = next(r for r in recording.resources if r.type == TYPE)
    return component, recording.children_of(component.urn)


def test_gpu_pool_component(run_program):
    recording = run_program(make_pool(SPOT, 8))
    component, kids = component_and_children(recording)
    assert component.name == "pool"
    assert sorted((r.type, r.name) for r in kids) == [
        (NODECLASS, "pool-class"),
        (NODEPOOL, "pool-pool"),
    ]
    node_class = next(r for r in kids if r.type == NODECLASS)
    pool = next(r for r in kids if r.type == NODEPOOL)
    marker = next(r for r in recording.resources if r.name == "karpenter-ready")
    provider = next(r for r in recording.resources if r.name == "k8s")

    assert node_class.inputs["apiVersion"] == "karpenter.k8s.aws/v1"
    assert node_class.inputs["kind"] == "EC2NodeClass"
    assert node_class.inputs["metadata"] == {"name": "gpu-spot"}
    assert node_class.inputs["spec"] == MANIFESTS["spot/EC2NodeClass"]()["spec"]
    assert pool.inputs == MANIFESTS["spot/NodePool"]()

    assert marker.urn in node_class.dependencies
    assert {marker.urn, node_class.urn} <= set(pool.dependencies)
    for child in kids:
        assert child.parent == component.urn
        assert child.provider.startswith(provider.urn + "::")
    assert component.registered_outputs == {
        "node_pool_names": ["gpu-spot"],
        "node_class_names": ["gpu-spot"],
    }


def test_cpu_pool_component_has_no_gpu_limit(run_program):
    recording = run_program(make_pool(CPU, None, vpc_id=None))
    _, kids = component_and_children(recording)
    pool = next(r for r in kids if r.type == NODEPOOL)
    assert pool.inputs["spec"]["limits"] == {"cpu": "64", "memory": "256Gi"}
    assert sorted(r.type for r in kids) == [NODECLASS, NODEPOOL]


def test_efa_pool_component(run_program):
    recording = run_program(make_pool(EFA, 64))
    component, kids = component_and_children(recording)
    assert sorted((r.type, r.name) for r in kids) == sorted(
        [
            (PG, "pool-pg"),
            (SG, "pool-efa"),
            (NODECLASS, "pool-p5-48xlarge-class"),
            (NODECLASS, "pool-p5e-48xlarge-class"),
            (NODEPOOL, "pool-p5-48xlarge-pool"),
            (NODEPOOL, "pool-p5e-48xlarge-pool"),
            (OVERLAY, "pool-hugepages"),
            (INGRESS, "pool-efa-self-in"),
            (EGRESS, "pool-efa-self-out"),
        ]
    )
    by_name = {(r.type, r.name): r for r in kids}
    pg = by_name[(PG, "pool-pg")]
    sg = by_name[(SG, "pool-efa")]
    assert pg.inputs == {"strategy": "cluster", "tags": {"team": "ml", "Name": "gpu-test-train"}}
    assert sg.inputs["vpcId"] == VPC_ID
    assert sg.inputs["description"] == "EFA traffic between train nodes of gpu-test"
    assert sg.inputs["tags"] == {"team": "ml", "Name": "gpu-test-train-efa"}
    for typ, name in ((INGRESS, "pool-efa-self-in"), (EGRESS, "pool-efa-self-out")):
        rule = by_name[(typ, name)]
        assert rule.inputs["securityGroupId"] == sg.id
        assert rule.inputs["referencedSecurityGroupId"] == sg.id
        assert rule.inputs["ipProtocol"] == "-1"
        assert sg.urn in rule.dependencies

    for itype, slug in (("p5.48xlarge", "p5-48xlarge"), ("p5e.48xlarge", "p5e-48xlarge")):
        node_class = by_name[(NODECLASS, f"pool-{slug}-class")]
        pool = by_name[(NODEPOOL, f"pool-{slug}-pool")]
        expected_class = np.ec2nodeclass_manifest(
            spec(EFA),
            name=f"train-{slug}",
            cluster_name=CLUSTER,
            node_role=ROLE,
            tags=TAGS,
            extra_security_group_ids=[sg.id],
            placement_group=pg.outputs["name"],
            instance_type=itype,
        )
        assert node_class.inputs["metadata"] == {"name": f"train-{slug}"}
        assert node_class.inputs["spec"] == expected_class["spec"]
        assert node_class.inputs["spec"]["securityGroupSelectorTerms"] == [DISCOVERY, {"id": sg.id}]
        assert node_class.inputs["spec"]["placementGroupSelector"] == {"name": pg.outputs["name"]}
        assert pool.inputs == pool_manifest(EFA, 32, itype)
        assert pool.inputs["spec"]["limits"] == {GPU_RESOURCE: "32"}
        assert node_class.urn in pool.dependencies

    overlay = by_name[(OVERLAY, "pool-hugepages")]
    assert overlay.inputs == np.nodeoverlay_manifest(spec(EFA), label_domain=DOMAIN)
    assert component.registered_outputs == {
        "node_pool_names": ["train-p5-48xlarge", "train-p5e-48xlarge"],
        "node_class_names": ["train-p5-48xlarge", "train-p5e-48xlarge"],
    }


def test_every_custom_resource_uses_the_given_provider_and_waits_for_karpenter(run_program):
    # An odd limit: the remainder goes to the first instance type's NodePool.
    recording = run_program(make_pool({**EFA, "limits": {"gpus": 65}}, 65))
    _, kids = component_and_children(recording)
    provider = next(r for r in recording.resources if r.name == "k8s")
    marker = next(r for r in recording.resources if r.name == "karpenter-ready")
    custom = [r for r in kids if r.type.startswith("kubernetes:")]
    assert len(custom) == 5
    for r in custom:
        assert r.provider.startswith(provider.urn + "::"), r.name
        assert marker.urn in r.dependencies, r.name
    for r in kids:
        if r.type.startswith("aws:"):
            assert r.provider == "", r.name  # the default AWS provider
    limits = {r.name: r.inputs["spec"]["limits"][GPU_RESOURCE] for r in kids if r.type == NODEPOOL}
    assert limits == {"pool-p5-48xlarge-pool": "33", "pool-p5e-48xlarge-pool": "32"}


def test_efa_pool_without_vpc_id_is_rejected(run_program):
    with pytest.raises(SpecError) as err:
        run_program(make_pool(EFA, 64, vpc_id=None))
    assert err.value.lines == [
        "NodePoolArgs.vpc_id: is required for efa pool 'train': its security group is created "
        "in the VPC; pass the EksCluster component as cluster, or set vpc_id"
    ]
