"""EFA pools: one zone, a placement group, and a security group open to itself."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import (
    EC2NODECLASS,
    NODEPOOL,
    efa_only_interfaces,
    node_class_name,
    object_name,
    of_type,
    pinned_zones,
)
from ._props import dig, is_true, mapping, sequence, show, show_list

VPC_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
VPC_EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
EC2_SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
ALL_PROTOCOLS = ("-1", "all")
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
CLUSTER_STRATEGY = "cluster"


def _group_of(selector: Mapping[str, Any], resources: Sequence[StackResource]) -> Any:
    """The stack's ``aws.ec2.PlacementGroup`` a ``placementGroupSelector`` names (by name or
    id), or ``None`` (a group made outside the stack, which the rule cannot see). Offline the
    group's inputs carry no auto-name; Pulumi auto-names it ``<logical name>-<7 hex>``."""
    wanted = {selector.get(k) for k in ("name", "id")} - {None, ""}
    for group in of_type(resources, PLACEMENT_GROUP):
        keys = {group.props.get(k) for k in ("name", "placementGroupId", "id")} - {None, ""}
        autonamed = any(
            isinstance(w, str) and re.fullmatch(rf"{re.escape(group.name)}-[0-9a-f]{{7}}", w)
            for w in wanted
        )
        if wanted & keys or ("name" not in group.props and autonamed):
            return group
    return None


def _self_rules(resources: Sequence[StackResource]) -> tuple[set[str], set[str]]:
    """Ids of security groups with an all-traffic self-referencing ingress / egress rule."""
    ingress: set[str] = set()
    egress: set[str] = set()
    for r in resources:
        props = r.props
        sg = props.get("securityGroupId")
        if not isinstance(sg, str) or not sg:
            continue
        if r.type in (VPC_INGRESS, VPC_EGRESS):
            if (
                props.get("referencedSecurityGroupId") == sg
                and str(props.get("ipProtocol")) in ALL_PROTOCOLS
            ):
                (ingress if r.type == VPC_INGRESS else egress).add(sg)
        elif (
            r.type == EC2_SG_RULE
            and str(props.get("protocol")) in ALL_PROTOCOLS
            and (is_true(props.get("self")) or props.get("sourceSecurityGroupId") == sg)
        ):
            direction = props.get("type")
            if direction == "ingress":
                ingress.add(sg)
            elif direction == "egress":
                egress.add(sg)
    return ingress, egress


def _class_problems(
    nodeclass: StackResource,
    ingress: set[str],
    egress: set[str],
    efa: int,
    resources: Sequence[StackResource],
) -> list[str]:
    name = object_name(nodeclass.props)
    out = []
    selector = mapping(dig(nodeclass.props, "spec", "placementGroupSelector"))
    if not any(isinstance(selector.get(k), str) and selector.get(k) for k in ("name", "id")):
        out.append(
            Finding(
                f'EC2NodeClass "{name}" has {efa} efa-only interfaces but no '
                "placementGroupSelector (name or id); EFA nodes must share a cluster "
                "placement group",
                nodeclass.urn,
            )
        )
    elif (group := _group_of(selector, resources)) is not None and (
        str(group.props.get("strategy")).lower() != CLUSTER_STRATEGY
    ):
        out.append(
            Finding(
                f'EC2NodeClass "{name}" has efa-only interfaces but its placement group '
                f'"{group.name}" has strategy {show(group.props.get("strategy"))}, not '
                '"cluster"; only a cluster group keeps EFA nodes on one low-latency network '
                "spine",
                nodeclass.urn,
            )
        )
    ids = [
        term_id
        for term in sequence(dig(nodeclass.props, "spec", "securityGroupSelectorTerms"))
        if isinstance(term_id := mapping(term).get("id"), str) and term_id
    ]
    if not any(sg in ingress and sg in egress for sg in ids):
        selected = f"security groups {show_list(ids)}" if ids else "no security group by id"
        out.append(
            Finding(
                f'EC2NodeClass "{name}" has efa-only interfaces but selects {selected} with '
                "both an all-traffic self-referencing ingress and egress rule in this stack; "
                "EFA traffic between its nodes is dropped",
                nodeclass.urn,
            )
        )
    return out


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    ingress, egress = _self_rules(resources)
    efa_classes = {}
    out: list[str] = []
    for nodeclass in of_type(resources, EC2NODECLASS):
        efa = efa_only_interfaces(nodeclass.props)
        if efa:
            efa_classes[object_name(nodeclass.props)] = nodeclass
            out.extend(_class_problems(nodeclass, ingress, egress, efa, resources))
    for pool in of_type(resources, NODEPOOL):
        target = node_class_name(pool.props)
        if target not in efa_classes:
            continue
        zones = pinned_zones(pool.props)
        if zones is not None and len(zones) == 1:
            continue
        pinned = "no zone" if zones is None else f"{len(zones)} zones ({show_list(sorted(zones))})"
        out.append(
            Finding(
                f'NodePool "{object_name(pool.props)}" uses EFA EC2NodeClass "{target}" but pins '
                f"{pinned}; require exactly one topology.kubernetes.io/zone so its nodes can "
                "join one cluster placement group",
                pool.urn,
            )
        )
    return out


RULE = Rule(
    name="efa-nodepool-topology",
    description=(
        "EFA pools (an EC2NodeClass with efa-only interfaces) must pin exactly one zone in their "
        "NodePools, select a cluster placement group, and include a security group with "
        "all-traffic self-referencing ingress and egress rules: EFA needs all three to carry "
        "traffic between nodes at all."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="high",
    check_stack=check_stack,
)
