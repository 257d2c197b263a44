"""The test suite's render cache: each offline render (and each shared mock run) computed once
per test process for the same inputs.

A plain helper module, imported by name (``from render_cache import shared_render``) from
tests/conftest.py, tests/capacity_cases.py and the test files that render: not through
``conftest``, which names a different module depending on which conftest.py was imported last
(tests/policies/conftest.py in a full run).

What a cached result depends on besides its key (the program's code, the mocks, the
environment) must not have changed since it was computed: ``cached`` keeps, with each result,
every module-level name and class attribute of ``eks_gpu_platform`` and the environment as they
were then, and computes afresh when a test has patched one of them since
(``monkeypatch.setattr(mocks.RecordingMocks, ...)``, ``monkeypatch.setenv``, a version table
replaced). Callers must not change the result they get: it is shared by every later caller.
"""

from __future__ import annotations

import contextlib
import copy
import json
import operator
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.render import StackFile, render, reusing_validated, validate

T = TypeVar("T")
PACKAGE = "eks_gpu_platform"
_NAMES = " names"  # not an attribute name: the set of a class's own attribute names
# What the render command line puts in SpecError.__init__ while the program runs
# (offline/run.py ``spec_errors_made``): it records the errors made, and changes no result.
_RECORDER = "spec_errors_made.<locals>.recording_init"

# key -> (result, what it was computed under: ``_state()``).
_CACHE: dict[tuple, tuple[Any, dict[tuple[str, str], Any]]] = {}
# key -> the namespaces ``_state`` reads, as they were once the result was kept: ``_same``.
_SEEN: dict[tuple, list[tuple[Any, tuple, tuple]]] = {}


def _state() -> dict[tuple[str, str], Any]:
    """Every module-level name and class attribute of the package, and the environment."""
    # PYTEST_CURRENT_TEST changes with every test; pytest sets it, the programs do not read it.
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    state: dict[tuple[str, str], Any] = {("os.environ", ""): environ}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == PACKAGE or name.startswith(PACKAGE + ".")):
            continue
        for attr, value in list(vars(module).items()):
            if getattr(value, "__module__", None) == __name__:
                # shared_render put in the command line's place (``offline.render.render``,
                # which the render itself does not call), as tests do to share its renders.
                continue
            state[(name, attr)] = value
            if isinstance(value, type) and value.__module__ == name:
                for cls in value.__mro__:
                    if cls.__module__.startswith(PACKAGE):
                        where = f"{name}.{attr}.{cls.__name__}"
                        # An attribute set on a subclass shadows its base's: the names too.
                        # (Not ``__slotnames__``: copyreg's cache, set by the first pickle or
                        # deep copy of an instance.)
                        state[(where, _NAMES)] = frozenset(vars(cls)) - {"__slotnames__"}
                        for cattr, cvalue in list(vars(cls).items()):
                            if getattr(cvalue, "__qualname__", None) != _RECORDER:
                                state[(where, cattr)] = cvalue
    return state


def _unchanged(then: dict[tuple[str, str], Any]) -> bool:
    """Whether everything recorded in ``then`` is still the same object (names first imported
    since are new, not changed)."""
    now = _state()
    if now[("os.environ", "")] != then[("os.environ", "")]:
        return False
    return all(
        now.get(key, value) == value if key[1] == _NAMES else now.get(key, value) is value
        for key, value in then.items()
        if key[0] != "os.environ"
    )


def _namespaces() -> list[tuple[Any, tuple, tuple]]:
    """Each namespace ``_state`` reads (the package's modules and their classes), with its names
    and values as they are now."""
    out = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == PACKAGE or name.startswith(PACKAGE + ".")):
            continue
        names = vars(module)
        out.append((names, tuple(names), tuple(names.values())))
        for value in list(names.values()):
            if isinstance(value, type) and value.__module__ == name:
                for cls in value.__mro__:
                    if cls.__module__.startswith(PACKAGE):
                        attrs = vars(cls)
                        out.append((attrs, tuple(attrs), tuple(attrs.values())))
    return out


