"""Contract tests over every component in every stack (STYLE: names, parents, outputs).

The stacks are the user's ``Pulumi.<stack>.yaml`` files (``stacks.discover``), never a list:
the contract holds whatever they configure.
"""

import typing

import pulumi
import pytest
from stack_files import USER_STACKS, user_id

import eks_gpu_platform as lib
from eks_gpu_platform.cluster import EksCluster
from eks_gpu_platform.efa import EfaDevicePlugin
from eks_gpu_platform.gpu_operator import GpuOperator
from eks_gpu_platform.karpenter import Karpenter
from eks_gpu_platform.network import Network
from eks_gpu_platform.nodepool import NodePool
from eks_gpu_platform.platform import GpuPlatform
from eks_gpu_platform.scheduler import KaiScheduler
from eks_gpu_platform.tenants.component import TenantAccess

PREFIX = "eks-gpu-platform:index:"
ALL = (GpuPlatform, Network, EksCluster, Karpenter, NodePool, EfaDevicePlugin, GpuOperator)
COMPONENTS = {c.__name__: c for c in (*ALL, KaiScheduler, TenantAccess)}
STACKS = USER_STACKS


def declared_outputs(cls: type) -> set[str]:
    """The ``name: pulumi.Output[...]`` annotations on the component class itself."""
    own = vars(cls).get("__annotations__", {})
    return {n for n, t in own.items() if typing.get_origin(t) is pulumi.Output}


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_every_component_follows_the_contract(stack, render_user_stack):
    recording = render_user_stack(stack)
    ours = [r for r in recording.resources if r.type.startswith(PREFIX)]
    by_urn = {r.urn: r for r in recording.resources}
    assert {r.type.removeprefix(PREFIX) for r in ours} <= set(COMPONENTS)
    for component in ours:
        cls = COMPONENTS[component.type.removeprefix(PREFIX)]
        # register_outputs is called, last, with exactly the declared outputs.
        assert component.registered_outputs is not None, component.name
        assert set(component.registered_outputs) == declared_outputs(cls), component.name
        # Children: parented to the component, named "<component>-<suffix>".
        for child in recording.children_of(component.urn):
            assert child.name.startswith(f"{component.name}-"), (component.name, child.name)
    # Nothing hangs off the stack except the platform itself.
    roots = [r for r in recording.resources if r.parent not in by_urn]
    assert [(r.type, r.name) for r in roots] == [(f"{PREFIX}GpuPlatform", "platform")]


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_every_kubernetes_resource_uses_the_cluster_provider(stack, render_user_stack):
    recording = render_user_stack(stack)
    (provider,) = recording.of_type("pulumi:providers:kubernetes")
    for r in recording.resources:
        if r.custom and r.type.startswith("kubernetes:"):
            assert r.provider.startswith(provider.urn + "::"), r.name


def test_public_api_exports_every_component():
    assert set(COMPONENTS) <= set(lib.__all__)
