"""CEL programs compiled once per test process, evaluated by a faster walk of the same tree.

Parsing (lark) is most of the cost of evaluating a CEL expression with cel-python, and the
suite's admission-policy tests evaluate the same few expressions thousands of times. A runner
is reusable: ``InterpretedRunner.evaluate`` builds a fresh ``Evaluator`` and activation on every
call, and the interpreter never changes the parse tree (cel-python 0.5.0, ``celpy/__init__.py``
``InterpretedRunner``; ``celpy/evaluation.py`` ``Evaluator``, a ``lark`` ``Interpreter``: only
the ``Transpiler`` of ``CompiledRunner``, not used here, annotates the tree).

Evaluating is then most of the cost, and more than half of the interpreter's steps are nodes
that only hand on their single child's value: every literal or name sits under a chain
``expr > conditionalor > conditionaland > relation > addition > multiplication > unary >
member``. :class:`Runner` evaluates with :class:`Evaluator`, cel-python's own with that one
step shortened: it goes straight down such a chain to the first node that does something, and
visits that node as cel-python does. The value is the one cel-python computes (each of those
methods, with one child, is ``values = self.visit_children(tree); return values[0]``:
cel-python 0.5.0 ``celpy/evaluation.py`` ``Evaluator.expr`` L1689-1692,
``conditionalor`` L1729-1732, ``conditionaland`` L1763-1766, ``relation`` L1813-1816,
``addition`` L1874-1877, ``multiplication`` L1938-1941, ``unary`` L2009-2013 and ``member``
L2203-2204 for any child count, which the grammar makes one; ``visit_children`` differs from
lark 1.3.1's ``Interpreter.visit_children`` only by the ``level`` it counts for trace logging,
``evaluation.py`` L1526-1531, ``lark/visitors.py`` L433-435). Nothing else changes: the tree,
the activation, the functions, every other node's method, the macros' nested evaluators
(``sub_evaluator``, L1471-1478, made of this class too).
"""

from __future__ import annotations

import functools

import celpy
import lark
from celpy.evaluation import Evaluator as _CelpyEvaluator

# The node types whose method, with a single child, returns that child's value (see above).
PASS_THROUGH = frozenset(
    {
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
    }
)


class Evaluator(_CelpyEvaluator):
    """cel-python's ``Evaluator``, going straight through single-child pass-through nodes."""

    def _visit_tree(self, tree: lark.Tree):
        while tree.data in PASS_THROUGH and len(tree.children) == 1:
            child = tree.children[0]
            if not isinstance(child, lark.Tree):
                return child  # lark's visit_children hands a token on as it is
            tree = child
        return super()._visit_tree(tree)

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return Evaluator(ast, activation=self.activation)


class Runner(celpy.InterpretedRunner):
    """``InterpretedRunner`` evaluating with :class:`Evaluator` (``celpy/__init__.py``
    ``InterpretedRunner.evaluate`` L159-165, with the class swapped)."""

    def evaluate(self, context):
        return Evaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


@functools.cache
def environment() -> celpy.Environment:
    """A ``celpy.Environment`` with :class:`Runner`, built on first use, not at import
    (collection): the first one builds cel-python's lark parser, 0.3 s that a test worker
    running no CEL test never pays (cel-python 0.5.0 ``celpy/celparser.py`` 105-110:
    ``CELParser.CEL_PARSER``, a class attribute built by the first ``CELParser()``, which
    ``Environment.__init__`` makes; :class:`Runner` parses to the same ``lark.Tree`` as
    ``InterpretedRunner``, its ``tree_node_class``). One environment serves every module: it
    holds no functions (a ``program`` gets those)."""
    return celpy.Environment(runner_class=Runner)


@functools.cache
def program(expression: str) -> celpy.Runner:
    """The runner of ``expression`` in :func:`environment` (no extra functions)."""
    return environment().program(environment().compile(expression))
