"""The small machinery behind every validated spec: typed loading, exact errors, did-you-mean.

Specs are frozen keyword-only dataclasses. Each validates itself in ``__post_init__``: first the
type of every field against its annotation (``python_type_problems``), then ``_problems()``,
which returns ``(field path, message)`` pairs. Constructed from Python, a bad spec raises
``SpecError`` naming ``ClassName.field``; loaded from stack configuration with ``load_spec``, the
same problem names the configuration key the user typed (``karpenter.replicas``). Fields whose
value naturally comes from another resource (``doc(output=True)``: ids, ARNs) also take a
``pulumi.Output``. No Pulumi import here: specs are plain data, testable without mocks.

The machinery is in three modules: ``errors.py`` (problem paths, ``SpecError``, ``show``),
``fields.py`` (typed loading and checking), and this one (``Spec``, the ``*Args`` helpers,
``doc`` and the reusable checks), which re-exports the other two.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import (
    Path,
    Problem,
    RawKey,
    SpecError,
    camel,
    did_you_mean,
    format_path,
    is_output,
    show,
)
from .fields import (
    config_from_python,
    field_hints,
    load_spec,
    load_value,
    python_type_problems,
    type_name,
)

__all__ = [
    "DURATION",
    "DURATION_OR_NEVER",
    "QUANTITY",
    "Path",
    "Problem",
    "RawKey",
    "Spec",
    "SpecError",
    "camel",
    "check_cidr",
    "check_one_of",
    "check_pattern",
    "check_range",
    "config_from_python",
    "derived",
    "did_you_mean",
    "doc",
    "field_hints",
    "format_path",
    "is_output",
    "load_spec",
    "load_value",
    "python_type_problems",
    "require_instance",
    "required_problem",
    "set_derived",
    "show",
    "type_name",
]


class Spec:
    """Base for validated specs: subclasses are frozen keyword-only dataclasses.

    Built from Python, every field is first checked against its annotation (lists become
    tuples); only a spec whose fields all have the right types runs its own ``_problems()``.
    """

    def _problems(self) -> list[Problem]:
        return []

    def __post_init__(self) -> None:
        problems = python_type_problems(self)
        if not problems:
            problems = self._problems()
        if problems:
            raise SpecError(type(self).__name__, problems, data=self)


# ---------------------------------------------------------------------------------------------
# Component ``*Args``: plain frozen dataclasses that derive what they can from other components.
# ---------------------------------------------------------------------------------------------


def require_instance(args: Any, name: str, expected: type) -> list[Problem]:
    """A problem when ``args.<name>`` is not an ``expected`` (a spec given as a dict, ...)."""
    value = getattr(args, name)
    if isinstance(value, expected):
        return []
    return [((name,), f"{show(value)} is not a {expected.__name__}")]


def required_problem(name: str, component: str, via: str) -> Problem:
    """``<name>`` has no value and nothing to derive it from."""
    return ((name,), f"is required; pass the {component} component as {via}, or set {name}")


def derived(source: str, default: Any = None) -> Any:
    """An ``*Args`` field that ``__post_init__`` derives from the component passed as
    ``source`` when it is not given (the README's component table lists it that way)."""
    return dataclasses.field(default=default, metadata={"derived_from": source})


def set_derived(args: Any, name: str, value: Any) -> None:
    """Set a derived value on a frozen ``*Args`` dataclass (from its ``__post_init__`` only)."""
    object.__setattr__(args, name, value)


def derive_unset(args: Any, values: Mapping[str, Any]) -> None:
    """Set each field named in ``values`` that the caller left None: explicit arguments win."""
    for name, value in values.items():
        if getattr(args, name) is None:
            set_derived(args, name, value)


def depend_on_first(args: Any, after: Sequence[Any]) -> None:
    """``args.depends_on`` becomes ``after`` (what the component waits for, derived from the
    components given), then the caller's own resources that are not among them (by identity)."""
    own = [d for d in args.depends_on if not any(d is a for a in after)]
    set_derived(args, "depends_on", [*after, *own])


def missing_problems(args: Any, names: Iterable[str], component: str, via: str) -> list[Problem]:
    """``required_problem`` for each of ``names`` still None (nothing given, nothing derived)."""
    return [required_problem(name, component, via) for name in names if getattr(args, name) is None]


def disabled_problems(args: Any, component: str) -> list[Problem]:
    """``spec.enabled: false`` given to the component that it switches off."""
    if args.spec.enabled:
        return []
    return [
        (
            ("spec", "enabled"),
            f"is false; leave the {component} component out instead of creating it",
        )
    ]


def doc(
    default: Any = dataclasses.MISSING,
    text: str = "",
    *,
    output: bool = False,
    example: str | None = None,
    **kwargs: Any,
) -> Any:
    """A dataclass field with its documentation (shown in the README's configuration reference).

    ``output``: the value naturally comes from another resource (a VPC id, a KMS key ARN), so
    a ``pulumi.Output`` is accepted (for a list: each item), and checks that need the value
    skip it. ``example``: a valid value, quoted in the message for a value of the wrong type.
    """
    metadata: dict[str, Any] = {"doc": text}
    if output:
        metadata["output"] = True
    if example is not None:
        metadata["example"] = example
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata, **kwargs)
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple or a MappingProxy-free default; specs are immutable")
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


# ---------------------------------------------------------------------------------------------
# Reusable checks: each returns a message, or None when the value is fine.
# ---------------------------------------------------------------------------------------------


# An Output reaches these checks only in a field that accepts one (``doc(output=True)``): its
# value is unknown until deployment, and the resource that produces it has validated it.


def check_range(value: int | float, low: int | float, high: int | float) -> str | None:
    if is_output(value):
        return None
    if value < low or value > high:
        return f"{show(value)} is out of range; expected a number from {low} to {high}"
    return None


def check_pattern(value: str, pattern: str, what: str) -> str | None:
    if is_output(value):
        return None
    if not re.fullmatch(pattern, value):
        return f"{show(value)} is not {what}"
    return None


def check_cidr(value: str) -> str | None:
    if is_output(value):
        return None
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        return f"{show(value)} is not a CIDR block; expected a network such as '10.0.0.0/16'"
    return None


def check_one_of(value: Any, allowed: Iterable[Any]) -> str | None:
    if is_output(value):
        return None
    allowed = list(allowed)
    if value not in allowed:
        return f"{show(value)} is not allowed; expected one of {', '.join(map(str, allowed))}"
    return None


QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$"
DURATION = r"^([0-9]+(s|m|h))+$"
DURATION_OR_NEVER = r"^(([0-9]+(s|m|h))+|Never)$"
