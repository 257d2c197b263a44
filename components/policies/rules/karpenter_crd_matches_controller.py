"""The karpenter-crd and karpenter charts move together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import KARPENTER_CHART, KARPENTER_CRD_CHART, release_name, releases_of_chart
from ._props import is_true, show
from ._versions import version_tuple


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    controllers = releases_of_chart(resources, KARPENTER_CHART)
    crds = releases_of_chart(resources, KARPENTER_CRD_CHART)
    if not crds:
        # The karpenter chart carries the CRDs in crds/ (installed on first install only) and
        # the karpenter-crd chart manages them (https://karpenter.sh/v1.14/upgrading/
        # upgrade-guide/, "CRD Upgrades"); with skipCrds (helm.sh/v3 Release input) only the
        # karpenter-crd release can provide them.
        for controller in controllers:
            if is_true(controller.props.get("skipCrds")):
                out.append(
                    Finding(
                        f'Karpenter release "{release_name(controller)}" sets skipCrds, but this '
                        "stack has no karpenter-crd release: NodePool, EC2NodeClass and "
                        "NodeClaim would not exist (or keep an older version's schema)",
                        controller.urn,
                    )
                )
    for crd in crds:
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
        "A karpenter release that skips its CRDs needs a karpenter-crd release, and the "
        "karpenter-crd chart must pin the same version as the karpenter chart: a "
        "controller newer than its CRDs writes fields the API server prunes, and an older one "
        "ignores fields users set."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="medium",
    check_stack=check_stack,
)
