"""A public EKS API endpoint only behind a CIDR allowlist that is not the whole internet."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import is_false, mapping, sequence, show_list

EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"


# The config check's bound (eks_gpu_platform.cluster.spec.PUBLIC_ACCESS_MAX_ADDRESSES): a
# /16's worth of IPv4 and a /48's worth of IPv6 addresses, over the merged blocks.
MAX_ADDRESSES = {4: 2 ** (32 - 16), 6: 2 ** (128 - 48)}
CONFIG_KEYS = {4: "maxIpv4Addresses", 6: "maxIpv6Addresses"}


def _problems(where: str, public: Any, cidrs: Any, config: Mapping[str, Any]) -> list[str]:
    # Both pulumi-eks and the EKS API default the public endpoint to on, open to 0.0.0.0/0.
    if is_false(public):
        return []
    listed = list(sequence(cidrs))
    if not listed:
        return [
            f"{where}endpointPublicAccess is on and {where}publicAccessCidrs is empty, so the "
            "API server is open to 0.0.0.0/0; list the CIDRs that may reach it, or turn "
            "the public endpoint off"
        ]
    out = []
    networks: dict[int, list[Any]] = {4: [], 6: []}
    for cidr in listed:
        try:
            network = ipaddress.ip_network(str(cidr).strip(), strict=False)
        except ValueError:
            out.append(f'{where}publicAccessCidrs includes "{cidr}", which is not a CIDR')
            continue
        if network.prefixlen == 0:
            out.append(
                f'{where}publicAccessCidrs includes "{cidr}", which opens the API server to '
                "the whole internet"
            )
        else:
            networks[network.version].append((str(cidr), network))
    for version, entries in networks.items():
        # Several blocks that together cover the address space (0.0.0.0/1 + 128.0.0.0/1) are
        # as open as 0.0.0.0/0: merge them and look at the result.
        merged = list(ipaddress.collapse_addresses(n for _, n in entries))
        if any(n.prefixlen == 0 for n in merged):
            whole = "0.0.0.0/0" if version == 4 else "::/0"
            out.append(
                f"{where}publicAccessCidrs includes {show_list([c for c, _ in entries])}, which "
                f"together cover {whole}: the API server is open to the whole internet"
            )
            continue
        total = sum(n.num_addresses for n in merged)
        bound = config.get(CONFIG_KEYS[version], MAX_ADDRESSES[version])
        if total > bound:
            out.append(
                f"{where}publicAccessCidrs {show_list([c for c, _ in entries])} allow "
                f"{total:,} IPv{version} addresses, more than {CONFIG_KEYS[version]} "
                f"({bound:,}); list the egress ranges that need the API server, or keep the "
                "endpoint private"
            )
    return out


def check_eks_component(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    return _problems("", props.get("endpointPublicAccess"), props.get("publicAccessCidrs"), config)


def check_aws_cluster(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    vpc = mapping(props.get("vpcConfig"))
    return _problems(
        "vpcConfig.", vpc.get("endpointPublicAccess"), vpc.get("publicAccessCidrs"), config
    )


RULE = Rule(
    name="eks-public-endpoint-allowlist",
    description=(
        "A public EKS API endpoint must be restricted to an allowlist of CIDRs that excludes "
        "0.0.0.0/0 and ::/0 and, merged, allows at most maxIpv4Addresses (a /16) and "
        "maxIpv6Addresses (a /48): an endpoint open to the internet is one leaked credential or "
        "API-server CVE away from compromise."
    ),
    config_schema={
        "maxIpv4Addresses": {
            "type": "integer",
            "default": MAX_ADDRESSES[4],
            "description": "IPv4 addresses the merged allowlist may cover (a /16 by default).",
        },
        "maxIpv6Addresses": {
            "type": "integer",
            "default": MAX_ADDRESSES[6],
            "description": "IPv6 addresses the merged allowlist may cover (a /48 by default).",
        },
    },
    enforcement_level=MANDATORY,
    category="security",
    severity="high",
    resource_checks={EKS_CLUSTER: check_eks_component, AWS_EKS_CLUSTER: check_aws_cluster},
)
