"""The two sets of stacks the suite renders (issue 23).

- The *fixture stacks*, ``tests/fixtures/stacks/Pulumi.<stack>.yaml``: frozen copies of the
  shipped dev and prod stacks, rendered as stacks of this project (the root's ``Pulumi.yaml``
  and ``__main__.py``) from their own files, as the render's ``--config-file`` does. Every exact
  expectation about a stack's content is written against them.
- The *user's stacks*, every ``Pulumi.<stack>.yaml`` in the project root (``stacks.discover``):
  theirs to edit, add, rename or delete. They get invariant tests only (they render, the policy
  pack passes, their snapshot holds, the capacity invariants hold), so ``make snapshot`` after an
  edit keeps ``make test`` green.
"""

from __future__ import annotations

from pathlib import Path

from eks_gpu_platform.offline.stackfile import StackFile, load_stack_file
from eks_gpu_platform.offline.stacks import discover

REPO = Path(__file__).resolve().parents[1]
FIXTURE_STACKS_DIR = REPO / "tests" / "fixtures" / "stacks"
FIXTURE_STACKS = discover(FIXTURE_STACKS_DIR)
USER_STACKS = discover(REPO)


def fixture_stack_path(name: str) -> Path:
    """``tests/fixtures/stacks/Pulumi.<name>.yaml``."""
    return FIXTURE_STACKS_DIR / f"Pulumi.{name}.yaml"


def fixture_stack(name: str) -> StackFile:
    """The fixture stack ``name`` as the render loads it (stack name ``name``)."""
    return load_stack_file(REPO, name, fixture_stack_path(name))


def user_stack(name: str) -> StackFile:
    """The user's stack ``name``: the project root's ``Pulumi.<name>.yaml``."""
    return load_stack_file(REPO, name, None)


def user_id(stack: str) -> str:
    """The test id of a user's stack: ``user-<stack>`` (``pytest -k user-`` selects every test
    of the user's stacks; CI's ``.ci/run`` runs them on an edited copy)."""
    return f"user-{stack}"
