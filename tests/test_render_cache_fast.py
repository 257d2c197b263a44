"""tests/render_cache.py's fast check (``_same``): a kept result is found again without building
the whole state, and the fast check never shares a result the full check (``_unchanged``) would
compute afresh: it compares the same names by identity, never by equality."""

from __future__ import annotations

import itertools

from render_cache import _SEEN, cached

from eks_gpu_platform.cluster import addon_versions
from eks_gpu_platform.offline import mocks

_KEYS = itertools.count()


def counting():
    """``(compute, runs)``: ``compute()`` returns its run number."""
    runs: list[int] = []

    def compute():
        runs.append(len(runs))
        return runs[-1]

    return compute, runs


def test_an_equal_but_new_object_computes_afresh(monkeypatch):
    """Replacing a module-level name by an equal copy is a change (the full check's identity):
    a fast check by equality would share the old result."""
    key = ("test_render_cache_fast", next(_KEYS))
    compute, runs = counting()
    cached(key, compute)
    tag = addon_versions.ADDON_MINOR_TAG
    copied = "".join(list(tag))
    assert copied == tag and copied is not tag
    monkeypatch.setattr(addon_versions, "ADDON_MINOR_TAG", copied)
    cached(key, compute)
    assert runs == [0, 1]


def test_a_name_added_to_a_class_since_keeps_the_result_and_is_fast_again(monkeypatch):
    """A name the full check does not compare (copyreg's ``__slotnames__``, set by the first
    deep copy of an instance) makes the fast check fail once; the result is still shared and
    the namespaces are taken again, so the next check is fast."""
    key = ("test_render_cache_fast", next(_KEYS))
    compute, runs = counting()
    monkeypatch.delattr(mocks.Registration, "__slotnames__", raising=False)
    cached(key, compute)
    before = _SEEN[key]
    monkeypatch.setattr(mocks.Registration, "__slotnames__", [], raising=False)
    assert cached(key, compute) == 0
    assert _SEEN[key] is not before
    again = _SEEN[key]
    assert cached(key, compute) == 0
    assert _SEEN[key] is again  # found by the fast check: not taken again
    assert runs == [0]


def test_inside_and_outside_cli_renders_the_fast_check_finds_the_result(monkeypatch):
    """``cli_renders`` puts shared_render (this suite's, which the full check leaves out) in the
    command line's place: the fast check finds a result kept outside it inside it and back,
    without building the whole state (which would take the namespaces again)."""
    import render_cache

    key = ("test_render_cache_fast", next(_KEYS))
    compute, runs = counting()
    cached(key, compute)
    seen = _SEEN[key]

    def no_full_check():
        raise AssertionError("the full state was built")

    monkeypatch.setattr(render_cache, "_state", no_full_check)
    with render_cache.cli_renders():
        assert cached(key, compute) == 0
    assert cached(key, compute) == 0
    assert _SEEN[key] is seen and runs == [0]


def test_a_class_attribute_set_to_shared_render_computes_afresh(monkeypatch):
    """Only a module's names skip this suite's functions (as the full check does); a class
    attribute rebound to one is a change like any other."""
    from render_cache import shared_render

    key = ("test_render_cache_fast", next(_KEYS))
    compute, runs = counting()
    cached(key, compute)
    monkeypatch.setattr(mocks.RecordingMocks, "new_resource", shared_render)
    cached(key, compute)
    assert runs == [0, 1]


def test_a_result_computed_without_a_change_is_kept_without_the_full_check_after(monkeypatch):
    """After computing, the fast check (nothing rebound while it ran) keeps the result: the
    full state is built once, before."""
    import render_cache

    built = []
    state = render_cache._state

    def counted_state():
        built.append(1)
        return state()

    monkeypatch.setattr(render_cache, "_state", counted_state)
    key = ("test_render_cache_fast", next(_KEYS))
    compute, runs = counting()
    cached(key, compute)
    assert cached(key, compute) == 0
    assert (built, runs) == ([1], [0])
