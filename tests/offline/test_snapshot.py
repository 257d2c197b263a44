"""Replacement safety: every stack's URNs and replacement-forcing inputs are pinned.

The stacks are the user's ``Pulumi.<stack>.yaml`` files (``stacks.discover``): a new stack file
is checked as soon as it exists, and fails with one line naming ``make snapshot`` until its
snapshot is recorded. How ``make snapshot`` treats an added or deleted stack is tested on a copy
of the project holding the fixture stacks (tests/fixtures/stacks), never on the repository.
"""

import json
import shutil
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest
import yaml
from stack_files import FIXTURE_STACKS, USER_STACKS, fixture_stack_path, user_id

from eks_gpu_platform.offline import snapshot as snap
from eks_gpu_platform.offline.stacks import discover

REPO = Path(__file__).resolve().parents[2]
STACKS = USER_STACKS


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_stack_matches_its_snapshot(stack, render_user_stack):
    problems = snap.check(REPO, stack, snap.snapshot(render_user_stack(stack)))
    assert problems == [], "\n".join(problems)


def test_every_snapshot_belongs_to_a_stack():
    assert [snap.orphan_message(name) for name in snap.orphans(REPO, STACKS)] == []


@pytest.mark.parametrize("stack", FIXTURE_STACKS)
def test_snapshot_covers_every_stateful_kind(stack, render_stack):
    kinds = {
        urn.split("::")[2].rsplit("$", 1)[-1]
        for urn in snap.snapshot(render_stack(stack))["replaceInputs"]
    }
    assert {
        "eks:index:Cluster",
        "aws:kms/key:Key",
        "aws:ec2/vpc:Vpc",
        "aws:ec2/subnet:Subnet",
        "aws:sqs/queue:Queue",
        "aws:iam/role:Role",
    } <= kinds


# --- a stack added by dropping in its file (in a copy of the project, never the repo) ----------


# The copy's stacks before `staging` is added: the fixture stacks.
BASE = list(FIXTURE_STACKS)
WITH_STAGING = sorted([*BASE, "staging"])


@pytest.fixture
def project_with_staging(tmp_path: Path, monkeypatch, shared_render, capsys) -> Path:
    """The repo's program with the fixture stacks and their snapshots (recorded by
    ``snapshot.main``), plus ``Pulumi.staging.yaml``: a copy of dev with its own cluster name
    (``cp Pulumi.dev.yaml Pulumi.staging.yaml``, then edit).

    ``snapshot.main`` renders through the session's shared renders: the copies render from the
    same inputs as the fixture stacks, which other tests render already."""
    monkeypatch.setattr("eks_gpu_platform.offline.render.render", shared_render)
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, tmp_path / name)
    for stack in BASE:
        shutil.copy(fixture_stack_path(stack), tmp_path / f"Pulumi.{stack}.yaml")
    assert snap.main(["--project-dir", str(tmp_path)]) == 0
    (tmp_path / "recorded").mkdir()
    for stack in BASE:
        shutil.copy(snap.snapshot_path(tmp_path, stack), tmp_path / "recorded" / f"{stack}.json")
    capsys.readouterr()
    document = yaml.safe_load(fixture_stack_path("dev").read_text())
    document["config"]["eks-gpu-platform:cluster"]["name"] = "gpu-staging"
    (tmp_path / "Pulumi.staging.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return tmp_path


MISSING = "snapshots/staging.json is missing: run `make snapshot` to record it"


def test_a_new_stack_without_snapshot_names_make_snapshot(project_with_staging, capsys):
    assert discover(project_with_staging) == WITH_STAGING
    assert snap.check(project_with_staging, "staging", {"urns": []}) == [MISSING]
    assert snap.main(["--check", "--project-dir", str(project_with_staging), "staging"]) == 1
    assert capsys.readouterr().err == f"staging: {MISSING}\n"


def test_make_snapshot_records_the_new_stack_then_every_check_passes(project_with_staging, capsys):
    assert snap.main(["--project-dir", str(project_with_staging)]) == 0
    written = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in written] == [
        f"wrote snapshots/{s}.json" for s in WITH_STAGING
    ]
    recorded = json.loads((project_with_staging / "snapshots" / "staging.json").read_text())
    assert (
        "urn:pulumi:staging::eks-gpu-platform::eks-gpu-platform:index:GpuPlatform::platform"
        in (recorded["urns"])
    )
    # The other stacks' snapshots are rewritten unchanged.
    for stack in BASE:
        assert (project_with_staging / "snapshots" / f"{stack}.json").read_text() == (
            project_with_staging / "recorded" / f"{stack}.json"
        ).read_text()
    assert snap.main(["--check", "--project-dir", str(project_with_staging)]) == 0
    assert capsys.readouterr().err == ""
    assert discover(REPO) == STACKS  # the repository itself is untouched


