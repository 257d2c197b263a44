"""Cost and stability hint: AMI aliases pinned to a version, not ``@latest``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import versions
from ._base import ADVISORY, Rule
from ._kube import EC2NODECLASS, ami_aliases, object_name

PINNED_EXAMPLE = {
    "al2023": f"al2023@{versions.AL2023_AMI_ALIAS_VERSION}",
    "bottlerocket": f"bottlerocket@{versions.BOTTLEROCKET_AMI_ALIAS_VERSION}",
}


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    out = []
    for alias in ami_aliases(props):
        if alias is None or not alias.lower().endswith("@latest"):
            continue
        family = alias.split("@", 1)[0].lower()
        if family.startswith("windows"):
            continue  # Windows families only accept @latest
        example = PINNED_EXAMPLE.get(family, f"{family}@<version>")
        out.append(
            f'EC2NodeClass "{object_name(props)}" selects AMI alias "{alias}"; @latest drifts '
            f'and replaces every node on each AMI release, so pin a version such as "{example}"'
        )
    return out


RULE = Rule(
    name="ami-version-pinned",
    description=(
        "EC2NodeClass AMI aliases should pin a version: with @latest every AMI release drifts "
        "and replaces every node, restarting GPU jobs and re-pulling images at the platform's "
        "expense."
    ),
    enforcement_level=ADVISORY,
    category="cost",
    severity="medium",
    resource_checks={EC2NODECLASS: check},
)
