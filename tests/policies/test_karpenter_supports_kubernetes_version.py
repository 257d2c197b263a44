import pytest
from policy_baselines import (
    AWS_EKS_CLUSTER,
    aws_eks_cluster,
    change,
    compliant_stack,
    props_of,
    resource,
    urn_of,
    without,
)

from eks_gpu_platform.policies.rules.karpenter_supports_kubernetes_version import RULE, check_stack

CONFIG = RULE.config()
CLUSTER = "platform-cluster-eks"
RELEASE = "platform-karpenter-chart"


def test_compliant_stack():
    assert check_stack(compliant_stack(), CONFIG) == []


@pytest.mark.parametrize(
    ("kubernetes", "chart", "needed"),
    [("1.36", "1.12.3", "1.13.0"), ("1.35", "1.8.0", "1.9.0"), ("1.32", "v1.1.9", "1.2.0")],
)
def test_chart_too_old(kubernetes, chart, needed):
    stack = compliant_stack()
    change(props_of(stack, CLUSTER), ("version",), kubernetes)
    change(props_of(stack, RELEASE), ("version",), chart)
    findings = check_stack(stack, CONFIG)
    assert findings == [
        f'Karpenter release "karpenter" pins chart "{chart}", but EKS cluster "gpu-test" runs '
        f"Kubernetes {kubernetes}, which needs Karpenter {needed} or newer"
    ]
    assert findings[0].urn == urn_of(stack, RELEASE)


@pytest.mark.parametrize("chart", ["1.13.0", "1.14.1", "v1.14.1", "1.15.1", "2.0.0-rc.1"])
def test_chart_new_enough(chart):
    stack = compliant_stack()
    change(props_of(stack, RELEASE), ("version",), chart)
    assert check_stack(stack, CONFIG) == []


def test_kubernetes_version_outside_the_table():
    stack = compliant_stack()
    change(props_of(stack, CLUSTER), ("version",), "1.29")
    findings = check_stack(stack, CONFIG)
    assert findings == [
        'EKS cluster "gpu-test" runs Kubernetes "1.29", which is not in the Karpenter '
        "compatibility table (supported: 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)"
    ]
    assert findings[0].urn == urn_of(stack, CLUSTER)


@pytest.mark.parametrize("version", ["1.37", "1.37.2"])
def test_kubernetes_1_37_is_refused_because_eks_does_not_offer_it(version):
    """Karpenter 1.15 supports 1.37 (v1.15 compatibility.md: "1.37 | 1.15.x"), but no EKS source
    offers it (issue 31, point 2): the finding gives that reason, even with a 1.15 chart."""
    stack = compliant_stack()
    change(props_of(stack, CLUSTER), ("version",), version)
    change(props_of(stack, RELEASE), ("version",), "1.15.1")
    findings = check_stack(stack, CONFIG)
    assert findings == [
        f'EKS cluster "gpu-test" runs Kubernetes "{version}": Amazon EKS does not offer '
        "Kubernetes 1.37 yet (its release notes end at 1.36, checked 2026-11-27); Karpenter 1.15 "
        "supports it, so it is allowed once EKS does (supported: 1.30, 1.31, 1.32, 1.33, 1.34, "
        "1.35, 1.36)"
    ]
    assert findings[0].urn == urn_of(stack, CLUSTER)


def test_unparseable_chart_version():
    stack = compliant_stack()
    change(props_of(stack, RELEASE), ("version",), "latest")
    assert check_stack(stack, CONFIG) == [
        'Karpenter release "karpenter" has chart version "latest", not a version this policy '
        "can compare"
    ]


def test_engine_shape_reads_the_aws_cluster_version():
    """In the engine the eks component's outputs carry no version; its aws child's do."""
    stack = without(compliant_stack(), CLUSTER)
    cluster = change(aws_eks_cluster(), ("version",), "1.36.2")
    stack.append(resource(AWS_EKS_CLUSTER, "platform-cluster-eks-eksCluster", cluster))
    change(props_of(stack, RELEASE), ("version",), "1.12.0")
    assert check_stack(stack, CONFIG) == [
        'Karpenter release "karpenter" pins chart "1.12.0", but EKS cluster "gpu-test" runs '
        "Kubernetes 1.36, which needs Karpenter 1.13.0 or newer"
    ]


def test_no_karpenter_release_nothing_to_check():
    stack = without(compliant_stack(), RELEASE)
    change(props_of(stack, CLUSTER), ("version",), "1.29")
    assert check_stack(stack, CONFIG) == []
