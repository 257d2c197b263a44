"""The whole platform as one component, and reading it from stack configuration.

``GpuPlatform`` composes the network, the EKS cluster and Karpenter (and, as they land, the node
pools, the GPU Operator and the scheduler) from one validated ``PlatformConfig``. ``__main__.py``
reads the stack's configuration with ``read_stack_config`` and creates one ``GpuPlatform``.
"""

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws
from pulumi.runtime import config as runtime_config

from .budget import capacity_of, capacity_warnings, needs_node_overlay, nodepool_names
from .cluster import EksCluster, EksClusterArgs, system_node_label, system_tolerations
from .cluster.component import refuse_placeholder_cidrs
from .cluster.lifecycle import credential_problems
from .config import PlatformConfig
from .config_load import stack_config_values
from .dra_driver.component import DraDriver, DraDriverArgs
from .efa import EfaDevicePlugin, EfaDevicePluginArgs
from .gpu_operator import GpuOperator, GpuOperatorArgs, mig_ready_pools
from .karpenter import Karpenter, KarpenterArgs
from .naming import TYPE_PREFIX
from .network import Network, NetworkArgs
from .nodepool import (
    EFA_RESOURCE,
    GPU_RESOURCE,
    NodePool,
    NodePoolArgs,
    NodePoolSpec,
    pool_startup_taints,
    pool_taints,
)
from .nodepool.dra import karpenter_dra_settings
from .nodepool.zones import checked_vpc_zones
from .preflight import run_preflight
from .scheduler import KaiScheduler, KaiSchedulerArgs
from .scheduler.spec import leaf_queue_names
from .scheduler.tenancy import PoolAccess, queue_tenancy
from .schema import typed_dict_for
from .spec import SpecError, config_from_python
from .tenants.component import tenant_access
from .validation_access.component import validation_access


def tenant_pools(config: PlatformConfig) -> list[PoolAccess]:
    """Every pool as the tenancy policies see it: its NodePools and taints, and the leaf queues
    routed to it (``scheduler.queues[].nodePools``, the budget's routing)."""
    leaves = leaf_queue_names(config.scheduler.queues)
    return [
        PoolAccess(
            name=pool.name,
            nodepools=tuple(nodepool_names(pool)),
            taints=tuple(pool_taints(pool)),
            queues=tuple(
                q.name
                for q in config.scheduler.queues
                if q.name in leaves and pool.name in q.node_pools
            ),
        )
        for pool in config.pools
    ]


def read_stack_config() -> PlatformConfig:
    """Parse and validate the current stack's configuration; raises ``SpecError``."""
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    region = pulumi.Config("aws").get("region")
    return PlatformConfig.load(stack_config_values(raw), region, raw)


GpuPlatformArgs = typed_dict_for(PlatformConfig, "GpuPlatformArgs")


def gpu_node_tolerations(
    pools: Sequence[NodePoolSpec], skip: Sequence[str] = (GPU_RESOURCE,)
) -> list[dict[str, str]]:
    """Tolerations for node DaemonSets (GPU Operator, EFA device plugin) beyond the ``skip``
    keys they tolerate already: every other taint the pools put on their nodes, startup taints
    included (the operands must run on a MIG node before its startup taint goes)."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in pools:
        for taint in pool_taints(pool) + pool_startup_taints(pool):
            if taint["key"] not in skip:
                key = (taint["key"], taint["effect"])
                seen.setdefault(
                    key, {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
                )
    return [seen[k] for k in sorted(seen)]


def platform_config_from_args(args: Mapping[str, Any]) -> PlatformConfig:
    """A ``PlatformConfig`` from the component's snake_case args (how a hosted component,
    called from TypeScript, Go or .NET, receives them). Without a ``region`` input, the stack's
    ``aws:region`` (the engine hands a hosted component the stack's configuration: pulumi/pulumi
    pkg/resource/deploy/source_eval.go, ``ConstructInfo.Config``)."""
    data = config_from_python(PlatformConfig, args)
    for key, value in data.items():
        if isinstance(value, pulumi.Output):
            raise SpecError.from_lines(
                [f"{key}: must be a plain value; it decides which resources exist"]
            )
    region = data.pop("region", None) or pulumi.Config("aws").get("region")
    return PlatformConfig.load(data, region)


def stack_aws_config() -> dict[str, Any]:
    """The stack's ``aws:*`` configuration: what the default AWS provider reads."""
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return {key: value for key, value in raw.items() if key.startswith("aws:")}


