"""What the MIG startup remover needs to have a stuck MIG node replaced (issue 30.2): the right to
record an Event about its node, and to delete its node's NodeClaim, narrowed by a
ValidatingAdmissionPolicy to the NodeClaim of the node its pod runs on, in a MIG pool.

Pure builders, plain data in, manifests out.

- Why the NodeClaim: a node that keeps a startup taint is never initialized (kubernetes-sigs/
  karpenter v1.15.0 pkg/controllers/nodeclaim/lifecycle/initialization.go L81-84), so never a
  candidate of emptiness, drift or consolidation (pkg/controllers/state/statenode.go L301-308);
  only Repair takes a registered uninitialized node (it ignores that NodeUninitializedError:
  pkg/controllers/disruption/types.go L163-169), under the nodeRepair feature gate (off by
  default: karpenter/values.py) and for a node condition matching a repair policy
  (disruption/repair.go L78-92). Karpenter drops the startup taint from its view of the node
  (statenode.go L416-436): pending pods "fit" it and nothing else is launched until
  ``expireAfter``. Deleting the NodeClaim marks it deleting (statenode.go L536-547); the
  provisioner schedules on active nodes only (pkg/controllers/provisioning/provisioner.go
  L378-381, L417), so it launches a replacement for the pending pods, and the NodeClaim's
  termination finalizer deletes the Node, then the instance
  (pkg/controllers/nodeclaim/lifecycle/controller.go L198-240).
- Events: a Role in ``default``, where Events about cluster-scoped objects go, ``create`` only.
- The policy: a DELETE of a NodeClaim by the remover's ServiceAccount must name the NodeClaim
  whose ``status.nodeName`` is the node the pod runs on (the token's node-name extra, as in
  ``mig_ready_admission``) and which carries a MIG pool's ``<domain>/pool`` label (the NodePool's
  template labels are on its NodeClaims: pkg/apis/v1/nodepool.go L275-280). ``oldObject`` is the
  object deleted (admissionregistration.k8s.io/v1 ``ValidatingAdmissionPolicy``: "oldObject - The
  existing object. The value is null for CREATE requests").
"""

from collections.abc import Sequence
from typing import Any

from .mig_ready import MIG_READY_LABELS, MIG_READY_NAME, MIG_READY_USER, NODE_NAME_EXTRA
from .spec import NAMESPACE

MIG_REPLACE_NAME = "eks-gpu-platform-mig-replace"
EVENTS_NAMESPACE = "default"


def mig_replace_rbac() -> list[dict[str, Any]]:
    """The Role (create Events in ``default``) and its binding to the remover's ServiceAccount."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {
                "name": MIG_READY_NAME,
                "namespace": EVENTS_NAMESPACE,
                "labels": MIG_READY_LABELS,
            },
            "rules": [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {
                "name": MIG_READY_NAME,
                "namespace": EVENTS_NAMESPACE,
                "labels": MIG_READY_LABELS,
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": MIG_READY_NAME,
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": MIG_READY_NAME, "namespace": NAMESPACE}
            ],
        },
    ]


def mig_replace_admission(*, pool_label_key: str, pools: Sequence[str]) -> list[dict[str, Any]]:
    """The ValidatingAdmissionPolicy and its binding: the remover may delete only the NodeClaim
    of its own node, and only in one of ``pools`` (the MIG pools)."""
    names = ", ".join(f"'{p}'" for p in sorted(pools))
    labels = "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})"
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": MIG_REPLACE_NAME, "labels": MIG_READY_LABELS},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["karpenter.sh"],
                            "apiVersions": ["*"],
                            "operations": ["DELETE"],
                            "resources": ["nodeclaims"],
                        }
                    ]
                },
                "matchConditions": [
                    {
                        "name": "mig-ready-service-account",
                        "expression": f"request.userInfo.username == '{MIG_READY_USER}'",
                    }
                ],
                "validations": [
                    {
                        "expression": (
                            f"has(request.userInfo.extra) && '{NODE_NAME_EXTRA}' in "
                            "request.userInfo.extra && has(oldObject.status) && "
                            "has(oldObject.status.nodeName) && "
                            f"request.userInfo.extra['{NODE_NAME_EXTRA}'] == "
                            "[oldObject.status.nodeName]"
                        ),
                        "message": (
                            "the MIG startup remover may delete only the NodeClaim of the node "
                            "its pod runs on"
                        ),
                    },
                    {
                        "expression": (
                            f"'{pool_label_key}' in {labels} && "
                            f"{labels}['{pool_label_key}'] in [{names}]"
                        ),
                        "message": (
                            "the MIG startup remover may delete only NodeClaims of the MIG pools "
                            f"({', '.join(sorted(pools))})"
                        ),
                    },
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": MIG_REPLACE_NAME, "labels": MIG_READY_LABELS},
            "spec": {"policyName": MIG_REPLACE_NAME, "validationActions": ["Deny"]},
        },
    ]
