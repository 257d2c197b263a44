"""Karpenter: everything upstream's v1.15 CloudFormation reference creates, plus the Helm chart.

- Controller IAM role (EKS Pod Identity by default, IRSA as an option) with upstream's 18
  statements in upstream's six managed policies (NodeLifecycle, IAMIntegration, EKSIntegration,
  Interruption, ResourceDiscovery, ZonalShift): the split keeps every document under IAM's 6,144
  character limit for managed policies even for 100-character cluster names.
- Node IAM role with upstream's four managed policies and an ``EC2_LINUX`` access entry.
- Interruption queue (SQS, 300 s retention, SSE, TLS-only) with all five EventBridge rules.
- Optional EC2 Spot service-linked role (account-wide, so off by default).
- The ``karpenter-crd`` chart, then the ``karpenter`` chart (``skip_crds``), pinned in
  ``versions``, running only on the system node group.

Builders (``controller_policies``, ``interruption_rules``, ``karpenter_values`` ...) are pure:
plain data in, dict out; the component calls them inside ``Output.apply``.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from .events import (
    INTERRUPTION_EVENTS,
    QUEUE_RETENTION_SECONDS,
    QUEUE_TARGET_ID,
    interruption_rules,
)
from .spec import (
    DEFAULT_KARPENTER_CPU,
    DEFAULT_KARPENTER_MEMORY,
    DEFAULT_KARPENTER_REPLICAS,
    MAX_KARPENTER_VERSION_EXCLUSIVE,
    MIN_KARPENTER_VERSION,
    NAMESPACE,
    SERVICE_ACCOUNT,
    KarpenterSpec,
    version_tuple,
)
from .values import DEFAULT_FEATURE_GATES, karpenter_values

if TYPE_CHECKING:
    from ..iam import compact_json
    from .component import Karpenter, KarpenterArgs
    from .iam import (
        NODE_ROLE_POLICIES,
        POLICY_GROUPS,
        controller_policies,
        irsa_trust_policy,
        node_role_policies,
        pod_identity_trust_policy,
        policy_name,
        queue_policy,
    )

# Loaded on first use: these load the Pulumi SDKs, which a reader of the specs (the stack's
# validation) does not need (lazy.py).
__getattr__ = lazy_exports(
    __name__,
    {
        "compact_json": "..iam",
        "Karpenter": ".component",
        "KarpenterArgs": ".component",
        "NODE_ROLE_POLICIES": ".iam",
        "POLICY_GROUPS": ".iam",
        "controller_policies": ".iam",
        "irsa_trust_policy": ".iam",
        "node_role_policies": ".iam",
        "pod_identity_trust_policy": ".iam",
        "policy_name": ".iam",
        "queue_policy": ".iam",
    },
)

__all__ = [
    "DEFAULT_FEATURE_GATES",
    "DEFAULT_KARPENTER_CPU",
    "DEFAULT_KARPENTER_MEMORY",
    "DEFAULT_KARPENTER_REPLICAS",
    "INTERRUPTION_EVENTS",
    "MAX_KARPENTER_VERSION_EXCLUSIVE",
    "MIN_KARPENTER_VERSION",
    "NAMESPACE",
    "NODE_ROLE_POLICIES",
    "POLICY_GROUPS",
    "QUEUE_RETENTION_SECONDS",
    "QUEUE_TARGET_ID",
    "SERVICE_ACCOUNT",
    "Karpenter",
    "KarpenterArgs",
    "KarpenterSpec",
    "compact_json",
    "controller_policies",
    "interruption_rules",
    "irsa_trust_policy",
    "karpenter_values",
    "node_role_policies",
    "pod_identity_trust_policy",
    "policy_name",
    "queue_policy",
    "version_tuple",
]