def region_problems(region: str, stack_aws: Mapping[str, Any]) -> list[str]:
    """The platform's region (given in code, or read from ``aws:region``) against the stack's
    AWS configuration, when the platform's AWS resources would use the default provider.

    The default AWS provider takes its region from ``aws:region`` (pulumi_aws/config/vars.py,
    ``region``): a different region in code is a conflict. Without ``aws:region`` the platform
    creates its own provider for the code's region, and explicit providers read no stack
    configuration (pulumi_aws/provider.py builds their inputs from arguments only), so any other
    ``aws:`` key would be silently dropped: that is reported too.
    """
    stack_region = stack_aws.get("aws:region")
    if stack_region and stack_region != region:
        return [
            f"region: {region!r} (given in code) conflicts with aws:region {stack_region!r} in "
            "the stack configuration; set one of them"
        ]
    if stack_region:
        return []
    return [
        f"{key}: not read by the AWS provider the platform creates for region {region!r} "
        f"(given in code, no aws:region); set aws:region: {region} in the stack configuration"
        for key in sorted(stack_aws)
    ]


def inherited_aws_provider(opts: pulumi.ResourceOptions | None) -> pulumi.ProviderResource | None:
    """The AWS provider a component gets from its options or its parent, if any (the SDK's
    rules: pulumi/resource.py ``Resource._get_providers``)."""
    if opts is None:
        return None
    providers = opts.providers
    found = None
    if isinstance(providers, Mapping):
        found = providers.get("aws")
    elif providers:
        found = next((p for p in providers if p.package == "aws"), None)
    if found is None and opts.provider is not None and opts.provider.package == "aws":
        found = opts.provider
    if found is None and opts.parent is not None:
        found = opts.parent.get_provider("aws:ec2/vpc:Vpc")
    return found


