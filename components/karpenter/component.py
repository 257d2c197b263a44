"""The ``Karpenter`` component and its ``KarpenterArgs``: IAM roles and policies, the
interruption queue and rules, and the two Helm releases, from the pure builders of this package.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from .. import versions
from ..cluster.component import EksCluster
from ..cluster.identity import plain_invoke
from ..cluster.nodegroup import system_tolerations
from ..iam import attach_managed_policies, compact_json, ec2_trust_policy
from ..naming import IAM_ROLE_NAME_MAX, SQS_QUEUE_NAME_MAX, TYPE_PREFIX, bounded_name
from ..spec import (
    Problem,
    SpecError,
    depend_on_first,
    derive_unset,
    derived,
    missing_problems,
    require_instance,
    set_derived,
    show,
)
from .events import QUEUE_RETENTION_SECONDS, QUEUE_TARGET_ID, interruption_rules
from .iam import (
    POLICY_GROUPS,
    controller_policies,
    irsa_trust_policy,
    node_role_policies,
    pod_identity_trust_policy,
    policy_name,
    queue_policy,
)
from .spec import NAMESPACE, SERVICE_ACCOUNT, KarpenterSpec, version_tuple
from .spot_role import SPOT_SERVICE, owner_description, spot_role_plan
from .values import DEFAULT_FEATURE_GATES, karpenter_values


@dataclass(frozen=True, kw_only=True)
class KarpenterArgs:
    """Inputs of ``Karpenter``.

    ``cluster``: the ``EksCluster`` component. Everything else then comes from it: the cluster
    name, the OIDC provider, the Kubernetes provider, the system nodes' selector and
    tolerations, and the dependencies on the system node group and the Pod Identity agent.
    Explicit arguments win over derived ones; ``depends_on`` adds to them.

    Or ``cluster`` is the cluster name as an Output of the cluster (so that everything waits
    for the control plane); ``cluster_name`` (the plain name: it names IAM roles and the
    queue), the OIDC provider, ``k8s_provider`` and ``depends_on`` are then required. The
    tolerations default to the system nodes' ``CriticalAddonsOnly`` taint (the chart's own
    default, replaced by the values list) and the node selector to none: the chart's affinity
    (``karpenter.sh/nodepool DoesNotExist``) already keeps Karpenter off the nodes it launches
    (aws/karpenter-provider-aws v1.15.0 charts/karpenter/values.yaml L93-99 ``affinity`` and
    L109-111 ``tolerations``; the same file at v1.15.1).
    """

    cluster: EksCluster | pulumi.Input[str]
    spec: KarpenterSpec = KarpenterSpec()
    cluster_name: str | None = derived("cluster")
    oidc_provider_arn: pulumi.Input[str] | None = derived("cluster")
    oidc_provider_url: pulumi.Input[str] | None = derived("cluster")
    k8s_provider: k8s.Provider | None = derived("cluster")
    node_selector: Mapping[str, str] | None = derived("cluster")
    tolerations: Sequence[Mapping[str, str]] | None = derived("cluster")
    # AmazonSSMManagedInstanceCore on the node role: the cluster's ``node_ssm_access``.
    node_ssm_access: bool | None = derived("cluster")
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Extra chart ``settings`` (``nodepool.dra.karpenter_dra_settings``)."""
    depends_on: Sequence[pulumi.Resource] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    # Declare the EC2 Spot service-linked role: decided by ``GpuPlatform``'s preflight
    # (spot_role.py); None: looked up here when ``spec.spot_service_linked_role`` is on.
    spot_service_linked_role: bool | None = None
    # The role's ARN when it exists and is not this stack's: read, not managed (spot_role.py).
    spot_role_arn: str | None = None

    def __post_init__(self) -> None:
        problems = require_instance(self, "spec", KarpenterSpec)
        if isinstance(self.cluster, EksCluster):
            problems += self._derive(self.cluster, problems)
        else:
            derive_unset(
                self,
                {
                    "tolerations": system_tolerations(),
                    "node_selector": {},
                    "node_ssm_access": False,
                },
            )
            problems += missing_problems(
                self,
                ("cluster_name", "oidc_provider_arn", "oidc_provider_url", "k8s_provider"),
                "EksCluster",
                "cluster",
            )
            # helm.v3.Release waits for every resource to be ready unless skip_await
            # (pulumi_kubernetes/helm/v3/Release.py, ``skip_await``): the pods need nodes.
            if not self.depends_on:
                problems.append(
                    (
                        ("depends_on",),
                        "is empty; the chart waits for its pods, which run on the system nodes: "
                        "pass the EksCluster component as cluster, or list its "
                        "system_node_group and pod_identity_agent",
                    )
                )
        if problems:
            raise SpecError(type(self).__name__, problems)

    def _derive(self, cluster: EksCluster, problems: list[Problem]) -> list[Problem]:
        out: list[Problem] = []
        name = cluster.spec.name
        if self.cluster_name is None:
            set_derived(self, "cluster_name", name)
        elif self.cluster_name != name:
            out.append(
                (
                    ("cluster_name",),
                    f"{show(self.cluster_name)} is not the name of the EksCluster given as "
                    f"cluster ({show(name)})",
                )
            )
        derive_unset(
            self,
            {
                "oidc_provider_arn": cluster.oidc_provider_arn,
                "oidc_provider_url": cluster.oidc_provider_url,
                "k8s_provider": cluster.provider,
                "node_selector": dict(cluster.system_node_selector),
                "tolerations": list(cluster.system_tolerations),
                "node_ssm_access": cluster.spec.node_ssm_access,
            },
        )
        depend_on_first(self, list(cluster.controller_prerequisites))
        if problems:  # the spec is not a KarpenterSpec: nothing more to compare
            return out
        # The chart's podAntiAffinity (required, per hostname) puts one replica per node.
        min_size = cluster.node_group_spec.min_size
        if self.spec.replicas > min_size:
            out.append(
                (
                    ("spec", "replicas"),
                    f"{self.spec.replicas} replicas need {self.spec.replicas} system nodes (one "
                    f"per node), but the cluster's system node group has minSize {min_size}",
                )
            )
        kube = cluster.spec.kubernetes_version
        minimum = versions.KARPENTER_MIN_VERSION_FOR_KUBERNETES.get(kube)
        if minimum and version_tuple(self.spec.version) < version_tuple(minimum):
            out.append(
                (
                    ("spec", "chart_version"),
                    f"{show(self.spec.version)} does not support Kubernetes {kube}; it needs "
                    f"Karpenter {minimum} or newer",
                )
            )
        return out

    @property
    def cluster_name_input(self) -> pulumi.Input[str]:
        """The cluster name as an Output of the cluster: whatever uses it waits for it."""
        if isinstance(self.cluster, EksCluster):
            return self.cluster.cluster_name
        return self.cluster


