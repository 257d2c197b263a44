"""tests/render_cache.py: a result is shared while nothing it may read has changed, and
computed afresh when a test has patched a mock's class attribute, a module-level name of the
package or an environment variable (a stale render would make a test pass or fail for the
wrong stack)."""

from __future__ import annotations

import itertools

from render_cache import cached, cli_renders

from eks_gpu_platform.cluster import addon_versions
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline import render as render_cli

_KEYS = itertools.count()


def counting(read):
    """``(compute, runs)``: ``compute()`` returns ``(read(), its run number)``."""
    runs: list[int] = []

    def compute():
        runs.append(len(runs))
        return read(), runs[-1]

    return compute, runs


def test_the_same_key_is_computed_once():
    key = ("test_render_cache", next(_KEYS))
    compute, runs = counting(lambda: "value")
    first = cached(key, compute)
    assert cached(key, compute) is first
    assert runs == [0]


def test_a_patched_mock_class_attribute_computes_afresh(monkeypatch):
    """``caller`` is MockInvokes's: set on RecordingMocks, it shadows it (a new name there)."""
    key = ("test_render_cache", next(_KEYS))
    compute, _ = counting(lambda: mocks.RecordingMocks.caller)
    assert cached(key, compute) == ("user/offline-render", 0)
    monkeypatch.setattr(mocks.RecordingMocks, "caller", "assumed-role/Other/ci")
    assert cached(key, compute) == ("assumed-role/Other/ci", 1)
    monkeypatch.undo()
    assert cached(key, compute) == ("user/offline-render", 2)
    assert cached(key, compute) == ("user/offline-render", 2)


def test_a_patched_module_name_computes_afresh(monkeypatch):
    key = ("test_render_cache", next(_KEYS))
    compute, _ = counting(lambda: addon_versions.MOST_RECENT)
    assert cached(key, compute) == (True, 0)
    monkeypatch.setattr(addon_versions, "MOST_RECENT", False)
    assert cached(key, compute) == (False, 1)


def test_a_changed_environment_variable_computes_afresh(monkeypatch):
    monkeypatch.delenv("RENDER_CACHE_TEST", raising=False)
    key = ("test_render_cache", next(_KEYS))
    compute, runs = counting(lambda: None)
    cached(key, compute)
    monkeypatch.setenv("RENDER_CACHE_TEST", "1")
    cached(key, compute)
    assert runs == [0, 1]


def test_the_command_lines_render_replaced_by_shared_render_is_no_change():
    """cli_renders() sets ``offline.render.render`` to shared_render: results stay shared."""
    key = ("test_render_cache", next(_KEYS))
    compute, runs = counting(lambda: None)
    cached(key, compute)
    with cli_renders():
        assert render_cli.render is not mocks.run
        cached(key, compute)
    assert runs == [0]
