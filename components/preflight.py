"""Every check that can refuse `pulumi up`, run once before ``GpuPlatform`` registers its first
resource (issue 28, point 3), with every problem of the run in one ``SpecError``.

Before this, the admins' checks ran inside ``EksCluster``, after ``Network`` had registered 18
resources (VPC, EIP, NAT gateway, routes): a synchronous invoke spins the event loop, so the
registrations already made are sent, and on a real engine in-flight creates complete
(pulumi/pulumi pkg/resource/deploy/deployment_executor.go L292-303, L350 ``WaitForCompletion``).
A refused `up` then left a VPC and an EIP in the state.

The checks, each a synchronous invoke through the platform's AWS provider:

- the AMI alias of every pool has an image for the cluster's minor (``amis.py``);
- the deployer, every admin, viewer, the break-glass role, every queue's tenant and the
  validation principal exist,
  their entries' ARNs, and the existing cluster's entries (``cluster/identity.py``,
  ``cluster/principals.py``);
- every GPU pool's largest node fits the EC2 vCPU quotas (``quotas.py``; refused at preview
  too, like the AMI check: preview and up answer alike);
- the EC2 Spot service-linked role, when a pool may launch spot (``karpenter/spot_role.py``):
  whether this stack declares it;
- every EKS add-on's version (a pin, the installed one, or the deploy-time lookup) and its
  floor with EFA pools (``cluster/addon_versions.py``).

After the refusals, never one itself: the hourly cost of each GPU pool at its full budget and of
the stack, from the AWS Price List API where the provider's region serves it and the identity
may (``price_list.py``), logged.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from .amis import check_ami_parameters
from .cluster.addon_versions import AddonVersion, efa_floors, resolve_addon_versions
from .cluster.identity import AdminAccess, plain_invoke, resolve_access
from .config import PlatformConfig
from .karpenter.spot_role import SpotRolePlan, spot_role_plan
from .price_list import cost_log
from .quotas import check_quotas, stack_needs
from .spec import SpecError
from .tenants.access import tenant_principal_keys
from .validation_access.checks import validation_principal_keys


@dataclass(frozen=True)
class Preflight:
    """What the checks resolved, for the components: the admins' access, whether the stack
    declares the EC2 Spot service-linked role, and the add-ons' versions."""

    access: AdminAccess
    spot_role: SpotRolePlan
    addon_versions: dict[str, AddonVersion]


def run_preflight(
    component: pulumi.Resource,
    name: str,
    config: PlatformConfig,
    provider: pulumi.ProviderResource | None = None,
) -> Preflight:
    """Run every check; raise one ``SpecError`` with all refusals, log the warnings. ``name``:
    the platform's (its cluster component is ``<name>-cluster``)."""

    def invoke(token: str, args: dict[str, str]) -> dict:
        return plain_invoke(component, token, args, provider)

    lines: list[str] = []
    try:
        check_ami_parameters(component, config.pools, config.cluster.kubernetes_version, provider)
    except SpecError as error:
        lines += error.lines or str(error).splitlines()
    access = AdminAccess()
    try:
        access = resolve_access(
            component,
            f"{name}-cluster",
            config.cluster,
            provider,
            [*tenant_principal_keys(config), *validation_principal_keys(config)],
        )
    except SpecError as error:
        lines += error.lines or str(error).splitlines()
    refusals, warnings = check_quotas(
        stack_needs(config.node_pools, config.gpu_limits), config.region, invoke
    )
    lines += refusals
    spot_pools = [p.name for p in config.pools if "spot" in p.capacity_types]
    spot_role = spot_role_plan(
        spot_pools, config.karpenter.spot_service_linked_role, config.cluster.name, invoke
    )
    if spot_role.warning:
        warnings.append(spot_role.warning)
    addon_versions: dict[str, AddonVersion] = {}
    try:
        addon_versions = resolve_addon_versions(
            component,
            config.cluster.name,
            config.cluster.kubernetes_version,
            config.cluster.addon_versions,
            provider=provider,
            floors=efa_floors([p.name for p in config.efa_pools]),
        )
    except SpecError as error:
        lines += error.lines or str(error).splitlines()
    if lines:
        raise SpecError.from_lines(lines)
    cost_lines, cost_warnings = cost_log(config, invoke)
    for warning in warnings + cost_warnings:
        pulumi.log.warn(warning, component)
    for line in cost_lines:
        pulumi.log.info(line, component)
    return Preflight(access, spot_role, addon_versions)
