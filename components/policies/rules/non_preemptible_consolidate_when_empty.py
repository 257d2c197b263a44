"""Non-preemptible pools consolidate only empty nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import LABEL_DOMAIN_SCHEMA, MANDATORY, Rule
from ._kube import (
    DEFAULT_CONSOLIDATION_POLICY,
    NODEPOOL,
    is_preemptible,
    label,
    label_domain,
    object_name,
)
from ._props import dig, show

WHEN_EMPTY = "WhenEmpty"


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    domain = label_domain(props, config)
    if is_preemptible(props, domain):
        return []
    policy = dig(props, "spec", "disruption", "consolidationPolicy")
    if policy == WHEN_EMPTY:
        return []
    shown = show(policy) if policy is not None else f'"{DEFAULT_CONSOLIDATION_POLICY}" (default)'
    return [
        f'NodePool "{object_name(props)}" is not preemptible ("{domain}/preemptible" is '
        f"{show(label(props, domain, 'preemptible'))}) but its consolidationPolicy is {shown}; "
        f'use "{WHEN_EMPTY}" so Karpenter never evicts running pods to repack nodes'
    ]


RULE = Rule(
    name="non-preemptible-consolidate-when-empty",
    description=(
        "Pools not labelled '<domain>/preemptible: \"true\"' must use consolidationPolicy "
        "WhenEmpty: underutilization consolidation evicts running pods, which non-preemptible "
        "training and inference must not suffer."
    ),
    enforcement_level=MANDATORY,
    category="cost",
    severity="high",
    resource_checks={NODEPOOL: check},
    config_schema=LABEL_DOMAIN_SCHEMA,
)
