"""The ``NodePool`` component: registers a pool's EC2NodeClass(es), NodePool(s) and, for an EFA
pool, its placement group, security group and NodeOverlay. An EFA pool gets one EC2NodeClass and
NodePool per EFA layout, its budget split among them (``budget.nodepools``)."""

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from .. import versions
from ..budget import (
    MAX_POOL_GPUS,
    PoolCapacity,
    gpu_overlay_manifests,
    nodepool_groups,
    uneven_density_problem,
)
from ..karpenter.lifecycle import finalizer_delete_timeout
from ..naming import TYPE_PREFIX
from ..spec import (
    Problem,
    SpecError,
    check_range,
    depend_on_first,
    derive_unset,
    derived,
    is_output,
    missing_problems,
    require_instance,
    set_derived,
    show,
)
from .manifests import ec2nodeclass_manifest, nodeoverlay_manifest, nodepool_manifest
from .spec import NodePoolSpec

if TYPE_CHECKING:  # cluster and karpenter import config, which imports this package
    from ..cluster import EksCluster
    from ..karpenter import Karpenter


@dataclass(frozen=True, kw_only=True)
class NodePoolArgs:
    """Inputs of ``NodePool``: the pool spec and the cluster it provisions for.

    ``cluster`` (the ``EksCluster`` component) gives the cluster name, the label domain, the
    Kubernetes provider and the VPC (for an EFA pool's security group); ``karpenter`` (the
    ``Karpenter`` component) gives the node role and the dependency on Karpenter's CRDs and
    controller. Without them, set those explicitly; ``depends_on`` must then hold Karpenter's
    CRD release (a NodePool cannot be created before its CRD).

    ``gpu_limit``: the ``nvidia.com/gpu`` limit of a GPU or EFA pool; default the spec's
    ``limits.gpus`` (``GpuPlatform`` passes the limit its scheduler queues derive). A GPU or EFA
    pool with neither is refused: nothing would bound how many GPUs Karpenter provisions.

    ``capacity`` (``pool_capacity(spec, replicas=..., mig_layouts=...)``, which ``GpuPlatform``
    derives from the GPU Operator's settings): what the pool's nodes advertise. Required for a
    time-sliced or MIG pool: its limits are then rendered in the advertised units
    (``gpu_limit`` x ``capacity.per_gpu``) and a ``NodeOverlay`` per instance type tells
    Karpenter the same numbers (Karpenter needs the ``nodeOverlay`` feature gate).
    """

    spec: NodePoolSpec
    cluster: "EksCluster | None" = None
    karpenter: "Karpenter | None" = None
    cluster_name: str | None = derived("cluster")
    label_domain: str | None = derived("cluster")
    node_role: pulumi.Input[str] | None = derived("karpenter")
    k8s_provider: k8s.Provider | None = derived("cluster")
    vpc_id: pulumi.Input[str] | None = derived("cluster")
    # The private subnets' tags (Network.subnet_selector); None: karpenter.sh/discovery.
    subnet_selector: Mapping[str, str] | None = derived("cluster")
    # The zones of the VPC's private subnets (Network.zones; None in it: not known). An EFA
    # pool's zone must be one of them: its resources wait for the check (nodepool/zones.py).
    # GpuPlatform passes them checked against the region's zones too, every pool in one error.
    vpc_zones: pulumi.Input[Sequence[str | None]] | None = None
    gpu_limit: int | None = None
    capacity: PoolCapacity | None = None
    depends_on: Sequence[pulumi.Resource] = ()
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from ..cluster import EksCluster
        from ..karpenter import Karpenter

        problems = require_instance(self, "spec", NodePoolSpec)
        if self.cluster is not None:
            problems += require_instance(self, "cluster", EksCluster) or self._from_cluster()
        if self.karpenter is not None:
            problems += require_instance(self, "karpenter", Karpenter) or self._from_karpenter()
        problems += missing_problems(
            self, ("cluster_name", "label_domain", "k8s_provider"), "EksCluster", "cluster"
        )
        problems += missing_problems(self, ("node_role",), "Karpenter", "karpenter")
        if self.karpenter is None and not self.depends_on:
            problems.append(
                (
                    ("depends_on",),
                    "is empty; a NodePool and its EC2NodeClass need Karpenter's CRDs: pass the "
                    "Karpenter component as karpenter, or list its crd_release",
                )
            )
        if not problems:
            problems += self._pool_problems()
        if problems:
            raise SpecError(type(self).__name__, problems)

    def _from_cluster(self) -> list[Problem]:
        cluster = self.cluster
        assert cluster is not None
        out: list[Problem] = []
        for name, value, what in (
            ("cluster_name", cluster.spec.name, "name"),
            ("label_domain", cluster.spec.label_domain, "label domain"),
        ):
            given = getattr(self, name)
            if given is None:
                set_derived(self, name, value)
            elif given != value:
                out.append(
                    (
                        (name,),
                        f"{show(given)} is not the {what} of the EksCluster given as cluster "
                        f"({show(value)})",
                    )
                )
        derive_unset(
            self,
            {
                "k8s_provider": cluster.provider,
                "vpc_id": cluster.vpc_id,
                "subnet_selector": cluster.subnet_selector,
            },
        )
        return out

    def _from_karpenter(self) -> list[Problem]:
        karpenter = self.karpenter
        assert karpenter is not None
        derive_unset(self, {"node_role": karpenter.node_role_name})
        depend_on_first(self, [karpenter.crd_release, karpenter.release])
        return []

    def _capacity_problems(self, pool: str) -> list[Problem]:
        """A time-sliced or MIG pool needs its capacity; overlays need Karpenter's gate."""
        spec, out = self.spec, []
        sliced = spec.time_slicing is not None or spec.mig_profile not in (None, "all-disabled")
        if self.capacity is not None and not isinstance(self.capacity, PoolCapacity):
            out.append((("capacity",), f"{show(self.capacity)} is not a PoolCapacity"))
            return out
        if sliced and self.capacity is None:
            out.append(
                (
                    ("capacity",),
                    f"is required for {pool}: it is time-sliced or MIG-partitioned, so its "
                    "nodes advertise more nvidia.com/gpu (or nvidia.com/mig-*) than the instance "
                    "type has GPUs; pass pool_capacity(spec, replicas=... or mig_layouts=...)",
                )
            )
        if self.capacity is not None and (msg := uneven_density_problem(self.capacity)):
            out.append((("capacity",), f"of {pool}: {msg}"))
        overlays = []
        if spec.kind == "efa":
            overlays.append("its hugepages")
        if self.capacity is not None and self.capacity.needs_overlay:
            overlays.append("its advertised GPUs")
        gates = getattr(self.karpenter, "feature_gates", None)
        if overlays and gates is not None and not gates.get("nodeOverlay"):
            out.append(
                (
                    ("karpenter",),
                    f"runs with the nodeOverlay feature gate off, but {pool} declares "
                    f"{' and '.join(overlays)} to Karpenter with "
                    f"{'a NodeOverlay' if len(overlays) == 1 else 'NodeOverlays'}; create "
                    "Karpenter with feature_gates={'nodeOverlay': True}",
                )
            )
        return out

    def _pool_problems(self) -> list[Problem]:
        spec, out = self.spec, []
        pool = f"{spec.kind} pool {show(spec.name)}"
        if spec.kind == "efa" and self.vpc_id is None:
            out.append(
                (
                    ("vpc_id",),
                    f"is required for {pool}: its security group is created in the VPC; "
                    "pass the EksCluster component as cluster, or set vpc_id",
                )
            )
        out += self._capacity_problems(pool)
        limit = self.gpu_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            out.append((("gpu_limit",), f"{show(limit)} is not an integer"))
        elif not spec.is_gpu:
            if limit is not None:
                out.append((("gpu_limit",), f"only applies to gpu and efa pools; {pool} has none"))
        elif limit is None:
            if spec.limits.gpus is None:
                out.append(
                    (
                        ("gpu_limit",),
                        f"{pool} has no GPU limit; set limits.gpus in its NodePoolSpec (or "
                        "gpu_limit here), or nothing bounds how many GPUs Karpenter provisions",
                    )
                )
            else:
                set_derived(self, "gpu_limit", spec.limits.gpus)
        elif msg := check_range(limit, 1, MAX_POOL_GPUS):
            out.append((("gpu_limit",), msg))
        elif spec.limits.gpus is not None and limit > spec.limits.gpus:
            out.append(
                (
                    ("gpu_limit",),
                    f"{limit} exceeds limits.gpus of {pool} ({spec.limits.gpus}); the pool's own "
                    "cap is the most it may get",
                )
            )
        elif short := spec.gpu_limit_shortfall(limit):
            out.append((("gpu_limit",), f"{limit} {short}; raise it or select fewer types"))
        return out


