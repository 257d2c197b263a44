"""``make plan`` survives the stale worktree an interrupted run leaves (issue 23, point 8d).

The old recipe started with ``rm -rf build/plan/<stack>``: a worktree left registered by a run
killed mid-way then had no folder, and ``git worktree add`` refused the path ("is a missing but
already registered worktree") until someone ran ``git worktree prune``. The test builds that
state in a throwaway clone and runs the real target there, with the repository's interpreter."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv"

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("make") is None or not (REPO / ".git").exists(),
    reason="needs git, make and a git checkout",
)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def test_plan_runs_over_a_stale_worktree(tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", "--shared", "--no-checkout", str(REPO), str(clone))
    git(clone, "checkout", "--quiet", "--detach", git(REPO, "rev-parse", "HEAD").strip())
    # Uncommitted changes of the tree under test are part of what it plans.
    shutil.copy(REPO / "Makefile", clone / "Makefile")
    stale = clone / "build" / "plan" / "dev" / "worktree"
    # Registered, then its folder gone: no checkout needed for that (the recipe's own worktree
    # is checked out in full).
    git(clone, "worktree", "add", "--quiet", "--no-checkout", "--detach", str(stale), "HEAD")
    shutil.rmtree(clone / "build")  # what the old recipe's `rm -rf` did to it
    assert "prunable" in git(clone, "worktree", "list")
    # Never pip into the repository's virtualenv from the clone (its editable install would
    # follow the clone): a stand-in VENV whose stamp is newer than the clone's requirements,
    # and PY, the interpreter every recipe line runs, set to the real one.
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".render-installed").touch()
    # Not the outer make's settings (under `make test`, MAKEFLAGS and MAKELEVEL are set).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    run = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "plan",
            "BASE=HEAD",
            f"VENV={venv}",
            f"PY={VENV / 'bin' / 'python'}",
        ],
        env=env,
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    # The output ends with the new render's: the plan's path, then what `pulumi up` would
    # refuse, if anything (issue 28, point 11); the base render's console is kept apart.
    lines = run.stdout.splitlines()
    after = lines[lines.index("plan: build/plan/dev/new/plan.md") + 1 :]
    if after:
        assert after[0] == ""
        assert after[1].startswith("`pulumi up` refuses this stack: ")
        assert after[2:] and all(line.startswith("  - ") for line in after[2:])
    assert "Rendered " in (clone / "build/plan/dev/base.txt").read_text()
    assert (clone / "build/plan/dev/new/plan.md").is_file()
    # Nothing left registered: the next plan starts clean too.
    assert git(clone, "worktree", "list").count("\n") == 1
