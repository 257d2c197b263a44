"""A public EKS API endpoint only behind a CIDR allowlist that is not the whole internet."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import is_false, mapping, sequence, show_list

EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"


def _problems(where: str, public: Any, cidrs: Any) -> list[str]:
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
    return out


def check_eks_component(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    return _problems("", props.get("endpointPublicAccess"), props.get("publicAccessCidrs"))


def check_aws_cluster(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    vpc = mapping(props.get("vpcConfig"))
    return _problems("vpcConfig.", vpc.get("endpointPublicAccess"), vpc.get("publicAccessCidrs"))


RULE = Rule(
    name="eks-public-endpoint-allowlist",
    description=(
        "A public EKS API endpoint must be restricted to an allowlist of CIDRs that excludes "
        "0.0.0.0/0 and ::/0: an endpoint open to the internet is one leaked credential or "
        "API-server CVE away from compromise."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="high",
    resource_checks={EKS_CLUSTER: check_eks_component, AWS_EKS_CLUSTER: check_aws_cluster},
)
