import pytest
from policy_baselines import (
    DELETE,
    EFA_SG,
    change,
    compliant_stack,
    props_of,
    resource,
    urn_of,
    without,
)

from eks_gpu_platform.policies.rules.efa_nodepool_topology import EC2_SG_RULE, RULE, check_stack

CONFIG = RULE.config()
CLASS = "platform-pool-train-efa-p5-48xlarge-class"
POOL = "platform-pool-train-efa-p5-48xlarge"
ZONE = ("spec", "template", "spec", "requirements", 4)
NO_SG = (
    'EC2NodeClass "train-efa-p5-48xlarge" has efa-only interfaces but selects security groups '
    f'"{EFA_SG}" with both an all-traffic self-referencing ingress and egress rule in this '
    "stack; EFA traffic between its nodes is dropped"
)


def test_compliant_stack():
    assert check_stack(compliant_stack(), CONFIG) == []


@pytest.mark.parametrize("value", [DELETE, {}], ids=["unset", "empty"])
def test_no_placement_group(value):
    stack = compliant_stack()
    change(props_of(stack, CLASS), ("spec", "placementGroupSelector"), value)
    findings = check_stack(stack, CONFIG)
    assert findings == [
        'EC2NodeClass "train-efa-p5-48xlarge" has 4 efa-only interfaces but no '
        "placementGroupSelector (name or id); EFA nodes must share a cluster placement group"
    ]
    assert findings[0].urn == urn_of(stack, CLASS)


def test_placement_group_by_id():
    stack = compliant_stack()
    change(props_of(stack, CLASS), ("spec", "placementGroupSelector"), {"id": "pg-0123abcd"})
    assert check_stack(stack, CONFIG) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("ipProtocol",), "tcp"),
        (("referencedSecurityGroupId",), "sg-0000000000000000f"),
    ],
    ids=["tcp-only", "not-self"],
)
def test_ingress_rule_not_self_all_traffic(path, value):
    stack = compliant_stack()
    change(props_of(stack, "platform-pool-train-efa-efa-self-in"), path, value)
    assert check_stack(stack, CONFIG) == [NO_SG, NO_SG.replace("p5-48xlarge", "p5e-48xlarge")]


def test_no_egress_rule():
    stack = without(compliant_stack(), "platform-pool-train-efa-efa-self-out")
    assert check_stack(stack, CONFIG) == [NO_SG, NO_SG.replace("p5-48xlarge", "p5e-48xlarge")]


def test_ec2_security_group_rules_count():
    stack = without(
        without(compliant_stack(), "platform-pool-train-efa-efa-self-in"),
        "platform-pool-train-efa-efa-self-out",
    )
    for direction in ("ingress", "egress"):
        props = {
            "type": direction,
            "securityGroupId": EFA_SG,
            "self": True,
            "protocol": "-1",
            "fromPort": 0,
            "toPort": 0,
        }
        stack.append(resource(EC2_SG_RULE, f"efa-self-{direction}", props))
    assert check_stack(stack, CONFIG) == []


def test_no_security_group_selected_by_id():
    stack = compliant_stack()
    del props_of(stack, CLASS)["spec"]["securityGroupSelectorTerms"][1]
    assert check_stack(stack, CONFIG) == [
        'EC2NodeClass "train-efa-p5-48xlarge" has efa-only interfaces but selects no security '
        "group by id with both an all-traffic self-referencing ingress and egress rule in this "
        "stack; EFA traffic between its nodes is dropped"
    ]


@pytest.mark.parametrize(
    ("value", "pinned"),
    [
        (
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b", "a"]},
            '2 zones ("a", "b")',
        ),
        ({"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["a"]}, "no zone"),
        ({"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}, "no zone"),
    ],
    ids=["two-zones", "not-in", "unpinned"],
)
def test_zone_not_pinned(value, pinned):
    stack = compliant_stack()
    change(props_of(stack, POOL), ZONE, value)
    findings = check_stack(stack, CONFIG)
    assert findings == [
        'NodePool "train-efa-p5-48xlarge" uses EFA EC2NodeClass "train-efa-p5-48xlarge" but pins '
        f"{pinned}; require exactly one topology.kubernetes.io/zone so its nodes can join one "
        "cluster placement group"
    ]
    assert findings[0].urn == urn_of(stack, POOL)


def test_zone_id_pins_too():
    stack = compliant_stack()
    value = {"key": "topology.k8s.aws/zone-id", "operator": "In", "values": ["usw2-az1"]}
    change(props_of(stack, POOL), ZONE, value)
    assert check_stack(stack, CONFIG) == []
