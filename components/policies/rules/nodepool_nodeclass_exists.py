"""Every NodePool references an EC2NodeClass the stack defines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import EC2NODECLASS, NODEPOOL, object_name, of_type, template_spec
from ._props import mapping, show

GROUP = "karpenter.k8s.aws"
KIND = "EC2NodeClass"


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    defined = {object_name(r.props) for r in of_type(resources, EC2NODECLASS)}
    out: list[str] = []
    for pool in of_type(resources, NODEPOOL):
        name = object_name(pool.props)
        ref = mapping(template_spec(pool.props).get("nodeClassRef"))
        group, kind, target = ref.get("group"), ref.get("kind"), ref.get("name")
        if group != GROUP or kind != KIND:
            out.append(
                Finding(
                    f'NodePool "{name}": nodeClassRef is group {show(group)}, kind {show(kind)}; '
                    f'expected group "{GROUP}", kind "{KIND}"',
                    pool.urn,
                )
            )
        elif not (isinstance(target, str) and target):
            out.append(Finding(f'NodePool "{name}": nodeClassRef.name is not set', pool.urn))
        elif target not in defined:
            out.append(
                Finding(
                    f'NodePool "{name}" references EC2NodeClass "{target}", which this stack '
                    "does not define; Karpenter never launches nodes for it",
                    pool.urn,
                )
            )
    return out


RULE = Rule(
    name="nodepool-nodeclass-exists",
    description=(
        "Every NodePool must reference (group karpenter.k8s.aws, kind EC2NodeClass) an "
        "EC2NodeClass defined in the same stack: a dangling reference leaves the pool silently "
        "unable to launch nodes."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="high",
    check_stack=check_stack,
)
