"""IMDSv2 only, hop limit 1: pods must not reach the node role's credentials through IMDS."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import MANDATORY, Rule
from ._kube import EC2NODECLASS, object_name
from ._props import dig, mapping, number, show

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
REQUIRED_TOKENS = "required"
REQUIRED_HOP_LIMIT = 1
# Karpenter's CRD defaults (website/content/en/v1.14/concepts/nodeclasses.md).
KARPENTER_DEFAULT_TOKENS = "required"
KARPENTER_DEFAULT_HOP_LIMIT = 1


def _problems(where: str, tokens: Any, hop: Any) -> list[str]:
    out = []
    if tokens != REQUIRED_TOKENS:
        out.append(
            f'{where}metadataOptions.httpTokens is {show(tokens)}; set "required" so the '
            "instance metadata service only answers IMDSv2 session requests"
        )
    if number(hop) != REQUIRED_HOP_LIMIT:
        out.append(
            f"{where}metadataOptions.httpPutResponseHopLimit is {show(hop)}; set 1 so pods "
            "without hostNetwork cannot reach the node role's credentials"
        )
    return out


def check_ec2nodeclass(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """An unset ``metadataOptions`` (or field) takes Karpenter's secure default."""
    options = mapping(dig(props, "spec", "metadataOptions"))
    return _problems(
        f'EC2NodeClass "{object_name(props)}": spec.',
        options.get("httpTokens", KARPENTER_DEFAULT_TOKENS),
        options.get("httpPutResponseHopLimit", KARPENTER_DEFAULT_HOP_LIMIT),
    )


def check_launch_template(props: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """Launch templates must say it: unset, EC2 falls back to the AMI's or account's defaults."""
    if "metadataOptions" not in props:
        return [
            "metadataOptions is not set, so IMDS follows the AMI's and account's defaults; set "
            'httpTokens "required" and httpPutResponseHopLimit 1'
        ]
    options = mapping(props["metadataOptions"])
    return _problems("", options.get("httpTokens"), options.get("httpPutResponseHopLimit"))


RULE = Rule(
    name="imdsv2-required",
    description=(
        "Nodes must require IMDSv2 with a hop limit of 1: with IMDSv1 or a larger hop limit, "
        "any pod can read the node IAM role's credentials from the instance metadata service."
    ),
    enforcement_level=MANDATORY,
    category="security",
    severity="critical",
    resource_checks={EC2NODECLASS: check_ec2nodeclass, LAUNCH_TEMPLATE: check_launch_template},
)
