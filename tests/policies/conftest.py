"""Fixtures for the policy-pack tests (``eks_gpu_platform.policies``): cached renders.

Baseline builders live in ``policy_baselines`` (importable from these tests); fixture names here
avoid the suite-wide ones in ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

POLICY_REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def policy_repo_root() -> Path:
    return POLICY_REPO_ROOT


@pytest.fixture(scope="session")
def rendered_stack_resources(render_stack) -> Callable[[str], list[Any]]:
    """``fn(stack)``: the fixture stack's recorded resources (tests/fixtures/stacks), from the
    suite's one render of each stack per session (``render_stack`` in tests/conftest.py)."""

    def resources(stack: str) -> list[Any]:
        return list(render_stack(stack).resources)

    return resources


@pytest.fixture(scope="session")
def rendered_user_stack_resources(render_user_stack) -> Callable[[str], list[Any]]:
    """``fn(stack)``: the user's stack's recorded resources (``render_user_stack``)."""

    def resources(stack: str) -> list[Any]:
        return list(render_user_stack(stack).resources)

    return resources
