"""The network: a new VPC laid out for EKS and Karpenter, or an existing one tagged for discovery.

A new VPC gets, per AZ, a large private subnet (nodes and pods: the VPC CNI gives every pod a VPC
address) and a small public subnet (load balancers, NAT), one NAT gateway (or one per AZ), and
route tables. Private subnets carry ``karpenter.sh/discovery: <cluster>`` so EC2NodeClasses
select them by tag; an existing VPC's private subnets get the same tag through ``aws.ec2.Tag``.
A new VPC's zones are chosen by name (``vpc_zone_names``: ``vpc.zones``, or the region's first
``azCount`` zones by name whatever their state), so they stay put across runs.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from .layout import (
    PRIVATE_SUBNET_SHIFT,
    PUBLIC_SUBNET_SHIFT,
    subnet_layout,
    subnet_tags,
    vpc_zone_names,
)
from .spec import VpcSpec

if TYPE_CHECKING:
    from .component import Network, NetworkArgs

# Loaded on first use: these load the Pulumi SDKs, which a reader of the specs (the stack's
# validation) does not need (lazy.py).
__getattr__ = lazy_exports(
    __name__,
    {
        "Network": ".component",
        "NetworkArgs": ".component",
    },
)

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
