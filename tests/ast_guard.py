"""A guard for CPython gh-106905 (issue 23, point 8e: the occasional pytest crash
``SystemError: AST constructor recursion depth mismatch``).

Root cause: before 3.11.8 and 3.12.2 the AST constructor (``PyAST_mod2obj``, behind
``ast.parse``) kept its recursion counter in the ast module's global state. A cyclic GC pass
inside the constructor runs finalizers; a finalizer that formats a traceback (asyncio's
``Future.__del__`` logs "exception was never retrieved" with one) calls ``ast.parse`` again,
because Python 3.11's ``traceback`` module parses each source segment for its ``^^^`` carets
(Lib/traceback.py ``_extract_caret_anchors_from_line_segment``); the nested call resets the
shared counter and the outer one fails its final check. A finalizer that lets another thread
run its own ``ast.parse`` does the same. pytest calls ``ast.parse`` to rewrite every test
module's asserts (``_pytest/assertion/rewrite.py`` ``_rewrite_test``) and to format each failure
(``_pytest/_code/source.py`` ``getstatementrange_ast``), over whole test modules: many
allocations, so GC passes, in the very runs that have failures. Fixed upstream by
python/cpython#113035 (a counter per call), backported to 3.12 (#113472, in 3.12.2) and 3.11
(#113476, in 3.11.8). ``tests/test_ast_guard.py`` reproduces it on an affected interpreter.

The workaround, for affected interpreters only (``tests/conftest.py``): no cyclic GC while any
``ast.parse`` runs, so no finalizer runs inside the constructor. A counter under a lock turns GC
back on only when the last concurrent parse ends, and only if it was on before the first.
"""

from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Callable
from typing import Any


def affected(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> bool:
    """Whether ``version`` has gh-106905: 3.11.0-3.11.7 and 3.12.0-3.12.1 (the backports'
    releases; 3.10 and earlier do not track the depth, 3.13 has the fix)."""
    return (3, 11, 0) <= version < (3, 11, 8) or (3, 12, 0) <= version < (3, 12, 2)


class _Guard:
    def __init__(self, parse: Callable[..., Any]) -> None:
        self.parse = parse
        self.lock = threading.Lock()
        self.active = 0
        self.was_enabled = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            if self.active == 0:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.active += 1
        try:
            return self.parse(*args, **kwargs)
        finally:
            with self.lock:
                self.active -= 1
                if self.active == 0 and self.was_enabled:
                    gc.enable()


def install() -> bool:
    """Wrap ``ast.parse`` (callers look it up on the module at call time: pytest, traceback)
    once; True when the guard is in place."""
    if not isinstance(ast.parse, _Guard):
        ast.parse = _Guard(ast.parse)  # type: ignore[assignment]
    return True
