"""The ``Network`` component and its ``NetworkArgs``: a new VPC with its subnets, gateways and
route tables, or an existing VPC's private subnets tagged for Karpenter discovery."""

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..naming import TYPE_PREFIX
from ..spec import SpecError, require_instance, show
from .layout import subnet_layout, subnet_selector, subnet_tags, vpc_zone_names, zone_at
from .spec import VpcSpec


@dataclass(frozen=True, kw_only=True)
class NetworkArgs:
    """Inputs of ``Network``.

    ``cluster_name``: the EKS cluster's name (``ClusterSpec.name``), the value of the
    ``karpenter.sh/discovery`` tag Karpenter selects the private subnets by. ``spec``: a new
    VPC by default.
    """

    cluster_name: str
    spec: VpcSpec = VpcSpec()
    tags: Mapping[str, str] = field(default_factory=dict)
    protect: bool = False

    def __post_init__(self) -> None:
        problems = require_instance(self, "spec", VpcSpec)
        if not isinstance(self.cluster_name, str):
            problems.append((("cluster_name",), f"{show(self.cluster_name)} is not a string"))
        if problems:
            raise SpecError(type(self).__name__, problems)


class Network(pulumi.ComponentResource):
    """A VPC with private subnets tagged for Karpenter discovery."""

    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[Sequence[str]]
    public_subnet_ids: pulumi.Output[Sequence[str]]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{TYPE_PREFIX}Network", name, None, opts)
        spec, tags = args.spec, dict(args.tags)
        # The cluster the subnets are tagged for (EksClusterArgs checks it is its own).
        self.discovery_cluster_name = args.cluster_name
        # The tag Karpenter selects the private subnets by (EC2NodeClass subnetSelectorTerms):
        # the per-cluster key in 'shared' mode, so clusters sharing subnets do not collide.
        self.subnet_selector = subnet_selector(
            args.cluster_name, create=spec.create, subnet_tagging=spec.subnet_tagging
        )
        child = pulumi.ResourceOptions(parent=self)
        # Parented to the component: the zones of its AWS provider's region. Only zones that
        # need no opt-in: an opted-in Local or Wavelength Zone is "available" too, but lacks
        # most instance types and services ("Only Availability Zones (no Local Zones)":
        # pulumi_aws/get_availability_zones.py, the opt-in-status filter example).
        azs = aws.get_availability_zones_output(
            state="available",
            filters=[{"name": "opt-in-status", "values": ["opt-in-not-required"]}],
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        # The region's zone names, and the zones of the VPC's private subnets (an EFA pool's
        # zone is checked against both: nodepool/zones.py).
        self.region_zones: pulumi.Output[list[str]] = azs.names
        self.zones: pulumi.Output[list[str | None]]
        # What nodes and controllers need to reach AWS and the internet (routes, their table
        # associations, NAT gateways) or to find the subnets (discovery tags). Whatever runs
        # on the nodes depends on these, so `pulumi destroy` removes them only afterwards.
        self.egress: list[pulumi.Resource] = []
        if spec.create:
            self._create(name, spec, args.cluster_name, tags, child, args.protect, azs)
            self.zones = azs.names.apply(functools.partial(vpc_zone_names, az_count=spec.azs))
        else:
            self.zones = pulumi.Output.all(
                *[
                    aws.ec2.get_subnet_output(
                        id=subnet_id, opts=pulumi.InvokeOutputOptions(parent=self)
                    ).availability_zone
                    for subnet_id in spec.private_subnet_ids
                ]
            )
            self.vpc_id = pulumi.Output.from_input(spec.vpc_id or "")
            self.private_subnet_ids = pulumi.Output.from_input(list(spec.private_subnet_ids))
            self.public_subnet_ids = pulumi.Output.from_input(list(spec.public_subnet_ids))
            # aws.ec2.Tag manages one tag of a subnet it does not own ("Manages an individual
            # EC2 resource tag", pulumi_aws/ec2/tag.py L174). Create sets the key (CreateTags
            # overwrites any value it had, e.g. another cluster's); delete calls DeleteTags with
            # the key and this stack's value, so the key goes unless another stack changed the
            # value since (terraform-provider-aws resourceAwsEc2TagDelete; the version pulumi-aws
            # 7.51.1 pins is unverified). A value that was there before is not restored.
            # 'shared' writes the per-cluster key kubernetes.io/cluster/<name>=shared instead
            # (layout.subnet_selector), which no other cluster writes, and keeps it on destroy
            # (retain_on_delete: "the providers Delete method will not be called",
            # pulumi/resource.py L572, 3.272.0): shared subnets keep their tags. 'none' leaves
            # the subnets alone: their owner tagged them for this cluster.
            shared = spec.subnet_tagging == "shared"
            ((key, value),) = self.subnet_selector.items()
            for i, subnet_id in enumerate(
                spec.private_subnet_ids if spec.subnet_tagging != "none" else ()
            ):
                tag = aws.ec2.Tag(
                    f"{name}-private-{i}-{'cluster' if shared else 'discovery'}",
                    resource_id=subnet_id,
                    key=key,
                    value=value,
                    opts=pulumi.ResourceOptions(parent=self, retain_on_delete=shared),
                )
                self.egress.append(tag)
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "private_subnet_ids": self.private_subnet_ids,
                "public_subnet_ids": self.public_subnet_ids,
            }
        )

    def _create(
        self,
        name: str,
        spec: VpcSpec,
        cluster: str,
        tags: dict[str, str],
        child: pulumi.ResourceOptions,
        protect: bool,
        azs: pulumi.Output[aws.GetAvailabilityZonesResult],
    ) -> None:
        private_cidrs, public_cidrs = subnet_layout(spec.vpc_cidr, spec.azs)
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=spec.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={**tags, "Name": f"{cluster}-vpc"},
            opts=pulumi.ResourceOptions(parent=self, protect=protect),
        )
        igw = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=vpc.id, tags={**tags, "Name": f"{cluster}-igw"}, opts=child
        )
        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt",
            vpc_id=vpc.id,
            tags={**tags, "Name": f"{cluster}-public"},
            opts=child,
        )
        public_default = aws.ec2.Route(
            f"{name}-public-default",
            route_table_id=public_rt.id,
            destination_cidr_block="0.0.0.0/0",
            gateway_id=igw.id,
            opts=child,
        )
        self.egress.append(public_default)
        public, private, nats = [], [], []
        for i in range(spec.azs):
            # Checked against the region's real zones at run time (vpc.azCount).
            az = azs.names.apply(functools.partial(zone_at, index=i, az_count=spec.azs))
            suffix = chr(ord("a") + i)
            pub = aws.ec2.Subnet(
                f"{name}-public-{suffix}",
                vpc_id=vpc.id,
                cidr_block=public_cidrs[i],
                availability_zone=az,
                map_public_ip_on_launch=False,
                tags={
                    **tags,
                    **subnet_tags(cluster, private=False),
                    "Name": f"{cluster}-public-{suffix}",
                },
                opts=child,
            )
            public_assoc = aws.ec2.RouteTableAssociation(
                f"{name}-public-{suffix}",
                subnet_id=pub.id,
                route_table_id=public_rt.id,
                opts=child,
            )
            self.egress.append(public_assoc)
            public.append(pub)
            if i == 0 or spec.nat_gateway_per_az:
                eip = aws.ec2.Eip(
                    f"{name}-nat-{suffix}",
                    domain="vpc",
                    tags={**tags, "Name": f"{cluster}-nat-{suffix}"},
                    opts=child,
                )
                nats.append(
                    aws.ec2.NatGateway(
                        f"{name}-nat-{suffix}",
                        allocation_id=eip.id,
                        subnet_id=pub.id,
                        tags={**tags, "Name": f"{cluster}-nat-{suffix}"},
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                    )
                )
                self.egress.append(nats[-1])
            priv = aws.ec2.Subnet(
                f"{name}-private-{suffix}",
                vpc_id=vpc.id,
                cidr_block=private_cidrs[i],
                availability_zone=az,
                tags={
                    **tags,
                    **subnet_tags(cluster, private=True),
                    "Name": f"{cluster}-private-{suffix}",
                },
                opts=child,
            )
            rt = aws.ec2.RouteTable(
                f"{name}-private-{suffix}",
                vpc_id=vpc.id,
                tags={**tags, "Name": f"{cluster}-private-{suffix}"},
                opts=child,
            )
            private_default = aws.ec2.Route(
                f"{name}-private-{suffix}-default",
                route_table_id=rt.id,
                destination_cidr_block="0.0.0.0/0",
                nat_gateway_id=nats[-1].id,
                opts=child,
            )
            private_assoc = aws.ec2.RouteTableAssociation(
                f"{name}-private-{suffix}",
                subnet_id=priv.id,
                route_table_id=rt.id,
                opts=child,
            )
            self.egress += [private_default, private_assoc]
            private.append(priv)
        self.vpc_id = vpc.id
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private])
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in public])
