"""Cluster admins (issue 11, items 1 and 2): the deploying identity gets no access entry of its
own (EKS made it an admin already), and every other admin's entry is named after its principal,
with an alias to the positional name pulumi-eks gave it."""

import logging

import pytest

from eks_gpu_platform.cluster.access import (
    admin_entry_key,
    is_deployer,
    principal_identity,
)
from eks_gpu_platform.cluster.component import EksCluster, EksClusterArgs
from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.snapshot import alias_urns, engine_urns

ACCOUNT = "111122223333"
SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def cluster(run_program, admins, *, caller="user/offline-render", monkeypatch=None, **kw):
    if monkeypatch is not None:
        monkeypatch.setattr(mocks.RecordingMocks, "caller", caller)

    def program():
        EksCluster(
            "c",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu-prod", admins=tuple(admins)),
                vpc_id="vpc-0123456789abcdef0",
                private_subnet_ids=SUBNETS,
            ),
        )

    return run_program(program, account_id=ACCOUNT, **kw)


def entries(rec) -> dict[str, str]:
    return {r.name: r.inputs["principalArn"] for r in rec.of_type(ENTRY)}


@pytest.mark.parametrize(
    ("arn", "expected"),
    [
        ("arn:aws:iam::111122223333:role/Admin", ("111122223333", "role", "admin")),
        ("arn:aws:iam::111122223333:role/team/Admin", ("111122223333", "role", "admin")),
        ("arn:aws-cn:iam::111122223333:user/bob", ("111122223333", "user", "bob")),
        ("arn:aws:sts::111122223333:assumed-role/Deploy/gha-1", ("111122223333", "role", "deploy")),
        ("arn:aws:sts::111122223333:federated-user/bob", None),
        ("arn:aws:iam::111122223333:root", None),
    ],
)
def test_principal_identity(arn, expected):
    assert principal_identity(arn) == expected


@pytest.mark.parametrize(
    ("principal", "key"),
    [
        ("role/PlatformAdmin", "role-PlatformAdmin"),
        ("role/team/PlatformAdmin", "role-PlatformAdmin"),
        ("user/alice", "user-alice"),
        ("arn:aws:iam::444455556666:user/alice", "444455556666-user-alice"),
        ("arn:aws:iam::444455556666:role/a/b/Ops", "444455556666-role-Ops"),
    ],
)
def test_admin_entry_key(principal, key):
    assert admin_entry_key(principal) == key


def test_is_deployer_compares_account_kind_and_name():
    role = "arn:aws:iam::111122223333:role/GitHubActionsDeploy"
    assert is_deployer(role, "arn:aws:iam::111122223333:role/ci/GitHubActionsDeploy")
    assert is_deployer(role, "arn:aws:iam::111122223333:role/githubactionsdeploy")
    assert not is_deployer(role, "arn:aws:iam::999988887777:role/GitHubActionsDeploy")
    assert not is_deployer(role, "arn:aws:iam::111122223333:user/GitHubActionsDeploy")
    assert not is_deployer(role, None)


def test_assumed_role_deployer_gets_no_entry(run_program, monkeypatch, caplog):
    """Fails on the old code: it created an entry for every admin, the deployer's included,
    which EKS rejects with 409 (pulumi/pulumi-eks#2373)."""
    caplog.set_level(logging.INFO)
    rec = cluster(
        run_program,
        ["role/PlatformAdmin", "role/GitHubActionsDeploy"],
        caller="assumed-role/GitHubActionsDeploy/gha-run-42",
        monkeypatch=monkeypatch,
    )
    assert entries(rec) == {
        "c-admin-role-PlatformAdmin": "arn:aws:iam::111122223333:role/PlatformAdmin"
    }
    assert [c[0] for c in rec.calls if c[0] == "aws:iam/getSessionContext:getSessionContext"]
    assert (
        "cluster.admins[1]: role/GitHubActionsDeploy is the identity deploying this stack "
        "(arn:aws:iam::111122223333:role/GitHubActionsDeploy); EKS already made it a cluster "
        "admin (bootstrapClusterCreatorAdminPermissions), so it gets no access entry of its own "
        "(a second one fails with 409 ResourceInUseException)"
    ) in caplog.text


def test_user_deployer_gets_no_entry(run_program, monkeypatch):
    rec = cluster(
        run_program,
        ["user/alice", "arn:aws:iam::444455556666:role/Ops"],
        caller="user/alice",
        monkeypatch=monkeypatch,
    )
    assert entries(rec) == {"c-admin-444455556666-role-Ops": "arn:aws:iam::444455556666:role/Ops"}


def test_entries_are_keyed_by_principal_not_position(run_program):
    """Fails on the old code: entries were `admin-<i>`, so removing the first admin moved the
    second one's principal into `admin-0` (a replacement of both)."""
    before = entries(cluster(run_program, ["role/A", "role/B", "user/carol"]))
    after = entries(cluster(run_program, ["user/carol", "role/B"]))
    assert before == {
        "c-admin-role-A": "arn:aws:iam::111122223333:role/A",
        "c-admin-role-B": "arn:aws:iam::111122223333:role/B",
        "c-admin-user-carol": "arn:aws:iam::111122223333:user/carol",
    }
    assert after == {k: v for k, v in before.items() if k != "c-admin-role-A"}


def test_entry_and_association_inputs(run_program):
    rec = cluster(run_program, ["role/PlatformAdmin"], region="cn-north-1", partition="aws-cn")
    (entry,) = rec.of_type(ENTRY)
    (assoc,) = rec.of_type(ASSOCIATION)
    assert entry.inputs == {
        "clusterName": "gpu-prod",
        "principalArn": "arn:aws-cn:iam::111122223333:role/PlatformAdmin",
        "type": "STANDARD",
        "tags": {},
    }
    assert assoc.name == "c-admin-role-PlatformAdmin-cluster-admin"
    assert assoc.parent == entry.urn
    assert assoc.inputs == {
        "clusterName": "gpu-prod",
        "principalArn": "arn:aws-cn:iam::111122223333:role/PlatformAdmin",
        "policyArn": POLICY.replace("arn:aws:", "arn:aws-cn:"),
        "accessScope": {"type": "cluster"},
    }


def test_entries_alias_the_old_positional_children(run_program):
    """Existing stacks keep their entries: the entry aliases pulumi-eks's `<name>-admin-<i>`
    child of the eks.Cluster (its index in the configured list), and its association follows
    by the engine's inherited child alias (snapshot.alias_urns models it)."""
    rec = cluster(run_program, ["role/A", "role/B"])
    urns = engine_urns(rec)
    a = next(r for r in rec.of_type(ENTRY) if r.name == "c-admin-role-B")
    assoc = next(r for r in rec.of_type(ASSOCIATION) if r.parent == a.urn)
    aliases = alias_urns(rec)
    eks = "eks-gpu-platform:index:EksCluster$eks:index:Cluster"
    assert aliases[urns[a.urn]] == [
        f"urn:pulumi:test::eks-gpu-platform::{eks}${ENTRY}::c-eks-admin-1"
    ]
    assert aliases[urns[assoc.urn]] == [
        f"urn:pulumi:test::eks-gpu-platform::{eks}${ENTRY}${ASSOCIATION}::c-eks-admin-1-cluster-admin"
    ]
