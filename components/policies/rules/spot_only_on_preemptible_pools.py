"""Spot capacity only in pools labelled preemptible."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import LABEL_DOMAIN_SCHEMA, MANDATORY, Rule
from ._kube import NODEPOOL, capacity_types, is_preemptible, label, label_domain, object_name
from ._props import show


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    domain = label_domain(props, config)
    if "spot" not in capacity_types(props) or is_preemptible(props, domain):
        return []
    return [
        f'NodePool "{object_name(props)}" allows spot capacity but its "{domain}/preemptible" '
        f'label is {show(label(props, domain, "preemptible"))}, not "true"; non-preemptible '
        "work must not run where AWS reclaims nodes with two minutes' notice"
    ]


RULE = Rule(
    name="spot-only-on-preemptible-pools",
    description=(
        "Only pools labelled '<domain>/preemptible: \"true\"' may use spot capacity: "
        "non-preemptible workloads routed to a spot pool lose their nodes on every spot "
        "interruption."
    ),
    enforcement_level=MANDATORY,
    category="cost",
    severity="high",
    resource_checks={NODEPOOL: check},
    config_schema=LABEL_DOMAIN_SCHEMA,
)
