import pytest
from policy_baselines import (
    NODEPOOL,
    change,
    compliant_stack,
    gpu_nodepool,
    props_of,
    resource,
    urn_of,
    without,
)

from eks_gpu_platform.policies.rules.nodepool_nodeclass_exists import RULE, check_stack

CONFIG = RULE.config()
POOL = "platform-pool-train-spot"
REF = ("spec", "template", "spec", "nodeClassRef")


def test_compliant_stack():
    assert check_stack(compliant_stack(), CONFIG) == []


def test_missing_node_class():
    stack = without(compliant_stack(), "platform-pool-train-spot-class")
    findings = check_stack(stack, CONFIG)
    assert findings == [
        'NodePool "train-spot" references EC2NodeClass "train-spot", which this stack does not '
        "define; Karpenter never launches nodes for it"
    ]
    assert findings[0].urn == urn_of(stack, POOL)


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            (*REF, "name"),
            "train-spot-typo",
            'NodePool "train-spot" references EC2NodeClass "train-spot-typo", which this stack '
            "does not define; Karpenter never launches nodes for it",
        ),
        ((*REF, "name"), "", 'NodePool "train-spot": nodeClassRef.name is not set'),
        (
            (*REF, "kind"),
            "NodeClass",
            'NodePool "train-spot": nodeClassRef is group "karpenter.k8s.aws", kind "NodeClass"; '
            'expected group "karpenter.k8s.aws", kind "EC2NodeClass"',
        ),
        (
            REF,
            {},
            'NodePool "train-spot": nodeClassRef is group not set, kind not set; expected group '
            '"karpenter.k8s.aws", kind "EC2NodeClass"',
        ),
    ],
    ids=["unknown-name", "empty-name", "wrong-kind", "no-ref"],
)
def test_bad_reference(path, value, expected):
    stack = compliant_stack()
    change(props_of(stack, POOL), path, value)
    assert check_stack(stack, CONFIG) == [expected]


def test_every_pool_is_checked():
    stack = [*compliant_stack(), resource(NODEPOOL, "extra", gpu_nodepool("extra"))]
    assert check_stack(stack, CONFIG) == [
        'NodePool "extra" references EC2NodeClass "extra", which this stack does not define; '
        "Karpenter never launches nodes for it"
    ]
