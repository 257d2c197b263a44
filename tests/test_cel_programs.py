"""Tests for ``cel_programs``: its runner evaluates exactly as cel-python's, without typing work.

``cel_programs.Evaluator`` and ``cel_programs.Activation`` run cel-python 0.5.0's own methods
with some module globals rebound (see ``cel_programs``); these tests check, from cel-python's
source, that the rebound names are used nowhere but where rebinding them cannot change a value,
and compare values and errors with cel-python's own ``Evaluator`` on every kind of node.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import typing

import cel_programs
import celpy
import celpy.evaluation
import pytest
from crd_validation import _KUBERNETES_FUNCTIONS

# The methods cel-python 0.5.0's Evaluator subscripts Callable/Iterable/List/Tuple in.
EXPECTED_FAST_METHODS = [
    "addition",
    "build_macro_eval",
    "build_reduce_macro_eval",
    "build_ss_macro_eval",
    "conditionaland",
    "conditionalor",
    "exprlist",
    "fieldinits",
    "function_eval",
    "mapinits",
    "member_dot",
    "member_dot_arg",
    "method_eval",
    "multiplication",
    "primary",
    "relation",
    "unary",
]


def test_the_taken_over_methods_are_these():
    assert sorted(cel_programs.FAST_METHODS) == EXPECTED_FAST_METHODS
    for name, method in cel_programs.FAST_METHODS.items():
        original = vars(celpy.evaluation.Evaluator)[name]
        assert getattr(cel_programs.Evaluator, name) is method
        assert method.__code__ is original.__code__
        assert method.__defaults__ == original.__defaults__
        assert method.__closure__ == original.__closure__


# Each rebound function: (the cel-python original, the names rebound, how they may be used).
REBOUND = [
    *(
        (
            vars(celpy.evaluation.Evaluator)[name],
            getattr(cel_programs.Evaluator, name),
            cel_programs.TYPING_GENERICS,
            "cast type",
        )
        for name in EXPECTED_FAST_METHODS
    ),
    (
        celpy.evaluation.Activation.resolve_variable,
        cel_programs.Activation.resolve_variable,
        ("Union",),
        "cast type",
    ),
    (
        celpy.evaluation.Activation.clone,
        cel_programs.Activation.clone,
        ("Activation",),
        "called",
    ),
    (
        celpy.evaluation.Activation.nested_activation,
        cel_programs.Activation.nested_activation,
        ("Activation",),
        "called",
    ),
    (celpy.Runner.new_activation, cel_programs.Runner.new_activation, ("Activation",), "called"),
]


def _misused(function, names: tuple[str, ...], allowed: str) -> list[str]:
    """Uses of ``names`` in ``function``'s body other than ``allowed``.

    ``cast type``: inside the first argument of ``cast(...)`` (``typing.cast`` returns its second
    argument whatever the first is), or in a local assigned such a type and itself only used
    there; ``called``: as the function of a call (the replacement is a subclass). The
    annotations of the method's own signature are evaluated once, when cel-python defines it.
    """
    tree = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def ancestors(node):
        while node in parents:
            node = parents[node]
            yield node

    def in_cast_type(node) -> bool:
        previous = node
        for parent in ancestors(node):
            if isinstance(parent, ast.Call) and getattr(parent.func, "id", None) == "cast":
                return bool(parent.args) and parent.args[0] is previous
            previous = parent
        return False

    signature = {
        id(node)
        for arg in ast.walk(tree.args)
        if isinstance(arg, ast.arg) and arg.annotation is not None
        for node in ast.walk(arg.annotation)
    } | ({id(node) for node in ast.walk(tree.returns)} if tree.returns else set())
    local_annotations = {
        id(node)
        for statement in ast.walk(tree)
        if isinstance(statement, ast.AnnAssign) and statement.simple
        for node in ast.walk(statement.annotation)
    }
    # Locals holding a type built from the rebound names (e.g. ``CELBoolFunction = Callable[...]``).
    aliases = {
        target.id
        for statement in ast.walk(tree)
        if allowed == "cast type"
        and isinstance(statement, ast.Assign)
        and any(
            isinstance(n, ast.Name) and n.id in names and not in_cast_type(n)
            for n in ast.walk(statement.value)
        )
        for target in statement.targets
        if isinstance(target, ast.Name)
    }
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or id(node) in signature | local_annotations:
            continue
        if node.id in names:
            parent = parents[node]
            if allowed == "called":
                ok = isinstance(parent, ast.Call) and parent.func is node
            else:
                ok = in_cast_type(node) or any(
                    isinstance(a, ast.Assign)
                    and any(getattr(t, "id", None) in aliases for t in a.targets)
                    for a in ancestors(node)
                )
            if not ok:
                problems.append(f"{node.id} at line {node.lineno}")
        elif node.id in aliases and isinstance(node.ctx, ast.Load) and not in_cast_type(node):
            problems.append(f"{node.id} at line {node.lineno}")
    return problems


@pytest.mark.parametrize(
    ("original", "rebound", "names", "allowed"),
    REBOUND,
    ids=[original.__qualname__ for original, *_ in REBOUND],
)
def test_a_rebound_name_is_only_used_where_its_value_cannot_matter(
    original, rebound, names, allowed
):
    assert rebound.__code__ is original.__code__
    assert rebound.__closure__ == original.__closure__
    changed = {
        name
        for name, value in rebound.__globals__.items()
        if original.__globals__.get(name, object()) is not value
    }
    assert changed == set(names)
    assert _misused(original, names, allowed) == []


def test_the_check_finds_a_rebound_name_used_as_a_value():
    def uses_tuple(x):
        return cast(Tuple[int], x) if isinstance(x, Tuple) else x  # noqa: F821

    assert _misused(uses_tuple, ("Tuple",), "cast type") == ["Tuple at line 2"]


def test_the_activations_keep_cel_pythons_class_name():
    assert cel_programs.Activation.__name__ == celpy.evaluation.Activation.__name__
    runner = cel_programs.program("1")
    activation = runner.new_activation()
    assert type(activation) is cel_programs.Activation
    assert type(activation.clone()) is cel_programs.Activation
    assert type(activation.nested_activation(vars={})) is cel_programs.Activation


# Expressions reaching every method taken over, and errors of each kind.
EXPRESSIONS = [
    "self.a || self.missing",
    "self.missing || self.a",
    "self.a && self.b == 2",
    "self.b < 3 && self.b <= 2 && self.b > 1 && self.b >= 2 && self.b != 1",
    "'x' in self.list && !('y' in self.list)",
    "self.b + 3 - 1 == self.b * 2 && self.b / 2 == 1 && self.b % 2 == 0",
    "-self.b == -2 && !false",
    "self.list.map(x, x + 'y') == ['xy', 'zy']",
    "self.list.filter(x, x == 'z').size() == 1",
    "self.list.all(x, x.size() == 1) && self.list.exists(x, x == 'x')",
    "self.list.exists_one(x, x.startsWith('z'))",
    "size(self.list) == 2 && int('3') == 3 && string(self.b) == '2'",
    "{'k': self.b, 'l': [1, 2]}['l'][1] == self.b && has(self.a)",
    "self.text.lowerAscii().split('-').join('.')",
    "self.text.find('[0-9]+')",
    "1 / 0 == 1",
    "self.missing == 1",
    "self.a + 1",
    "self.list[5]",
    "self.list.all(x, 1 / 0 == 1)",
    "self.b.size()",
]


def _plain_cel_python(expression: str, context: dict):
    environment = celpy.Environment()
    runner = environment.program(environment.compile(expression), _KUBERNETES_FUNCTIONS)
    return runner.evaluate(context)


def _fast(expression: str, context: dict):
    environment = cel_programs.environment()
    runner = environment.program(environment.compile(expression), _KUBERNETES_FUNCTIONS)
    return runner.evaluate(context)


def _outcome(evaluate, expression: str, context: dict):
    try:
        value = evaluate(expression, context)
    except Exception as exc:  # the exact error is what is compared
        return ("error", type(exc), repr(exc.args))
    return ("value", type(value), repr(value))


CONTEXT = {
    "self": celpy.json_to_cel({"a": True, "b": 2, "list": ["x", "z"], "text": "Node-Pool-42"})
}


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_values_and_errors_are_cel_pythons(expression):
    assert _outcome(_fast, expression, CONTEXT) == _outcome(_plain_cel_python, expression, CONTEXT)


def test_the_taken_over_methods_call_no_typing_code_but_cast():
    """cel-python's methods subscripted typing generics here (``typing``'s cached
    ``__getitem__``, hashing ``Result``'s ``Union``), more than half of the evaluation time."""
    runner = cel_programs.environment().program(
        cel_programs.environment().compile(" && ".join(f"({e})" for e in EXPRESSIONS[:13])),
        _KUBERNETES_FUNCTIONS,
    )
    # The frames of the rebound functions (and functions nested in them): their own globals.
    taken_over = {id(rebound.__globals__) for _, rebound, *_ in REBOUND}
    called = []

    def profile(frame, event, _arg):
        if (
            event == "call"
            and frame.f_code.co_filename == typing.__file__
            and id(frame.f_back.f_globals) in taken_over
        ):
            called.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        result = runner.evaluate(CONTEXT)
    finally:
        sys.setprofile(None)
    assert result == celpy.celtypes.BoolType(True)
    assert "cast" in called
    assert set(called) == {"cast"}
