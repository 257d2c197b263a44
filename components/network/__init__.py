"""The network: a new VPC laid out for EKS and Karpenter, or an existing one tagged for discovery.

A new VPC gets, per AZ, a large private subnet (nodes and pods: the VPC CNI gives every pod a VPC
address) and a small public subnet (load balancers, NAT), one NAT gateway (or one per AZ), and
route tables. Private subnets carry ``karpenter.sh/discovery: <cluster>`` so EC2NodeClasses
select them by tag; an existing VPC's private subnets get the same tag through ``aws.ec2.Tag``.
A new VPC's zones are chosen by name (``vpc_zone_names``: ``vpc.zones``, or the region's first
``azCount`` zones by name whatever their state), so they stay put across runs.
"""

from .component import Network, NetworkArgs
from .layout import (
    PRIVATE_SUBNET_SHIFT,
    PUBLIC_SUBNET_SHIFT,
    subnet_layout,
    subnet_tags,
    vpc_zone_names,
)
from .spec import VpcSpec

__all__ = [
    "PRIVATE_SUBNET_SHIFT",
    "PUBLIC_SUBNET_SHIFT",
    "Network",
    "NetworkArgs",
    "VpcSpec",
    "subnet_layout",
    "subnet_tags",
    "vpc_zone_names",
]
