"""CEL programs compiled once per test process.

Parsing (lark) is most of the cost of evaluating a CEL expression with cel-python, and the
suite's admission-policy tests evaluate the same few expressions thousands of times. A runner
is reusable: ``InterpretedRunner.evaluate`` builds a fresh ``Evaluator`` and activation on every
call, and the interpreter never changes the parse tree (cel-python 0.5.0, ``celpy/__init__.py``
``InterpretedRunner``; ``celpy/evaluation.py`` ``Evaluator``, a ``lark`` ``Interpreter``: only
the ``Transpiler`` of ``CompiledRunner``, not used here, annotates the tree).
"""

from __future__ import annotations

import functools

import celpy


@functools.cache
def environment() -> celpy.Environment:
    """A plain ``celpy.Environment()``, built on first use, not at import (collection): the
    first one builds cel-python's lark parser, 0.3 s that a test worker running no CEL test
    never pays (cel-python 0.5.0 ``celpy/celparser.py`` 105-110: ``CELParser.CEL_PARSER``, a
    class attribute built by the first ``CELParser()``, which ``Environment.__init__`` makes).
    One environment serves every module: it holds no functions (a ``program`` gets those)."""
    return celpy.Environment()


@functools.cache
def program(expression: str) -> celpy.Runner:
    """The runner of ``expression`` in a plain ``celpy.Environment()`` (no extra functions)."""
    return environment().program(environment().compile(expression))
