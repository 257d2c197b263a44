"""The karpenter-crd and karpenter charts move together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import KARPENTER_CHART, KARPENTER_CRD_CHART, release_name, releases_of_chart
from ._props import show
from ._versions import version_tuple


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    controllers = releases_of_chart(resources, KARPENTER_CHART)
    for crd in releases_of_chart(resources, KARPENTER_CRD_CHART):
        crd_version = crd.props.get("version")
        for controller in controllers:
            version = controller.props.get("version")
            if (
                version_tuple(crd_version) != version_tuple(version)
                or version_tuple(version) is None
            ):
                out.append(
                    Finding(
                        f'karpenter-crd release "{release_name(crd)}" pins chart '
                        f'{show(crd_version)} but Karpenter release "{release_name(controller)}" '
                        f"pins {show(version)}; install and upgrade both at the same version",
                        crd.urn,
                    )
                )
    return out


RULE = Rule(
    name="karpenter-crd-matches-controller",
    description=(
        "The karpenter-crd chart must pin the same version as the karpenter chart: a "
        "controller newer than its CRDs writes fields the API server prunes, and an older one "
        "ignores fields users set."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="medium",
    check_stack=check_stack,
)
