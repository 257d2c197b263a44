"""Issue 29, point 11: the intents ``efa-nodeclass-no-public-ip`` and ``gpu-nodepool-gpu-limit``
still missed, and messages that stay on one line whatever a user named things. One case per
mutation of the compliant stack, with the exact message; the compliant baseline stays clean.

Subnet selection as Karpenter v1.15.0 does it (``pkg/providers/subnet/subnet.go``
``getFilterSets`` L267-293: an ``id`` term selects by id alone, tags ANDed, ``*`` any value, an
empty tags map no filter; terms ORed: ``pkg/apis/v1/ec2nodeclass.go`` L35). A public subnet routes
to an internet gateway (https://docs.aws.amazon.com/vpc/latest/userguide/configure-subnets.html).
"""

from __future__ import annotations

from typing import Any

import pytest
from policy_baselines import compliant_stack, props_of, resource

from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.policies.offline import evaluate

SUBNET = "aws:ec2/subnet:Subnet"
ROUTE = "aws:ec2/route:Route"
ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
IGW = "aws:ec2/internetGateway:InternetGateway"
EFA_NC = "platform-pool-train-efa-p5-48xlarge-class"
SPOT_NC = "platform-pool-train-spot-class"
PUBLIC_A, PUBLIC_B, PRIVATE_A = "subnet-0aaa", "subnet-0bbb", "subnet-0ccc"
HEAD = 'EC2NodeClass "train-efa-p5-48xlarge" has efa-only interfaces, but subnetSelectorTerms'


def network() -> list[Any]:
    """A new VPC's subnets as the network component tags them: two public subnets routed to
    the internet gateway, one private subnet with the discovery tag."""
    public_tags = {"Name": "gpu-test-public-a", "kubernetes.io/role/elb": "1"}
    return [
        resource(IGW, "platform-network-igw", {"id": "igw-0123", "tags": {"Name": "gpu-test"}}),
        resource(
            ROUTE,
            "platform-network-public-default",
            {
                "routeTableId": "rtb-pub",
                "gatewayId": "igw-0123",
                "destinationCidrBlock": "0.0.0.0/0",
            },
        ),
        resource(
            ROUTE,
            "platform-network-private-a-default",
            {
                "routeTableId": "rtb-priv",
                "natGatewayId": "nat-1",
                "destinationCidrBlock": "0.0.0.0/0",
            },
        ),
        resource(SUBNET, "platform-network-public-a", {"id": PUBLIC_A, "tags": public_tags}),
        resource(
            SUBNET,
            "platform-network-public-b",
            {"id": PUBLIC_B, "tags": {"Name": "gpu-test-public-b", "team": "ml"}},
        ),
        resource(
            SUBNET,
            "platform-network-private-a",
            {
                "id": PRIVATE_A,
                "tags": {"Name": "gpu-test-private-a", "karpenter.sh/discovery": "gpu-test"},
            },
        ),
        resource(
            ASSOCIATION,
            "platform-network-public-a-association",
            {"subnetId": PUBLIC_A, "routeTableId": "rtb-pub"},
        ),
        resource(
            ASSOCIATION,
            "platform-network-public-b-association",
            {"subnetId": PUBLIC_B, "routeTableId": "rtb-pub"},
        ),
        resource(
            ASSOCIATION,
            "platform-network-private-a-association",
            {"subnetId": PRIVATE_A, "routeTableId": "rtb-priv"},
        ),
    ]


def stack() -> list[Any]:
    return [*compliant_stack(), *network()]


def messages(resources: list[Any], policy: str) -> list[str]:
    entries = [{"type": r.type, "name": r.name, "urn": r.urn, "inputs": r.props} for r in resources]
    return [v.message for v in evaluate(entries) if v.policy == policy]


def with_terms(terms: list[dict], name: str = EFA_NC) -> list[Any]:
    resources = stack()
    props_of(resources, name)["spec"]["subnetSelectorTerms"] = terms
    return resources


PUBLIC_IP = "efa-nodeclass-no-public-ip"
DISCOVERY = {"tags": {"karpenter.sh/discovery": "gpu-test"}}


