"""Cluster admins (issue 11, items 1 and 2; review 11-14 B1, S1, S3): the principal that
CREATED the cluster gets no access entry of its own (EKS made it an admin already) and is
recorded on the cluster as a tag; every other admin's entry is named after its principal, with
an alias to the positional name pulumi-eks gave it."""

import logging

import pytest
from pulumi.output import Unknown

from eks_gpu_platform.cluster.access import (
    CREATOR_TAG,
    admin_entry_key,
    cluster_missing,
    duplicate_admins,
    is_deployer,
    principal_identity,
)
from eks_gpu_platform.cluster.component import EksCluster, EksClusterArgs
from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.snapshot import alias_urns, engine_urns

ACCOUNT = "111122223333"
SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


CI = "arn:aws:iam::111122223333:role/GitHubActionsDeploy"
ADMIN = "arn:aws:iam::111122223333:role/PlatformAdmin"
PROD_ADMINS = ["role/PlatformAdmin", "role/GitHubActionsDeploy"]


def cluster(
    run_program,
    admins,
    *,
    caller="user/offline-render",
    monkeypatch=None,
    existing_tags=None,
    preview=None,
    **kw,
):
    """Run an EksCluster; ``existing_tags``: a cluster named gpu-prod exists with these tags
    (None: getCluster finds none). ``preview``: run through ``mocks.run`` in that mode."""
    if monkeypatch is not None:
        monkeypatch.setattr(mocks.RecordingMocks, "caller", caller)
        monkeypatch.setattr(mocks.RecordingMocks, "existing_cluster_tags", existing_tags)

    def program():
        EksCluster(
            "c",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu-prod", admins=tuple(admins)),
                vpc_id="vpc-0123456789abcdef0",
                private_subnet_ids=SUBNETS,
            ),
        )

    if preview is not None:
        return mocks.run(
            program,
            project="eks-gpu-platform",
            stack="test",
            config={},
            region="us-west-2",
            account_id=ACCOUNT,
            preview=preview,
        )
    return run_program(program, account_id=ACCOUNT, **kw)


def cluster_tags(rec) -> dict | None:
    (eks_cluster,) = rec.of_type("eks:index:Cluster")
    return eks_cluster.inputs.get("clusterTags")


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
        "cluster.admins[1]: role/GitHubActionsDeploy created this cluster "
        "(arn:aws:iam::111122223333:role/GitHubActionsDeploy, tag eks-gpu-platform/creator); "
        "EKS made it a cluster admin (bootstrapClusterCreatorAdminPermissions), so it gets no "
        "access entry of its own (a second one fails with 409 ResourceInUseException)"
    ) in caplog.text
    # A new cluster: the deployer creates it, and the cluster records it.
    assert cluster_tags(rec) == {CREATOR_TAG: CI}


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


def test_later_deployer_keeps_its_entry_and_the_creator_is_left_out(run_program, monkeypatch):
    """Review 11-14 B1; fails on the old code, which left out whoever deploys NOW: CI created
    the cluster (EKS bootstrapped CI's entry), then PlatformAdmin deploys. The old code deleted
    PlatformAdmin's own entry and declared one for CI (409 against EKS's bootstrap entry)."""
    rec = cluster(
        run_program,
        PROD_ADMINS,
        caller="assumed-role/PlatformAdmin/alice",
        monkeypatch=monkeypatch,
        existing_tags={CREATOR_TAG: CI, "team": "ml"},
    )
    assert entries(rec) == {"c-admin-role-PlatformAdmin": ADMIN}
    # The recorded creator is declared again: the same value every run, so no diff.
    assert cluster_tags(rec) == {CREATOR_TAG: CI}


def test_the_creator_tag_is_stable_across_deployers(run_program, monkeypatch):
    """The first run (CI, new cluster) writes the tag the later run (PlatformAdmin) reads."""
    first = cluster(
        run_program,
        PROD_ADMINS,
        caller="assumed-role/GitHubActionsDeploy/gha-1",
        monkeypatch=monkeypatch,
    )
    second = cluster(
        run_program,
        PROD_ADMINS,
        caller="role/PlatformAdmin",
        monkeypatch=monkeypatch,
        existing_tags=cluster_tags(first),
    )
    assert cluster_tags(first) == cluster_tags(second) == {CREATOR_TAG: CI}
    assert entries(first) == entries(second) == {"c-admin-role-PlatformAdmin": ADMIN}


