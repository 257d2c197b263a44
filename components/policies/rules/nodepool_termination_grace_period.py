"""Expiring NodePools bound how long a node may drain."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import ADVISORY, Rule
from ._kube import DEFAULT_EXPIRE_AFTER, NODEPOOL, object_name, template_spec
from ._props import show

NEVER = "Never"


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    spec = template_spec(props)
    expire = spec.get("expireAfter", DEFAULT_EXPIRE_AFTER)
    if expire == NEVER or "terminationGracePeriod" in spec:
        return []
    return [
        f'NodePool "{object_name(props)}" expires nodes after {show(expire)} but sets no '
        "spec.template.spec.terminationGracePeriod; a pod with karpenter.sh/do-not-disrupt or a "
        "blocking PodDisruptionBudget keeps an expired node (and its GPUs) draining indefinitely"
    ]


RULE = Rule(
    name="nodepool-termination-grace-period",
    description=(
        "NodePools whose nodes expire should set terminationGracePeriod: without it, a "
        "do-not-disrupt pod or a blocking PodDisruptionBudget holds an expiring node, paid for, "
        "until someone intervenes."
    ),
    enforcement_level=ADVISORY,
    category="cost",
    severity="low",
    resource_checks={NODEPOOL: check},
)
