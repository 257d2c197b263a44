"""The whole platform as one component, and reading it from stack configuration.

``GpuPlatform`` composes the network, the EKS cluster and Karpenter (and, as they land, the node
pools, the GPU Operator and the scheduler) from one validated ``PlatformConfig``. ``__main__.py``
reads the stack's configuration with ``read_stack_config`` and creates one ``GpuPlatform``.
"""

import contextlib
import dataclasses
import json
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Required, TypedDict, Union, get_args, get_origin

import pulumi
from pulumi.runtime import config as runtime_config

from .cluster import EksCluster, EksClusterArgs, system_node_label, system_tolerations
from .config import PROJECT, PlatformConfig
from .efa import EfaDevicePlugin, EfaDevicePluginArgs
from .gpu_operator import GpuOperator, GpuOperatorArgs
from .karpenter import Karpenter, KarpenterArgs
from .naming import TYPE_PREFIX
from .network import Network, NetworkArgs
from .nodepool import (
    EFA_RESOURCE,
    GPU_RESOURCE,
    NodePool,
    NodePoolArgs,
    NodePoolSpec,
    pool_taints,
)
from .scheduler import KaiScheduler, KaiSchedulerArgs
from .spec import SpecError, config_from_python


def stack_config_values(raw: dict[str, Any], project: str = PROJECT) -> dict[str, Any]:
    """The project's keys (without the ``<project>:`` prefix), structured values decoded."""
    values: dict[str, Any] = {}
    prefix = f"{project}:"
    for key, value in raw.items():
        if not key.startswith(prefix):
            continue
        if isinstance(value, str) and value[:1] in ("{", "["):
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(value)
        values[key[len(prefix) :]] = value
    return values


def read_stack_config() -> PlatformConfig:
    """Parse and validate the current stack's configuration; raises ``SpecError``."""
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    region = pulumi.Config("aws").get("region")
    return PlatformConfig.load(stack_config_values(raw), region)


def typed_dict_for(cls: type, name: str, _cache: dict | None = None) -> type:
    """A ``TypedDict`` (``total=False``; required fields marked ``Required``) mirroring a spec.

    The Pulumi component analyzer reads it to publish the component's inputs in the package
    schema, so TypeScript, Go and .NET programs get the same configuration surface.
    """
    cache = {} if _cache is None else _cache

    def convert(tp: Any) -> Any:
        origin = get_origin(tp)
        if origin in (Union, types.UnionType):
            inner = [a for a in get_args(tp) if a is not type(None)]
            return convert(inner[0])
        if origin is Literal:
            return pulumi.Input[str]
        if origin is tuple:
            return pulumi.Input[list[convert(get_args(tp)[0])]]  # type: ignore[misc]
        if origin in (Mapping, dict):
            return pulumi.Input[dict[str, convert(get_args(tp)[1])]]  # type: ignore[misc]
        if dataclasses.is_dataclass(tp):
            if tp not in cache:
                cache[tp] = typed_dict_for(tp, tp.__name__.removesuffix("Spec") + "Inputs", cache)
            return pulumi.Input[cache[tp]]
        return pulumi.Input[tp]

    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        tp = convert(hints[f.name])
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        fields[f.name] = Required[tp] if required else tp
    typed = TypedDict(name, fields, total=False)  # type: ignore[operator]
    typed.__doc__ = cls.__doc__
    typed.__module__ = cls.__module__
    return typed


GpuPlatformArgs = typed_dict_for(PlatformConfig, "GpuPlatformArgs")


