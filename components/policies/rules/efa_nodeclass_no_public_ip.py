"""EFA node classes never ask for a public IP."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._kube import EC2NODECLASS, efa_only_interfaces, object_name
from ._props import dig, is_true


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    efa = efa_only_interfaces(props)
    if efa == 0 or not is_true(dig(props, "spec", "associatePublicIPAddress")):
        return []
    return [
        f'EC2NodeClass "{object_name(props)}" has {efa} efa-only interfaces and '
        "associatePublicIPAddress: true; EC2 rejects such launches "
        "(InvalidParameterCombination), so set it to false and use private subnets"
    ]


RULE = Rule(
    name="efa-nodeclass-no-public-ip",
    description=(
        "EC2NodeClasses with efa-only interfaces must not request a public IP: EC2 refuses to "
        "launch instances with several EFA interfaces and a public IP, and EFA nodes belong in "
        "private subnets."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="medium",
    resource_checks={EC2NODECLASS: check},
)
