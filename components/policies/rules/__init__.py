"""The registry: every rule of the pack, in the order the pack lists them.

One module per rule, each exposing ``RULE``. Security rules first, then correctness, then cost
and scheduling (mandatory before advisory).
"""

from __future__ import annotations

from . import (
    ami_version_pinned,
    efa_nodeclass_no_public_ip,
    efa_nodepool_topology,
    eks_control_plane_logging,
    eks_public_endpoint,
    eks_secrets_encryption,
    gpu_nodepool_gpu_limit,
    gpu_nodepool_taint_and_pool_label,
    gpu_operator_preinstalled_driver,
    iam_no_passrole_wildcard,
    iam_no_wildcard_actions,
    iam_trust_policy_scoped,
    imdsv2_required,
    interruption_queue_for_spot_or_reserved,
    karpenter_crd_matches_controller,
    karpenter_supports_kubernetes_version,
    kms_key_rotation,
    node_volume_size,
    node_volumes_encrypted,
    nodepool_expire_after,
    nodepool_gpu_limit_within_queue_capacity,
    nodepool_nodeclass_exists,
    nodepool_termination_grace_period,
    non_preemptible_consolidate_when_empty,
    security_group_no_internet_ingress,
    spot_only_on_preemptible_pools,
    sqs_queue_encrypted,
    sqs_queue_policy_tls,
)
from ._base import ADVISORY, MANDATORY, STACK, Finding, Rule, StackResource

RULES: tuple[Rule, ...] = (
    # Security
    imdsv2_required.RULE,
    eks_secrets_encryption.RULE,
    kms_key_rotation.RULE,
    eks_public_endpoint.RULE,
    sqs_queue_encrypted.RULE,
    sqs_queue_policy_tls.RULE,
    iam_no_wildcard_actions.RULE,
    iam_no_passrole_wildcard.RULE,
    iam_trust_policy_scoped.RULE,
    security_group_no_internet_ingress.RULE,
    eks_control_plane_logging.RULE,
    node_volumes_encrypted.RULE,
    # Correctness
    gpu_nodepool_taint_and_pool_label.RULE,
    nodepool_nodeclass_exists.RULE,
    efa_nodepool_topology.RULE,
    efa_nodeclass_no_public_ip.RULE,
    interruption_queue_for_spot_or_reserved.RULE,
    karpenter_supports_kubernetes_version.RULE,
    karpenter_crd_matches_controller.RULE,
    gpu_operator_preinstalled_driver.RULE,
    # Cost and scheduling
    gpu_nodepool_gpu_limit.RULE,
    spot_only_on_preemptible_pools.RULE,
    non_preemptible_consolidate_when_empty.RULE,
    nodepool_gpu_limit_within_queue_capacity.RULE,
    nodepool_expire_after.RULE,
    nodepool_termination_grace_period.RULE,
    node_volume_size.RULE,
    ami_version_pinned.RULE,
)

RULES_BY_NAME: dict[str, Rule] = {rule.name: rule for rule in RULES}
if len(RULES_BY_NAME) != len(RULES):
    raise ValueError("eks_gpu_platform.policies.rules: two rules share a name")

__all__ = [
    "ADVISORY",
    "MANDATORY",
    "RULES",
    "RULES_BY_NAME",
    "STACK",
    "Finding",
    "Rule",
    "StackResource",
]
