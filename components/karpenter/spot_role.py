"""The EC2 Spot service-linked role (issue 28, point 7): looked up before anything is
registered, and created by the stack when absent, when a pool may launch spot and
``karpenter.spotServiceLinkedRole`` is on (the default).

Without it, an account that never used spot launches no spot node: Karpenter's ``CreateFleet``
fails with ``AuthFailure.ServiceLinkedRoleCreationNotPermitted`` ("Unless your AWS account has
already onboarded to EC2 Spot, you will need to create the service linked role",
aws/karpenter-provider-aws website/content/en/docs/troubleshooting.md L25-37, v1.14.1, "Missing
Service Linked Role"; upstream's getting-started creates it in step06-add-spot-role.sh).

The role is account-wide, and ``CreateServiceLinkedRole`` fails when it exists, so:

- absent: this stack declares it (``aws.iam.ServiceLinkedRole``, ``spot.amazonaws.com``) with
  the description ``owner_description(cluster)`` and ``retainOnDelete``: other stacks and
  workloads of the account may rely on it, so `pulumi destroy` leaves it;
- present with this stack's description: declared again (no change; the stack keeps it);
- present otherwise (made by hand, by EC2, or by another stack): read, not managed
  (``ServiceLinkedRole.get`` under the same name, so the release still waits for it). A stack
  whose earlier version created the role under that name without the marker then releases it
  instead of deleting it: a read whose ID matches the managed resource's is a "relinquish", no
  delete step (pulumi/pulumi pkg/resource/deploy/step_generator.go L353-381, HEAD 1b59498;
  the provider's ID of the role is its ARN: terraform-provider-aws internal/service/iam/
  service_linked_role.go ``resourceServiceLinkedRoleCreate``, ``d.SetId(output.Role.Arn)``);
- the lookup fails (no ``iam:GetRole``) or answers unknown: nothing is created, and a warning
  says how to create it by hand.

``getRole`` answers a role's ``description`` (terraform-provider-aws
internal/service/iam/role_data_source.go ``dataSourceRoleRead``), and a service-linked role's
description may be edited (IAM ``UpdateRoleDescription``; the provider's
``aws_iam_service_linked_role`` takes ``description``). Pure but ``spot_role_plan``'s lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..cluster.principals import GET_ROLE, lookup_missing

SPOT_ROLE_NAME = "AWSServiceRoleForEC2Spot"
SPOT_SERVICE = "spot.amazonaws.com"
CREATE_COMMAND = f"aws iam create-service-linked-role --aws-service-name {SPOT_SERVICE}"


def owner_description(cluster_name: str) -> str:
    """The description that marks the role as created by this stack."""
    return f"EC2 Spot service-linked role, created by eks-gpu-platform cluster {cluster_name}"


@dataclass(frozen=True)
class SpotRolePlan:
    """``create``: declare the role in this stack; ``existing_arn``: the role exists and is not
    this stack's, so it is read; ``warning``: what the user must know."""

    create: bool
    warning: str | None = None
    existing_arn: str | None = None


def spot_role_plan(
    spot_pools: Sequence[str],
    wanted: bool,
    cluster_name: str,
    lookup: Callable[[str, dict[str, str]], dict],
) -> SpotRolePlan:
    """Whether this stack declares the role, from ``lookup(token, args)`` (a synchronous
    invoke, ``{}`` when unknown, raising the provider's error)."""
    if not spot_pools and not wanted:
        return SpotRolePlan(False)
    pools = ", ".join(spot_pools)
    try:
        found = lookup(GET_ROLE, {"name": SPOT_ROLE_NAME})
    except Exception as error:  # the provider's "not found" only: lookup_missing
        if not spot_pools:
            return SpotRolePlan(False)
        if not lookup_missing("role", error):
            return SpotRolePlan(
                False,
                f"node pools {pools} may launch spot instances, and looking up the EC2 Spot "
                f"service-linked role {SPOT_ROLE_NAME} failed ({str(error).strip()}); if the "
                f"account has none, Karpenter's spot launches fail with "
                f"ServiceLinkedRoleCreationNotPermitted; create it once: `{CREATE_COMMAND}`",
            )
        found = None
    if not spot_pools:
        # No pool launches spot: nothing to create; a role this stack created before is kept
        # under management, one of others read (an old stack's role released, not deleted).
        if not found:
            return SpotRolePlan(False)
        if found.get("description") == owner_description(cluster_name):
            return SpotRolePlan(True)
        return SpotRolePlan(False, existing_arn=found.get("arn"))
    if found is None:
        if wanted:
            return SpotRolePlan(True)
        return SpotRolePlan(
            False,
            f"node pools {pools} may launch spot instances, and this account has no EC2 Spot "
            f"service-linked role ({SPOT_ROLE_NAME}): Karpenter's spot launches fail with "
            "ServiceLinkedRoleCreationNotPermitted; create it once: "
            f"`{CREATE_COMMAND}`, or set karpenter.spotServiceLinkedRole: true",
        )
    if not found:
        return SpotRolePlan(
            False,
            f"node pools {pools} may launch spot instances; whether the account has the EC2 "
            f"Spot service-linked role ({SPOT_ROLE_NAME}) is unknown in this preview",
        )
    if wanted and found.get("description") == owner_description(cluster_name):
        return SpotRolePlan(True)
    return SpotRolePlan(False, existing_arn=found.get("arn"))
