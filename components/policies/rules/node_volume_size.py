"""Cost hint: node EBS volumes above a size."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import ADVISORY, Rule
from ._kube import EC2NODECLASS, object_name
from ._props import GIB, dig, fmt_number, mapping, quantity_bytes, sequence, show

DEFAULT_MAX_VOLUME_GIB = 2048


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    limit = float(config["maxVolumeGiB"])
    out = []
    for index, entry in enumerate(sequence(dig(props, "spec", "blockDeviceMappings"))):
        entry = mapping(entry)
        size = mapping(entry.get("ebs")).get("volumeSize")
        size_bytes = quantity_bytes(size)
        if size_bytes is None or size_bytes <= limit * GIB:
            continue
        device = entry.get("deviceName")
        named = f" ({device})" if isinstance(device, str) and device else ""
        out.append(
            f'EC2NodeClass "{object_name(props)}": spec.blockDeviceMappings[{index}]{named} is '
            f"{show(size)}, above {fmt_number(limit)} GiB; every node pays for it while it "
            "runs (GPU nodes have local NVMe for scratch: instanceStorePolicy RAID0)"
        )
    return out


RULE = Rule(
    name="node-volume-size",
    description=(
        "Node EBS volumes above maxVolumeGiB (2 TiB by default) are rarely needed and are paid "
        "for on every node of the class; local NVMe (instanceStorePolicy RAID0) is faster and "
        "free on GPU instances."
    ),
    enforcement_level=ADVISORY,
    category="cost",
    severity="low",
    resource_checks={EC2NODECLASS: check},
    config_schema={
        "maxVolumeGiB": {
            "type": "number",
            "default": DEFAULT_MAX_VOLUME_GIB,
            "description": "Largest EBS volume (GiB) a node class may map without a warning.",
        }
    },
)
