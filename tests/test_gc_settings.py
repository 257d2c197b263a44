"""tests/conftest.py's collector settings for a test process (issue 33, point 6): its
thresholds, what collection left alive frozen before the first test runs, and the collector
off while the tests run."""

from __future__ import annotations

import gc


def test_the_collector_runs_with_the_suites_thresholds():
    # Not imported from conftest: which module that name is depends on the run (render_cache.py).
    assert gc.get_threshold() == (10_000, 10, 10)


def test_what_collection_left_alive_is_frozen():
    # The SDKs' modules alone are far more than this many objects.
    assert gc.get_freeze_count() > 100_000


def test_the_collector_is_off_while_the_tests_run():
    assert not gc.isenabled()
