"""Tests for ``eks_gpu_platform.efa.component``: the component and its Helm release."""

import pulumi
import pulumi_kubernetes as k8s

from eks_gpu_platform.efa.component import EfaDevicePlugin, EfaDevicePluginArgs
from eks_gpu_platform.efa.values import device_plugin_values

EFA_LABEL = "example.com/efa"

# --- component ---------------------------------------------------------------------------------

TYPE = "eks-gpu-platform:index:EfaDevicePlugin"
RELEASE = "kubernetes:helm.sh/v3:Release"


def make_plugin() -> None:
    provider = k8s.Provider("k8s", kubeconfig="{}")
    nodes = k8s.core.v1.ConfigMap("system-nodes", opts=pulumi.ResourceOptions(provider=provider))
    EfaDevicePlugin(
        "efa",
        EfaDevicePluginArgs(
            efa_label_key=EFA_LABEL,
            instance_types=["p5.48xlarge", "p5e.48xlarge"],
            k8s_provider=provider,
            depends_on=[nodes],
        ),
    )


def test_component_children_and_release(run_program):
    recording = run_program(make_plugin)
    component = next(r for r in recording.resources if r.type == TYPE)
    children = recording.children_of(component.urn)
    assert [(r.type, r.name) for r in children] == [(RELEASE, "efa-chart")]
    (release,) = children
    provider = next(r for r in recording.resources if r.name == "k8s")
    nodes = next(r for r in recording.resources if r.name == "system-nodes")
    assert release.parent == component.urn
    assert release.provider.startswith(provider.urn + "::")
    assert nodes.urn in release.dependencies
    inputs = release.inputs
    assert inputs["name"] == "aws-efa-k8s-device-plugin"
    assert inputs["chart"] == "aws-efa-k8s-device-plugin"
    assert inputs["version"] == "0.5.30"
    assert inputs["repositoryOpts"] == {"repo": "https://aws.github.io/eks-charts"}
    assert inputs["namespace"] == "kube-system"
    assert inputs["values"] == device_plugin_values(
        efa_label_key=EFA_LABEL, instance_types=["p5.48xlarge", "p5e.48xlarge"]
    )
    assert component.registered_outputs == {"release_name": "aws-efa-k8s-device-plugin"}
