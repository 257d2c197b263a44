"""Spot or reserved capacity needs Karpenter's interruption queue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import (
    KARPENTER_CHART,
    NODEPOOL,
    capacity_types,
    object_name,
    of_type,
    release_name,
    releases_of_chart,
)
from ._props import dig, show_list

INTERRUPTIBLE = ("spot", "reserved")


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    pools = sorted(
        object_name(p.props)
        for p in of_type(resources, NODEPOOL)
        if capacity_types(p.props) & set(INTERRUPTIBLE)
    )
    if not pools:
        return []
    out: list[str] = []
    for release in releases_of_chart(resources, KARPENTER_CHART):
        queue = dig(release.props, "values", "settings", "interruptionQueue")
        if isinstance(queue, str) and queue.strip():
            continue
        out.append(
            Finding(
                f'Karpenter release "{release_name(release)}" sets no '
                f"values.settings.interruptionQueue, but NodePools {show_list(pools)} allow spot "
                "or reserved capacity; their interruptions and reservation expiries would not be "
                "drained ahead of time",
                release.urn,
            )
        )
    return out


RULE = Rule(
    name="interruption-queue-for-spot-or-reserved",
    description=(
        "When any NodePool allows spot or reserved capacity, the Karpenter release must name "
        "its SQS interruption queue (settings.interruptionQueue): without it, spot reclaims and "
        "capacity-reservation expiries kill nodes without a graceful drain."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="high",
    check_stack=check_stack,
)
