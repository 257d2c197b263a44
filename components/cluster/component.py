"""The ``EksCluster`` component: the control plane, its KMS key and the Kubernetes provider,
with the children built by ``access_entries`` (access entries), ``managed_addons`` (the EKS
add-ons) and ``system_nodes`` (the system node group); its inputs are ``args.EksClusterArgs``."""

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from ..errors import refused_by_up
from ..naming import DISCOVERY_TAG, TYPE_PREFIX
from ..spec import SpecError
from .access import without_bootstrap_admin
from .access_entries import admin_entries, break_glass_entry, viewer_entries
from .access_wait import access_checked
from .addon_versions import addon_version_input, resolve_addon_versions
from .args import EksClusterArgs
from .identity import resolve_access
from .lifecycle import (
    kubeconfig_with_credentials,
    placeholder_cidrs,
    placeholder_message,
    stack_assumed_role,
)
from .managed_addons import ADDONS_AFTER_COMPUTE, addons_before_compute, managed_addon
from .nodegroup import system_node_label, system_tolerations
from .spec import ClusterSpec
from .system_nodes import system_node_group


def bootstrap_admin_off(
    args: pulumi.ResourceTransformArgs,
) -> pulumi.ResourceTransformResult | None:
    """A ``transforms`` resource option on pulumi-eks's ``eks:index:Cluster``: its child
    ``aws:eks/cluster:Cluster`` is created with ``bootstrapClusterCreatorAdminPermissions:
    false`` (access.without_bootstrap_admin), which pulumi-eks hard-codes to true.

    Transforms reach the children a packaged component registers from its own plugin: the
    engine runs a resource's transforms, then its parents' transforms, walking up the parent
    chain it records for every URN, whoever registers the child; a remote component's own
    transforms are kept for its construct call (pulumi/pulumi pkg/resource/deploy/
    source_eval.go L2453-2465 ``pendingTransforms``, "We only need to save this for remote
    calls"; L2474-2489 the parent walk; L3055-3067 ``resourceTransforms``; at HEAD 1b59498 =
    3.260.0-dev, the newest engine source available; the 3.272.0 SDK sends a transform as a
    callback the engine calls: pulumi/runtime/_callbacks.py ``register_transform``). Every
    other resource passes unchanged."""
    if args.type_ != "aws:eks/cluster:Cluster":
        return None
    return pulumi.ResourceTransformResult(props=without_bootstrap_admin(args.props), opts=args.opts)


