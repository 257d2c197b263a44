"""EFA node classes never ask for a public IP and never select a public subnet.

Two ways an EFA node ends up public, both refused:

1. ``associatePublicIPAddress: true`` (``check``): EC2 refuses a public IP with several network
   interfaces (InvalidParameterCombination).
2. A ``subnetSelectorTerms`` term that can match a public subnet (``subnet_findings``). Karpenter
   v1.15.0 resolves the terms as follows (``pkg/providers/subnet/subnet.go`` ``getFilterSets``
   L267-293, ``List`` L81-110; ``pkg/apis/v1/ec2nodeclass.go`` L34-41, L180-193):

   - the terms are ORed: each term is its own ``DescribeSubnets`` call, and the node class may
     use any subnet any term returns;
   - a term with an ``id`` selects that subnet by id, whatever else it holds (its ``tags`` are
     ignored; the CRD's rule ``!self.all(x, has(x.id) && has(x.tags))`` refuses id+tags only
     when *every* term has both);
   - a term's tags are ANDed, each a ``tag:<key>=<value>`` filter, or a ``tag-key`` filter when
     the value is ``*`` (any value);
   - a term with an empty ``tags`` map adds no filter: ``DescribeSubnets`` without a filter
     returns every subnet of the account and region;
   - no filter restricts the VPC: a term matches subnets of any VPC.

   A subnet is public when it routes to an internet gateway ("a public subnet has a direct route
   to an internet gateway", https://docs.aws.amazon.com/vpc/latest/userguide/
   configure-subnets.html#subnet-types), maps public IPs on launch, or carries
   ``kubernetes.io/role/elb`` (the tag EKS gives subnets for internet-facing load balancers,
   https://docs.aws.amazon.com/eks/latest/userguide/network-load-balancing.html). The rule knows
   the stack's subnets, route tables, routes and associations; a term that carries the
   ``kubernetes.io/role/elb`` key is refused even when the stack holds no subnet (an existing
   VPC), and so is an empty ``tags`` map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import EC2NODECLASS, efa_only_interfaces, object_name, of_type
from ._props import dig, is_true, mapping, sequence, show

SUBNET = "aws:ec2/subnet:Subnet"
ROUTE = "aws:ec2/route:Route"
ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"
ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
INTERNET_GATEWAY = "aws:ec2/internetGateway:InternetGateway"
PUBLIC_ELB_TAG = "kubernetes.io/role/elb"


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """The public-IP finding of one EC2NodeClass (``[]`` for a class without EFA)."""
    efa = efa_only_interfaces(props)
    if efa == 0 or not is_true(dig(props, "spec", "associatePublicIPAddress")):
        return []
    return [
        f"EC2NodeClass {show(object_name(props))} has {efa} efa-only interfaces and "
        "associatePublicIPAddress: true; EC2 rejects such launches "
        "(InvalidParameterCombination), so set it to false and use private subnets"
    ]


def _known(props: Mapping[str, Any], key: str) -> Any:
    """``props[key]``, or None while it is unknown (a new subnet's id during ``pulumi preview``:
    the engine's proxy raises ``UnknownValueError``, caught by name so rules import no Pulumi).
    The network's unknowns must not silence this rule's other findings in a preview."""
    try:
        return props.get(key)
    except Exception as exc:
        if type(exc).__name__ == "UnknownValueError":
            return None
        raise


def _id(resource: StackResource) -> str | None:
    value = _known(resource.props, "id")
    return value if isinstance(value, str) and value else None


def public_subnets(resources: Sequence[StackResource]) -> dict[str, tuple[str | None, dict]]:
    """The stack's public subnets: resource name -> (subnet id or None, tags); a value unknown
    in a preview counts as absent."""
    gateways = {i for r in of_type(resources, INTERNET_GATEWAY) if (i := _id(r))}

    def to_igw(route: Mapping[str, Any]) -> bool:
        gateway = _known(route, "gatewayId")
        return isinstance(gateway, str) and (gateway in gateways or gateway.startswith("igw-"))

    public_tables = {
        table
        for r in of_type(resources, ROUTE)
        if to_igw(r.props) and isinstance(table := _known(r.props, "routeTableId"), str)
    }
    public_tables |= {
        i
        for r in of_type(resources, ROUTE_TABLE)
        if (i := _id(r)) and any(to_igw(mapping(x)) for x in sequence(_known(r.props, "routes")))
    }
    routed = {
        subnet
        for r in of_type(resources, ASSOCIATION)
        if _known(r.props, "routeTableId") in public_tables
        and isinstance(subnet := _known(r.props, "subnetId"), str)
    }
    out: dict[str, tuple[str | None, dict]] = {}
    for subnet in of_type(resources, SUBNET):
        tags = {str(k): v for k, v in mapping(_known(subnet.props, "tags")).items()}
        sid = _id(subnet)
        if (
            (sid is not None and sid in routed)
            or is_true(_known(subnet.props, "mapPublicIpOnLaunch"))
            or PUBLIC_ELB_TAG in tags
        ):
            out[subnet.name] = (sid, tags)
    return out


def _matches(term_tags: Mapping[str, Any], tags: Mapping[str, Any]) -> bool:
    return all(k in tags and (v == "*" or tags[k] == v) for k, v in term_tags.items())


def _subnet(name: str, sid: str | None) -> str:
    return f"{show(sid)} ({name})" if sid else name


def subnet_findings(
    nodeclass: StackResource, public: Mapping[str, tuple[str | None, dict]]
) -> list[str]:
    """One message per subnet selector term of an EFA class that can match a public subnet."""
    props = nodeclass.props
    head = f"EC2NodeClass {show(object_name(props))} has efa-only interfaces, but"
    out = []
    for i, term in enumerate(sequence(dig(props, "spec", "subnetSelectorTerms"))):
        term = mapping(term)
        where = f"subnetSelectorTerms[{i}]"
        sid = term.get("id")
        if isinstance(sid, str) and sid:
            hits = [_subnet(n, s) for n, (s, _) in public.items() if s == sid]
            if hits:
                out.append(
                    f"{head} {where} selects subnet {hits[0]} by id, a public subnet (its "
                    "route table leads to an internet gateway, or it is tagged "
                    f"{PUBLIC_ELB_TAG}); select the stack's private subnets"
                )
            continue
        tags = mapping(term.get("tags"))
        if "tags" in term and not tags:
            out.append(
                f"{head} {where} has an empty tags map, which Karpenter turns into no filter: it "
                "selects every subnet of the region, public ones included; select the stack's "
                "private subnets by their tags"
            )
            continue
        hits = [_subnet(n, s) for n, (s, t) in sorted(public.items()) if _matches(tags, t)]
        if hits:
            out.append(
                f"{head} {where} tags {show(dict(tags))} match public subnets "
                f"{', '.join(hits)} (tags in a term are ANDed, '*' matches any value, and the "
                "terms are ORed); select the stack's private subnets"
            )
        elif PUBLIC_ELB_TAG in tags:
            out.append(
                f"{head} {where} selects by {PUBLIC_ELB_TAG}, the tag of public subnets for "
                "internet-facing load balancers; select private subnets"
            )
    return out


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    public = public_subnets(resources)
    out: list[str] = []
    for nodeclass in of_type(resources, EC2NODECLASS):
        if efa_only_interfaces(nodeclass.props) == 0:
            continue
        for message in [*check(nodeclass.props, config), *subnet_findings(nodeclass, public)]:
            out.append(Finding(message, nodeclass.urn))
    return out


RULE = Rule(
    name="efa-nodeclass-no-public-ip",
    description=(
        "EC2NodeClasses with efa-only interfaces must not request a public IP nor select a "
        "public subnet (by id, by tags that match one, by an empty tags map, or by the "
        "kubernetes.io/role/elb tag): EC2 refuses to launch instances with several EFA "
        "interfaces and a public IP, and EFA nodes belong in private subnets."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="medium",
    check_stack=check_stack,
)
