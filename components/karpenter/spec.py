"""Karpenter's input spec (``KarpenterSpec``: chart, identity, interruption handling, sizing), the
chart versions this project supports, and where the controller runs (``kube-system/karpenter``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .. import versions
from ..checks import check_positive_quantity
from ..spec import Problem, Spec, check_range, doc, show

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
DEFAULT_KARPENTER_REPLICAS = 2
DEFAULT_KARPENTER_CPU = "1"
DEFAULT_KARPENTER_MEMORY = "1Gi"
# The oldest Karpenter whose APIs this project renders (networkInterfaces, placementGroupSelector).
MIN_KARPENTER_VERSION = "1.11.0"
# The next minor is not modelled: its IAM policy and CRDs have to be reviewed first.
MAX_KARPENTER_VERSION_EXCLUSIVE = "1.16.0"


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.lstrip("v").split("."))


@dataclass(frozen=True, kw_only=True)
class KarpenterSpec(Spec):
    """The Karpenter controller: chart, identity, interruption handling, sizing."""

    chart_version: str | None = doc(
        None,
        f"Override the pinned chart {versions.KARPENTER_VERSION}; from {MIN_KARPENTER_VERSION} "
        f"up to (not including) {MAX_KARPENTER_VERSION_EXCLUSIVE}.",
        example=versions.KARPENTER_VERSION,
    )
    auth: Literal["podIdentity", "irsa"] = doc(
        "podIdentity", "How the controller gets AWS credentials: EKS Pod Identity or IRSA."
    )
    interruption_handling: bool = doc(
        True, "Create the SQS interruption queue and its five EventBridge rules."
    )
    replicas: int = doc(DEFAULT_KARPENTER_REPLICAS, "Controller replicas (leader election).")
    cpu: str = doc(DEFAULT_KARPENTER_CPU, "Controller CPU request and limit.")
    memory: str = doc(DEFAULT_KARPENTER_MEMORY, "Controller memory request and limit.")
    log_level: Literal["debug", "info", "error"] = doc("info", "Controller log level.")
    spot_service_linked_role: bool = doc(
        True,
        "When a pool may launch spot and the account has no EC2 Spot service-linked role, "
        "create it (kept on destroy).",
    )

    @property
    def version(self) -> str:
        return self.chart_version or versions.KARPENTER_VERSION

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.chart_version is not None:
            if not re.fullmatch(r"^[0-9]+\.[0-9]+\.[0-9]+$", self.chart_version):
                out.append(
                    (
                        ("chart_version",),
                        f"{show(self.chart_version)} is not a chart version; expected X.Y.Z "
                        "without a 'v', e.g. '1.15.1'",
                    )
                )
            elif not (
                version_tuple(MIN_KARPENTER_VERSION)
                <= version_tuple(self.chart_version)
                < version_tuple(MAX_KARPENTER_VERSION_EXCLUSIVE)
            ):
                out.append(
                    (
                        ("chart_version",),
                        f"{show(self.chart_version)} is not supported; expected a version from "
                        f"{MIN_KARPENTER_VERSION} up to (not including) "
                        f"{MAX_KARPENTER_VERSION_EXCLUSIVE}",
                    )
                )
        if msg := check_range(self.replicas, 1, 10):
            out.append((("replicas",), msg))
        for name, example in (("cpu", "500m"), ("memory", "1Gi")):
            # Requests and limits of zero: the controller would be throttled to nothing/OOM.
            if msg := check_positive_quantity(getattr(self, name), example):
                out.append(((name,), msg))
        return out
