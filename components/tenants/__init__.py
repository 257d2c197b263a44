"""Tenant identities and the per-queue GPU backstop (issue 29, point 5).

- ``scheduler.queues[].tenants``: IAM principals of a queue's tenants. Each gets one EKS access
  entry with ``AmazonEKSEditPolicy`` scoped to the namespaces of the queues that list it
  (``access.py``, ``component.py``).
- A ``ResourceQuota`` per queue namespace capping GPU requests at the queue's ``gpu.limit``
  (``quota.py``): a backstop that holds even when a pod bypasses the KAI scheduler.

Pure modules (``access``, ``checks``, ``quota``) import no Pulumi; ``component.TenantAccess`` is
imported from its module by the platform.
"""

from .access import (
    EDIT_POLICY,
    TenantBinding,
    edit_policy_arn,
    tenant_bindings,
    tenant_principal_keys,
)
from .quota import QUOTA_NAME, resource_quota_manifests

__all__ = [
    "EDIT_POLICY",
    "QUOTA_NAME",
    "TenantBinding",
    "edit_policy_arn",
    "resource_quota_manifests",
    "tenant_bindings",
    "tenant_principal_keys",
]
