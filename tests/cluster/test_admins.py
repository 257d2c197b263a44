"""Cluster admins (issue 21, point 2; issue 11, items 1 and 2): no creator is guessed. A new
cluster is created without EKS's bootstrap admin entry (a transform on pulumi-eks's child
aws:eks/cluster:Cluster) and every admin, the deployer included, gets an entry of its own,
named after its principal, with an alias to the positional name pulumi-eks gave it. On an
existing cluster each admin's entry is looked up (aws:eks/getAccessEntry): an entry without
this stack's tag is refused with the way out."""

import logging

import pytest
from addon_pins import ADDON_VERSIONS
from pulumi.output import Unknown

from eks_gpu_platform.cluster.access import (
    CLUSTER_TAG,
    admin_entry_key,
    cluster_missing,
    duplicate_admins,
    entry_missing,
    is_deployer,
    owned_entry,
    principal_identity,
    without_bootstrap_admin,
)
from eks_gpu_platform.cluster.args import EksClusterArgs
from eks_gpu_platform.cluster.component import EksCluster, bootstrap_admin_off
from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.mock_invokes import InvokeFailed
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
    existing_entries=None,
    preview=None,
    **kw,
):
    """Run an EksCluster; ``existing_tags``: a cluster named gpu-prod exists with these tags
    (None: getCluster finds none); ``existing_entries``: its access entries (principal ARN ->
    tags). ``preview``: run through ``mocks.run`` in that mode."""
    if monkeypatch is not None:
        monkeypatch.setattr(mocks.RecordingMocks, "caller", caller)
        monkeypatch.setattr(mocks.RecordingMocks, "existing_cluster_tags", existing_tags)
        monkeypatch.setattr(mocks.RecordingMocks, "existing_access_entries", existing_entries or {})

    def program():
        EksCluster(
            "c",
            EksClusterArgs(
                spec=ClusterSpec(
                    name="gpu-prod", admins=tuple(admins), addon_versions=ADDON_VERSIONS
                ),
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


def eks_child_access(rec) -> dict | None:
    """The accessConfig of pulumi-eks's child aws:eks/cluster:Cluster, after the transforms."""
    ((typ, name, props),) = rec.remote_children
    assert (typ, name) == ("aws:eks/cluster:Cluster", "c-eks-eksCluster")
    return props.get("accessConfig")


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


def test_every_admin_the_deployer_included_gets_an_entry(run_program, monkeypatch):
    """Issue 21, point 2; fails on the old code, which left out the deployer (the creator EKS
    bootstrapped) and recorded it in a cluster tag."""
    rec = cluster(
        run_program,
        PROD_ADMINS,
        caller="assumed-role/GitHubActionsDeploy/gha-run-42",
        monkeypatch=monkeypatch,
    )
    assert entries(rec) == {
        "c-admin-role-PlatformAdmin": ADMIN,
        "c-admin-role-GitHubActionsDeploy": CI,
    }
    assert cluster_tags(rec) is None
    assert [c[0] for c in rec.calls if c[0] == "aws:iam/getSessionContext:getSessionContext"]


def test_the_bootstrap_admin_entry_is_off(run_program, monkeypatch):
    """Fails on the old code: pulumi-eks's child cluster kept
    bootstrapClusterCreatorAdminPermissions true (no transform)."""
    rec = cluster(run_program, PROD_ADMINS, caller="role/PlatformAdmin", monkeypatch=monkeypatch)
    assert eks_child_access(rec) == {
        "authenticationMode": "API",
        "bootstrapClusterCreatorAdminPermissions": False,
    }


def test_without_admins_the_bootstrap_entry_stays(run_program):
    """No admins listed: no entries, and the creator keeps EKS's bootstrap entry (pulumi-eks's
    default): the only way in, and nothing is guessed."""
    rec = cluster(run_program, [])
    assert entries(rec) == {}
    assert eks_child_access(rec) == {
        "authenticationMode": "API",
        "bootstrapClusterCreatorAdminPermissions": True,
    }


def test_without_bootstrap_admin_keeps_the_rest():
    props = {
        "name": "gpu-prod",
        "accessConfig": {
            "authenticationMode": "API",
            "bootstrapClusterCreatorAdminPermissions": True,
        },
        "version": "1.36",
    }
    assert without_bootstrap_admin(props) == {
        "name": "gpu-prod",
        "accessConfig": {
            "authenticationMode": "API",
            "bootstrapClusterCreatorAdminPermissions": False,
        },
        "version": "1.36",
    }
    # The input is not changed in place.
    assert props["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is True


def test_bootstrap_admin_off_touches_only_the_eks_cluster():
    import pulumi

    def args(typ):
        return pulumi.ResourceTransformArgs(
            custom=True,
            type_=typ,
            name="c-eks-x",
            props={"accessConfig": {"authenticationMode": "API"}},
            opts=pulumi.ResourceOptions(),
        )

    assert bootstrap_admin_off(args("aws:iam/role:Role")) is None
    assert bootstrap_admin_off(args("pulumi:providers:kubernetes")) is None
    result = bootstrap_admin_off(args("aws:eks/cluster:Cluster"))
    assert result.props == {
        "accessConfig": {
            "authenticationMode": "API",
            "bootstrapClusterCreatorAdminPermissions": False,
        }
    }


def test_a_user_deployer_gets_its_entry(run_program, monkeypatch):
    rec = cluster(
        run_program,
        ["user/alice", "arn:aws:iam::444455556666:role/Ops"],
        caller="user/alice",
        monkeypatch=monkeypatch,
    )
    assert entries(rec) == {
        "c-admin-user-alice": "arn:aws:iam::111122223333:user/alice",
        "c-admin-444455556666-role-Ops": "arn:aws:iam::444455556666:role/Ops",
    }


def test_entries_are_keyed_by_principal_not_position(run_program, monkeypatch):
    """Fails on the old code: entries were `admin-<i>`, so removing the first admin moved the
    second one's principal into `admin-0` (a replacement of both)."""
    kw = {"caller": "user/carol", "monkeypatch": monkeypatch}
    before = entries(cluster(run_program, ["role/A", "role/B", "user/carol"], **kw))
    after = entries(cluster(run_program, ["user/carol", "role/B"], **kw))
    assert before == {
        "c-admin-role-A": "arn:aws:iam::111122223333:role/A",
        "c-admin-role-B": "arn:aws:iam::111122223333:role/B",
        "c-admin-user-carol": "arn:aws:iam::111122223333:user/carol",
    }
    assert after == {k: v for k, v in before.items() if k != "c-admin-role-A"}


def test_entry_and_association_inputs(run_program, monkeypatch):
    rec = cluster(
        run_program,
        ["role/PlatformAdmin"],
        caller="role/PlatformAdmin",
        monkeypatch=monkeypatch,
        region="cn-north-1",
        partition="aws-cn",
    )
    (entry,) = rec.of_type(ENTRY)
    (assoc,) = rec.of_type(ASSOCIATION)
    assert entry.inputs == {
        "clusterName": "gpu-prod",
        "principalArn": "arn:aws-cn:iam::111122223333:role/PlatformAdmin",
        "type": "STANDARD",
        # How a later run knows the entry is this stack's (getAccessEntry).
        "tags": {CLUSTER_TAG: "gpu-prod"},
    }
    assert assoc.name == "c-admin-role-PlatformAdmin-cluster-admin"
    assert assoc.parent == entry.urn
    assert assoc.inputs == {
        "clusterName": "gpu-prod",
        "principalArn": "arn:aws-cn:iam::111122223333:role/PlatformAdmin",
        "policyArn": POLICY.replace("arn:aws:", "arn:aws-cn:"),
        "accessScope": {"type": "cluster"},
    }


def test_entries_alias_the_old_positional_children(run_program, monkeypatch):
    """Existing stacks keep their entries: the entry aliases pulumi-eks's `<name>-admin-<i>`
    child of the eks.Cluster (its index in the configured list), and its association follows
    by the engine's inherited child alias (snapshot.alias_urns models it)."""
    rec = cluster(run_program, ["role/A", "role/B"], caller="role/A", monkeypatch=monkeypatch)
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


NOT_LISTED = (
    "cluster.admins: the deploying identity arn:aws:iam::111122223333:user/bob is not listed; "
    "EKS's bootstrap admin entry for the cluster's creator is off (no access is guessed), so "
    "its Kubernetes steps would be refused (Unauthorized); add it to cluster.admins"
)


def test_a_new_cluster_refuses_a_deployer_outside_the_admins(run_program, monkeypatch):
    with pytest.raises(SpecError) as err:
        cluster(run_program, PROD_ADMINS, caller="user/bob", monkeypatch=monkeypatch)
    assert err.value.lines == [NOT_LISTED]


def test_a_preview_as_another_identity_plans_the_same_entries(run_program, monkeypatch, caplog):
    """Review F3e; fails on the old code: a preview run as another identity (a PR role) left
    out another admin and wrote another creator tag than the deploying run."""
    caplog.set_level(logging.WARNING)
    ci = cluster(
        run_program,
        PROD_ADMINS,
        caller="assumed-role/GitHubActionsDeploy/gha",
        monkeypatch=monkeypatch,
        preview=False,
    )
    bob = cluster(
        run_program, PROD_ADMINS, caller="user/bob", monkeypatch=monkeypatch, preview=True
    )
    assert (
        entries(ci)
        == entries(bob)
        == {
            "c-admin-role-PlatformAdmin": ADMIN,
            "c-admin-role-GitHubActionsDeploy": CI,
        }
    )
    assert cluster_tags(ci) == cluster_tags(bob) is None
    assert NOT_LISTED + " (refused by `pulumi up`)" in caplog.text


def untagged(principal: str, index: int, key: str) -> str:
    arn_hex = mocks._hex(principal, 12)
    arn = f"arn:aws:eks:us-west-2:111122223333:access-entry/gpu-prod/role/{arn_hex}"
    return (
        f"cluster.admins[{index}]: {principal} already has an access entry on cluster gpu-prod "
        f"({arn}) without this stack's tag eks-gpu-platform/cluster=gpu-prod, so whether this "
        "stack created it cannot be decided (a second entry fails with 409 "
        "ResourceInUseException). If `pulumi stack --show-urns` lists the AccessEntry "
        f"c-admin-{key}, tag it: `aws eks tag-resource --resource-arn {arn} --tags "
        "eks-gpu-platform/cluster=gpu-prod`. Otherwise (EKS's bootstrap entry for the "
        "cluster's creator, or one made by hand) delete it and the next `pulumi up` creates "
        "the stack's own before any Kubernetes step: `aws eks delete-access-entry "
        f"--cluster-name gpu-prod --principal-arn {principal}`"
    )


def test_an_existing_entry_of_this_stack_is_kept(run_program, monkeypatch):
    """Tagged with this stack's cluster tag: declared again (it is in the state)."""
    rec = cluster(
        run_program,
        PROD_ADMINS,
        caller="role/PlatformAdmin",
        monkeypatch=monkeypatch,
        existing_tags={"team": "ml"},
        existing_entries={ADMIN: {CLUSTER_TAG: "gpu-prod"}, CI: {CLUSTER_TAG: "gpu-prod"}},
    )
    assert entries(rec) == {
        "c-admin-role-PlatformAdmin": ADMIN,
        "c-admin-role-GitHubActionsDeploy": CI,
    }
    assert [a for t, a in rec.calls if t == "aws:eks/getAccessEntry:getAccessEntry"] == [
        {"clusterName": "gpu-prod", "principalArn": ADMIN},
        {"clusterName": "gpu-prod", "principalArn": CI},
    ]


def test_an_entry_the_stack_did_not_create_is_refused(run_program, monkeypatch):
    """Review F3a/F3c; fails on the old code, which trusted the creator tag (or, untagged, the
    deployer) and deleted or duplicated entries. CI created the cluster with the old code (EKS's
    bootstrap entry, untagged); PlatformAdmin's entry is the stack's."""
    with pytest.raises(SpecError) as err:
        cluster(
            run_program,
            PROD_ADMINS,
            caller="role/PlatformAdmin",
            monkeypatch=monkeypatch,
            existing_tags={"eks-gpu-platform/creator": CI},
            existing_entries={ADMIN: {CLUSTER_TAG: "gpu-prod"}, CI: {}},
        )
    assert err.value.lines == [untagged(CI, 1, "role-GitHubActionsDeploy")]


def test_an_entry_removed_out_of_band_is_created_again(run_program, monkeypatch):
    """Review F3b; fails on the old code, which kept skipping the tagged creator whose
    bootstrap entry was removed (every Kubernetes step of CI then failed)."""
    rec = cluster(
        run_program,
        PROD_ADMINS,
        caller="assumed-role/GitHubActionsDeploy/gha",
        monkeypatch=monkeypatch,
        existing_tags={"eks-gpu-platform/creator": CI},
        existing_entries={ADMIN: {CLUSTER_TAG: "gpu-prod"}},
    )
    assert entries(rec) == {
        "c-admin-role-PlatformAdmin": ADMIN,
        "c-admin-role-GitHubActionsDeploy": CI,
    }


def test_an_existing_cluster_refuses_a_deployer_without_access(run_program, monkeypatch):
    with pytest.raises(SpecError) as err:
        cluster(
            run_program,
            ["role/PlatformAdmin"],
            caller="user/bob",
            monkeypatch=monkeypatch,
            existing_tags={},
            existing_entries={ADMIN: {CLUSTER_TAG: "gpu-prod"}},
        )
    assert err.value.lines == [
        "cluster.admins: the deploying identity arn:aws:iam::111122223333:user/bob is not "
        "listed and has no access entry on cluster gpu-prod, so its Kubernetes steps would be "
        "refused (Unauthorized); add it to cluster.admins"
    ]


def test_an_existing_cluster_accepts_a_deployer_with_an_entry_of_its_own(run_program, monkeypatch):
    bob = "arn:aws:iam::111122223333:user/bob"
    rec = cluster(
        run_program,
        ["role/PlatformAdmin"],
        caller="user/bob",
        monkeypatch=monkeypatch,
        existing_tags={},
        existing_entries={ADMIN: {CLUSTER_TAG: "gpu-prod"}, bob: {}},
    )
    assert entries(rec) == {"c-admin-role-PlatformAdmin": ADMIN}


def test_a_failed_entry_lookup_names_the_admin(run_program, monkeypatch):
    def denied(self, scope, cluster_name, principal):
        raise InvokeFailed(
            f"reading EKS Access Entry ({cluster_name}:{principal}): operation error EKS: "
            "DescribeAccessEntry, StatusCode: 403, AccessDeniedException"
        )

    monkeypatch.setattr(mocks.RecordingMocks, "_get_access_entry", denied)
    with pytest.raises(SpecError) as err:
        cluster(
            run_program,
            ["role/PlatformAdmin"],
            caller="role/PlatformAdmin",
            monkeypatch=monkeypatch,
            existing_tags={},
        )
    (line,) = err.value.lines
    assert line.startswith(
        f"cluster.admins[0]: looking up the access entry of {ADMIN} on cluster gpu-prod failed ("
    )
    assert line.endswith(
        "AccessDeniedException); the deploying identity needs eks:DescribeAccessEntry"
    )


@pytest.mark.parametrize(
    ("tags", "owned"),
    [
        ({CLUSTER_TAG: "gpu-prod"}, True),
        ({CLUSTER_TAG: "gpu-dev"}, False),
        ({}, False),
        (None, False),
    ],
)
def test_owned_entry(tags, owned):
    assert owned_entry(tags, "gpu-prod") is owned


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        (
            "invoke of aws:eks/getAccessEntry:getAccessEntry failed: reading EKS Access Entry "
            f"(gpu-prod:{ADMIN}): couldn't find resource",
            True,
        ),
        (
            "invoke of aws:eks/getAccessEntry:getAccessEntry failed: reading EKS Access Entry "
            f"(gpu-prod:{ADMIN}): AccessDeniedException",
            False,
        ),
        ("reading EKS Cluster (gpu-prod): couldn't find resource", False),
    ],
    ids=["not-found", "access-denied", "another-data-source"],
)
def test_entry_missing(text, missing):
    assert entry_missing(Exception(text)) is missing


UNKNOWN = (
    "cluster.admins: the deploying identity is unknown (sts:GetCallerIdentity through this "
    "component's AWS provider answered nothing; is the provider configured from other "
    "resources' outputs?), so whether it is an admin and which admins already have an access "
    "entry cannot be checked"
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
        run_program,
        ["role/Ops", "arn:aws:iam::444455556666:role/Ops"],
        caller="role/Ops",
        monkeypatch=monkeypatch,
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
    rec = cluster(
        run_program, ["role/PlatformAdmin"], caller="role/PlatformAdmin", monkeypatch=monkeypatch
    )
    assert [a for t, a in rec.calls if t == "aws:eks/getCluster:getCluster"] == [
        {"name": "gpu-prod"}
    ]
    # A new cluster: no entry to look up.
    assert not [t for t, _ in rec.calls if t == "aws:eks/getAccessEntry:getAccessEntry"]


def test_no_admins_no_lookups(run_program):
    rec = cluster(run_program, [])
    assert not [t for t, _ in rec.calls if t == "aws:eks/getCluster:getCluster"]
    assert cluster_tags(rec) is None


def test_bootstrap_admin_off_keeps_pulumi_eks_ignore_changes():
    """What keeps an existing cluster from being replaced: the field is ForceNew
    (terraform-provider-aws internal/service/eks/cluster.go ``access_config``), and only
    pulumi-eks's ``ignoreChanges: ["accessConfig.bootstrapClusterCreatorAdminPermissions",
    "bootstrapSelfManagedAddons"]`` (pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts L748-755,
    HEAD 7bf0c1b) makes the engine keep the recorded true. A transform's options replace the
    child's (pulumi/pulumi pkg/resource/deploy/source_eval.go ``wrapTransformCallback``:
    ``newOpts = response.Options``), so they must come back with that list intact."""
    import pulumi

    ignore = ["accessConfig.bootstrapClusterCreatorAdminPermissions", "bootstrapSelfManagedAddons"]
    result = bootstrap_admin_off(
        pulumi.ResourceTransformArgs(
            custom=True,
            type_="aws:eks/cluster:Cluster",
            name="c-eks-eksCluster",
            props={"accessConfig": {"authenticationMode": "API"}},
            opts=pulumi.ResourceOptions(ignore_changes=list(ignore), protect=True),
        )
    )
    assert result.opts.ignore_changes == ignore
    assert result.opts.protect is True
