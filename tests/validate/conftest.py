"""The fixture stacks' renders on disk (``make render``'s output for
``tests/fixtures/stacks/Pulumi.<stack>.yaml``, written once per session into a temporary folder
by the offline render itself), for the loader, the CLI and the deployment phase's tests. Never
the project root's ``Pulumi.<stack>.yaml``: those are the user's (tests/stack_files.py)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from render_cache import cli_renders

from eks_gpu_platform.offline.render import main as render_main

REPO = Path(__file__).resolve().parents[2]
FIXTURE_STACKS = REPO / "tests" / "fixtures" / "stacks"


@pytest.fixture(scope="session")
def render_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``render_dir(stack)``: the folder ``make render`` writes for the fixture stack ``stack``
    (rendered under the stack name ``stack``, as ``--config-file`` does)."""
    made: dict[str, Path] = {}

    def get(stack: str = "dev") -> Path:
        if stack not in made:
            out = tmp_path_factory.mktemp("render") / stack
            with contextlib.redirect_stdout(io.StringIO()), cli_renders():
                code = render_main(
                    [
                        "--project-dir",
                        str(REPO),
                        "--stack",
                        stack,
                        "--config-file",
                        str(FIXTURE_STACKS / f"Pulumi.{stack}.yaml"),
                        "--out",
                        str(out),
                    ]
                )
            assert code == 0
            made[stack] = out
        return made[stack]

    return get


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The RBAC coverage test (test_rbac.py) runs after every other test of this process, so the
    validation's API-call journal (fake_kube.JOURNAL) holds every phase test's calls."""
    last = [
        i for i in items if i.name == "test_every_call_the_validation_made_is_allowed_by_its_role"
    ]
    items[:] = [i for i in items if i not in last] + last
