"""Value types and id helpers of the recording mocks: ``Registration`` (one resource as the
engine saw it), ``Scope`` (a provider's region, partition and account; ARNs), zone-id region
codes and stable hex ids derived from a seed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

DIRECTIONS = {
    "east": "e",
    "west": "w",
    "north": "n",
    "south": "s",
    "central": "c",
    "northeast": "ne",
    "northwest": "nw",
    "southeast": "se",
    "southwest": "sw",
}


def region_short_code(region: str) -> str:
    """How AWS abbreviates a region in zone ids: us-west-2 -> usw2, ap-northeast-1 -> apne1."""
    *parts, number = region.split("-")
    head, rest = parts[0], parts[1:]
    if rest[:1] == ["gov"]:
        head, rest = head + "g", rest[1:]
    return head + "".join(DIRECTIONS.get(p, p[:1]) for p in rest) + number


def _hex(seed: str, length: int) -> str:
    """A stable hex string derived from ``seed``: the same program gives the same ids."""
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


def _uuid(seed: str) -> str:
    h = _hex(seed, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass
class Registration:
    """One resource as the engine saw it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    id: str
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    provider: str
    protect: bool
    ignore_changes: list[str]
    replace_on_changes: list[str]
    delete_before_replace: bool
    version: str
    aliases: list[dict[str, Any]]
    registered_outputs: dict[str, Any] | None = None
    # Non-empty ``customTimeouts`` ("create"/"update"/"delete" -> Go duration).
    custom_timeouts: dict[str, str] | None = None
    retain_on_delete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "urn": self.urn,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": self.inputs,
            "dependencies": self.dependencies,
            # Which inputs come from which resources (the plan follows replacements with it).
            **(
                {"propertyDependencies": deps}
                if (
                    deps := {
                        k: sorted(v) for k, v in sorted(self.property_dependencies.items()) if v
                    }
                )
                else {}
            ),
            "provider": self.provider,
            "protect": self.protect,
            "ignoreChanges": self.ignore_changes,
            "replaceOnChanges": self.replace_on_changes,
            "deleteBeforeReplace": self.delete_before_replace,
            "aliases": self.aliases,
            "registeredOutputs": self.registered_outputs,
            **({"customTimeouts": self.custom_timeouts} if self.custom_timeouts else {}),
            **({"retainOnDelete": True} if self.retain_on_delete else {}),
        }


@dataclass(frozen=True)
class Scope:
    """Where an AWS resource or invoke lives: its provider's region, partition and account."""

    region: str
    partition: str
    account_id: str

    @property
    def dns_suffix(self) -> str:
        return "amazonaws.com.cn" if self.partition == "aws-cn" else "amazonaws.com"

    def arn(self, service: str, resource: str, *, region: bool = True) -> str:
        reg = self.region if region else ""
        return f"arn:{self.partition}:{service}:{reg}:{self.account_id}:{resource}"
