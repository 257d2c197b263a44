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
SQS_QUEUE = "aws:sqs/queue:Queue"


def _queue_name(queue: StackResource) -> str | None:
    """The queue's name: its ``name`` (input offline, output in the engine), else the last
    segment of its ``url`` output (``https://sqs.<region>.amazonaws.com/<account>/<name>``)."""
    name = queue.props.get("name")
    if isinstance(name, str) and name:
        return name
    url = queue.props.get("url")
    return url.rstrip("/").rsplit("/", 1)[-1] if isinstance(url, str) and url else None


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    pools = sorted(
        object_name(p.props)
        for p in of_type(resources, NODEPOOL)
        if capacity_types(p.props) & set(INTERRUPTIBLE)
    )
    if not pools:
        return []
    out: list[str] = []
    queues = {_queue_name(q) for q in of_type(resources, SQS_QUEUE)} - {None}
    for release in releases_of_chart(resources, KARPENTER_CHART):
        queue = dig(release.props, "values", "settings", "interruptionQueue")
        if isinstance(queue, str) and queue.strip() in queues:
            continue
        if isinstance(queue, str) and queue.strip():
            out.append(
                Finding(
                    f'Karpenter release "{release_name(release)}" names interruption queue '
                    f'"{queue}", but no SQS queue of that name is in this stack'
                    + (f" (its queues: {show_list(sorted(queues))})" if queues else "")
                    + f"; NodePools {show_list(pools)} allow spot or reserved capacity, and "
                    "Karpenter would read interruptions from a queue nothing delivers them to",
                    release.urn,
                )
            )
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
        "its SQS interruption queue (settings.interruptionQueue), a queue this stack creates: "
        "without it, spot reclaims and capacity-reservation expiries kill nodes without a "
        "graceful drain."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="high",
    check_stack=check_stack,
)
