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
    the fields are ANDed", karpenter-provider-aws v1.14.1 website/content/en/docs/concepts/
    nodeclasses.md, subnetSelectorTerms)."""
    if not create and subnet_tagging == "shared":
        return {cluster_subnet_tag(cluster_name): "shared"}
    return {DISCOVERY_TAG: cluster_name}


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


def vpc_zone_names(region_zones: Sequence[str], az_count: int) -> list[str]:
    """The zones of a new VPC's subnets, in subnet order, from the region's zone names
    (``aws.getAvailabilityZones``, no opt-in): the one place that chooses them (the subnets,
    the EFA zone check and the gang templates' default zone read it). A ``SpecError`` naming
    ``vpc.azCount`` when the region has fewer zones."""
    return [zone_at(region_zones, i, az_count) for i in range(az_count)]