def pool_specs(args: Any, name: str = "node_pools") -> tuple[list[NodePoolSpec], list[Problem]]:
    """The specs of ``args.<name>``: ``NodePool`` components or ``NodePoolSpec`` values."""
    specs: list[NodePoolSpec] = []
    problems: list[Problem] = []
    for i, pool in enumerate(getattr(args, name)):
        spec = getattr(pool, "spec", None) if isinstance(pool, NodePool) else pool
        if isinstance(spec, NodePoolSpec):
            specs.append(spec)
        else:
            problems.append(((name, i), f"{show(pool)} is not a NodePool or a NodePoolSpec"))
    return specs, problems


def _has_outputs(spec: NodePoolSpec) -> bool:
    """Whether the EC2NodeClass carries values only known at deployment (a KMS key, a
    reservation from another resource)."""
    return is_output(spec.root_volume.kms_key_id) or any(
        is_output(c.id) or is_output(c.owner_id) for c in spec.capacity_reservations
    )


def _identity(value: Any) -> Any:
    return value


def _json(value: Any) -> bool:
    """Whether ``value`` is JSON data only: no Output, awaitable or input type inside."""
    if isinstance(value, dict):
        return all(_json(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_json(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def _after(check: pulumi.Output[Any], value: Any) -> pulumi.Output[Any]:
    """``value``, once ``check`` has resolved (its failure fails ``value``).

    JSON data comes out of one apply on ``check``: ``Output.all`` would first lift it with
    ``Output.from_input``, an Output per nested value (pulumi 3.272.0 output.py L447-523), to
    the same value, known and not secret, with no resources of its own. Anything else is
    lifted as before.
    """
    if _json(value):
        return check.apply(lambda _: value)
    return pulumi.Output.all(check, value).apply(lambda a: a[1])


def _check_zone(spec: NodePoolSpec, zones: Sequence[str | None]) -> list[str | None]:
    """``zones`` if the EFA pool's zone is among them (or they are not all known)."""
    if all(z is not None for z in zones) and spec.zone not in zones:
        raise SpecError(
            "NodePoolArgs",
            [
                (
                    ("spec", "zone"),
                    f"{show(spec.zone)} of efa pool {show(spec.name)} has no private subnet of "
                    f"the VPC; expected one of {', '.join(sorted({str(z) for z in zones}))}",
                )
            ],
        )
    return list(zones)


class NodePool(pulumi.ComponentResource):
    """One pool of Karpenter capacity: EC2NodeClass(es), NodePool(s), and EFA networking."""

    node_pool_names: pulumi.Output[Sequence[str]]
    node_class_names: pulumi.Output[Sequence[str]]

    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{TYPE_PREFIX}NodePool", name, None, opts)
        spec, tags = args.spec, dict(args.tags)
        cluster_name, label_domain = args.cluster_name or "", args.label_domain or ""
        self.spec = spec  # GpuOperatorArgs and EfaDevicePluginArgs read the pools' taints
        k8s_opts = pulumi.ResourceOptions(
            parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
        )
        # Deletes wait for Karpenter to drain and terminate the nodes (karpenter/lifecycle.py).
        until_drained = pulumi.CustomTimeouts(delete=finalizer_delete_timeout(spec.grace))
        class_opts = pulumi.ResourceOptions.merge(
            k8s_opts, pulumi.ResourceOptions(custom_timeouts=until_drained)
        )
        # An EFA pool's resources wait for its zone to pass the check against the VPC's zones:
        # a zone without a private subnet fails them before they are registered.
        gate: Callable[[Any], Any] = _identity
        if spec.kind == "efa" and args.vpc_zones is not None:
            checked = pulumi.Output.from_input(args.vpc_zones).apply(
                lambda zones: _check_zone(spec, zones)
            )
            gate = functools.partial(_after, checked)

        # What each EC2NodeClass waits for: the node role, and an EFA pool's security group and
        # placement group; a pool without either (every other kind) has [] and None, with no
        # Outputs of their own to wait for (one apply on the role, not an Output.all).
        network: pulumi.Output[list[Any]]
        if spec.kind != "efa":
            network = pulumi.Output.from_input(args.node_role).apply(lambda r: [r, [], None])
        else:
            placement_group: pulumi.Output[str | None]
            if spec.placement_group is not None:
                # An existing group (capacity reservations made in it serve only it).
                placement_group = pulumi.Output.from_input(spec.placement_group)
            else:
                pg = aws.ec2.PlacementGroup(
                    f"{name}-pg",
                    strategy="cluster",
                    tags=gate({**tags, "Name": f"{cluster_name}-{spec.name}"}),
                    opts=pulumi.ResourceOptions(parent=self),
                )
                placement_group = pg.name
            sg = aws.ec2.SecurityGroup(
                f"{name}-efa",
                description=f"EFA traffic between {spec.name} nodes of {cluster_name}",
                vpc_id=args.vpc_id,
                tags=gate({**tags, "Name": f"{cluster_name}-{spec.name}-efa"}),
                opts=pulumi.ResourceOptions(parent=self),
            )
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-efa-self-in",
                security_group_id=sg.id,
                referenced_security_group_id=sg.id,
                ip_protocol="-1",
                description="EFA: all traffic from the pool's own nodes",
                opts=pulumi.ResourceOptions(parent=self),
            )
            aws.vpc.SecurityGroupEgressRule(
                f"{name}-efa-self-out",
                security_group_id=sg.id,
                referenced_security_group_id=sg.id,
                ip_protocol="-1",
                description="EFA: all traffic to the pool's own nodes",
                opts=pulumi.ResourceOptions(parent=self),
            )
            security_groups = sg.id.apply(lambda i: [i])
            network = pulumi.Output.all(args.node_role, security_groups, placement_group)

        # One NodePool for a GPU pool; one per EFA layout for an EFA pool (types with the same
        # networkInterfaces share it and its limit: Karpenter limits are per NodePool,
        # kubernetes-sigs/karpenter v1.15.0 scheduler.go filterByRemainingResources L1097-1114).
        # An EFA NodePool lists its types; its EC2NodeClass renders the layout they share.
        variants: list[tuple[str, tuple[str, ...] | None, int | None]] = [
            (g.name, g.instance_types if g.efa else None, g.gpus)
            for g in nodepool_groups(spec, args.gpu_limit)
        ]

        # The NodeOverlays first, and every NodePool of the pool depends on them: Pulumi creates a
        # resource only after its depends_on (the SDK awaits their URNs before registering it:
        # pulumi 3.272.0 runtime/resource.py L213-216, runtime/rpc.py L334-337) and deletes it
        # before them (https://www.pulumi.com/docs/iac/concepts/resources/options/dependson/:
        # "creation, update, and deletion operations are executed in the correct order"). So
        # Karpenter never sees a NodePool's limits in slices or MIG devices (or an EFA pool) while
        # the instance types still count whole GPUs (no hugepages): review S4.
        overlays: list[pulumi.Resource] = []
        if spec.kind == "efa":
            overlay = nodeoverlay_manifest(spec, label_domain=label_domain)
            overlays.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-hugepages",
                    api_version=versions.NODEOVERLAY_API,
                    kind="NodeOverlay",
                    metadata=overlay["metadata"],
                    spec=gate(overlay["spec"]),
                    opts=k8s_opts,
                )
            )
        if args.capacity is not None:
            for overlay in gpu_overlay_manifests(spec, args.capacity, label_domain=label_domain):
                overlays.append(
                    k8s.apiextensions.CustomResource(
                        f"{name}-{overlay['metadata']['name'].removeprefix(spec.name + '-')}",
                        api_version=versions.NODEOVERLAY_API,
                        kind="NodeOverlay",
                        metadata=overlay["metadata"],
                        spec=overlay["spec"],
                        opts=k8s_opts,
                    )
                )

        # Outputs inside the manifest (a KMS key, a reservation id) resolve with it.
        resolve: Any = pulumi.Output.from_input if _has_outputs(spec) else (lambda m: m)
        pools, classes = [], []
        for resource_name, instance_types, gpu_limit in variants:
            suffix = resource_name.removeprefix(spec.name)
            layout = instance_types[0] if instance_types else None
            # The spec of the manifest (whose metadata is its name only), in one apply.
            class_spec = network.apply(
                lambda a, n=resource_name, t=layout: resolve(
                    ec2nodeclass_manifest(
                        spec,
                        name=n,
                        cluster_name=cluster_name,
                        node_role=a[0],
                        tags=tags,
                        extra_security_group_ids=a[1],
                        placement_group=a[2],
                        instance_type=t,
                        subnet_selector=args.subnet_selector,
                    )["spec"]
                )
            )
            klass = k8s.apiextensions.CustomResource(
                f"{name}{suffix}-class",
                api_version=versions.EC2NODECLASS_API,
                kind="EC2NodeClass",
                metadata={"name": resource_name},
                spec=gate(class_spec),
                opts=class_opts,
            )
            manifest = nodepool_manifest(
                spec,
                name=resource_name,
                node_class=resource_name,
                label_domain=label_domain,
                gpu_limit=gpu_limit,
                instance_type=instance_types,
                per_gpu=args.capacity.per_gpu if args.capacity is not None else None,
            )
            pool = k8s.apiextensions.CustomResource(
                f"{name}{suffix}-pool",
                api_version=versions.NODEPOOL_API,
                kind="NodePool",
                metadata=manifest["metadata"],
                spec=gate(manifest["spec"]),
                opts=pulumi.ResourceOptions(
                    parent=self,
                    provider=args.k8s_provider,
                    depends_on=[*args.depends_on, klass, *overlays],
                    custom_timeouts=until_drained,
                ),
            )
            pools.append(pool)
            classes.append(klass)
        # Each NodePool is named after its EC2NodeClass: one Output for both lists.
        self.node_pool_names = pulumi.Output.from_input([v[0] for v in variants])
        self.node_class_names = self.node_pool_names
        self.register_outputs(
            {"node_pool_names": self.node_pool_names, "node_class_names": self.node_class_names}
        )
