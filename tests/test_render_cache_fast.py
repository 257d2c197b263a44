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
