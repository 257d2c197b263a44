"""The user's stacks are theirs (issue 23, point 1): editing them and running ``make snapshot``
keeps ``make test`` green.

Exact expectations live on the fixture stacks (tests/fixtures/stacks, ``stack_files``); the
project root's ``Pulumi.<stack>.yaml`` files get invariants only, in the tests whose ids start
with ``user-`` (``stack_files.user_id``): they render, the policy pack passes, their snapshot
holds, the capacity invariants hold, the destroy order and the component contracts hold.

The exercise below runs on a copy of the project whose stacks are the fixture stacks (so it does
not depend on what the user's stacks hold today): dev gets another VPC CIDR and public access
CIDR, a new pool and queue, a renamed pool; a new ``Pulumi.staging.yaml`` appears; the snapshot
command (``make snapshot``) records them, and each edited stack renders through the command line.
On the old suite the same edits failed 7 tests, 6 of them still after ``make snapshot`` (issue 23).

Every ``user-`` test on an edited copy is CI's part, not the suite's (issue 33, point 6): the
suite ran them here in a nested ``pytest -k user-`` (18 s of CPU, a tenth of the suite's), and
``.ci/run`` runs the whole ``make test`` on a copy whose root dev stack ``.ci/edit_dev_stack.py``
edits (another VPC CIDR, a new GPU pool and a new top-level queue routed to it, a renamed pool),
after ``make snapshot`` (docs/testing.md, "Your stacks and the fixture stacks").
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pytest
import yaml
from render_cache import cli_renders
from stack_files import FIXTURE_STACKS, REPO, USER_STACKS, fixture_stack_path, user_id

from eks_gpu_platform.offline.render import main as render_main
from eks_gpu_platform.offline.snapshot import main as snapshot_main

PREFIX = "eks-gpu-platform:"
# What the copy leaves out: virtualenvs, caches and outputs (none is an input of a test).
IGNORED = shutil.ignore_patterns(
    ".git", ".venv*", "build", "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache", ".bin"
)


@pytest.mark.parametrize("stack", USER_STACKS, ids=user_id)
def test_user_stack_renders_through_the_cli(stack, tmp_path):
    """``make render STACK=<stack>``: exit 0 (valid configuration, no mandatory policy
    violation), no traceback."""
    out, err = io.StringIO(), io.StringIO()
    # The recording is the session's (``render_user_stack``'s): the command line still
    # validates, writes every file and runs the policy pack.
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), cli_renders():
        code = render_main(["--stack", stack, "--project-dir", str(REPO), "--out", str(tmp_path)])
    assert code == 0, err.getvalue()
    assert "Traceback" not in err.getvalue()


def edit_dev(config: dict) -> None:
    """The issue's edits: the CIDRs, one more pool and queue, a renamed pool."""
    cluster = config[f"{PREFIX}cluster"]
    cluster["publicAccessCidrs"] = ["52.10.20.0/24"]
    config[f"{PREFIX}vpc"]["cidr"] = "10.42.0.0/16"
    pools = config[f"{PREFIX}nodePools"]
    for pool in pools:
        if pool["name"] == "notebooks":
            pool["name"] = "notebooks-l4"
    pools.insert(
        -1, {"name": "train-h100", "kind": "gpu", "gpus": ["h100"], "capacityTypes": ["on-demand"]}
    )
    queues = config[f"{PREFIX}scheduler"]["queues"]
    for queue in queues:
        if queue.get("nodePools") == ["notebooks"]:
            queue["nodePools"] = ["notebooks-l4"]
        if queue["name"] == "research":
            queue["gpu"] = {"quota": 10, "limit": 14, "overQuotaWeight": 1}
    queues.append(
        {
            "name": "research-train",
            "parent": "research",
            "gpu": {"quota": 2, "limit": 8, "overQuotaWeight": 1},
            "cpu": {"quota": 8, "limit": 64, "overQuotaWeight": 1},
            "memory": {"quota": 32, "limit": 256, "overQuotaWeight": 1},
            "nodePools": ["train-h100"],
        }
    )


def test_editing_and_adding_stacks_then_make_snapshot_records_and_renders_them(tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(REPO, copy, ignore=IGNORED, symlinks=True)
    for path in copy.glob("Pulumi.*.yaml"):
        path.unlink()
    shutil.rmtree(copy / "snapshots")
    for stack in FIXTURE_STACKS:
        shutil.copy(fixture_stack_path(stack), copy / f"Pulumi.{stack}.yaml")
    dev = yaml.safe_load((copy / "Pulumi.dev.yaml").read_text())
    edit_dev(dev["config"])
    (copy / "Pulumi.dev.yaml").write_text(yaml.safe_dump(dev, sort_keys=False))
    staging = yaml.safe_load((copy / "Pulumi.dev.yaml").read_text())
    staging["config"][f"{PREFIX}cluster"]["name"] = "gpu-staging"
    staging["config"][f"{PREFIX}tags"]["environment"] = "staging"
    (copy / "Pulumi.staging.yaml").write_text(yaml.safe_dump(staging, sort_keys=False))

    # Through the shared renders (tests/render_cache.py): the copy's program is the repository's,
    # so its prod renders as the fixture prod stack, and each edited stack's command-line render
    # below reuses the recording the snapshot command made of it.
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), cli_renders():
        code = snapshot_main(["--project-dir", str(copy)])
    assert code == 0, err.getvalue()
    assert [line.split(" (")[0] for line in out.getvalue().splitlines()] == [
        f"wrote snapshots/{s}.json" for s in ("dev", "prod", "staging")
    ]
    # The dev snapshot records the edits: the new and the renamed pool's NodePools, none under
    # the old name, the new queue (names: <prefix>-pool-<pool>-pool, <prefix>-queue-<queue>).
    urns = json.loads((copy / "snapshots/dev.json").read_text())["urns"]
    nodepools = [u for u in urns if ":karpenter.sh/v1:NodePool::" in u]
    queues = [u for u in urns if ":scheduling.run.ai/v2:Queue::" in u]
    for pool, count in (("train-h100", 1), ("notebooks-l4", 1), ("notebooks", 0)):
        assert len([u for u in nodepools if u.endswith(f"-pool-{pool}-pool")]) == count, pool
    assert len([u for u in queues if u.endswith("-queue-research-train")]) == 1, queues

    # Each edited stack renders through the command line (``make render STACK=<stack>``).
    for stack in ("dev", "staging"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), cli_renders():
            code = render_main(
                ["--stack", stack, "--project-dir", str(copy), "--out", str(tmp_path / stack)]
            )
        assert code == 0, (stack, err.getvalue())
        assert "Traceback" not in err.getvalue(), stack
