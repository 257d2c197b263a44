"""The ``EksCluster`` component and its ``EksClusterArgs``: the control plane, its KMS key,
the managed add-ons, the system node group and the Kubernetes provider."""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from ..errors import refused_by_up
from ..iam import (
    SSM_NODE_POLICY,
    attach_managed_policies,
    ec2_trust_policy,
    pod_identity_trust_policy,
)
from ..naming import DISCOVERY_TAG, IAM_ROLE_NAME_MAX, TYPE_PREFIX, bounded_name
from ..network.component import Network
from ..spec import (
    SpecError,
    derive_unset,
    derived,
    missing_problems,
    require_instance,
    show,
)
from .access import (
    CLUSTER_TAG,
    admin_entry_key,
    admin_policy_arn,
    admin_principal_arn,
    without_bootstrap_admin,
)
from .access_wait import access_checked
from .addon_versions import (
    ADDON_MINOR_TAG,
    AddonVersion,
    addon_version_input,
    resolve_addon_versions,
)
from .addons import addon_configuration_values
from .identity import AdminAccess, resolve_access
from .lifecycle import (
    kubeconfig_with_credentials,
    placeholder_cidrs,
    placeholder_message,
    stack_assumed_role,
)
from .nodegroup import (
    SYSTEM_NODE_POLICIES,
    SYSTEM_TAINT_KEY,
    system_launch_template_data,
    system_node_group_prefix,
    system_node_label,
    system_tolerations,
)
from .spec import ClusterSpec, SystemNodeGroupSpec
from .timeouts import addon_timeouts, node_group_timeouts
from .viewers import viewer_policy_arn

# Add-ons installed before any node (networking, proxy, pod credentials) and after (DNS).
ADDONS_BEFORE_COMPUTE = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
ADDONS_AFTER_COMPUTE = ("coredns",)
# The vpc-cni add-on's own IAM role, through EKS Pod Identity, instead of the CNI policy on
# every node role (EKS Best Practices, IAM, "Update the aws-node daemonset to use IRSA"; the
# add-on takes Pod Identity associations: EKS API CreateAddon ``podIdentityAssociations``).
VPC_CNI_SERVICE_ACCOUNT = "aws-node"
VPC_CNI_NAMESPACE = "kube-system"
VPC_CNI_POLICY = "AmazonEKS_CNI_Policy"


