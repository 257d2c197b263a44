"""Shared fixtures: the repository path, cached offline renders, and fresh mock runs.

Two sets of stacks (issue 23): the *fixture stacks* ``tests/fixtures/stacks/Pulumi.<stack>.yaml``
(frozen copies of the shipped dev and prod stacks) carry every exact expectation
(``fixture_stack``, ``render_stack``); the *user's stacks*, every ``Pulumi.<stack>.yaml`` in the
project root (``USER_STACKS``, discovered), get invariant tests only (``user_stack``,
``render_user_stack``; tests/test_user_stacks.py), so editing, adding or renaming them and
running ``make snapshot`` keeps ``make test`` green.

Nothing here is autouse: each test asks for what it needs. Every ``run_program`` call builds
fresh mocks and a fresh monitor (``eks_gpu_platform.offline.mocks.run`` resets Pulumi's
settings before and after), so no state leaks from one program to the next.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ast_guard import affected, install

# The cyclic collector's thresholds for a test process (issue 33, point 6), set before the
# imports below (the SDK's modules are most of the heap). With the defaults, (700, 10, 10), a
# worker spent a third of its CPU time in the collector, most of it in ~50 full passes over a
# heap that only grows (the SDK's modules and types, the renders the session caches): a
# generation-0 pass every 10,000 net allocations instead of 700 makes every older pass 14 times
# rarer. They hold while the tests are collected; the tests then run with the collector off
# (``pytest_collection_finish``), as the render's command line does (offline/__main__.py). The
# thresholds are gc.set_threshold's (https://docs.python.org/3.11/library/gc.html#gc.set_threshold).
GC_THRESHOLDS = (10_000, 10, 10)
gc.set_threshold(*GC_THRESHOLDS)

# The SDKs, the package and the render cache are imported where a fixture first needs them, not
# here: pytest-xdist's controller loads this file too, before it starts the workers, and runs no
# test (the import cost half a second of every run's start).
if TYPE_CHECKING:
    from eks_gpu_platform.offline import mocks

    RunProgram = Callable[..., mocks.Recording]

REPO = Path(__file__).resolve().parents[1]
PROJECT = "eks-gpu-platform"
STACK = "test"
REGION = "us-west-2"
PARTITION = "aws"

# CPython gh-106905 (3.11.0-3.11.7, 3.12.0-3.12.1): tests/ast_guard.py says why.
AST_GUARD = affected() and install()


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """What the tests left alive is frozen before pytest's own collector passes, and no pass
    traverses it again: the process ends without collecting it, as the render's command line
    does (offline/__main__.py).

    pytest collects after the session (_pytest/unraisableexception.py ``pytest_unconfigure``
    and ``cleanup``, ``gc_collect_harder``, one pass each on CPython), to report what the
    finalizers of collected objects raise. With the collector off during the tests
    (``pytest_collection_finish``), the first such pass would have every cycle of the
    session to free: 2 to 3.6 s per worker, after its last test, where the other worker
    cannot take over any work. What it would finalize are the SDK's futures of programs that
    failed on purpose (a SpecError in an Output, the tests of bad configuration), each
    logging "Future exception was never retrieved" outside pytest's log capture
    (asyncio/futures.py ``Future.__del__``): hundreds of tracebacks after a green run. Frozen
    (https://docs.python.org/3.11/library/gc.html#gc.freeze), they are neither traversed nor
    finalized; what a test frees by reference counting is finalized during the test, and
    pytest reports what that raises against the test, as before. What a finalizer of a cycle
    would raise (pytest reports it as a warning, not a failure: ``filterwarnings`` in
    pyproject.toml turns no warning into an error) is not reported: no cycle of a test's is
    collected, during the test or after."""
    gc.freeze()


def pytest_report_header(config: pytest.Config) -> str | None:
    if AST_GUARD:
        return (
            f"Python {sys.version.split()[0]} has CPython gh-106905 (AST constructor recursion "
            "depth mismatch; fixed in 3.11.8 and 3.12.2): ast.parse runs without cyclic GC "
            "(tests/ast_guard.py)"
        )
    return None


def run_program(
    program: Callable[[], Any],
    *,
    config: Mapping[str, Any] | None = None,
    project: str = PROJECT,
    stack: str = STACK,
    region: str = REGION,
    partition: str = PARTITION,
    account_id: str | None = None,
    secret_keys: list[str] | None = None,
) -> mocks.Recording:
    """Run ``program`` under fresh recording mocks with this suite's defaults (the mocks'
    placeholder account unless ``account_id``)."""
    from eks_gpu_platform.offline import mocks

    return mocks.run(
        program,
        project=project,
        stack=stack,
        config=dict(config or {}),
        region=region,
        partition=partition,
        account_id=account_id or mocks.PLACEHOLDER_ACCOUNT_ID,
        secret_keys=secret_keys,
    )


def type_and_name(recording: mocks.Recording) -> list[tuple[str, str]]:
    """Every registration as ``(type, name)``, sorted: compare against an exact expected list."""
    return sorted((r.type, r.name) for r in recording.resources)


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository root (holds ``Pulumi.yaml`` and the stack files)."""
    return REPO


@pytest.fixture(name="run_program")
def run_program_fixture() -> RunProgram:
    """``run_program(program, config=..., region=..., partition=...)`` -> ``Recording``."""
    return run_program


@pytest.fixture(name="shared_render", scope="session")
def shared_render_fixture() -> Callable[..., mocks.Recording]:
    """``shared_render(project_dir, stack_file)``: ``offline.render.render``, shared
    (tests/render_cache.py)."""
    from render_cache import shared_render

    return shared_render


@pytest.fixture(scope="session")
def render_stack() -> Callable[[str], mocks.Recording]:
    """``render_stack(name)``: the fixture stack's in-process offline render, run once per
    session (exact expectations)."""
    from render_cache import shared_render
    from stack_files import fixture_stack

    def get(name: str = "dev") -> mocks.Recording:
        return shared_render(REPO, fixture_stack(name))

    return get


@pytest.fixture(scope="session")
def render_user_stack() -> Callable[[str], mocks.Recording]:
    """``render_user_stack(name)``: the user's stack's offline render, once per session
    (invariants only)."""
    from render_cache import shared_render
    from stack_files import user_stack

    def get(name: str) -> mocks.Recording:
        return shared_render(REPO, user_stack(name))

    return get


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the tests are collected, everything the process holds (the SDKs' modules and types,
    the package, the test modules and their parametrizations) moves to the collector's
    permanent generation (``gc.freeze``), and the cyclic collector stops for the tests
    (``gc.disable``), as it does for the render's command line (offline/__main__.py).

    Even at the thresholds above, a worker spent about 5 s of its CPU time in the collector
    (``gc.callbacks``, whole suite, 2 workers: 450 generation-0 passes of 4 ms, 40
    generation-1 passes of 50 ms, 3 full passes of 350 ms): a pass traverses every reference
    of what the tests allocate (programs' futures and tasks, renders), which reference
    counting frees anyway except for cycles. The cycles the tests leave are not collected
    (``pytest_unconfigure``); a worker peaks at about 700 MB instead of 400 MB. Nothing frozen
    is garbage the tests need collected: it is what collection left alive; a frozen object is
    still freed when its last reference goes
    (https://docs.python.org/3.11/library/gc.html#gc.freeze, #gc.disable)."""
    gc.freeze()
    gc.disable()
