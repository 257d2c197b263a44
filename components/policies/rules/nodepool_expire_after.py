"""Every NodePool states ``expireAfter``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import ADVISORY, Rule
from ._kube import DEFAULT_EXPIRE_AFTER, NODEPOOL, object_name, template_spec


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    if "expireAfter" in template_spec(props):
        return []
    return [
        f'NodePool "{object_name(props)}" does not set spec.template.spec.expireAfter, so '
        f"Karpenter replaces its nodes every {DEFAULT_EXPIRE_AFTER} (the default); set a "
        'duration, or "Never" for pools whose work must not be interrupted'
    ]


RULE = Rule(
    name="nodepool-expire-after",
    description=(
        "NodePools should set expireAfter explicitly: expiry is forceful (it ignores disruption "
        "budgets), so how often nodes are recycled must be a decision, not the 720h default."
    ),
    enforcement_level=ADVISORY,
    category="cost",
    severity="low",
    resource_checks={NODEPOOL: check},
)