@dataclass(frozen=True, kw_only=True)
class EksClusterArgs:
    """Inputs of ``EksCluster``: shape from specs, network from other resources.

    Pass the ``Network`` component as ``network`` (its VPC and subnets are used), or
    ``vpc_id`` and ``private_subnet_ids`` (and optionally ``public_subnet_ids``) explicitly.
    """

    spec: ClusterSpec
    system_node_group: SystemNodeGroupSpec = SystemNodeGroupSpec()
    network: Network | None = None
    vpc_id: pulumi.Input[str] | None = derived("network")
    private_subnet_ids: pulumi.Input[Sequence[str]] | None = derived("network")
    public_subnet_ids: pulumi.Input[Sequence[str]] | None = derived("network")
    tags: Mapping[str, str] = field(default_factory=dict)
    # The add-ons' versions, resolved before anything is registered (GpuPlatform resolves them
    # before its network); None: EksCluster resolves them itself (addon_versions.py).
    addon_versions: Mapping[str, AddonVersion] | None = None
    # Who deploys and the admins' entries, resolved before anything is registered
    # (``GpuPlatform``'s preflight); None: ``EksCluster`` resolves them itself.
    access: AdminAccess | None = None

    def __post_init__(self) -> None:
        problems = require_instance(self, "spec", ClusterSpec)
        problems += require_instance(self, "system_node_group", SystemNodeGroupSpec)
        if self.network is not None:
            problems += require_instance(self, "network", Network)
        if isinstance(self.network, Network):
            names = ("vpc_id", "private_subnet_ids", "public_subnet_ids")
            derive_unset(self, {name: getattr(self.network, name) for name in names})
            tagged_for = self.network.discovery_cluster_name
            if not problems and tagged_for != self.spec.name:
                problems.append(
                    (
                        ("network",),
                        f"tags its subnets for cluster {show(tagged_for)} "
                        f"(NetworkArgs.cluster_name), but this cluster is {show(self.spec.name)}; "
                        "Karpenter would find no subnets",
                    )
                )
        else:
            derive_unset(self, {"public_subnet_ids": ()})
        problems += missing_problems(self, ("vpc_id", "private_subnet_ids"), "Network", "network")
        if problems:
            raise SpecError(type(self).__name__, problems)


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

        self.admin_entries, self.admin_associations = self._admin_entries(
            name, spec, cluster, access, partition, account_id, tags
        )
        self.break_glass_entry = self._break_glass_entry(
            name, spec, access, partition, account_id, tags
        )
        self.viewer_entries = self._viewer_entries(name, spec, access, partition, account_id, tags)

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

        cni_role = aws.iam.Role(
            f"{name}-vpc-cni",
            name=bounded_name("EKSVpcCniRole-", spec.name, IAM_ROLE_NAME_MAX),
            description=f"The vpc-cni add-on (aws-node) of EKS cluster {spec.name}",
            assume_role_policy=pulumi.Output.all(partition, region, account_id).apply(
                lambda a: json.dumps(
                    pod_identity_trust_policy(
                        partition=a[0],
                        region=a[1],
                        account_id=a[2],
                        cluster_name=spec.name,
                        namespace=VPC_CNI_NAMESPACE,
                        service_account=VPC_CNI_SERVICE_ACCOUNT,
                    )
                )
            ),
            tags=tags,
            opts=child,
        )
        cni_policy = attach_managed_policies(
            f"{name}-vpc-cni", cni_role, (VPC_CNI_POLICY,), partition, child
        )
        cni_identity = {
            "vpc-cni": [{"role_arn": cni_role.arn, "service_account": VPC_CNI_SERVICE_ACCOUNT}]
        }
        cni_opts = pulumi.ResourceOptions(parent=self, depends_on=cni_policy)
        before = [
            self._addon(
                name,
                addon,
                tags,
                cni_opts if addon == "vpc-cni" else child,
                cni_identity.get(addon),
            )
            for addon in ADDONS_BEFORE_COMPUTE
        ]
        self.pod_identity_agent = before[-1]

        role = aws.iam.Role(
            f"{name}-system-node",
            name=bounded_name("EKSSystemNodeRole-", spec.name, IAM_ROLE_NAME_MAX),
            assume_role_policy=dns_suffix.apply(lambda s: json.dumps(ec2_trust_policy(s))),
            tags=tags,
            opts=child,
        )
        attachments = attach_managed_policies(
            f"{name}-system-node",
            role,
            SYSTEM_NODE_POLICIES + ((SSM_NODE_POLICY,) if spec.node_ssm_access else ()),
            partition,
            child,
        )
        self.system_node_role_arn = role.arn
        template = system_launch_template_data(system.disk_size_gib)
        node_tags = {CLUSTER_TAG: spec.name}
        launch_template = aws.ec2.LaunchTemplate(
            f"{name}-system",
            description=f"System nodes of EKS cluster {spec.name}",
            update_default_version=True,
            metadata_options=template["metadata_options"],
            block_device_mappings=template["block_device_mappings"],
            # Instance and volume tags are the template's data: any edit makes a new template
            # version and rolls every system node (issue 11, item 6). A stable minimum: the
            # instance's name and the cluster.
            tag_specifications=[
                {"resource_type": "instance", "tags": {**node_tags, "Name": f"{spec.name}-system"}},
                {"resource_type": "volume", "tags": node_tags},
            ],
            tags=tags,
            opts=child,
        )
        self.system_node_group = aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=self.cluster_name,
            # A prefix, not a fixed name: a replacing change (instance types, subnets, AMI
            # type) then creates the new group before deleting the old one. With a fixed name
            # the bridge asks for delete-before-replace (pulumi-terraform-bridge
            # pkg/tfbridge/provider.go L1275-1276, schema.go L193-240, v3.136.0: nodeGroupName
            # is auto-named in pulumi-aws) and every controller goes down with the old group.
            node_group_name_prefix=system_node_group_prefix(spec.name),
            # The control plane's minor: an upgrade rolls the system nodes in place
            # (UpdateNodegroupVersion), after the control plane (cluster_name waits for it).
            version=spec.kubernetes_version,
            node_role_arn=role.arn,
            subnet_ids=args.private_subnet_ids,
            ami_type=system.ami_type,
            capacity_type="ON_DEMAND",
            instance_types=list(system.instance_types),
            scaling_config={
                "min_size": system.min_size,
                "max_size": system.max_size,
                "desired_size": system.desired_size or system.min_size,
            },
            update_config={"max_unavailable": 1},
            launch_template={
                "id": launch_template.id,
                "version": launch_template.latest_version.apply(str),
            },
            labels={label_key: label_value},
            taints=[{"key": SYSTEM_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"}],
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                # The nodes pull images and reach AWS through the network's routes and NAT.
                depends_on=[*before, *attachments, *network_ready],
                # The autoscaler and humans resize the group; Pulumi owns only the bounds.
                ignore_changes=["scalingConfig.desiredSize"],
                # A minor upgrade rolls every system node (timeouts.py).
                custom_timeouts=pulumi.CustomTimeouts(**node_group_timeouts(system.max_size)),
            ),
        )
        after_nodes = pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group])
        after = [self._addon(name, addon, tags, after_nodes) for addon in ADDONS_AFTER_COMPUTE]
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

    def _admin_entries(
        self,
        name: str,
        spec: ClusterSpec,
        cluster: eks.Cluster,
        access: AdminAccess,
        partition: pulumi.Output[str],
        account_id: pulumi.Output[str],
        tags: dict[str, str],
    ) -> tuple[list[aws.eks.AccessEntry], list[aws.eks.AccessPolicyAssociation]]:
        """One access entry (with cluster-admin) per admin, the deployer included, tagged
        ``CLUSTER_TAG`` (how a later run knows the entry is this stack's: identity.py).

        Named after the principal (``admin_entry_key``), so removing or reordering admins leaves
        the others alone. Each entry aliases the name pulumi-eks gave it when the entries were
        the cluster's ``accessEntries`` (``<cluster>-admin-<i>``, a child of the eks.Cluster:
        pulumi/pulumi-eks nodejs/eks/cluster/authenticationMode.ts ``createAccessEntries``);
        its policy association follows through the engine's inherited child alias (its name
        starts with the entry's name: pulumi/pulumi pkg/resource/deploy/step_generator.go
        L590-652, ``inheritedChildAlias``), so existing stacks keep both.
        """
        if not spec.admins:
            return [], []
        policy_arn = partition.apply(admin_policy_arn)
        entry_tags = {**tags, CLUSTER_TAG: spec.name}
        entries, associations = [], []
        for i, admin in enumerate(spec.admins):
            if isinstance(admin, str) and access.account:
                principal: pulumi.Input[str] = access.arn_of(admin)
                key = admin_entry_key(admin)
            elif isinstance(admin, str):  # identity unknown (preview only: resolve_access)
                principal = pulumi.Output.all(partition, account_id).apply(
                    lambda a, admin=admin: admin_principal_arn(admin, a[0], a[1])
                )
                key = admin_entry_key(admin)
            else:  # a role created by this program; no name to key by
                principal = pulumi.Output.all(partition, account_id, admin).apply(
                    lambda a: admin_principal_arn(a[2], a[0], a[1])
                )
                key = f"admin-{i}"
            entry, association = self._entry_with_policy(
                f"{name}-admin-{key}",
                f"{name}-admin-{key}-cluster-admin",
                principal,
                policy_arn,
                entry_tags,
                aliases=[pulumi.Alias(name=f"{name}-eks-admin-{i}", parent=cluster)],
            )
            associations.append(association)
            entries.append(entry)
        return entries, associations

    def _entry_with_policy(
        self,
        entry_name: str,
        association_name: str,
        principal_arn: pulumi.Input[str],
        policy_arn: pulumi.Input[str],
        tags: dict[str, str],
        aliases: list[pulumi.Alias] | None = None,
    ) -> tuple[aws.eks.AccessEntry, aws.eks.AccessPolicyAssociation]:
        """One ``STANDARD`` access entry of the cluster and its cluster-scoped policy association
        (a child of the entry, so the association goes before the entry on delete): the admins',
        the viewers' and the break-glass role's entries are all built this way."""
        entry = aws.eks.AccessEntry(
            entry_name,
            cluster_name=self.cluster_name,
            principal_arn=principal_arn,
            type="STANDARD",
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, aliases=aliases),
        )
        association = aws.eks.AccessPolicyAssociation(
            association_name,
            cluster_name=self.cluster_name,
            principal_arn=entry.principal_arn,
            policy_arn=policy_arn,
            access_scope={"type": "cluster"},
            opts=pulumi.ResourceOptions(parent=entry),
        )
        return entry, association

    def _break_glass_entry(
        self,
        name: str,
        spec: ClusterSpec,
        access: AdminAccess,
        partition: pulumi.Output[str],
        account_id: pulumi.Output[str],
        tags: dict[str, str],
    ) -> aws.eks.AccessEntry | None:
        """The break-glass role's access entry with cluster-admin, only when
        ``cluster.breakGlassRole`` is set (README, "Security model": who may assume it and how
        its use is noticed is the role's trust policy and CloudTrail's business, outside this
        stack). Explicit and tagged like the admins' entries (``_admin_entries``; an existing
        untagged entry of the role is refused: identity.resolve_access)."""
        role = spec.break_glass_role
        if role is None:
            return None
        entry, _ = self._entry_with_policy(
            f"{name}-break-glass",
            f"{name}-break-glass-cluster-admin",
            _principal(role, access, partition, account_id),
            partition.apply(admin_policy_arn),
            {**tags, CLUSTER_TAG: spec.name},
        )
        return entry

    def _viewer_entries(
        self,
        name: str,
        spec: ClusterSpec,
        access: AdminAccess,
        partition: pulumi.Output[str],
        account_id: pulumi.Output[str],
        tags: dict[str, str],
    ) -> list[aws.eks.AccessEntry]:
        """One access entry with ``AmazonEKSViewPolicy`` (cluster scope, no Secrets) per viewer,
        e.g. the CI preview role: a plain ``pulumi preview`` needs no Secret (viewers.py says
        why) and may change nothing. The association keeps its ``-admin-view`` name (a stable
        name; the new policy ARN replaces the association in place). Named
        after the principal (``admin_entry_key``) and tagged ``CLUSTER_TAG``, like the admins'
        entries (an existing untagged entry of a viewer is refused: identity.resolve_access)."""
        policy_arn = partition.apply(viewer_policy_arn)
        entries = []
        for i, viewer in enumerate(spec.viewers):
            key = admin_entry_key(viewer) if isinstance(viewer, str) else f"viewer-{i}"
            entry, _ = self._entry_with_policy(
                f"{name}-viewer-{key}",
                f"{name}-viewer-{key}-admin-view",
                _principal(viewer, access, partition, account_id),
                policy_arn,
                {**tags, CLUSTER_TAG: spec.name},
            )
            entries.append(entry)
        return entries

    def _addon(
        self,
        name: str,
        addon: str,
        tags: dict[str, str],
        opts: pulumi.ResourceOptions,
        pod_identity: list[dict] | None = None,
    ) -> aws.eks.Addon:
        """An EKS managed add-on at its resolved version (addon_versions.py: a pin, the version
        installed for the minor, or EKS's most recent for the minor), taking over any existing
        self-managed copy.

        The version is a plain value, resolved before anything is registered, so the preview
        shows it. EKS does not update an add-on when the control plane's minor changes
        ("Amazon EKS doesn't automatically update an add-on ... after you update your cluster
        to a new Kubernetes minor version",
        https://docs.aws.amazon.com/eks/latest/userguide/updating-an-add-on.html): a minor
        upgrade resolves a version for the new minor and updates the add-on in place
        (addon_version is not ForceNew) after the control plane (cluster_name waits for it),
        within its update timeout (timeouts.py). The tag ``ADDON_MINOR_TAG`` records the minor
        the version was resolved for, so an upgrade interrupted after the control plane moved
        still moves the add-ons on the next `up`."""
        resolved = self.resolved_addons[addon]
        return aws.eks.Addon(
            f"{name}-{addon}",
            cluster_name=self.cluster_name,
            addon_name=addon,
            addon_version=addon_version_input(resolved),
            configuration_values=addon_configuration_values(addon),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            pod_identity_associations=pod_identity,
            tags={**tags, ADDON_MINOR_TAG: resolved.minor},
            opts=pulumi.ResourceOptions.merge(
                opts,
                pulumi.ResourceOptions(
                    custom_timeouts=pulumi.CustomTimeouts(**addon_timeouts(addon))
                ),
            ),
        )


def _principal(
    principal: pulumi.Input[str],
    access: AdminAccess,
    partition: pulumi.Output[str],
    account_id: pulumi.Output[str],
) -> pulumi.Input[str]:
    """The full ARN of a viewer or the break-glass role, as ``_admin_entries`` builds an
    admin's: plain once ``resolve_access`` knows the account, else an output."""
    if isinstance(principal, str) and access.account:
        return access.arn_of(principal)
    return pulumi.Output.all(partition, account_id, principal).apply(
        lambda a: admin_principal_arn(a[2], a[0], a[1])
    )