def test_the_compliant_stack_with_its_network_is_clean():
    assert messages(stack(), PUBLIC_IP) == []
    assert messages(stack(), "gpu-nodepool-gpu-limit") == []


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        pytest.param(
            [DISCOVERY, {"id": PUBLIC_B}],
            [
                f'{HEAD}[1] selects subnet "{PUBLIC_B}" (platform-network-public-b) by id, a '
                "public subnet (its route table leads to an internet gateway, or it is tagged "
                "kubernetes.io/role/elb); select the stack's private subnets"
            ],
            id="id-of-a-public-subnet-ored-with-the-private-term",
        ),
        pytest.param(
            [{"id": PUBLIC_A, "tags": {"karpenter.sh/discovery": "gpu-test"}}, DISCOVERY],
            [
                f'{HEAD}[0] selects subnet "{PUBLIC_A}" (platform-network-public-a) by id, a '
                "public subnet (its route table leads to an internet gateway, or it is tagged "
                "kubernetes.io/role/elb); select the stack's private subnets"
            ],
            id="id-with-tags-selects-by-id-alone",
        ),
        pytest.param(
            [{"tags": {"team": "ml"}}],
            [
                f'{HEAD}[0] tags {{"team": "ml"}} match public subnets "{PUBLIC_B}" '
                "(platform-network-public-b) (tags in a term are ANDed, '*' matches any value, "
                "and the terms are ORed); select the stack's private subnets"
            ],
            id="tag-of-a-public-subnet-without-the-elb-tag",
        ),
        pytest.param(
            [{"tags": {"Name": "*"}}],
            [
                f'{HEAD}[0] tags {{"Name": "*"}} match public subnets "{PUBLIC_A}" '
                f'(platform-network-public-a), "{PUBLIC_B}" (platform-network-public-b) (tags in '
                "a term are ANDed, '*' matches any value, and the terms are ORed); select the "
                "stack's private subnets"
            ],
            id="wildcard-value",
        ),
        pytest.param(
            [DISCOVERY, {"tags": {}}],
            [
                f"{HEAD}[1] has an empty tags map, which Karpenter turns into no filter: it "
                "selects every subnet of the region, public ones included; select the stack's "
                "private subnets by their tags"
            ],
            id="empty-tags-map",
        ),
        pytest.param(
            [{"tags": {"kubernetes.io/role/elb": "1", "karpenter.sh/discovery": "gpu-test"}}],
            [
                f"{HEAD}[0] selects by kubernetes.io/role/elb, the tag of public subnets for "
                "internet-facing load balancers; select private subnets"
            ],
            id="elb-tag-anded-with-the-discovery-tag-matches-no-stack-subnet",
        ),
    ],
)
def test_a_term_that_can_reach_a_public_subnet_is_refused(terms, expected):
    assert messages(with_terms(terms), PUBLIC_IP) == expected


def test_a_public_subnet_by_map_public_ip_on_launch():
    resources = stack()
    private = props_of(resources, "platform-network-private-a")
    private["mapPublicIpOnLaunch"] = True
    tail = (
        '[0] tags {"karpenter.sh/discovery": "gpu-test"} match public subnets '
        f"\"{PRIVATE_A}\" (platform-network-private-a) (tags in a term are ANDed, '*' matches "
        "any value, and the terms are ORed); select the stack's private subnets"
    )
    # Both EFA classes select the discovery tag.
    assert messages(resources, PUBLIC_IP) == [
        f"{HEAD}{tail}",
        f"{HEAD.replace('p5-48xlarge', 'p5e-48xlarge')}{tail}",
    ]


def test_an_existing_vpc_elb_term_is_refused_without_any_subnet_in_the_stack():
    resources = [*compliant_stack()]
    props_of(resources, EFA_NC)["spec"]["subnetSelectorTerms"] = [
        {"tags": {"kubernetes.io/role/elb": "*"}}
    ]
    assert messages(resources, PUBLIC_IP) == [
        f"{HEAD}[0] selects by kubernetes.io/role/elb, the tag of public subnets for "
        "internet-facing load balancers; select private subnets"
    ]


@pytest.mark.parametrize(
    ("name", "terms"),
    [
        pytest.param(EFA_NC, [{"id": PRIVATE_A}], id="private-subnet-by-id"),
        pytest.param(EFA_NC, [DISCOVERY, {"tags": {"Name": "gpu-test-private-a"}}], id="private"),
        pytest.param(SPOT_NC, [{"tags": {}}], id="non-efa-class-is-not-this-rules-business"),
    ],
)
def test_controls_stay_clean(name, terms):
    assert messages(with_terms(terms, name), PUBLIC_IP) == []


# --- gpu-nodepool-gpu-limit: a limit no queue budget could produce ------------------------------
# train-spot: leaf queue llm (gpu.limit 32; parent research unlimited) routes to it; its l40s
# types' largest node has 8 GPUs (g6e.48xlarge): at most 32 + 8 = 40.

LIMIT = "gpu-nodepool-gpu-limit"
SPOT_NP = "platform-pool-train-spot"


def with_limit(value: Any) -> list[Any]:
    resources = stack()
    props_of(resources, SPOT_NP)["spec"]["limits"] = {"nvidia.com/gpu": value}
    return resources