def gpu_node_tolerations(
    pools: Sequence[NodePoolSpec], skip: Sequence[str] = (GPU_RESOURCE,)
) -> list[dict[str, str]]:
    """Tolerations for node DaemonSets (GPU Operator, EFA device plugin) beyond the ``skip``
    keys they tolerate already: every other taint the pools put on their nodes."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in pools:
        for taint in pool_taints(pool):
            if taint["key"] not in skip:
                key = (taint["key"], taint["effect"])
                seen.setdefault(
                    key, {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
                )
    return [seen[k] for k in sorted(seen)]


def platform_config_from_args(args: Mapping[str, Any]) -> PlatformConfig:
    """A ``PlatformConfig`` from the component's snake_case args (how a hosted component,
    called from TypeScript, Go or .NET, receives them)."""
    data = config_from_python(PlatformConfig, args)
    region = data.pop("region", None)
    for key, value in data.items():
        if isinstance(value, pulumi.Output):
            raise SpecError.from_lines(
                [f"{key}: must be a plain value; it decides which resources exist"]
            )
    return PlatformConfig.load(data, region)


class GpuPlatform(pulumi.ComponentResource):
    """A production GPU cluster on EKS: network, cluster, Karpenter and GPU capacity."""

    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]

    def __init__(
        self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None
    ):
        """``args``: a ``PlatformConfig`` from Python, or its fields as a dict (hosted)."""
        super().__init__(f"{TYPE_PREFIX}GpuPlatform", name, None, opts)
        config = args if isinstance(args, PlatformConfig) else platform_config_from_args(args)
        child = pulumi.ResourceOptions(parent=self)
        cluster_name = config.cluster.name
        tags = {**config.tags, "eks-gpu-platform/cluster": cluster_name}

        self.network = Network(
            f"{name}-network",
            NetworkArgs(
                spec=config.vpc,
                cluster_name=cluster_name,
                tags=tags,
                protect=config.cluster.protect,
            ),
            opts=child,
        )
        self.cluster = EksCluster(
            f"{name}-cluster",
            EksClusterArgs(
                spec=config.cluster,
                system_node_group=config.system_node_group,
                vpc_id=self.network.vpc_id,
                private_subnet_ids=self.network.private_subnet_ids,
                public_subnet_ids=self.network.public_subnet_ids,
                tags=tags,
            ),
            opts=child,
        )
        label_key, label_value = system_node_label(config.cluster.label_domain)
        self.karpenter = Karpenter(
            f"{name}-karpenter",
            KarpenterArgs(
                spec=config.karpenter,
                cluster_name=cluster_name,
                cluster=self.cluster.cluster_name,
                oidc_provider_arn=self.cluster.oidc_provider_arn,
                oidc_provider_url=self.cluster.oidc_provider_url,
                k8s_provider=self.cluster.provider,
                node_selector={label_key: label_value},
                tolerations=system_tolerations(),
                feature_gates={"nodeOverlay": True} if config.efa_pools else {},
                depends_on=[self.cluster.system_node_group, self.cluster.pod_identity_agent],
                tags=tags,
            ),
            opts=child,
        )
        karpenter_ready = [self.karpenter.crd_release, self.karpenter.release]
        gpu_limits = config.gpu_limits
        self.node_pools = {
            pool.name: NodePool(
                f"{name}-pool-{pool.name}",
                NodePoolArgs(
                    spec=pool,
                    cluster_name=cluster_name,
                    label_domain=config.cluster.label_domain,
                    node_role=self.karpenter.node_role_name,
                    k8s_provider=self.cluster.provider,
                    vpc_id=self.network.vpc_id,
                    gpu_limit=gpu_limits.get(pool.name),
                    depends_on=karpenter_ready,
                    tags=tags,
                ),
                opts=child,
            )
            for pool in config.pools
        }
        if config.efa_pools:
            self.efa_device_plugin = EfaDevicePlugin(
                f"{name}-efa",
                EfaDevicePluginArgs(
                    efa_label_key=f"{config.cluster.label_domain}/efa",
                    instance_types=[t for p in config.efa_pools for t in p.efa_types],
                    extra_tolerations=gpu_node_tolerations(
                        config.efa_pools, skip=(GPU_RESOURCE, EFA_RESOURCE)
                    ),
                    k8s_provider=self.cluster.provider,
                    depends_on=[self.cluster.system_node_group],
                ),
                opts=child,
            )
        system_selector = {label_key: label_value}
        self.gpu_operator = None
        if config.gpu_operator.enabled:
            self.gpu_operator = GpuOperator(
                f"{name}-gpu-operator",
                GpuOperatorArgs(
                    spec=config.gpu_operator,
                    drivers_preinstalled=config.drivers_preinstalled,
                    k8s_provider=self.cluster.provider,
                    system_node_selector=system_selector,
                    system_tolerations=system_tolerations(),
                    gpu_tolerations=gpu_node_tolerations(config.gpu_pools),
                    depends_on=[self.cluster.system_node_group],
                ),
                opts=child,
            )
        self.scheduler = None
        if config.scheduler.enabled and self.gpu_operator is not None:
            cpu_pools = [self.node_pools[p.name] for p in config.pools if p.kind == "cpu"]
            self.scheduler = KaiScheduler(
                f"{name}-scheduler",
                KaiSchedulerArgs(
                    spec=config.scheduler,
                    k8s_provider=self.cluster.provider,
                    kubernetes_version=config.cluster.kubernetes_version,
                    pool_label_key=f"{config.cluster.label_domain}/pool",
                    system_node_selector=system_selector,
                    system_tolerations=system_tolerations(),
                    depends_on=[self.gpu_operator, self.cluster.system_node_group, *cpu_pools],
                ),
                opts=child,
            )
        self.cluster_name = self.cluster.cluster_name
        self.kubeconfig = self.cluster.kubeconfig
        self.register_outputs({"cluster_name": self.cluster_name, "kubeconfig": self.kubeconfig})
