"""The ``NodePool`` component under the recording mocks: children, names, parents, dependencies,
provider, and the EFA pool's placement group, security group and NodeOverlay.
"""

import pulumi
import pulumi_kubernetes as k8s
import pytest

from eks_gpu_platform.nodepool.component import NodePool, NodePoolArgs
from eks_gpu_platform.nodepool.manifests import (
    ec2nodeclass_manifest,
    nodeoverlay_manifest,
    nodepool_manifest,
)
from eks_gpu_platform.spec import SpecError

from .pools import (
    CLUSTER,
    CPU,
    DISCOVERY,
    DOMAIN,
    EFA,
    GPU_RESOURCE,
    MANIFESTS,
    ROLE,
    SPOT,
    TAGS,
    spec,
)

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
        NodePool(
            "pool",
            NodePoolArgs(
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
    # p5.48xlarge and p5e.48xlarge have the same EFA layout (ENA 0/0, efa-only on cards 0-31):
    # one EC2NodeClass and one NodePool named after the pool hold both types and the whole
    # budget (issue 19 blocker 3: a 64-GPU gang fits one NodePool).
    recording = run_program(make_pool(EFA, 64))
    component, kids = component_and_children(recording)
    assert sorted((r.type, r.name) for r in kids) == sorted(
        [
            (PG, "pool-pg"),
            (SG, "pool-efa"),
            (NODECLASS, "pool-class"),
            (NODEPOOL, "pool-pool"),
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

    node_class = by_name[(NODECLASS, "pool-class")]
    pool = by_name[(NODEPOOL, "pool-pool")]
    expected_class = ec2nodeclass_manifest(
        spec(EFA),
        name="train",
        cluster_name=CLUSTER,
        node_role=ROLE,
        tags=TAGS,
        extra_security_group_ids=[sg.id],
        placement_group=pg.outputs["name"],
        instance_type="p5e.48xlarge",  # the same layout as p5.48xlarge
    )
    assert node_class.inputs["metadata"] == {"name": "train"}
    assert node_class.inputs["spec"] == expected_class["spec"]
    assert node_class.inputs["spec"]["networkInterfaces"][0] == {
        "networkCardIndex": 0,
        "deviceIndex": 0,
        "interfaceType": "interface",
    }
    assert len(node_class.inputs["spec"]["networkInterfaces"]) == 33
    assert node_class.inputs["spec"]["securityGroupSelectorTerms"] == [DISCOVERY, {"id": sg.id}]
    assert node_class.inputs["spec"]["placementGroupSelector"] == {"name": pg.outputs["name"]}
    assert pool.inputs["spec"]["limits"] == {GPU_RESOURCE: "64"}
    assert pool.inputs["spec"]["template"]["spec"]["requirements"][1] == {
        "key": "node.kubernetes.io/instance-type",
        "operator": "In",
        "values": ["p5.48xlarge", "p5e.48xlarge"],
    }
    assert pool.inputs == nodepool_manifest(
        spec(EFA),
        name="train",
        node_class="train",
        label_domain=DOMAIN,
        gpu_limit=64,
        instance_type=("p5.48xlarge", "p5e.48xlarge"),
    )
    assert node_class.urn in pool.dependencies
    # Review S4: created after the hugepages overlay, deleted before it.
    assert by_name[(OVERLAY, "pool-hugepages")].urn in pool.dependencies

    overlay = by_name[(OVERLAY, "pool-hugepages")]
    assert overlay.inputs == nodeoverlay_manifest(spec(EFA), label_domain=DOMAIN)
    assert component.registered_outputs == {
        "node_pool_names": ["train"],
        "node_class_names": ["train"],
    }


# p5en.48xlarge (efa-only on cards 0-15) and p5.48xlarge (cards 0-31): two layouts.
TWO_LAYOUTS = {**EFA, "instanceTypes": ["p5en.48xlarge", "p5.48xlarge"], "limits": {"gpus": 72}}


@pytest.mark.parametrize(
    ("shares", "expected"),
    [
        # Greedy in instanceTypes order: the first layout gets the whole budget.
        ({}, {"pool-p5en-48xlarge-pool": "72", "pool-p5-48xlarge-pool": "0"}),
        # typeShares cap the first layout; the rest goes to the next one.
        (
            {"p5en.48xlarge": 40},
            {"pool-p5en-48xlarge-pool": "40", "pool-p5-48xlarge-pool": "32"},
        ),
    ],
    ids=["greedy", "type-shares"],
)
def test_every_custom_resource_uses_the_given_provider_and_waits_for_karpenter(
    run_program, shares, expected
):
    recording = run_program(make_pool({**TWO_LAYOUTS, "typeShares": shares}, 72))
    component, kids = component_and_children(recording)
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
    assert limits == expected
    classes = {
        r.name: len(r.inputs["spec"]["networkInterfaces"]) for r in kids if r.type == NODECLASS
    }
    assert classes == {"pool-p5en-48xlarge-class": 17, "pool-p5-48xlarge-class": 33}
    assert component.registered_outputs["node_pool_names"] == [
        "train-p5en-48xlarge",
        "train-p5-48xlarge",
    ]


def test_efa_pool_without_vpc_id_is_rejected(run_program):
    with pytest.raises(SpecError) as err:
        run_program(make_pool(EFA, 64, vpc_id=None))
    assert err.value.lines == [
        "NodePoolArgs.vpc_id: is required for efa pool 'train': its security group is created "
        "in the VPC; pass the EksCluster component as cluster, or set vpc_id"
    ]
