import pytest
from policy_baselines import change, compliant_stack, props_of, urn_of

from eks_gpu_platform.policies.rules.karpenter_crd_matches_controller import RULE, check_stack

CONFIG = RULE.config()


def test_compliant_stack():
    assert check_stack(compliant_stack(), CONFIG) == []


def test_leading_v_is_the_same_version():
    stack = compliant_stack()
    change(props_of(stack, "platform-karpenter-crd"), ("version",), "v1.14.1")
    assert check_stack(stack, CONFIG) == []


@pytest.mark.parametrize(
    ("crd", "controller", "shown_crd", "shown_controller"),
    [
        ("1.13.0", "1.14.1", '"1.13.0"', '"1.14.1"'),
        ("1.14.1", None, '"1.14.1"', "not set"),
    ],
    ids=["behind", "controller-unpinned"],
)
def test_versions_differ(crd, controller, shown_crd, shown_controller):
    stack = compliant_stack()
    change(props_of(stack, "platform-karpenter-crd"), ("version",), crd)
    change(props_of(stack, "platform-karpenter-chart"), ("version",), controller)
    findings = check_stack(stack, CONFIG)
    assert findings == [
        f'karpenter-crd release "karpenter-crd" pins chart {shown_crd} but Karpenter release '
        f'"karpenter" pins {shown_controller}; install and upgrade both at the same version'
    ]
    assert findings[0].urn == urn_of(stack, "platform-karpenter-crd")
