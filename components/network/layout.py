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


def cluster_subnet_tag(cluster_name: str) -> str:
    """The per-cluster subnet tag key ``kubernetes.io/cluster/<cluster-name>``."""
    return f"kubernetes.io/cluster/{cluster_name}"


def subnet_selector(cluster_name: str, *, create: bool, subnet_tagging: str) -> dict[str, str]:
    """The tag Karpenter selects this cluster's private subnets by (the EC2NodeClass
    ``subnetSelectorTerms``) and, for an existing VPC, the tag ``Network`` writes on them.

    A new VPC, and an existing one in 'owned' or 'none' mode: ``karpenter.sh/discovery`` =
    the cluster name. That key holds one value, so two clusters tagging the same subnets would
    overwrite each other. 'shared': the per-cluster key ``kubernetes.io/cluster/<name>`` =
    ``shared``. The key is the cluster tag EKS names (``kubernetes.io/cluster/my-cluster``,
    https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html) and the one
    kubernetes/cloud-provider-aws reads, one per cluster ("to differentiate multiple logically
    independent clusters": ``TagNameKubernetesClusterPrefix = "kubernetes.io/cluster/"``); its
    value ``ResourceLifecycleShared = "shared"``: "shared between multiple clusters, and should
    not be destroyed if the cluster is destroyed" (pkg/providers/v1/tags.go).
    Karpenter selects the subnets carrying every tag of a term ("Terms are ORed; within a term,
    the fields are ANDed": karpenter-provider-aws v1.15.0 pkg/providers/subnet/subnet.go
    getFilterSets L267-293, and the v1.15 docs, website/content/en/v1.15/concepts/
    nodeclasses.md, subnetSelectorTerms)."""
    if not create and subnet_tagging == "shared":
        return {cluster_subnet_tag(cluster_name): "shared"}
    return {DISCOVERY_TAG: cluster_name}


def vpc_zone_names(
    region_zones: Sequence[str], az_count: int, zones: Sequence[str] = ()
) -> list[str]:
    """The availability zones of a new VPC's subnets, by name (pure): ``zones`` when configured
    (``vpc.zones``; each must be one of the region's), else the first ``az_count`` of the
    region's zone names in name order.

    ``region_zones``: ``aws.getAvailabilityZones`` names of zones that need no opt-in, in ANY
    state (no ``state`` filter: an impaired or constrained zone is still a zone, and dropping it
    would shift every later subnet to another zone, a replacement). Zones a region gains later
    sort after the existing ones in the regions this project models (``a``..``f``), so the
    choice stays put; ``vpc.zones`` pins it whatever happens. A ``SpecError`` naming
    ``vpc.azCount`` or ``vpc.zones[i]`` when the region cannot give them."""
    region = region_zones[0][:-1] if region_zones else "the region"
    if zones:
        known = set(region_zones)
        problems = [
            (
                ("zones", i),
                f"{zone!r} is not an availability zone of {region} that needs no opt-in; "
                f"expected one of {', '.join(sorted(known))}",
            )
            for i, zone in enumerate(zones)
            if zone not in known
        ]
        if problems:
            raise SpecError("vpc", problems, config=True)
        return list(zones)
    if len(region_zones) < az_count:
        raise SpecError(
            "vpc",
            [
                (
                    ("az_count",),
                    f"{az_count} is more than the {len(region_zones)} availability zones of "
                    f"{region} that need no opt-in; expected at most {len(region_zones)}",
                )
            ],
            config=True,
        )
    return sorted(region_zones)[:az_count]


def zone_at(names: Sequence[str], index: int, az_count: int) -> str:
    """The ``index``-th zone ``vpc_zone_names`` chooses from the region's zones (``aws.
    getAvailabilityZones`` names); a ``SpecError`` naming ``vpc.azCount`` when the region has
    fewer zones than the VPC spans."""
    return vpc_zone_names(names, az_count)[index]
