"""EKS control-plane audit and authenticator logs are on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._props import strings

EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"
REQUIRED = ("audit", "authenticator")


def _problems(enabled: Any) -> list[str]:
    listed = strings(enabled)
    missing = [t for t in REQUIRED if t not in listed]
    if not missing:
        return []
    return [
        f"enabledClusterLogTypes {listed} leaves out {', '.join(missing)}: without the audit "
        "and authenticator logs nobody can tell who did what on the cluster"
    ]


def check(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    # Unset, neither pulumi-eks nor EKS enables any log type.
    return _problems(props.get("enabledClusterLogTypes"))


RULE = Rule(
    name="eks-control-plane-logging",
    description=(
        "EKS clusters must send at least the audit and authenticator control-plane logs to "
        "CloudWatch (EKS Best Practices, 'Enable audit logs'; CIS EKS 2.1.1): they are the only "
        "record of who called the API server and as whom."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="medium",
    resource_checks={EKS_CLUSTER: check, AWS_EKS_CLUSTER: check},
)
