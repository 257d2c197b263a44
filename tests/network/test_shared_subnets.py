"""Issue 11, item 11: an existing VPC's subnets shared by several clusters (``vpc.subnetTagging:
shared``). Each cluster tags the subnets with its own key ``kubernetes.io/cluster/<name>`` =
``shared`` (kept on destroy), and its EC2NodeClasses select the subnets by that key, so two
clusters on the same subnets never overwrite each other's tag."""

import pytest
from addon_pins import ADDON_VERSIONS

from eks_gpu_platform import (
    ClusterSpec,
    EksCluster,
    EksClusterArgs,
    Karpenter,
    KarpenterArgs,
    LimitsSpec,
    Network,
    NetworkArgs,
    NodePool,
    NodePoolArgs,
    NodePoolSpec,
    VpcSpec,
)
from eks_gpu_platform.network.layout import subnet_selector
from eks_gpu_platform.nodepool.manifests import ec2nodeclass_manifest

TAG = "aws:ec2/tag:Tag"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
SUBNETS = ("subnet-0123456789abcdef0", "subnet-0123456789abcdef1")
L4 = NodePoolSpec(name="l4", gpus=("l4",), limits=LimitsSpec(gpus=8))


def existing(tagging: str) -> VpcSpec:
    return VpcSpec(
        vpc_id="vpc-0123456789abcdef0", private_subnet_ids=SUBNETS, subnet_tagging=tagging
    )


def tags_of(recording) -> list[tuple[str, dict, bool]]:
    return sorted((t.name, t.inputs, t.retain_on_delete) for t in recording.of_type(TAG))


def test_shared_subnets_get_the_per_cluster_key_kept_on_destroy(run_program):
    rec = run_program(
        lambda: Network("net", NetworkArgs(cluster_name="gpu-a", spec=existing("shared")))
    )
    assert tags_of(rec) == [
        (
            f"net-private-{i}-cluster",
            {"resourceId": subnet, "key": "kubernetes.io/cluster/gpu-a", "value": "shared"},
            True,
        )
        for i, subnet in enumerate(SUBNETS)
    ]


def test_owned_subnets_keep_the_discovery_tag_removed_on_destroy(run_program):
    rec = run_program(
        lambda: Network("net", NetworkArgs(cluster_name="gpu-a", spec=existing("owned")))
    )
    assert tags_of(rec) == [
        (
            f"net-private-{i}-discovery",
            {"resourceId": subnet, "key": "karpenter.sh/discovery", "value": "gpu-a"},
            False,
        )
        for i, subnet in enumerate(SUBNETS)
    ]


def test_two_clusters_sharing_subnets_write_different_keys(run_program):
    def program():
        for cluster in ("gpu-a", "gpu-b"):
            Network(cluster, NetworkArgs(cluster_name=cluster, spec=existing("shared")))

    rec = run_program(program)
    written = sorted(
        (t.inputs["resourceId"], t.inputs["key"], t.inputs["value"]) for t in rec.of_type(TAG)
    )
    assert written == [
        (subnet, f"kubernetes.io/cluster/{cluster}", "shared")
        for subnet in SUBNETS
        for cluster in ("gpu-a", "gpu-b")
    ]
    # Every (subnet, key) pair is written once: no cluster overwrites another's tag.
    assert len({(s, k) for s, k, _ in written}) == len(written)


@pytest.mark.parametrize(
    ("create", "tagging", "expected"),
    [
        (True, "owned", {"karpenter.sh/discovery": "gpu-a"}),
        (False, "owned", {"karpenter.sh/discovery": "gpu-a"}),
        (False, "none", {"karpenter.sh/discovery": "gpu-a"}),
        (False, "shared", {"kubernetes.io/cluster/gpu-a": "shared"}),
    ],
)
def test_subnet_selector(create, tagging, expected):
    assert subnet_selector("gpu-a", create=create, subnet_tagging=tagging) == expected


def test_ec2nodeclass_selects_subnets_by_the_given_tags():
    manifest = ec2nodeclass_manifest(
        L4,
        name="l4",
        cluster_name="gpu-a",
        node_role="node",
        tags={},
        subnet_selector={"kubernetes.io/cluster/gpu-a": "shared"},
    )
    assert manifest["spec"]["subnetSelectorTerms"] == [
        {"tags": {"kubernetes.io/cluster/gpu-a": "shared"}}
    ]
    # Security groups are still the cluster's own, found by the discovery tag.
    assert manifest["spec"]["securityGroupSelectorTerms"] == [
        {"tags": {"karpenter.sh/discovery": "gpu-a"}}
    ]
    default = ec2nodeclass_manifest(L4, name="l4", cluster_name="gpu-a", node_role="n", tags={})
    assert default["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "gpu-a"}}]


@pytest.mark.parametrize(
    ("tagging", "expected"),
    [
        ("shared", {"kubernetes.io/cluster/gpu-a": "shared"}),
        ("owned", {"karpenter.sh/discovery": "gpu-a"}),
    ],
)
def test_composed_node_class_selects_the_networks_tag(run_program, tagging, expected):
    """NodePoolArgs derives the selector from the cluster, which takes it from the network."""

    def program():
        network = Network("net", NetworkArgs(cluster_name="gpu-a", spec=existing(tagging)))
        cluster = EksCluster(
            "eks",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu-a", addon_versions=ADDON_VERSIONS), network=network
            ),
        )
        karpenter = Karpenter("karpenter", KarpenterArgs(cluster=cluster))
        NodePool("l4", NodePoolArgs(spec=L4, cluster=cluster, karpenter=karpenter))

    (node_class,) = run_program(program).of_type(NODECLASS)
    assert node_class.inputs["spec"]["subnetSelectorTerms"] == [{"tags": expected}]


def test_gpu_platform_in_shared_mode(run_program):
    from eks_gpu_platform import GpuPlatform
    from eks_gpu_platform.platform import platform_config_from_args

    def program():
        args = {
            "region": "us-west-2",
            "cluster": {"name": "gpu-a", "addon_versions": ADDON_VERSIONS},
            "vpc": {
                "vpc_id": "vpc-0123456789abcdef0",
                "private_subnet_ids": list(SUBNETS),
                "subnet_tagging": "shared",
            },
            "node_pools": [{"name": "l4", "gpus": ["l4"], "limits": {"gpus": 8}}],
        }
        GpuPlatform("platform", platform_config_from_args(args))

    rec = run_program(program)
    subnet_tags = [t for t in tags_of(rec) if t[1]["resourceId"].startswith("subnet-")]
    assert subnet_tags == [
        (
            f"platform-network-private-{i}-cluster",
            {"resourceId": subnet, "key": "kubernetes.io/cluster/gpu-a", "value": "shared"},
            True,
        )
        for i, subnet in enumerate(SUBNETS)
    ]
    classes = rec.of_type(NODECLASS)
    assert sorted(c.name for c in classes) == [
        "platform-pool-general-class",
        "platform-pool-l4-class",
    ]
    for node_class in classes:
        assert node_class.inputs["spec"]["subnetSelectorTerms"] == [
            {"tags": {"kubernetes.io/cluster/gpu-a": "shared"}}
        ]