def refuse_placeholder_cidrs(spec: ClusterSpec) -> None:
    """In ``pulumi up``, a documentation CIDR in ``publicAccessCidrs`` is a ``SpecError``
    (raised before anything is registered); a preview only warns (``EksCluster``)."""
    if pulumi.runtime.is_dry_run():
        return
    if found := placeholder_cidrs(spec.public_access_cidrs):
        raise SpecError.from_lines([placeholder_message(found)])


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster with secrets encryption, managed add-ons and a system node group."""

    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_provider_url: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    node_security_group_id: pulumi.Output[str]
    system_node_role_arn: pulumi.Output[str]
    kms_key_arn: pulumi.Output[str]
    addon_versions: pulumi.Output[dict[str, str]]

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        spec, system, tags = args.spec, args.system_node_group, dict(args.tags)
        refuse_placeholder_cidrs(spec)
        super().__init__(f"{TYPE_PREFIX}EksCluster", name, None, opts)
        if placeholders := placeholder_cidrs(spec.public_access_cidrs):
            pulumi.log.warn(refused_by_up(placeholder_message(placeholders)), self)
        self.resolved_addons = dict(args.addon_versions or {}) or resolve_addon_versions(
            self, spec.name, spec.kubernetes_version, spec.addon_versions
        )
        # What components built on this cluster derive their defaults from (KarpenterArgs,
        # NodePoolArgs, GpuOperatorArgs, KaiSchedulerArgs, EfaDevicePluginArgs take it as
        # ``cluster``). Plain attributes, not registered outputs.
        self.spec = spec
        self.node_group_spec = system
        self.vpc_id = pulumi.Output.from_input(args.vpc_id)
        # The tag Karpenter selects the private subnets by (NodePoolArgs.subnet_selector).
        self.subnet_selector = (
            args.network.subnet_selector if args.network else {DISCOVERY_TAG: spec.name}
        )
        label_key, label_value = system_node_label(spec.label_domain)
        self.system_node_selector = {label_key: label_value}
        self.system_tolerations = system_tolerations()
        network_ready = list(args.network.egress) if args.network is not None else []
        child = pulumi.ResourceOptions(parent=self)
        protected = pulumi.ResourceOptions(parent=self, protect=spec.protect)
        # Invokes parented to the component use its AWS provider (pulumi/runtime/invoke.py).
        scoped = pulumi.InvokeOutputOptions(parent=self)
        partition = aws.get_partition_output(opts=scoped).partition
        dns_suffix = aws.get_partition_output(opts=scoped).dns_suffix
        account_id = aws.get_caller_identity_output(opts=scoped).account_id
        region = aws.get_region_output(opts=scoped).region
        # The deployer, and the admins' existing entries; resolved before anything is declared.
        access = args.access if args.access is not None else resolve_access(self, name, spec)

        if spec.kms_key_arn:
            self.kms_key_arn = pulumi.Output.from_input(spec.kms_key_arn)
        else:
            key = aws.kms.Key(
                f"{name}-secrets",
                description=f"EKS secrets encryption for cluster {spec.name}",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                tags=tags,
                opts=protected,
            )
            aws.kms.Alias(
                f"{name}-secrets",
                name=f"alias/eks/{spec.name}-secrets",
                target_key_id=key.key_id,
                opts=child,
            )
            self.kms_key_arn = key.arn

        cluster = eks.Cluster(
            f"{name}-eks",
            name=spec.name,
            version=spec.kubernetes_version,
            vpc_id=args.vpc_id,
            subnet_ids=args.private_subnet_ids,
            node_associate_public_ip_address=False,
            endpoint_private_access=True,
            endpoint_public_access=spec.endpoint_public_access,
            public_access_cidrs=list(spec.public_access_cidrs) or None,
            authentication_mode=eks.AuthenticationMode.API,
            # The admins' entries are this component's own resources (below): stable names,
            # aliases to pulumi-eks's old positional children, and the deployer left out.
            access_entries={},
            encryption_config_key_arn=self.kms_key_arn,
            enabled_cluster_log_types=list(spec.log_types),
            create_oidc_provider=True,
            skip_default_node_group=True,
            skip_default_security_groups=True,
            bootstrap_self_managed_addons=False,
            use_default_vpc_cni=True,
            coredns_addon_options={"enabled": False},
            kube_proxy_addon_options={"enabled": False},
            deletion_protection=spec.protect,
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=spec.protect,
                # With admins listed, every admin gets an entry of its own (below) and EKS's
                # bootstrap entry for the creator is off: access never depends on who created
                # the cluster. See bootstrap_admin_off.
                transforms=[bootstrap_admin_off] if spec.admins else None,
            ),
        )
        # Resolves once the control plane exists, and carries that dependency to every user.
        self.cluster_name = cluster.cluster_security_group_id.apply(lambda _: spec.name)
        self.cluster_security_group_id = cluster.cluster_security_group_id
        self.node_security_group_id = cluster.node_security_group_id
        self.oidc_provider_arn = cluster.oidc_provider_arn
        self.oidc_provider_url = cluster.oidc_provider_url
        self.endpoint = cluster.core.endpoint
        self.kubeconfig = pulumi.Output.secret(cluster.kubeconfig_json)

        self.admin_entries, self.admin_associations = admin_entries(
            self, name, spec, cluster, access, partition, account_id, tags
        )
        self.break_glass_entry = break_glass_entry(
            self, name, spec, access, partition, account_id, tags
        )
        self.viewer_entries = viewer_entries(self, name, spec, access, partition, account_id, tags)

        aws.ec2.Tag(
            f"{name}-primary-sg-discovery",
            resource_id=cluster.cluster_security_group_id,
            key=DISCOVERY_TAG,
            value=spec.name,
            opts=child,
        )
        # With the stack's aws:profile and assumed role (what the default AWS provider uses),
        # so Helm and custom-resource steps run as the identity that deploys (lifecycle.py).
        aws_config = pulumi.Config("aws")
        profile = aws_config.get("profile")
        assumed_role = stack_assumed_role(aws_config.get("assumeRoles"))
        # Every Kubernetes object uses this provider, so each waits for every admin's access
        # policy association on `up` and is deleted before any of them on `destroy`; a failed
        # Kubernetes delete keeps them all (the engine withholds a failed step's transitive
        # dependencies: pulumi/pulumi pkg/resource/deploy/deployment_executor.go L501-553,
        # v3.259.0 == HEAD 1b59498). The associations depend on their entries.
        # The kubeconfig waits, in `up`, until the new access works (access_wait.py): the
        # provider discovers the API server once, at configure.
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=access_checked(
                cluster.kubeconfig_json.apply(
                    lambda k: kubeconfig_with_credentials(k, profile, assumed_role)
                ),
                self.admin_associations,
                spec.name,
            ),
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(self.admin_associations)),
        )

        before = addons_before_compute(self, name, spec, tags, partition, region, account_id)
        self.pod_identity_agent = before[-1]

        role, self.system_node_group = system_node_group(
            self, name, args, tags, partition, dns_suffix, before, network_ready
        )
        self.system_node_role_arn = role.arn
        after_nodes = pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group])
        after = [
            managed_addon(self, name, addon, tags, after_nodes) for addon in ADDONS_AFTER_COMPUTE
        ]
        self.coredns = after[0]
        # What a controller on the system nodes needs while it runs, and so while `pulumi
        # destroy` deletes what it manages: the nodes, pod credentials, DNS, and the network's
        # routes and NAT (Karpenter's release depends on all of them: KarpenterArgs).
        self.controller_prerequisites: list[pulumi.Resource] = [
            self.system_node_group,
            self.pod_identity_agent,
            *after,
            *network_ready,
        ]

        # What each add-on was resolved to (a stack output: GpuPlatform.addon_versions).
        self.addon_versions = pulumi.Output.all(
            **{a: addon_version_input(v) for a, v in self.resolved_addons.items()}
        )
        self.register_outputs(
            {
                "addon_versions": self.addon_versions,
                "cluster_name": self.cluster_name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "oidc_provider_arn": self.oidc_provider_arn,
                "oidc_provider_url": self.oidc_provider_url,
                "cluster_security_group_id": self.cluster_security_group_id,
                "node_security_group_id": self.node_security_group_id,
                "system_node_role_arn": self.system_node_role_arn,
                "kms_key_arn": self.kms_key_arn,
            }
        )
