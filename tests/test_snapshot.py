"""Replacement safety: the shipped stacks' URNs and replacement-forcing inputs are pinned."""

import json
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest

from eks_gpu_platform.offline import snapshot as snap

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted(p.name.split(".")[1] for p in REPO.glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stack_matches_its_snapshot(stack, render_stack):
    committed = json.loads(snap.snapshot_path(REPO, stack).read_text())
    problems = snap.compare(committed, snap.snapshot(render_stack(stack)))
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("stack", STACKS)
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
