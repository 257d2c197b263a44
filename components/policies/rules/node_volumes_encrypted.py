"""Node EBS volumes (root and data) encrypted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._kube import EC2NODECLASS, object_name
from ._props import dig, is_true, mapping, sequence, show

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _mapping_problems(where: str, mappings: Any) -> list[str]:
    out = []
    for index, entry in enumerate(sequence(mappings)):
        entry = mapping(entry)
        if "ebs" not in entry:
            continue  # instance-store or suppressed device: no EBS volume
        encrypted = mapping(entry["ebs"]).get("encrypted")
        if not is_true(encrypted):
            device = entry.get("deviceName")
            named = f" ({device})" if isinstance(device, str) and device else ""
            out.append(
                f"{where}blockDeviceMappings[{index}]{named} is not encrypted "
                f"(ebs.encrypted is {show(encrypted)})"
            )
    return out


def check_ec2nodeclass(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """Without ``blockDeviceMappings`` Karpenter's default volumes (encrypted) apply."""
    return _mapping_problems(
        f'EC2NodeClass "{object_name(props)}": spec.',
        dig(props, "spec", "blockDeviceMappings"),
    )


def check_launch_template(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if not sequence(props.get("blockDeviceMappings")):
        return [
            "blockDeviceMappings is not set, so the root volume is encrypted only if the account "
            'enables EBS encryption by default; map the root device with ebs.encrypted "true"'
        ]
    return _mapping_problems("", props.get("blockDeviceMappings"))


RULE = Rule(
    name="node-volumes-encrypted",
    description=(
        "Node EBS volumes, the root volume first, must be encrypted: they hold container "
        "images, model weights, datasets and the kubelet's secrets on disk."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="high",
    resource_checks={EC2NODECLASS: check_ec2nodeclass, LAUNCH_TEMPLATE: check_launch_template},
)
