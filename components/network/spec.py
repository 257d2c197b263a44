"""The network's input spec (``VpcSpec``): a new VPC (``cidr``, ``azCount``) or an existing one
(``vpcId``, ``privateSubnetIds``)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from ..spec import Problem, Spec, camel, check_cidr, check_pattern, check_range, doc, show

DEFAULT_VPC_CIDR = "10.0.0.0/16"
DEFAULT_AZ_COUNT = 3


@dataclass(frozen=True, kw_only=True)
class VpcSpec(Spec):
    """A new VPC (``cidr``, ``azCount``) or an existing one (``vpcId``, ``privateSubnetIds``)."""

    cidr: str | None = doc(None, f"CIDR of a new VPC (/16 to /20); default {DEFAULT_VPC_CIDR}.")
    az_count: int | None = doc(None, f"AZs of a new VPC (2-6); default {DEFAULT_AZ_COUNT}.")
    zones: tuple[str, ...] = doc(
        (),
        "Availability zones of a new VPC, by name (e.g. us-east-1a); default: the first "
        "azCount zones of the region by name, whatever their state.",
    )
    nat_gateway_per_az: bool = doc(
        False, "One NAT gateway per AZ (resilient) instead of a single one (cheap)."
    )
    vpc_id: str | None = doc(None, "Use this existing VPC instead of creating one.", output=True)
    private_subnet_ids: tuple[str, ...] = doc(
        (),
        "Existing VPC: private subnets, in at least 2 AZs; tagged for Karpenter discovery.",
        output=True,
    )
    public_subnet_ids: tuple[str, ...] = doc(
        (),
        "Existing VPC: public subnets for internet-facing load balancers (optional).",
        output=True,
    )
    subnet_tagging: Literal["owned", "shared", "none"] = doc(
        "owned",
        "Existing VPC: how the private subnets are tagged for Karpenter. 'owned': "
        "karpenter.sh/discovery=<cluster name>, removed on destroy; 'shared' (subnets other "
        "clusters use too): kubernetes.io/cluster/<cluster name>=shared, one key per cluster, "
        "left on destroy, and Karpenter selects the subnets by it; 'none': already tagged "
        "karpenter.sh/discovery=<cluster name>, not touched.",
    )

    @property
    def create(self) -> bool:
        return self.vpc_id is None

    @property
    def vpc_cidr(self) -> str:
        return self.cidr or DEFAULT_VPC_CIDR

    @property
    def azs(self) -> int:
        return self.az_count or len(self.zones) or DEFAULT_AZ_COUNT

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.create:
            for name in ("private_subnet_ids", "public_subnet_ids"):
                if getattr(self, name):
                    out.append(
                        ((name,), f"is set without vpcId; set vpcId or remove {camel(name)}")
                    )
            if self.cidr is not None:
                if msg := check_cidr(self.cidr):
                    out.append((("cidr",), msg))
                else:
                    network = ipaddress.ip_network(self.cidr)
                    if network.version != 4 or not 16 <= network.prefixlen <= 20:
                        out.append(
                            (
                                ("cidr",),
                                f"{show(self.cidr)} has the wrong size; expected an IPv4 block "
                                "from /16 to /20",
                            )
                        )
            if self.az_count is not None and (msg := check_range(self.az_count, 2, 6)):
                out.append((("az_count",), msg))
            if self.zones and (msg := check_range(len(self.zones), 2, 6)):
                out.append((("zones",), f"lists {len(self.zones)} zone(s); " + msg))
            if self.zones and self.az_count is not None and len(self.zones) != self.az_count:
                out.append(
                    (
                        ("zones",),
                        f"lists {len(self.zones)} zone(s) but azCount is {self.az_count}; "
                        "set one of them",
                    )
                )
            for i, zone in enumerate(self.zones):
                if msg := check_pattern(
                    zone, r"^[a-z]{2}(-[a-z]+)+-[0-9][a-z]$", "a zone name such as 'us-east-1a'"
                ):
                    out.append((("zones", i), msg))
                elif zone in self.zones[:i]:
                    out.append((("zones", i), f"{show(zone)} is listed twice"))
            if self.subnet_tagging != "owned":
                out.append(
                    (
                        ("subnet_tagging",),
                        f"{show(self.subnet_tagging)} only applies to an existing VPC (vpcId); "
                        "a new VPC's subnets are always this stack's",
                    )
                )
            return out
        if msg := check_pattern(
            self.vpc_id or "", r"^vpc-[0-9a-f]{8,17}$", "a VPC id; expected 'vpc-' and hex digits"
        ):
            out.append((("vpc_id",), msg))
        for name in ("cidr", "az_count", "zones"):
            if getattr(self, name) not in (None, ()):
                out.append(((name,), f"is set with vpcId; {camel(name)} only applies to a new VPC"))
        if self.nat_gateway_per_az:
            out.append((("nat_gateway_per_az",), "only applies to a new VPC; remove it"))
        if len(self.private_subnet_ids) < 2:
            out.append(
                (
                    ("private_subnet_ids",),
                    f"lists {len(self.private_subnet_ids)} subnet(s); an existing VPC needs at "
                    "least 2 private subnets in different AZs",
                )
            )
        for name in ("private_subnet_ids", "public_subnet_ids"):
            ids = getattr(self, name)
            for i, subnet in enumerate(ids):
                if msg := check_pattern(
                    subnet, r"^subnet-[0-9a-f]{8,17}$", "a subnet id; expected 'subnet-' and hex"
                ):
                    out.append(((name, i), msg))
            if len(set(ids)) != len(ids):
                out.append(((name,), "lists the same subnet twice"))
        return out
