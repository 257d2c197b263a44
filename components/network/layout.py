"""A new VPC's layout: the private and public subnet CIDRs per AZ, and the tags that let
Karpenter and load balancers find the subnets. Pure.

Private subnets are large (nodes and pods: the VPC CNI gives every pod a VPC address), public
ones small (load balancers, NAT)."""

import ipaddress
from collections.abc import Sequence

from ..errors import SpecError
from ..naming import DISCOVERY_TAG

# A new VPC is cut into eighths: one eighth per AZ for private subnets (up to 6 AZs), and the
# last eighth cut again into eighths for the public subnets.
PRIVATE_SUBNET_SHIFT = 3
PUBLIC_SUBNET_SHIFT = 6


def subnet_layout(cidr: str, az_count: int) -> tuple[list[str], list[str]]:
    """Private and public subnet CIDRs, one of each per AZ (pure; see module docstring)."""
    network = ipaddress.ip_network(cidr)
    eighths = list(network.subnets(prefixlen_diff=PRIVATE_SUBNET_SHIFT))
    private = [str(n) for n in eighths[:az_count]]
    public_pool = list(
        eighths[-1].subnets(prefixlen_diff=PUBLIC_SUBNET_SHIFT - PRIVATE_SUBNET_SHIFT)
    )
    public = [str(n) for n in public_pool[:az_count]]
    return private, public


def subnet_tags(cluster_name: str, *, private: bool) -> dict[str, str]:
    """Tags that let Karpenter and the AWS Load Balancer Controller find the subnets."""
    if private:
        return {DISCOVERY_TAG: cluster_name, "kubernetes.io/role/internal-elb": "1"}
    return {"kubernetes.io/role/elb": "1"}


def zone_at(names: Sequence[str], index: int, az_count: int) -> str:
    """The ``index``-th of the region's zones (``aws.getAvailabilityZones`` names); a
    ``SpecError`` naming ``vpc.azCount`` when the region has fewer zones than the VPC spans."""
    if len(names) < az_count:
        region = names[0][:-1] if names else "the region"
        raise SpecError(
            "vpc",
            [
                (
                    ("az_count",),
                    f"{az_count} is more than the {len(names)} availability zones of {region} "
                    f"that need no opt-in; expected at most {len(names)}",
                )
            ],
            config=True,
        )
    return names[index]
