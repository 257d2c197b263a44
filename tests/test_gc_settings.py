"""tests/conftest.py's collector settings for a test process (issue 33, point 6): its
thresholds, what collection left alive frozen before the first test runs, and the collector
off while the tests run."""

from __future__ import annotations

import gc


def test_the_collector_runs_with_the_suites_thresholds():
    # Not imported from conftest: which module that name is depends on the run (render_cache.py).
    assert gc.get_threshold() == (10_000, 10, 10)


# Allocated while the tests are collected (this module's import).
ALLOCATED_AT_COLLECTION = [[]]


def test_what_collection_left_alive_is_frozen():
    # In the permanent generation: tracked, but in none of the three the collector passes over
    # (one walk of what is not frozen; this module's function, from collection too).
    assert gc.is_tracked(ALLOCATED_AT_COLLECTION)
    collected_objects = (ALLOCATED_AT_COLLECTION, test_what_collection_left_alive_is_frozen)
    assert not any(o is c for o in gc.get_objects() for c in collected_objects)


def test_the_collector_is_off_while_the_tests_run():
    assert not gc.isenabled()


def test_after_the_session_what_the_tests_left_is_frozen_not_collected(request, monkeypatch):
    [conftest] = [
        p
        for p in request.config.pluginmanager.get_plugins()
        if str(getattr(p, "__file__", "")).endswith("tests/conftest.py")
    ]
    collected: list[tuple] = []
    monkeypatch.setattr(gc, "collect", lambda *args: collected.append(args) or 0)
    left = [[], {}]  # a tracked object allocated after collection, in a cycle
    left[0].append(left)
    conftest.pytest_unconfigure(request.config)
    # Frozen: in none of the three generations (each holds only what was allocated since the
    # freeze, so the walks are short; gc.get_freeze_count() would walk the whole session's
    # heap). gc.get_objects(generation=) lists one generation, gc.freeze moves all three to the
    # permanent one (https://docs.python.org/3.11/library/gc.html#gc.get_objects, #gc.freeze).
    assert gc.is_tracked(left) and collected == []
    for generation in (0, 1, 2):
        assert not any(o is left for o in gc.get_objects(generation=generation)), generation