def test_creator_tag_matches_the_admin_whatever_its_path_and_case(run_program, monkeypatch):
    rec = cluster(
        run_program,
        ["role/PlatformAdmin", "role/githubactionsdeploy"],
        caller="role/PlatformAdmin",
        monkeypatch=monkeypatch,
        existing_tags={CREATOR_TAG: "arn:aws:iam::111122223333:role/ci/GitHubActionsDeploy"},
    )
    assert entries(rec) == {"c-admin-role-PlatformAdmin": ADMIN}


def test_legacy_cluster_without_the_tag_falls_back_to_the_deployer(
    run_program, monkeypatch, caplog
):
    caplog.set_level(logging.WARNING)
    rec = cluster(
        run_program,
        PROD_ADMINS,
        caller="role/GitHubActionsDeploy",
        monkeypatch=monkeypatch,
        existing_tags={"team": "ml"},
    )
    assert entries(rec) == {"c-admin-role-PlatformAdmin": ADMIN}
    # A guess is not recorded: the tag stays the operator's to set.
    assert cluster_tags(rec) is None
    assert (
        "cluster gpu-prod exists but has no tag eks-gpu-platform/creator (created before the "
        "tag was recorded): the identity deploying now "
        "(arn:aws:iam::111122223333:role/GitHubActionsDeploy) is taken to be its creator, "
        "whose access entry EKS made. If another principal created it, tag the cluster with "
        "eks-gpu-platform/creator=<creator ARN> (aws eks tag-resource --resource-arn "
        "arn:aws:eks:us-west-2:111122223333:cluster/gpu-prod --tags "
        "eks-gpu-platform/creator=<creator ARN>) before the next `pulumi up`; the program then "
        "keeps that tag"
    ) in caplog.text


UNKNOWN = (
    "cluster.admins: the deploying identity is unknown (sts:GetCallerIdentity through this "
    "component's AWS provider answered nothing; is the provider configured from other "
    "resources' outputs?), so the admin EKS bootstrapped cannot be left out"
)


def test_unknown_identity_warns_in_preview(run_program, monkeypatch, caplog):
    """Review 11-14 S1; fails on the old code (TypeError: `":assumed-role/" in None`)."""
    caplog.set_level(logging.WARNING)
    rec = cluster(run_program, PROD_ADMINS, caller=None, monkeypatch=monkeypatch, preview=True)
    assert UNKNOWN + "; the preview shows an entry for every admin" in caplog.text
    # Every admin's entry, keyed by its name; the ARNs wait for the account (unknown too).
    found = entries(rec)
    assert sorted(found) == ["c-admin-role-GitHubActionsDeploy", "c-admin-role-PlatformAdmin"]
    assert all(isinstance(arn, Unknown) for arn in found.values())
    assert cluster_tags(rec) is None


def test_unknown_identity_is_refused_by_up(run_program, monkeypatch):
    with pytest.raises(SpecError) as err:
        cluster(run_program, PROD_ADMINS, caller=None, monkeypatch=monkeypatch, preview=False)
    assert err.value.lines == [UNKNOWN]


@pytest.mark.parametrize(
    ("admins", "message"),
    [
        (
            ["role/a/Ops", "role/Ops"],
            "ClusterSpec.admins[1]: 'role/Ops' names the same IAM principal as admins[0] "
            "'role/a/Ops' (IAM names are unique per account whatever their path, and not "
            "distinguished by case); list it once",
        ),
        (
            ["user/Alice", "user/alice"],
            "ClusterSpec.admins[1]: 'user/alice' names the same IAM principal as admins[0] "
            "'user/Alice' (IAM names are unique per account whatever their path, and not "
            "distinguished by case); list it once",
        ),
        (
            ["arn:aws:iam::444455556666:role/x/Ops", "arn:aws:iam::444455556666:role/OPS"],
            "ClusterSpec.admins[1]: 'arn:aws:iam::444455556666:role/OPS' names the same IAM "
            "principal as admins[0] 'arn:aws:iam::444455556666:role/x/Ops' (IAM names are unique "
            "per account whatever their path, and not distinguished by case); list it once",
        ),
    ],
    ids=["path", "case", "arn-path-and-case"],
)
def test_duplicate_principals_are_refused_by_the_spec(admins, message):
    """Review 11-14 S3; fails on the old code, which compared strings exactly (`role/a/Ops`
    and `role/Ops` both became the key `role-Ops`: a duplicate URN)."""
    with pytest.raises(SpecError) as err:
        ClusterSpec(name="gpu-prod", admins=tuple(admins))
    assert str(err.value) == message