class Karpenter(pulumi.ComponentResource):
    """Karpenter's AWS side (IAM, interruption queue, rules) and its Helm chart."""

    node_role_name: pulumi.Output[str]
    node_role_arn: pulumi.Output[str]
    controller_role_arn: pulumi.Output[str]
    queue_name: pulumi.Output[str]
    queue_arn: pulumi.Output[str]
    release_name: pulumi.Output[str]

    def __init__(self, name: str, args: KarpenterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{TYPE_PREFIX}Karpenter", name, None, opts)
        spec, tags, cluster = args.spec, dict(args.tags), args.cluster_name or ""
        self.feature_gates = {**DEFAULT_FEATURE_GATES, **args.feature_gates}
        child = pulumi.ResourceOptions(parent=self)
        # Invokes parented to the component use its AWS provider (pulumi/runtime/invoke.py).
        scoped = pulumi.InvokeOutputOptions(parent=self)
        part = aws.get_partition_output(opts=scoped)
        partition, dns_suffix = part.partition, part.dns_suffix
        region = aws.get_region_output(opts=scoped).region
        account_id = aws.get_caller_identity_output(opts=scoped).account_id

        # -- node role ---------------------------------------------------------------------
        node_role = aws.iam.Role(
            f"{name}-node",
            name=bounded_name("KarpenterNodeRole-", cluster, IAM_ROLE_NAME_MAX),
            path="/",
            description=f"Nodes launched by Karpenter in EKS cluster {cluster}",
            assume_role_policy=dns_suffix.apply(lambda s: json.dumps(ec2_trust_policy(s))),
            tags=tags,
            opts=child,
        )
        # Everything the running controller needs; the chart release depends on it all, so
        # `pulumi destroy` deletes the release (and, before it, every NodePool, EC2NodeClass
        # and NodeOverlay, which depend on the release) first. Their finalizers are removed by
        # the live controller only once it has terminated the instances (NodeClaim: Karpenter
        # pkg/controllers/nodeclaim/lifecycle/controller.go L198-263; EC2NodeClass:
        # karpenter-provider-aws pkg/controllers/nodeclass/controller.go L217-250, both
        # v1.15.0), and the engine deletes dependents first (pulumi/pulumi
        # pkg/resource/deploy/step_generator.go L2745-2793, ScheduleDeletes, v3.259.0).
        self.controller_needs: list[pulumi.Resource] = list(
            attach_managed_policies(
                f"{name}-node",
                node_role,
                node_role_policies(ssm=bool(args.node_ssm_access)),
                partition,
                child,
            )
        )
        self.node_role_name = node_role.name
        self.node_role_arn = node_role.arn

        # -- interruption queue and rules --------------------------------------------------
        access_entry_after: list[pulumi.Resource] = []
        queue_arn: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        self.queue_name = pulumi.Output.from_input("")
        self.queue_arn = pulumi.Output.from_input("")
        if spec.interruption_handling:
            queue = aws.sqs.Queue(
                f"{name}-interruption",
                name=bounded_name("Karpenter-", cluster, SQS_QUEUE_NAME_MAX),
                message_retention_seconds=QUEUE_RETENTION_SECONDS,
                sqs_managed_sse_enabled=True,
                tags=tags,
                opts=child,
            )
            rule_arns: list[pulumi.Output[str]] = []
            for key, pattern in interruption_rules().items():
                rule = aws.cloudwatch.EventRule(
                    f"{name}-{key}",
                    description=f"Karpenter interruption handling for {cluster}: {key}",
                    event_pattern=json.dumps(pattern),
                    tags=tags,
                    opts=child,
                )
                target = aws.cloudwatch.EventTarget(
                    f"{name}-{key}",
                    rule=rule.name,
                    arn=queue.arn,
                    target_id=QUEUE_TARGET_ID,
                    opts=child,
                )
                self.controller_needs += [rule, target]
                rule_arns.append(rule.arn)
            q_policy = aws.sqs.QueuePolicy(
                f"{name}-interruption",
                queue_url=queue.url,
                policy=pulumi.Output.all(queue.arn, account_id, *rule_arns).apply(
                    lambda a: json.dumps(queue_policy(a[0], list(a[2:]), a[1]))
                ),
                opts=child,
            )
            access_entry_after.append(q_policy)
            self.controller_needs += [queue, q_policy]
            queue_arn = queue.arn
            self.queue_name = queue.name
            self.queue_arn = queue.arn

        node_access = aws.eks.AccessEntry(
            f"{name}-node",
            cluster_name=args.cluster_name_input,
            principal_arn=node_role.arn,
            type="EC2_LINUX",
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=access_entry_after),
        )
        self.controller_needs += [node_role, node_access]

        # -- controller role ---------------------------------------------------------------
        if spec.auth == "podIdentity":
            trust = pulumi.Output.all(partition, region, account_id).apply(
                lambda a: json.dumps(
                    pod_identity_trust_policy(
                        partition=a[0], region=a[1], account_id=a[2], cluster_name=cluster
                    )
                )
            )
        else:
            trust = pulumi.Output.all(args.oidc_provider_arn, args.oidc_provider_url).apply(
                lambda a: json.dumps(irsa_trust_policy(a[0], a[1]))
            )
        controller_role = aws.iam.Role(
            f"{name}-controller",
            name=bounded_name("KarpenterController-", cluster, IAM_ROLE_NAME_MAX),
            path="/",
            description=f"Karpenter controller of EKS cluster {cluster}",
            assume_role_policy=trust,
            tags=tags,
            opts=child,
        )
        self.controller_role_arn = controller_role.arn
        documents = pulumi.Output.all(
            partition, region, account_id, node_role.arn, queue_arn
        ).apply(
            lambda a: controller_policies(
                partition=a[0],
                region=a[1],
                account_id=a[2],
                cluster_name=cluster,
                node_role_arn=a[3],
                queue_arn=a[4],
            )
        )
        controller_ready: list[pulumi.Resource] = []
        for group in POLICY_GROUPS:
            if group == "Interruption" and not spec.interruption_handling:
                continue
            policy = aws.iam.Policy(
                f"{name}-{group}",
                name=policy_name(group, cluster),
                path="/",
                description=f"Karpenter controller {group} permissions for {cluster}",
                policy=documents.apply(lambda d, group=group: compact_json(d[group])),
                tags=tags,
                opts=child,
            )
            controller_ready.append(
                aws.iam.RolePolicyAttachment(
                    f"{name}-{group}",
                    role=controller_role.name,
                    policy_arn=policy.arn,
                    opts=child,
                )
            )
        if spec.auth == "podIdentity":
            controller_ready.append(
                aws.eks.PodIdentityAssociation(
                    f"{name}-controller",
                    cluster_name=args.cluster_name_input,
                    namespace=NAMESPACE,
                    service_account=SERVICE_ACCOUNT,
                    role_arn=controller_role.arn,
                    tags=tags,
                    opts=child,
                )
            )
        create_spot_role, spot_role_arn = args.spot_service_linked_role, args.spot_role_arn
        if create_spot_role is None:
            plan = spot_role_plan(
                ["(any)"],
                spec.spot_service_linked_role,
                cluster,
                lambda token, a: plain_invoke(self, token, a),
            )
            create_spot_role, spot_role_arn = plan.create, plan.existing_arn
        if spot_role_arn and not create_spot_role:
            self.controller_needs.append(
                aws.iam.ServiceLinkedRole.get(f"{name}-spot", spot_role_arn, opts=child)
            )
        if create_spot_role:
            # Account-wide: kept by `pulumi destroy` (spot_role.py); the release waits for it.
            self.controller_needs.append(
                aws.iam.ServiceLinkedRole(
                    f"{name}-spot",
                    aws_service_name=SPOT_SERVICE,
                    description=owner_description(cluster),
                    opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
                )
            )

        # -- charts ------------------------------------------------------------------------
        k8s_opts = pulumi.ResourceOptions(
            parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
        )
        crds = k8s.helm.v3.Release(
            f"{name}-crd",
            name=versions.KARPENTER_CRD.name,
            chart=versions.KARPENTER_CRD.reference,
            version=spec.version,
            namespace=NAMESPACE,
            opts=k8s_opts,
        )
        values = pulumi.Output.all(self.queue_name, controller_role.arn).apply(
            lambda a: karpenter_values(
                cluster_name=cluster,
                queue_name=a[0] or None,
                spec=spec,
                node_selector=args.node_selector or {},
                tolerations=args.tolerations or (),
                feature_gates=args.feature_gates,
                settings=args.settings,
                irsa_role_arn=a[1] if spec.auth == "irsa" else None,
            )
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-chart",
            name=versions.KARPENTER.name,
            chart=versions.KARPENTER.reference,
            version=spec.version,
            namespace=NAMESPACE,
            skip_crds=True,
            values=values,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.k8s_provider,
                depends_on=[
                    crds,
                    controller_role,
                    *controller_ready,
                    *self.controller_needs,
                    *args.depends_on,
                ],
            ),
        )
        self.crd_release = crds
        self.release_name = self.release.name
        self.register_outputs(
            {
                "node_role_name": self.node_role_name,
                "node_role_arn": self.node_role_arn,
                "controller_role_arn": self.controller_role_arn,
                "queue_name": self.queue_name,
                "queue_arn": self.queue_arn,
                "release_name": self.release_name,
            }
        )