class GpuPlatform(pulumi.ComponentResource):
    """A production GPU cluster on EKS: network, cluster, Karpenter and GPU capacity."""

    # The stack's outputs (__main__.py exports each under its schema name), published in the
    # package schema with the docstring after each one as its description.
    cluster_name: pulumi.Output[str]
    """Name of the EKS cluster."""
    kubeconfig: pulumi.Output[str]
    """Kubeconfig of the cluster, as a JSON string. A secret."""
    cluster_endpoint: pulumi.Output[str]
    """URL of the cluster's Kubernetes API server."""
    oidc_provider_arn: pulumi.Output[str]
    """ARN of the cluster's IAM OpenID Connect provider (for IAM roles for service accounts)."""
    cluster_security_group_id: pulumi.Output[str]
    """ID of the cluster security group EKS created (control plane and managed nodes)."""
    node_security_group_id: pulumi.Output[str]
    """ID of the security group of the cluster's nodes: the EKS-created cluster security group."""
    vpc_id: pulumi.Output[str]
    """ID of the VPC the cluster runs in (created, or the existing one configured)."""
    private_subnet_ids: pulumi.Output[list[str]]
    """IDs of the private subnets the nodes run in, tagged for Karpenter discovery."""
    karpenter_node_role_arn: pulumi.Output[str]
    """ARN of the IAM role of the nodes Karpenter launches."""
    karpenter_controller_role_arn: pulumi.Output[str]
    """ARN of the Karpenter controller's IAM role."""
    interruption_queue_name: pulumi.Output[str]
    """Name of Karpenter's SQS interruption queue; empty when interruption handling is off."""
    addon_versions: pulumi.Output[dict[str, str]]
    """Version of each EKS managed add-on: its pin, the installed one, or the one looked up."""

    # Outputs the package schema marks `secret: true` (provider/__main__.py adds the flag: the
    # schema generator of pulumi 3.272.0 has no such field, experimental/schema.py 66-91); each
    # is also a secret Output, so its value stays encrypted in state in every language.
    secret_outputs = ("kubeconfig",)

    def __init__(
        self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None
    ):
        """``args``: a ``PlatformConfig`` from Python, or its fields as a dict (hosted).

        The AWS resources go to ``config.region``: through the default provider when the
        stack's ``aws:region`` is the same region, through an AWS provider of its own
        (``<name>-aws``) when the stack sets no ``aws:region``; a different ``aws:region`` is a
        ``SpecError``. An AWS provider passed in ``opts`` (or inherited) is used as given.
        """
        config = args if isinstance(args, PlatformConfig) else platform_config_from_args(args)
        given_provider = inherited_aws_provider(opts)
        stack_aws = stack_aws_config() if given_provider is None else {}
        problems = region_problems(config.region, stack_aws) if given_provider is None else []
        # The Kubernetes steps authenticate with `aws eks get-token`, not the AWS provider.
        problems += credential_problems(stack_aws_config())
        if problems:
            raise SpecError.from_lines(problems)
        # `pulumi up` with a documentation CIDR is refused before anything is registered.
        refuse_placeholder_cidrs(config.cluster)
        super().__init__(f"{TYPE_PREFIX}GpuPlatform", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.aws_provider = None
        if given_provider is None and not stack_aws.get("aws:region"):
            self.aws_provider = aws.Provider(f"{name}-aws", region=config.region, opts=child)
            child = pulumi.ResourceOptions(parent=self, providers={"aws": self.aws_provider})
        # Every check that can refuse `up` (AMIs, principals and access, quotas, the spot
        # role), before the first resource is registered (preflight.py).
        preflight = run_preflight(self, name, config, self.aws_provider or given_provider)
        cluster_name = config.cluster.name
        node_tags = {"eks-gpu-platform/cluster": cluster_name}
        tags = {**config.tags, **node_tags}

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
                network=self.network,
                vpc_id=self.network.vpc_id,
                private_subnet_ids=self.network.private_subnet_ids,
                public_subnet_ids=self.network.public_subnet_ids,
                tags=tags,
                addon_versions=preflight.addon_versions,
                access=preflight.access,
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
                feature_gates={"nodeOverlay": True}
                if needs_node_overlay(config.pools, config.gpu_operator)
                else {},
                settings=karpenter_dra_settings(config.pools),
                # Nodes, pod credentials, DNS, routes and NAT: the controller needs them until
                # its node pools are gone (issue 11, item 3).
                depends_on=self.cluster.controller_prerequisites,
                tags=tags,
                spot_service_linked_role=preflight.spot_role.create,
                spot_role_arn=preflight.spot_role.existing_arn,
            ),
            opts=child,
        )
        karpenter_ready = [self.karpenter.crd_release, self.karpenter.release]
        for warning in capacity_warnings(
            config.pools, config.gpu_operator, config.scheduler, config.workload_kinds
        ):
            pulumi.log.warn(warning.removeprefix("warning: "), self)
        gpu_limits = config.gpu_limits
        # Every EFA pool's zone against the region's zones and the VPC's, in one error, before
        # the pools' resources are registered (nodepool/zones.py).
        vpc_zones = pulumi.Output.all(self.network.region_zones, self.network.zones).apply(
            functools.partial(
                checked_vpc_zones,
                pools=[(i, p) for i, p in enumerate(config.node_pools) if p.kind == "efa"],
            )
        )
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
                    subnet_selector=self.network.subnet_selector,
                    vpc_zones=vpc_zones if pool.kind == "efa" else None,
                    gpu_limit=gpu_limits.get(pool.name),
                    capacity=capacity_of(pool, config.gpu_operator) if pool.is_gpu else None,
                    depends_on=karpenter_ready,
                    # A stable minimum: EC2NodeClass tags are in Karpenter's drift hash, so a
                    # stack tag edit would replace every node (issue 11, item 6).
                    tags=node_tags,
                ),
                # cluster.protect: each pool's NodePool, EC2NodeClass, overlays and placement
                # group inherit it (pulumi/resource.py: a child without `protect` takes its
                # parent's). The NodePools are deleted first by `pulumi destroy` (leaves
                # first); a refused delete keeps everything they depend on (the engine
                # withholds a failed step's transitive dependencies), so a `--skip-preview`
                # destroy of a protected stack drains no GPU node.
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(protect=config.cluster.protect)
                ),
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
        dra_pools = [p for p in config.gpu_pools if p.dra]
        if dra_pools:
            # The NVIDIA DRA driver on the DRA pools' nodes only (dra_driver/values.py).
            self.dra_driver = DraDriver(
                f"{name}-dra-driver",
                DraDriverArgs(
                    dra_label=f"{config.cluster.label_domain}/dra",
                    tolerations=gpu_node_tolerations(dra_pools, skip=()),
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
                    mig_ready=mig_ready_pools(config.gpu_pools, config.gpu_operator),
                    label_domain=config.cluster.label_domain,
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
                    tenant_queues=queue_tenancy(
                        config.scheduler.queues,
                        config.workload_kinds,
                        {p.name: p.preemptible for p in config.gpu_pools},
                        config.scheduler.priority_classes,
                    ),
                    tenant_pools=tenant_pools(config),
                    depends_on=[self.gpu_operator, self.cluster.system_node_group, *cpu_pools],
                ),
                opts=child,
            )
        self.tenants = None
        if self.scheduler is not None:
            self.tenants = tenant_access(
                f"{name}-tenants",
                config,
                self.cluster,
                self.scheduler,
                tags,
                child,
                principal_arns=preflight.access.principals,
            )
        # The validation run's own identity and ClusterRole (validation.principal).
        self.validation_access = validation_access(
            f"{name}-validation",
            config,
            self.cluster,
            tags,
            child,
            principal_arns=preflight.access.principals,
        )
        self.cluster_name = self.cluster.cluster_name
        self.kubeconfig = pulumi.Output.secret(self.cluster.kubeconfig)
        self.cluster_endpoint = self.cluster.endpoint
        self.oidc_provider_arn = self.cluster.oidc_provider_arn
        self.cluster_security_group_id = self.cluster.cluster_security_group_id
        self.node_security_group_id = self.cluster.node_security_group_id
        self.vpc_id = self.network.vpc_id
        self.private_subnet_ids = self.network.private_subnet_ids
        self.karpenter_node_role_arn = self.karpenter.node_role_arn
        self.karpenter_controller_role_arn = self.karpenter.controller_role_arn
        self.interruption_queue_name = self.karpenter.queue_name
        self.addon_versions = self.cluster.addon_versions
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "cluster_endpoint": self.cluster_endpoint,
                "oidc_provider_arn": self.oidc_provider_arn,
                "cluster_security_group_id": self.cluster_security_group_id,
                "node_security_group_id": self.node_security_group_id,
                "vpc_id": self.vpc_id,
                "private_subnet_ids": self.private_subnet_ids,
                "karpenter_node_role_arn": self.karpenter_node_role_arn,
                "karpenter_controller_role_arn": self.karpenter_controller_role_arn,
                "interruption_queue_name": self.interruption_queue_name,
                "addon_versions": self.addon_versions,
            }
        )