def test_short_form_and_arn_in_the_deploying_account_are_refused(run_program, monkeypatch):
    """Same principal, different keys (`role-Ops`, `111122223333-role-Ops`): a 409 on the old
    code. Only the component knows the account, so it refuses before registering anything."""
    with pytest.raises(SpecError) as err:
        cluster(
            run_program,
            ["role/Ops", "arn:aws:iam::111122223333:role/ops"],
            monkeypatch=monkeypatch,
        )
    assert err.value.lines == [
        "cluster.admins[1]: 'arn:aws:iam::111122223333:role/ops' names the same IAM principal "
        "as admins[0] 'role/Ops' (a short form is in the deploying account 111122223333); "
        "list it once"
    ]


def test_same_name_in_another_account_is_another_principal(run_program, monkeypatch):
    rec = cluster(
        run_program, ["role/Ops", "arn:aws:iam::444455556666:role/Ops"], monkeypatch=monkeypatch
    )
    assert entries(rec) == {
        "c-admin-role-Ops": "arn:aws:iam::111122223333:role/Ops",
        "c-admin-444455556666-role-Ops": "arn:aws:iam::444455556666:role/Ops",
    }


def test_duplicate_admins_pairs():
    admins = ["role/Ops", "user/Ops", "arn:aws:iam::111122223333:role/a/OPS", 7, "role/b/ops"]
    assert duplicate_admins(admins) == [(0, 4)]
    assert duplicate_admins(admins, "111122223333") == [(0, 2), (0, 4)]
    assert duplicate_admins(admins, "999988887777") == [(0, 4)]


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        (
            "invoke of aws:eks/getCluster:getCluster failed: invoking "
            "aws:eks/getCluster:getCluster: 1 error occurred:\n\t* reading EKS Cluster "
            "(gpu-prod): couldn't find resource\n\n",
            True,
        ),
        (
            "invoke of aws:eks/getCluster:getCluster failed: reading EKS Cluster (gpu-prod): "
            "operation error EKS: DescribeCluster, StatusCode: 403, AccessDeniedException",
            False,
        ),
        ("invoke of aws:eks/getCluster:getCluster failed: couldn't find resource", False),
    ],
    ids=["not-found", "access-denied", "not-the-data-source"],
)
def test_cluster_missing(text, missing):
    assert cluster_missing(Exception(text)) is missing


def test_get_cluster_asks_for_the_cluster_by_name(run_program, monkeypatch):
    rec = cluster(run_program, ["role/PlatformAdmin"], monkeypatch=monkeypatch)
    assert [a for t, a in rec.calls if t == "aws:eks/getCluster:getCluster"] == [
        {"name": "gpu-prod"}
    ]


def test_no_admins_no_lookups(run_program):
    rec = cluster(run_program, [])
    assert not [t for t, _ in rec.calls if t == "aws:eks/getCluster:getCluster"]
    assert cluster_tags(rec) is None


def test_deployer_outside_the_admins_is_warned(run_program, monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    rec = cluster(
        run_program,
        ["role/PlatformAdmin"],
        caller="user/bob",
        monkeypatch=monkeypatch,
        existing_tags={CREATOR_TAG: CI},
    )
    assert entries(rec) == {"c-admin-role-PlatformAdmin": ADMIN}
    assert (
        "the deploying identity arn:aws:iam::111122223333:user/bob neither created cluster "
        f"gpu-prod ({CI}) nor is in cluster.admins: unless an access entry made elsewhere lets "
        "it in, EKS refuses its Kubernetes steps (Unauthorized)"
    ) in caplog.text


def test_deployer_in_the_admins_is_not_warned(run_program, monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    cluster(
        run_program,
        PROD_ADMINS,
        caller="assumed-role/PlatformAdmin/alice",
        monkeypatch=monkeypatch,
        existing_tags={CREATOR_TAG: CI},
    )
    assert caplog.text == ""


def test_creator_tag_that_is_not_a_principal_is_warned(run_program, monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    rec = cluster(
        run_program,
        PROD_ADMINS,
        caller="role/PlatformAdmin",
        monkeypatch=monkeypatch,
        existing_tags={CREATOR_TAG: "ci"},
    )
    assert entries(rec) == {
        "c-admin-role-PlatformAdmin": ADMIN,
        "c-admin-role-GitHubActionsDeploy": CI,
    }
    assert (
        f"cluster gpu-prod: its tag {CREATOR_TAG}=ci is not an IAM role or user ARN, so no admin "
        "is recognised as its creator; set it to the creator's role ARN"
    ) in caplog.text
