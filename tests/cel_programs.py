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

_ENVIRONMENT = celpy.Environment()


@functools.cache
def program(expression: str) -> celpy.Runner:
    """The runner of ``expression`` in a plain ``celpy.Environment()`` (no extra functions)."""
    return _ENVIRONMENT.program(_ENVIRONMENT.compile(expression))
