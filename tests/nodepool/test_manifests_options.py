"""Pool options in the manifests: capacity reservations, MIG and time-slicing labels, kubelet
settings, extra taints, the root volume and the architecture and selection requirements.
"""

import pytest
from crd_validation import validate

from eks_gpu_platform.nodepool.manifests import (
    block_device_mappings,
    nodepool_manifest,
    pool_requirements,
    pool_taints,
)
from eks_gpu_platform.nodepool.parts import CapacityReservationSpec
from eks_gpu_platform.spec import load_value

from .pools import (
    AL2023,
    AL2023_USER_DATA,
    DISCOVERY,
    DOMAIN,
    GPU_ROOT,
    GPU_TAINT,
    IMDS,
    MANIFESTS,
    ON_DEMAND,
    ROLE,
    req,
    spec,
)

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
            "associatePublicIPAddress": False,
            "userData": AL2023_USER_DATA,
            "tags": {"team": "ml", "eks-gpu-platform/pool": "reserved"},
        },
    }
    pool = MANIFESTS["reserved/NodePool"]()
    assert pool["spec"]["template"]["spec"]["requirements"] == [
        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
        req("karpenter.k8s.aws/instance-gpu-count", "0", operator="Gt"),
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
        # What the reservation holds (issue 30: gangs pin it) is not part of the selector term
        # (EC2NodeClass capacityReservationSelectorTerms take id, tags and ownerID only).
        (
            {"id": "cr-0abc", "instanceType": "p5e.48xlarge", "zone": "us-east-1a"},
            {"id": "cr-0abc"},
        ),
    ],
    ids=["id", "tags", "tags-owner", "type-and-zone"],
)
def test_capacity_reservation_manifest(raw, manifest):
    cr = load_value(CapacityReservationSpec, raw, "cr")
    assert cr.manifest() == manifest


# --- (g) MIG, time slicing, kubelet ------------------------------------------------------------


def test_mig_profile_labels_and_kubelet():
    pool = MANIFESTS["mig/NodePool"]()
    assert pool["spec"]["template"]["metadata"]["labels"] == {
        "example.com/pool": "mig",
        "example.com/preemptible": "false",
        "nvidia.com/mig.config": "all-1g.10gb",
        # The device plugin stays off until the MIG startup remover sees the layout applied.
        "nvidia.com/gpu.deploy.device-plugin": "false",
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
        "associatePublicIPAddress",
        "userData",
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
    assert pool_taints(s) == [
        GPU_TAINT,
        {"key": "example.com/dedicated", "value": "ml", "effect": "NoSchedule"},
    ]
    assert (
        validate(nodepool_manifest(s, name="p", node_class="p", label_domain=DOMAIN, gpu_limit=4))
        == []
    )


def test_taint_without_a_value_passes_the_crd():
    s = spec({**ON_DEMAND, "taints": [{"key": "example.com/dedicated"}]})
    manifest = nodepool_manifest(s, name="p", node_class="p", label_domain=DOMAIN, gpu_limit=4)
    assert validate(manifest) == []


# --- root volume -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root_volume", "ebs"),
    [
        # Every L4 type (g6, gr6, g6f) has instance store: a 50 GiB root at gp3's baseline.
        ({}, {"volumeSize": "50Gi", "iops": 3000, "throughput": 125}),
        ({"sizeGib": 200}, {"volumeSize": "200Gi", "iops": 3000, "throughput": 125}),
        (
            {"sizeGib": 100, "iops": 6000, "throughput": 500},
            {"volumeSize": "100Gi", "iops": 6000, "throughput": 500},
        ),
    ],
    ids=["default", "size", "all"],
)
def test_gpu_root_volume(root_volume, ebs):
    (mapping,) = block_device_mappings(spec({**ON_DEMAND, "rootVolume": root_volume}))
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
    ("raw", "ebs"),
    [
        # g5g (T4G) has no instance store: images unpack on the root, 200 GiB at 1,000 MiB/s.
        ({"name": "a", "gpus": ["t4g"]}, {"volumeSize": "200Gi", "iops": 4000, "throughput": 1000}),
        # One type without instance store in the pool is enough: its nodes need the room.
        (
            {"name": "a", "gpus": ["t4g", "t4"]},
            {"volumeSize": "200Gi", "iops": 4000, "throughput": 1000},
        ),
        # The override still wins, key by key.
        (
            {"name": "a", "gpus": ["t4g"], "rootVolume": {"sizeGib": 80}},
            {"volumeSize": "80Gi", "iops": 4000, "throughput": 1000},
        ),
        ({"name": "a", "gpus": ["t4"]}, {"volumeSize": "50Gi", "iops": 3000, "throughput": 125}),
        (
            {"name": "e", "kind": "efa", "gpus": ["h100"], "zone": "us-east-1a"},
            {"volumeSize": "50Gi", "iops": 3000, "throughput": 125},
        ),
        (
            {"name": "c", "kind": "cpu"},
            {"volumeSize": "100Gi", "iops": 3000, "throughput": 125},
        ),
    ],
    ids=["no-instance-store", "mixed", "override", "t4", "efa", "cpu"],
)
def test_root_volume_follows_instance_store(raw, ebs):
    (mapping,) = block_device_mappings(spec(raw))
    assert mapping["ebs"] == {
        "volumeType": "gp3",
        "encrypted": True,
        "deleteOnTermination": True,
        **ebs,
    }


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
    reqs = pool_requirements(spec(raw))
    assert next(r for r in reqs if r["key"] == "kubernetes.io/arch")["values"] == arch


def test_gpu_selection_filters_are_all_written():
    s = spec(
        {"name": "a", "gpus": ["l4"], "instanceFamilies": ["g6"], "instanceTypes": ["g6.xlarge"]}
    )
    assert pool_requirements(s)[:4] == [
        req("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"),
        req("karpenter.k8s.aws/instance-gpu-name", "l4"),
        req("karpenter.k8s.aws/instance-family", "g6"),
        req("node.kubernetes.io/instance-type", "g6.xlarge"),
    ]