def test_a_deleted_stack_leaves_an_orphan_snapshot_until_make_snapshot(
    project_with_staging, capsys
):
    shutil.copy(
        project_with_staging / "snapshots" / "dev.json",
        project_with_staging / "snapshots" / "retired.json",
    )
    assert snap.orphans(project_with_staging, discover(project_with_staging)) == ["retired"]
    assert snap.main(["--check", "--project-dir", str(project_with_staging), "dev"]) == 0
    assert snap.main(["--project-dir", str(project_with_staging), "dev"]) == 0
    assert (project_with_staging / "snapshots" / "retired.json").exists()
    capsys.readouterr()
    # Only a run over every stack judges (and removes) the snapshots no stack file owns.
    (project_with_staging / "Pulumi.staging.yaml").unlink()
    (project_with_staging / "snapshots" / "prod.json").unlink()
    assert snap.main(["--check", "--project-dir", str(project_with_staging)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "prod: snapshots/prod.json is missing: run `make snapshot` to record it",
        "snapshots/retired.json belongs to no stack (Pulumi.retired.yaml is gone): run "
        "`make snapshot` to remove it",
    ]


def test_an_unknown_stack_is_one_line_and_exit_2(project_with_staging, capsys):
    assert snap.main(["--check", "--project-dir", str(project_with_staging), "stagin"]) == 2
    assert capsys.readouterr().err == (
        f"error: stack file {project_with_staging / 'Pulumi.stagin.yaml'} does not exist\n"
    )


class Holder(pulumi.ComponentResource):
    def __init__(self, name, queue_name, child_name, aliases=(), opts=None):
        super().__init__("test:index:Holder", name, None, opts)
        aws.sqs.Queue(
            child_name,
            name=queue_name,
            opts=pulumi.ResourceOptions(parent=self, aliases=list(aliases)),
        )
        self.register_outputs({})


def stack_of(run_program, **kwargs):
    return snap.snapshot(run_program(lambda: Holder("holder", **kwargs)))


OLD = "urn:pulumi:test::eks-gpu-platform::test:index:Holder$aws:sqs/queue:Queue::holder-queue"


def test_engine_urns_carry_the_whole_parent_type_chain(run_program):
    state = stack_of(run_program, queue_name="q", child_name="holder-queue")
    assert state["urns"] == [OLD, "urn:pulumi:test::eks-gpu-platform::test:index:Holder::holder"]
    assert state["replaceInputs"] == {OLD: {"name": "q"}}
    assert state["aliases"] == {}


def test_unchanged_program_is_safe(run_program):
    before = stack_of(run_program, queue_name="q", child_name="holder-queue")
    after = stack_of(run_program, queue_name="q", child_name="holder-queue")
    assert snap.compare(before, after) == []


def test_rename_without_alias_is_reported(run_program):
    before = stack_of(run_program, queue_name="q", child_name="holder-queue")
    after = stack_of(run_program, queue_name="q", child_name="holder-interruption")
    assert snap.compare(before, after) == [
        f"{OLD}: no longer registered (renamed or re-parented?) - Pulumi would delete it; add "
        "`aliases=[...]` with the old name/parent, or run `make snapshot` if the deletion is "
        "intended"
    ]


def test_rename_with_alias_is_safe_and_still_checks_its_inputs(run_program):
    before = stack_of(run_program, queue_name="q", child_name="holder-queue")
    renamed = stack_of(
        run_program,
        queue_name="q",
        child_name="holder-interruption",
        aliases=[pulumi.Alias(name="holder-queue")],
    )
    assert renamed["aliases"] == {
        OLD.replace("holder-queue", "holder-interruption"): [OLD],
    }
    assert snap.compare(before, renamed) == []
    replaced = stack_of(
        run_program,
        queue_name="q2",
        child_name="holder-interruption",
        aliases=[pulumi.Alias(name="holder-queue")],
    )
    assert snap.compare(before, replaced) == [
        f'{OLD}: name changes from "q" to "q2" - this replaces the resource; run '
        "`make snapshot` if that is intended"
    ]


def test_replacement_forcing_input_change_is_reported(run_program):
    before = stack_of(run_program, queue_name="q", child_name="holder-queue")
    after = stack_of(run_program, queue_name="other", child_name="holder-queue")
    assert snap.compare(before, after) == [
        f'{OLD}: name changes from "q" to "other" - this replaces the resource; run '
        "`make snapshot` if that is intended"
    ]


URN = "urn:pulumi:prod::eks-gpu-platform::GpuPlatform$EksCluster$eks:index:Cluster::c-eks"


@pytest.mark.parametrize(
    ("old", "new", "line", "refused"),
    [
        ("1.35", "1.35", None, None),
        (
            "1.35",
            "1.36",
            f"{URN}: kubernetesVersion upgrades from 1.35 to 1.36 - follow the upgrade guide "
            "(README), then run `make snapshot` to record it",
            False,
        ),
        (
            "1.36",
            "1.35",
            f"{URN}: kubernetesVersion goes down from 1.36 to 1.35 - EKS cannot downgrade a "
            "cluster; keep 1.36",
            True,
        ),
        (
            "1.33",
            "1.35",
            f"{URN}: kubernetesVersion jumps from 1.33 to 1.35 - EKS upgrades one minor at a "
            "time; upgrade to 1.34 first",
            True,
        ),
    ],
)
def test_kubernetes_version_against_the_recorded_one(old, new, line, refused):
    """Issue 11, item 5: the last recorded state is the committed snapshot."""
    from eks_gpu_platform.offline import snapshot as snap_module
    from eks_gpu_platform.offline.snapshot import version_problems

    def snap(version):
        return {"urns": [URN], "replaceInputs": {}, "kubernetesVersions": {URN: version}}

    found = version_problems(snap(old), snap(new))
    assert found == ([] if line is None else [(line, refused)])
    if line is not None:
        assert line in snap_module.compare(snap(old), snap(new))


def test_shipped_snapshots_record_the_kubernetes_version():
    for stack in STACKS:
        recorded = json.loads((REPO / "snapshots" / f"{stack}.json").read_text())
        assert list(recorded["kubernetesVersions"].values()) == ["1.36"], stack
