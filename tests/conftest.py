"""Shared fixtures: the repository path, cached offline renders, and fresh mock runs.

Nothing here is autouse: each test asks for what it needs. Every ``run_program`` call builds
fresh mocks and a fresh monitor (``eks_gpu_platform.offline.mocks.run`` resets Pulumi's
settings before and after), so no state leaks from one program to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.render import load_stack_file, render

REPO = Path(__file__).resolve().parents[1]
PROJECT = "eks-gpu-platform"
STACK = "test"
REGION = "us-west-2"
PARTITION = "aws"
ACCOUNT_ID = mocks.PLACEHOLDER_ACCOUNT_ID

RunProgram = Callable[..., mocks.Recording]


def run_program(
    program: Callable[[], Any],
    *,
    config: Mapping[str, Any] | None = None,
    project: str = PROJECT,
    stack: str = STACK,
    region: str = REGION,
    partition: str = PARTITION,
    account_id: str = ACCOUNT_ID,
    secret_keys: list[str] | None = None,
) -> mocks.Recording:
    """Run ``program`` under fresh recording mocks with this suite's defaults."""
    return mocks.run(
        program,
        project=project,
        stack=stack,
        config=dict(config or {}),
        region=region,
        partition=partition,
        account_id=account_id,
        secret_keys=secret_keys,
    )


def one(recording: mocks.Recording, typ: str, name: str) -> mocks.Registration:
    """The single resource of type ``typ`` named ``name`` (names repeat across types)."""
    matches = [r for r in recording.resources if r.type == typ and r.name == name]
    assert len(matches) == 1, f"{len(matches)} resources of type {typ} named {name!r}"
    return matches[0]


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


@pytest.fixture(scope="session")
def render_stack() -> Callable[[str], mocks.Recording]:
    """``render_stack(name)``: the stack's in-process offline render, run once per session."""
    cache: dict[str, mocks.Recording] = {}

    def get(name: str = "dev") -> mocks.Recording:
        if name not in cache:
            cache[name] = render(REPO, load_stack_file(REPO, name, None))
        return cache[name]

    return get
