"""Tests for ``eks_gpu_platform.gpu_operator.component``: the component's children."""

import pulumi
import pulumi_kubernetes as k8s
import pytest

from eks_gpu_platform import versions
from eks_gpu_platform.gpu_operator.component import GpuOperator, GpuOperatorArgs
from eks_gpu_platform.gpu_operator.spec import GpuOperatorSpec
from eks_gpu_platform.gpu_operator.values import gpu_operator_values
from eks_gpu_platform.spec import SpecError

SYSTEM_SELECTOR = {"eks-gpu-platform.io/pool": "system"}
SYSTEM_TOLERATIONS = [{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}]
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}

TYPE = "eks-gpu-platform:index:GpuOperator"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"


def make_operator(spec: GpuOperatorSpec | None = None) -> None:
    provider = k8s.Provider("k8s", kubeconfig="{}")
    marker = k8s.core.v1.ConfigMap("marker", opts=pulumi.ResourceOptions(provider=provider))
    GpuOperator(
        "gpu",
        GpuOperatorArgs(
            spec=spec or GpuOperatorSpec(),
            drivers_preinstalled=True,
            k8s_provider=provider,
            system_node_selector=SYSTEM_SELECTOR,
            system_tolerations=SYSTEM_TOLERATIONS,
            gpu_tolerations=[EFA_TOLERATION],
            depends_on=[marker],
        ),
    )


def test_component_children(run_program):
    recording = run_program(make_operator)
    component = next(r for r in recording.resources if r.type == TYPE)
    children = recording.children_of(component.urn)
    assert sorted((r.type, r.name) for r in children) == [
        (NAMESPACE_TYPE, "gpu-namespace"),
        (RELEASE_TYPE, "gpu-chart"),
    ]
    namespace = next(r for r in children if r.type == NAMESPACE_TYPE)
    release = next(r for r in children if r.type == RELEASE_TYPE)
    marker = next(r for r in recording.resources if r.name == "marker")
    assert namespace.inputs["metadata"] == {
        "name": "gpu-operator",
        "labels": {
            "pod-security.kubernetes.io/enforce": "privileged",
            "pod-security.kubernetes.io/audit": "restricted",
            "pod-security.kubernetes.io/warn": "restricted",
        },
    }
    assert marker.urn in namespace.dependencies
    assert {namespace.urn, marker.urn} <= set(release.dependencies)
    assert namespace.provider.startswith(
        next(r.urn for r in recording.resources if r.name == "k8s")
    )
    expected_values = gpu_operator_values(
        spec=GpuOperatorSpec(),
        drivers_preinstalled=True,
        system_node_selector=SYSTEM_SELECTOR,
        system_tolerations=SYSTEM_TOLERATIONS,
        gpu_tolerations=[EFA_TOLERATION],
    )
    inputs = release.inputs
    assert inputs["name"] == "gpu-operator"
    assert inputs["chart"] == versions.GPU_OPERATOR.name == "gpu-operator"
    assert inputs["version"] == versions.GPU_OPERATOR.version
    assert inputs["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert inputs["namespace"] == "gpu-operator"
    assert inputs["values"] == expected_values
    assert component.registered_outputs == {
        "namespace": "gpu-operator",
        "release_name": "gpu-operator",
    }


def test_disabled_spec_is_rejected(run_program):
    def program():
        make_operator(GpuOperatorSpec(enabled=False))

    with pytest.raises(SpecError) as err:
        run_program(program)
    assert err.value.lines == [
        "GpuOperatorArgs.spec.enabled: is false; leave the GpuOperator component out instead of "
        "creating it"
    ]
