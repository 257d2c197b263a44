"""``EksClusterArgs``: the inputs of ``EksCluster``, checked before anything is registered."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from ..network.component import Network
from ..spec import (
    SpecError,
    derive_unset,
    derived,
    missing_problems,
    require_instance,
    show,
)
from .addon_versions import AddonVersion
from .identity import AdminAccess
from .spec import ClusterSpec, SystemNodeGroupSpec


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
