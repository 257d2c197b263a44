"""An EFA pool may use an existing cluster placement group (issue 12, item 5): capacity
reservations created in a placement group serve only instances launched into that group."""

import pulumi
import pulumi_kubernetes as k8s
import pytest
from crd_validation import validate

from eks_gpu_platform.nodepool.component import NodePool, NodePoolArgs
from eks_gpu_platform.nodepool.manifests import ec2nodeclass_manifest
from eks_gpu_platform.spec import SpecError

from .pools import CLUSTER, DOMAIN, EFA, ROLE, TAGS, spec

VPC_ID = "vpc-0123456789abcdef0"

RESERVED = {
    **EFA,
    "capacityTypes": ["reserved", "on-demand"],
    "capacityReservations": [{"id": "cr-0123456789abcdef0"}],
}


@pytest.mark.parametrize(
    ("group", "selector"),
    [("pg-0a1b2c3d4e5f", {"id": "pg-0a1b2c3d4e5f"}), ("train-cpg", {"name": "train-cpg"})],
)
def test_the_nodeclass_selects_the_group_by_id_or_name(group, selector):
    manifest = ec2nodeclass_manifest(
        spec({**RESERVED, "placementGroup": group}),
        name="train-p5-48xlarge",
        cluster_name=CLUSTER,
        node_role=ROLE,
        tags=TAGS,
        placement_group=group,
        instance_type="p5.48xlarge",
    )
    assert manifest["spec"]["placementGroupSelector"] == selector
    assert validate(manifest) == []


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"name": "gpu", "gpus": ["l4"], "placementGroup": "pg-0a1b2c3d4e5f"},
            "only applies to efa pools (their nodes share one cluster placement group); this "
            "pool is 'gpu'",
        ),
        ({**EFA, "placementGroup": "pg-NOPE"}, "'pg-NOPE' is not a placement group id"),
        (
            {**EFA, "placementGroup": " cpg"},
            "' cpg' is not a placement group name; expected 1-255 printable characters without "
            "leading or trailing spaces, or an id pg-...",
        ),
    ],
)
def test_bad_placement_group(raw, message):
    with pytest.raises(SpecError) as err:
        spec(raw)
    assert [line.split(": ", 1)[1] for line in err.value.lines] == [message]
    assert err.value.lines[0].split(": ", 1)[0].endswith("placementGroup")


def program(raw: dict):
    def run() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        marker = k8s.core.v1.ConfigMap("ready", opts=pulumi.ResourceOptions(provider=provider))
        NodePool(
            "pool",
            NodePoolArgs(
                spec=spec(raw),
                cluster_name=CLUSTER,
                label_domain=DOMAIN,
                node_role=ROLE,
                k8s_provider=provider,
                vpc_id=VPC_ID,
                gpu_limit=64,
                depends_on=[marker],
            ),
        )

    return run


def test_an_existing_group_is_used_not_created(run_program):
    recording = run_program(program({**RESERVED, "placementGroup": "pg-0a1b2c3d4e5f"}))
    assert recording.of_type("aws:ec2/placementGroup:PlacementGroup") == []
    classes = recording.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert [c.inputs["spec"]["placementGroupSelector"] for c in classes] == [
        {"id": "pg-0a1b2c3d4e5f"}
    ]  # p5 and p5e share one EFA layout: one EC2NodeClass
    created = run_program(program(RESERVED))
    assert len(created.of_type("aws:ec2/placementGroup:PlacementGroup")) == 1
