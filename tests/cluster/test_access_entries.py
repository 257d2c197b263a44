"""Every access entry the stack declares follows one design (issue 21, point 2, merged with issue
22, points 1 and 10): the viewers' and the break-glass role's entries are explicit, tagged with
this stack's cluster tag and checked on an existing cluster like the admins'; and a principal
has one entry (EKS: a second CreateAccessEntry fails with 409 ResourceInUseException), so
admins, viewers and the break-glass role name different principals, also when one is a short
form and the other the full ARN in the deploying account."""

import pytest
from addon_pins import ADDON_VERSIONS

from eks_gpu_platform.cluster.access import CLUSTER_TAG
from eks_gpu_platform.cluster.args import EksClusterArgs
from eks_gpu_platform.cluster.component import EksCluster
from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.offline import mocks

ACCOUNT = "111122223333"
SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
ENTRY = "aws:eks/accessEntry:AccessEntry"
DEPLOYER = "arn:aws:iam::111122223333:role/GitHubActionsDeploy"
PREVIEW = "arn:aws:iam::111122223333:role/GitHubActionsPreview"
BREAK_GLASS = "arn:aws:iam::111122223333:role/EKSBreakGlass"


def cluster(run_program, monkeypatch, *, existing_entries=None, **spec):
    monkeypatch.setattr(mocks.RecordingMocks, "caller", "assumed-role/GitHubActionsDeploy/gha")
    if existing_entries is not None:
        monkeypatch.setattr(mocks.RecordingMocks, "existing_cluster_tags", {})
        monkeypatch.setattr(mocks.RecordingMocks, "existing_access_entries", existing_entries)

    def program():
        EksCluster(
            "c",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu-prod", addon_versions=ADDON_VERSIONS, **spec),
                vpc_id="vpc-0123456789abcdef0",
                private_subnet_ids=SUBNETS,
            ),
        )

    return run_program(program, account_id=ACCOUNT)


FULL = {
    "admins": ("role/GitHubActionsDeploy",),
    "viewers": ("role/GitHubActionsPreview",),
    "break_glass_role": "role/EKSBreakGlass",
}


def test_viewer_and_break_glass_entries_are_tagged_like_the_admins(run_program, monkeypatch):
    """Fails on the security branch alone (viewer and break-glass entries untagged)."""
    rec = cluster(run_program, monkeypatch, **FULL)
    entries = {r.name: (r.inputs["principalArn"], r.inputs["tags"]) for r in rec.of_type(ENTRY)}
    tag = {CLUSTER_TAG: "gpu-prod"}
    assert entries == {
        "c-admin-role-GitHubActionsDeploy": (DEPLOYER, tag),
        "c-viewer-role-GitHubActionsPreview": (PREVIEW, tag),
        "c-break-glass": (BREAK_GLASS, tag),
    }


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        (
            {"admins": (DEPLOYER,), "viewers": ("role/GitHubActionsDeploy",)},
            "cluster.viewers[0]: 'role/GitHubActionsDeploy' names the same IAM principal as "
            f"admins[0] '{DEPLOYER}'",
        ),
        (
            {"admins": (DEPLOYER,), "break_glass_role": "role/GitHubActionsDeploy"},
            "cluster.breakGlassRole: 'role/GitHubActionsDeploy' names the same IAM principal as "
            f"admins[0] '{DEPLOYER}'",
        ),
        (
            {
                "admins": (DEPLOYER,),
                "viewers": (BREAK_GLASS,),
                "break_glass_role": "role/x/EKSBreakGlass",
            },
            "cluster.breakGlassRole: 'role/x/EKSBreakGlass' names the same IAM principal as "
            f"viewers[0] '{BREAK_GLASS}'",
        ),
    ],
    ids=["viewer-is-admin", "break-glass-is-admin", "break-glass-is-viewer"],
)
def test_one_principal_one_entry_across_the_keys_in_the_deploying_account(
    run_program, monkeypatch, spec, line
):
    """A short form and the full ARN in the deploying account pass ClusterSpec (the account is
    unknown there) and are refused once it is known, before any entry is declared; fails on the
    merged branches without this check (two entries for one principal: 409 at `up`)."""
    ClusterSpec(name="gpu-prod", **spec)  # not decidable without the account
    with pytest.raises(SpecError) as err:
        cluster(run_program, monkeypatch, **spec)
    assert err.value.lines == [
        line + " (a short form is in the deploying account 111122223333); a principal has one "
        "access entry, list it under one key"
    ]


def test_an_untagged_viewer_or_break_glass_entry_of_an_existing_cluster_is_refused(
    run_program, monkeypatch
):
    """Fails on the security branch alone (no lookup: a second entry, 409 at `up`)."""
    with pytest.raises(SpecError) as err:
        cluster(
            run_program,
            monkeypatch,
            existing_entries={DEPLOYER: {CLUSTER_TAG: "gpu-prod"}, PREVIEW: {}, BREAK_GLASS: {}},
            **FULL,
        )
    assert [line.split(":", 1)[0] for line in err.value.lines] == [
        "cluster.viewers[0]",
        "cluster.breakGlassRole",
    ]
    assert (
        "If `pulumi stack --show-urns` lists the AccessEntry c-viewer-role-" in (err.value.lines[0])
    )
    assert (
        "--cluster-name gpu-prod --principal-arn arn:aws:iam::111122223333:role/EKSBreakGlass`"
    ) in err.value.lines[1]


def test_tagged_viewer_and_break_glass_entries_of_an_existing_cluster_are_kept(
    run_program, monkeypatch
):
    tag = {CLUSTER_TAG: "gpu-prod"}
    rec = cluster(
        run_program,
        monkeypatch,
        existing_entries={DEPLOYER: tag, PREVIEW: tag, BREAK_GLASS: tag},
        **FULL,
    )
    assert [a["principalArn"] for t, a in rec.calls if t.endswith("getAccessEntry")] == [
        DEPLOYER,
        PREVIEW,
        BREAK_GLASS,
    ]
    assert len(rec.of_type(ENTRY)) == 3
