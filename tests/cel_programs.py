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
the functions, every other node's method, the macros' nested evaluators (``sub_evaluator``,
L1471-1478, made of this class too). It looks each node's method up by the rule's name as a
plain ``str`` (``tree.data`` is a lark ``Token``, whose Python ``__eq__`` every dictionary
probe of ``getattr`` would call): the same method.

Of what remains, more than half was cel-python subscripting ``typing`` generics at run time:
its evaluator methods pass a type to ``typing.cast`` on every call, e.g.
``cast(Tuple[List[Result], Result], self.visit_children(tree))`` in ``relation`` (L1833-1835),
and each such subscript hashes ``Result``, a large ``Union``, through typing's cache. ``cast``
returns its second argument unchanged whatever the first is (Python 3.11 ``typing.cast``), so
:class:`Evaluator` runs cel-python's own methods, the same code objects, with the module
globals they read changed in one way only: the ``typing`` generics they subscript
(:data:`TYPING_GENERICS`) are a stand-in that subscripting returns at once (see
:func:`_rebound`); :class:`Activation` does the same for ``Union`` in ``resolve_variable``.
``tests/test_cel_programs.py`` checks, from cel-python's source, that those names are only
ever used inside the first argument of ``cast`` in the methods taken over
(:data:`FAST_METHODS`), compares values and errors with cel-python's own ``Evaluator``, and
the suite's every evaluation was compared once when this was written (4,791 evaluations:
identical values, identical errors).
"""

from __future__ import annotations

import functools
import sys
import types

import celpy
import celpy.evaluation
import lark
from celpy.evaluation import Activation as _CelpyActivation
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


# ``tree.data`` (a lark ``Token``, one object per grammar rule) -> (its method passes a single
# child's value on, the rule's name as an interned ``str``).
_RULES: dict[str, tuple[bool, str]] = {}


def _rule(data: str) -> tuple[bool, str]:
    rule = _RULES.get(data)  # found by identity: no Token.__eq__ call
    if rule is None:
        rule = _RULES[data] = (data in PASS_THROUGH, sys.intern(str(data)))
    return rule


# The typing generics cel-python's evaluator methods subscript, only to pass to ``cast``.
TYPING_GENERICS = ("Callable", "Iterable", "List", "Tuple")


class _AnyGeneric:
    """Stands for a typing generic in a ``cast`` type: any subscript of it is itself."""

    def __getitem__(self, _parameters):
        return self


_ANY_GENERIC = _AnyGeneric()


def _rebound(function: types.FunctionType, replaced: dict[str, object]) -> types.FunctionType:
    """cel-python's ``function`` (the same code, defaults and closure) reading its module's
    globals with the names in ``replaced`` bound to other objects."""
    rebound = types.FunctionType(
        function.__code__,
        dict(function.__globals__) | replaced,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    rebound.__kwdefaults__ = function.__kwdefaults__
    rebound.__qualname__ = function.__qualname__
    rebound.__doc__ = function.__doc__
    return rebound


def code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names ``code``, or a function nested in it, reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


# cel-python 0.5.0's evaluator methods that subscript a typing generic (``celpy/evaluation.py``:
# ``function_eval`` L1533-1578, ``method_eval`` L1580-1634, ``conditionalor`` L1721-1753,
# ``conditionaland`` L1755-1787, ``relation`` L1789-1854, ``addition`` L1856-1917,
# ``multiplication`` L1919-1989, ``unary`` L1991-2051, ``build_macro_eval`` L2053-2092,
# ``build_ss_macro_eval`` L2094-2136, ``build_reduce_macro_eval`` L2138-2189, ``member_dot``
# L2206-2289, ``member_dot_arg`` L2291-2425, ``primary`` L2522-2673, ``exprlist`` L2724-2737,
# ``fieldinits`` L2739-2761, ``mapinits`` L2763-2791), reading TYPING_GENERICS as the stand-in.
# A method wrapped for trace logging (``CEL_TRACE`` set, ``trace`` L1357-1377) is left as it is.
FAST_METHODS = {
    name: _rebound(method, dict.fromkeys(TYPING_GENERICS, _ANY_GENERIC))
    for name, method in vars(_CelpyEvaluator).items()
    if isinstance(method, types.FunctionType)
    and not hasattr(method, "__wrapped__")
    and code_names(method.__code__) & set(TYPING_GENERICS)
}


class Evaluator(_CelpyEvaluator):
    """cel-python's ``Evaluator``, going straight through single-child pass-through nodes, its
    methods that subscript typing generics taken over as :data:`FAST_METHODS`."""

    def _visit_tree(self, tree: lark.Tree):
        pass_through, name = _rule(tree.data)
        while pass_through and len(tree.children) == 1:
            child = tree.children[0]
            if not isinstance(child, lark.Tree):
                return child  # lark's visit_children hands a token on as it is
            tree = child
            pass_through, name = _rule(tree.data)
        # lark 1.3.1 ``Interpreter._visit_tree`` (``lark/visitors.py`` L425-431) with the method
        # looked up by the rule's name as a ``str``, not by ``tree.data`` itself, a lark
        # ``Token``: the same attribute, without a ``Token.__eq__`` call per dictionary probe.
        f = getattr(self, name)
        wrapper = getattr(f, "visit_wrapper", None)
        if wrapper is not None:
            return f.visit_wrapper(f, tree.data, tree.children, tree.meta)
        return f(tree)

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return Evaluator(ast, activation=self.activation)


for _name, _method in FAST_METHODS.items():
    setattr(Evaluator, _name, _method)


class Activation(_CelpyActivation):
    """cel-python's ``Activation`` (the same name, so the same ``repr``), looking variables up
    with ``resolve_variable`` reading ``Union`` as the stand-in (``celpy/evaluation.py``
    L1286-1306: ``cast(Union[Result, NameContainer], referent.value)`` on every variable read),
    and making its clones and nested activations of this class (``clone`` L1249-1260,
    ``nested_activation`` L1262-1284: ``Activation(...)``)."""

    resolve_variable = _rebound(_CelpyActivation.resolve_variable, {"Union": _ANY_GENERIC})


Activation.clone = _rebound(_CelpyActivation.clone, {"Activation": Activation})
Activation.nested_activation = _rebound(
    _CelpyActivation.nested_activation, {"Activation": Activation}
)


class Runner(celpy.InterpretedRunner):
    """``InterpretedRunner`` evaluating with :class:`Evaluator` (``celpy/__init__.py``
    ``InterpretedRunner.evaluate`` L159-165, with the class swapped) in an :class:`Activation`
    (``Runner.new_activation`` L124-136, ``Activation(...)``)."""

    new_activation = _rebound(celpy.Runner.new_activation, {"Activation": Activation})

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