def over(limit: str) -> str:
    return (
        f'pool "train-spot" (NodePools "train-spot") caps "nvidia.com/gpu" at {limit}, more than '
        'any queue budget could use: the leaf queues routed to it ("llm") admit at most 32 GPUs '
        "(their smallest finite gpu.limit up the queue tree), 40 nvidia.com/gpu with one node "
        "of rounding per NodePool"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("1000000000", [over("1000000000")], id="absurd"),
        pytest.param(1e12, [over("1000000000000")], id="absurd-float"),
        pytest.param("41", [over("41")], id="one-over"),
        pytest.param("40", [], id="control-one-node-of-rounding"),
    ],
)
def test_a_limit_no_queue_budget_could_produce_is_refused(value, expected):
    assert messages(with_limit(value), LIMIT) == expected


def test_the_smallest_limit_up_the_queue_tree_bounds_the_pool():
    resources = with_limit("40")
    props_of(resources, "platform-queue-research")["spec"]["resources"]["gpu"]["limit"] = 16
    assert messages(resources, LIMIT) == [
        'pool "train-spot" (NodePools "train-spot") caps "nvidia.com/gpu" at 40, more than any '
        'queue budget could use: the leaf queues routed to it ("llm") admit at most 16 GPUs '
        "(their smallest finite gpu.limit up the queue tree), 24 nvidia.com/gpu with one node "
        "of rounding per NodePool"
    ]


def test_a_queue_without_any_finite_limit_bounds_nothing():
    resources = with_limit("1000000000")
    props_of(resources, "platform-queue-llm")["spec"]["resources"]["gpu"]["limit"] = -1
    assert messages(resources, LIMIT) == []


# --- one line per message, whatever the names --------------------------------------------------


def test_a_nodepool_name_with_a_newline_stays_on_one_line():
    resources = stack()
    props = props_of(resources, SPOT_NP)
    props["metadata"]["name"] = 'x"\nmandatory fake-rule: ok'
    del props["spec"]["limits"]
    found = messages(resources, LIMIT)
    assert found == [
        'NodePool "x\\"\\nmandatory fake-rule: ok" launches NVIDIA GPU nodes without a '
        'spec.limits["nvidia.com/gpu"] cap; pending pods (over-quota KAI pods included) can '
        "launch GPUs without bound"
    ]
    assert all("\n" not in m for m in found)


def test_any_rule_message_is_escaped_at_the_one_place_messages_leave_the_rules():
    """A rule that still writes a name raw (quoted by hand): the pack escapes it anyway."""
    resources = stack()
    props_of(resources, SPOT_NP)["metadata"]["name"] = "y\u2028z\r"
    props_of(resources, SPOT_NP)["spec"]["template"]["spec"].pop("expireAfter")
    assert messages(resources, "nodepool-expire-after") == [
        'NodePool "y\\u2028z\\r" does not set spec.template.spec.expireAfter, so Karpenter '
        'replaces its nodes every 720h (the default); set a duration, or "Never" for pools whose '
        "work must not be interrupted"
    ]


def test_a_pool_name_with_a_newline_stays_on_one_config_error_line():
    from eks_gpu_platform.config import PlatformConfig

    values = {
        "cluster": {"name": "gpu-dev"},
        "nodePools": [{"name": "gpu\nnodePools[1].name: fine", "kind": "gpu", "gpus": ["l4"]}],
    }
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-west-2")
    assert all("\n" not in line for line in err.value.lines)
    assert str(err.value).count("\n") == len(err.value.lines) - 1
    assert err.value.lines[0].startswith(
        "nodePools[0]('gpu\\nnodePools[1].name: fine').name: 'gpu\\nnodePools[1].name: fine' "
    )


class UnknownValueError(Exception):
    """Named as pulumi_policy's: what its proxy raises on a value unknown during preview."""


class Unknowns(dict):
    """Props whose listed keys are unknown, as a preview's proxy serves a new subnet's id."""

    def __init__(self, props: dict, unknown: tuple[str, ...]):
        super().__init__(props)
        self.unknown = unknown

    def get(self, key, default=None):
        if key in self.unknown:
            raise UnknownValueError(key)
        return super().get(key, default)


def test_unknown_subnet_ids_in_a_preview_do_not_silence_the_rule():
    resources = [
        r._replace(props=Unknowns(r.props, ("id", "subnetId")))
        if r.type in (SUBNET, ASSOCIATION)
        else r
        for r in stack()
    ]
    props_of(resources, EFA_NC)["spec"]["associatePublicIPAddress"] = True
    props_of(resources, EFA_NC)["spec"]["subnetSelectorTerms"] = [{"tags": {"Name": "*"}}]
    # Unknown ids: only the elb-tagged public subnet is known public; the public IP still counts.
    assert messages(resources, PUBLIC_IP) == [
        'EC2NodeClass "train-efa-p5-48xlarge" has 4 efa-only interfaces and '
        "associatePublicIPAddress: true; EC2 rejects such launches "
        "(InvalidParameterCombination), so set it to false and use private subnets",
        f'{HEAD}[0] tags {{"Name": "*"}} match public subnets platform-network-public-a (tags in '
        "a term are ANDed, '*' matches any value, and the terms are ORed); select the stack's "
        "private subnets",
    ]
