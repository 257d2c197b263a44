"""Issue 30.2: the remover may delete only the NodeClaim of its own node, in a MIG pool; it may
record Events in ``default`` only. Evaluated with cel-python, like ``test_mig_ready.py``."""

from pathlib import Path

import celpy
import pytest
import yaml
from cel_programs import program as cel_program

from eks_gpu_platform.gpu_operator.mig_ready import mig_ready_admission
from eks_gpu_platform.gpu_operator.mig_replace import mig_replace_admission, mig_replace_rbac

REMOVER = "system:serviceaccount:gpu-operator:eks-gpu-platform-mig-ready"
OWN = "ip-10-0-0-1"
OWN_NODE = "the MIG startup remover may delete only the NodeClaim of the node its pod runs on"
MIG_ONLY = "the MIG startup remover may delete only NodeClaims of the MIG pools (mig, mig-h100)"


def policy() -> dict:
    (vap, _) = mig_replace_admission(pool_label_key="example.com/pool", pools=["mig-h100", "mig"])
    return vap


def matched(username: str) -> bool:
    (condition,) = policy()["spec"]["matchConditions"]
    activation = {"request": celpy.json_to_cel({"userInfo": {"username": username}})}
    return bool(cel_program(condition["expression"]).evaluate(activation))


def denied(request_node: str | None, claim: dict) -> list[str]:
    user: dict = {"username": REMOVER}
    if request_node is not None:
        user["extra"] = {"authentication.kubernetes.io/node-name": [request_node]}
    activation = {
        "request": celpy.json_to_cel({"userInfo": user}),
        "oldObject": celpy.json_to_cel(claim),
    }
    return [
        v["message"]
        for v in policy()["spec"]["validations"]
        if not bool(cel_program(v["expression"]).evaluate(activation))
    ]


def claim(node: str | None, pool: str | None) -> dict:
    labels = {"karpenter.sh/nodepool": pool or "general"}
    if pool is not None:
        labels["example.com/pool"] = pool
    out: dict = {"metadata": {"name": "c", "labels": labels}, "status": {}}
    if node is not None:
        out["status"]["nodeName"] = node
    return out


@pytest.mark.parametrize(
    ("request_node", "old", "failed"),
    [
        (OWN, claim(OWN, "mig"), []),
        (OWN, claim(OWN, "mig-h100"), []),
        ("ip-10-0-0-2", claim(OWN, "mig"), [OWN_NODE]),
        (None, claim(OWN, "mig"), [OWN_NODE]),
        (OWN, claim(None, "mig"), [OWN_NODE]),  # not registered yet: not the pod's node
        (OWN, claim(OWN, "train"), [MIG_ONLY]),  # a GPU pool without MIG
        (OWN, claim(OWN, None), [MIG_ONLY]),  # the cluster's own NodePools (system nodes)
    ],
    ids=["own-mig", "own-other-mig-pool", "other-node", "no-node-claim", "unregistered",
         "non-mig-pool", "not-the-platforms"],
)  # fmt: skip
def test_the_remover_deletes_only_its_own_mig_nodeclaim(request_node, old, failed):
    assert denied(request_node, old) == failed


def test_the_policy_applies_to_the_remover_only():
    assert matched(REMOVER)
    # Karpenter, the GPU Operator and the nodes' own identities are never judged by it
    # (the service accounts of tests/fixtures/system-pods).
    for user in [
        "system:serviceaccount:kube-system:karpenter",
        "system:serviceaccount:gpu-operator:gpu-operator",
        "system:serviceaccount:gpu-operator:nvidia-mig-manager",
        "system:node:ip-10-0-0-1",
    ]:
        assert not matched(user)


def test_the_policy_matches_nodeclaim_deletes_and_denies():
    (vap, binding) = mig_replace_admission(pool_label_key="example.com/pool", pools=["mig"])
    assert vap["spec"]["matchConstraints"] == {
        "resourceRules": [
            {
                "apiGroups": ["karpenter.sh"],
                "apiVersions": ["*"],
                "operations": ["DELETE"],
                "resources": ["nodeclaims"],
            }
        ]
    }
    assert vap["spec"]["failurePolicy"] == "Fail"
    assert binding["spec"] == {
        "policyName": "eks-gpu-platform-mig-replace",
        "validationActions": ["Deny"],
    }


def test_events_only_in_default_and_only_create():
    role, binding = mig_replace_rbac()
    assert role["metadata"]["namespace"] == "default"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "eks-gpu-platform-mig-ready",
    }
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": "eks-gpu-platform-mig-ready",
            "namespace": "gpu-operator",
        }
    ]


SYSTEM_PODS = Path(__file__).resolve().parents[1] / "fixtures" / "system-pods"


def system_pod_users() -> list[str]:
    """The identities of the pods of a real GPU node (tests/fixtures/system-pods): each pod's
    ServiceAccount (``default`` when unset), and the kubelet of its node."""
    users = {"system:node:ip-10-0-0-1"}
    for path in sorted(SYSTEM_PODS.glob("*.yaml")):
        for pod in yaml.safe_load_all(path.read_text()):
            if pod and pod.get("kind") == "Pod":
                account = pod["spec"].get("serviceAccountName", "default")
                users.add(f"system:serviceaccount:{pod['metadata']['namespace']}:{account}")
    return sorted(users)


def test_no_system_pod_is_judged_by_the_removers_policies():
    # Both policies match on the remover's username only: what the GPU Operator, NFD, Karpenter,
    # the CNI and the other system pods do to nodes and NodeClaims is never judged by them.
    users = system_pod_users()
    assert len(users) > 8
    (node_policy, _) = mig_ready_admission(pool_label_key="example.com/pool", pools=["mig"])
    (claim_policy, _) = mig_replace_admission(pool_label_key="example.com/pool", pools=["mig"])
    for policy in (node_policy, claim_policy):
        (condition,) = policy["spec"]["matchConditions"]
        program = cel_program(condition["expression"])
        for user in users:
            activation = {"request": celpy.json_to_cel({"userInfo": {"username": user}})}
            assert not bool(program.evaluate(activation)), (policy["metadata"]["name"], user)
