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
def rendered_stack_resources() -> Callable[[str], list[Any]]:
    """``fn(stack)``: the shipped stack's recorded resources (rendered once per session)."""
    from eks_gpu_platform.offline.render import load_stack_file, render

    cache: dict[str, list[Any]] = {}

    def resources(stack: str) -> list[Any]:
        if stack not in cache:
            recording = render(POLICY_REPO_ROOT, load_stack_file(POLICY_REPO_ROOT, stack, None))
            cache[stack] = list(recording.resources)
        return cache[stack]

    return resources