def _same(seen: list[tuple[Any, tuple, tuple]], environ: dict[str, str]) -> bool:
    """Whether every namespace in ``seen`` still has the same names bound to the same objects,
    and the environment is ``environ``: then ``_unchanged`` holds too (it compares a subset of
    these names, by identity), found without building ``_state()`` again. False says nothing:
    ``_unchanged`` decides then (a name added since, the command line's recorder)."""
    if {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} != environ:
        return False
    return all(
        (tuple(names) == keys and all(map(operator.is_, names.values(), values)))
        or _same_but_ours(names, keys, values)
        for names, keys, values in seen
    )


def _ours(value: Any) -> bool:
    """A name ``_state`` leaves out: this module's (``cli_renders`` puts ``shared_render`` in
    the command line's place)."""
    return getattr(value, "__module__", None) == __name__


def _same_but_ours(names: dict, keys: tuple, values: tuple) -> bool:
    """Whether the module namespace ``names`` still binds the names ``keys`` to ``values``
    where neither the value then nor the one now is this module's (which ``_state`` leaves out
    of a module's names, not of a class's), and binds no other name: inside and outside
    ``cli_renders`` the same namespaces."""
    if not isinstance(names, dict) or len(names) != len(keys):  # a class's: a mappingproxy
        return False
    return all(
        name in names and (names[name] is value or _ours(names[name]) or _ours(value))
        for name, value in zip(keys, values, strict=True)
    )


def cached(key: tuple, compute: Callable[[], T]) -> T:
    """``compute()``, once per process for ``key`` while nothing it may read has been patched;
    computed afresh when something has (and kept with the state it was computed under, which
    a later call must find again to share it)."""
    if key in _CACHE:
        result, then = _CACHE[key]
        if _same(_SEEN[key], then[("os.environ", "")]):
            return result
        if _unchanged(then):
            _SEEN[key] = _namespaces()  # e.g. a name added since: found fast again next time
            return result
    then = _state()
    before = _namespaces()
    result = compute()
    # Nothing rebound while it ran (found fast), or nothing ``then`` holds (the full check).
    if _same(before, then[("os.environ", "")]) or _unchanged(then):
        _CACHE[key] = (result, then)
        _SEEN[key] = _namespaces()  # a superset of ``then``'s names, all still the same
    return result


def cached_copy(key: tuple, compute: Callable[[], T]) -> T:
    """``cached(key, compute)``, deep-copied: for callers that may change what they get (a test
    that pops an input, say) without changing it for the next caller."""
    return copy.deepcopy(cached(key, compute))


# Renders by what decides them: the program and project files and the stack's configuration.
# A project copied into tmp_path (the snapshot tests) renders from the same inputs as the
# repository, and the render is deterministic (the snapshot tests compare it byte for byte).
# The key holds no other file of the project: the programs rendered here read none (a program
# that imports or reads more from its folder must not come through here).
def shared_render(
    project_dir: Path, stack: StackFile, *, validated: bool = False
) -> mocks.Recording:
    """``offline.render.render``, computed once per test process for the same inputs; callers
    must not change the recording they get."""
    project_dir = Path(project_dir)
    key = (
        (project_dir / "Pulumi.yaml").read_bytes(),
        (project_dir / "__main__.py").read_bytes(),
        stack.name,
        stack.project,
        json.dumps(stack.config),  # key order kept: the program may record it
        tuple(stack.secret_keys),
        # Not ``validated``: it only skips validating the configuration again before the run
        # (the command line validates first), which a render of the same one passed already.
    )
    return cached(key, lambda: _render(project_dir, stack, validated))


def _render(project_dir: Path, stack: StackFile, validated: bool) -> mocks.Recording:
    """``render(project_dir, stack, validated=validated)``; not validated, as the command line
    renders (offline/render.py ``main``): the configuration validated once, and the program's
    load of it given that one (``reusing_validated``) instead of loading it a second time."""
    if validated:
        return render(project_dir, stack, validated=True)
    with reusing_validated(stack, validate(stack)):
        return render(project_dir, stack, validated=True)


@contextlib.contextmanager
def cli_renders() -> Iterator[None]:
    """While the block runs, the render command line (``offline.render.main``) renders through
    ``shared_render``: for its runs over this project (whose program reads no other file of the
    project directory than the key holds)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("eks_gpu_platform.offline.render.render", shared_render)
        yield
