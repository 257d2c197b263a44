"""Typed fields: configuration data (parsed YAML, a hosted component's args) loaded into specs,
specs built from Python checked against their annotations, and the way back to configuration
keys (``config_from_python``). Every problem names its field path (``errors.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

from .errors import Path, Problem, RawKey, SpecError, camel, did_you_mean, is_output, show

# ---------------------------------------------------------------------------------------------
# Loading plain configuration data (parsed YAML) into specs.
# ---------------------------------------------------------------------------------------------

# YAML 1.1's boolean words that YAML 1.2 (yaml.v3, the Pulumi CLI's parser) reads as strings.
YAML_1_1_BOOLEANS = frozenset({"y", "yes", "n", "no", "on", "off"})
_TYPE_NAMES = {str: "a string", int: "an integer", bool: "a boolean", float: "a number"}


def type_name(tp: Any) -> str:
    """How a field type is named in messages and in the README."""
    origin = get_origin(tp)
    if tp in _TYPE_NAMES:
        return _TYPE_NAMES[tp]
    if origin is Literal:
        return "one of " + ", ".join(show(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        return " or ".join(type_name(a) for a in inner)
    if origin is tuple:
        return f"a list of {_plural(get_args(tp)[0])}"
    if origin in (Mapping, dict):
        return f"a map of strings to {_plural(get_args(tp)[1])}"
    if dataclasses.is_dataclass(tp):
        return "an object"
    return str(tp)


def _plural(tp: Any) -> str:
    name = type_name(tp)
    for article in ("an ", "a "):
        if name.startswith(article):
            return name[len(article) :] + "s"
    return name


def _output_problem(tp: Any, *, whole_list: bool = False) -> str:
    """Why a ``pulumi.Output`` is refused here (never ``show()`` an Output: it has no value)."""
    if whole_list:
        return (
            "is a pulumi.Output of the whole list; pass a list whose items may be Outputs (the "
            "number of items decides how many resources the program registers)"
        )
    return (
        f"is a pulumi.Output; expected {type_name(tp)} known when the program runs (only ids "
        "and ARNs of other resources may be Outputs)"
    )


def number_problem(value: Any) -> str | None:
    """Why ``value`` is not a number a spec accepts: a boolean, a string, or a non-finite float
    (YAML's ``.nan``, ``.inf``, ``-.inf``): every number in configuration is finite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{show(value)} is not a number"
    if not math.isfinite(value):
        return f"{show(value)} is not a finite number; expected a number such as 1 or 0.5"
    return None


def _optional_inner(tp: Any) -> Any:
    """``X | None`` -> ``X`` (every union in a spec is an optional)."""
    if get_origin(tp) in (Union, types.UnionType):
        return next(a for a in get_args(tp) if a is not type(None))
    return tp


def _literal_problem(raw: Any, allowed: tuple[Any, ...]) -> str:
    return (
        f"{show(raw)} is not allowed; expected one of "
        + ", ".join(str(a) for a in allowed)
        + did_you_mean(str(raw), [str(a) for a in allowed])
    )


def _convert(tp: Any, raw: Any, path: Path, problems: list[Problem], output: bool = False) -> Any:
    """Configuration data (parsed YAML, or a hosted component's args) to ``tp``. ``output``: the
    field accepts a ``pulumi.Output`` (for a list: as items)."""
    if is_output(raw):
        if output and get_origin(_optional_inner(tp)) is not tuple:
            return raw
        problems.append((path, _output_problem(tp, whole_list=output)))
        return raw
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        if raw is None:
            return None
        return _convert(_optional_inner(tp), raw, path, problems, output)
    if origin is Literal:
        allowed = get_args(tp)
        if raw not in allowed:
            problems.append((path, _literal_problem(raw, allowed)))
        return raw
    if origin is tuple:
        if not isinstance(raw, list):
            problems.append((path, f"{show(raw)} is not a list; expected {type_name(tp)}"))
            return ()
        return tuple(
            _convert(get_args(tp)[0], v, (*path, i), problems, output) for i, v in enumerate(raw)
        )
    if origin in (Mapping, dict):
        if not isinstance(raw, dict):
            problems.append((path, f"{show(raw)} is not a map; expected {type_name(tp)}"))
            return {}
        value_tp = get_args(tp)[1]
        out = {}
        for k, v in raw.items():
            if not isinstance(k, str):
                problems.append((path, f"key {show(k)} is not a string"))
                continue
            out[k] = _convert(value_tp, v, (*path, RawKey(k)), problems)
        return out
    if dataclasses.is_dataclass(tp):
        return _load(tp, raw, path, problems)
    if tp is float:
        if msg := number_problem(raw):
            problems.append((path, msg))
        return float(raw) if isinstance(raw, (int, float)) else raw
    if tp is Any:
        return raw
    if (isinstance(raw, bool) and tp is not bool) or not isinstance(raw, tp):
        hint = ""
        if tp is str and isinstance(raw, (int, float)) and not isinstance(raw, bool):
            hint = " (quote it in YAML)"
        elif tp is bool:
            hint = "; use true or false"
            if isinstance(raw, str) and raw.lower() in YAML_1_1_BOOLEANS:
                # Stack files are YAML 1.2 for the Pulumi CLI (offline/yaml_strict.py).
                hint = " (the Pulumi CLI reads YAML 1.1's yes, no, on and off as strings)" + hint
        problems.append((path, f"{show(raw)} is not {type_name(tp)}{hint}"))
    return raw


def _load(cls: type, raw: Any, path: Path, problems: list[Problem]) -> Any:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        problems.append((path, f"{show(raw)} is not an object"))
        return None
    hints = field_hints(cls)
    fields = {camel(f.name): f for f in dataclasses.fields(cls) if f.init}
    before = len(problems)
    for key in raw:
        if key not in fields:
            problems.append(
                (
                    (*path, RawKey(key)),
                    "unknown key"
                    + (did_you_mean(str(key), fields) or "")
                    + f"; allowed keys are {', '.join(sorted(fields))}",
                )
            )
    kwargs = {}
    invalid: list[dataclasses.Field[Any]] = []
    missing = False
    for key, f in fields.items():
        if key in raw:
            start = len(problems)
            kwargs[f.name] = _convert(
                hints[f.name], raw[key], (*path, f.name), problems, f.metadata.get("output", False)
            )
            if len(problems) > start:
                invalid.append(f)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            problems.append(((*path, f.name), "is required"))
            missing = True
    if len(problems) == before:
        try:
            return cls(**kwargs)
        except SpecError as err:
            problems.extend(((*path, *p), m) for p, m in err.problems)
            return None
    if not missing:
        _check_the_rest(cls, hints, kwargs, invalid, path, problems)
    return None


def _check_the_rest(
    cls: type,
    hints: dict[str, Any],
    kwargs: dict[str, Any],
    invalid: list[dataclasses.Field[Any]],
    path: Path,
    problems: list[Problem],
) -> None:
    """The spec's own checks over its valid fields, when some fields are invalid: each invalid
    field holds its default meanwhile, and every problem that names an invalid field (by path or
    in its message) is dropped, so one run reports a bad ``rootVolume.sizeGib`` and spot on a
    non-preemptible pool together. Fields that choose what the others mean (a ``Literal`` such
    as a pool's ``kind``) and required fields have no stand-in: then nothing more is checked."""
    stand_ins = {}
    for f in invalid:
        if get_origin(_optional_inner(hints[f.name])) is Literal:
            return
        if f.default is not dataclasses.MISSING:
            stand_ins[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            stand_ins[f.name] = f.default_factory()
        else:
            return
    try:
        cls(**{**kwargs, **stand_ins})
    except SpecError as err:
        names = {f.name for f in invalid}
        for p, m in err.problems:
            if (p and p[0] in names) or any(camel(n) in m for n in names):
                continue
            problems.append(((*path, *p), m))


# ---------------------------------------------------------------------------------------------
# Specs built from Python: the same types, checked on construction.
# ---------------------------------------------------------------------------------------------

_HINTS: dict[type, dict[str, Any]] = {}


def field_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, computed once per class."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def python_type_problems(spec: Any) -> list[Problem]:
    """Every field of a spec built from Python whose value does not have the annotated type.

    A list given for a tuple field becomes a tuple (specs are immutable); a string given for a
    list is one problem, not one per character; a ``pulumi.Output`` is accepted only by fields
    declared with ``doc(output=True)``.
    """
    problems: list[Problem] = []
    hints = field_hints(type(spec))
    for f in dataclasses.fields(spec):
        if not f.init:
            continue
        value = getattr(spec, f.name)
        checked = _check_python(hints[f.name], value, (f.name,), problems, f.metadata)
        if checked is not value:
            object.__setattr__(spec, f.name, checked)
    return problems


@functools.cache
def _shape(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """``get_origin`` and ``get_args`` of a field type, computed once (specs are built often)."""
    return get_origin(tp), get_args(tp)


def _check_python(
    tp: Any, value: Any, path: Path, problems: list[Problem], meta: Mapping[str, Any]
) -> Any:
    output = meta.get("output", False)
    if is_output(value):
        if output and get_origin(_optional_inner(tp)) is not tuple:
            return value
        problems.append((path, _output_problem(tp, whole_list=output)))
        return value
    origin, args = _shape(tp)
    if origin in (Union, types.UnionType):
        if value is None:
            return None
        inner = next(a for a in args if a is not type(None))
        return _check_python(inner, value, path, problems, meta)
    if origin is Literal:
        allowed = args
        if isinstance(value, bool) or value not in allowed:
            problems.append((path, _literal_problem(value, allowed)))
        return value
    if origin is tuple:
        if isinstance(value, str):
            problems.append((path, f"{show(value)} is a string; expected {type_name(tp)}"))
            return value
        if not isinstance(value, (list, tuple)):
            problems.append((path, f"{show(value)} is not a list; expected {type_name(tp)}"))
            return value
        items = [_check_python(args[0], v, (*path, i), problems, meta) for i, v in enumerate(value)]
        if isinstance(value, tuple) and all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return tuple(items)
    if origin in (Mapping, dict):
        if not isinstance(value, Mapping):
            problems.append((path, f"{show(value)} is not a map; expected {type_name(tp)}"))
            return value
        for k, v in value.items():
            if not isinstance(k, str):
                problems.append((path, f"key {show(k)} is not a string"))
            else:
                _check_python(args[1], v, (*path, RawKey(k)), problems, {})
        return value
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, tp):
            problems.append((path, f"{show(value)} is not a {tp.__name__}"))
        return value
    if tp is Any:
        return value
    if tp is float:
        if msg := number_problem(value):
            problems.append((path, msg))
        return value
    if (isinstance(value, bool) and tp is not bool) or not isinstance(value, tp):
        message = f"{show(value)} is not {type_name(tp)}"
        if "example" in meta:
            message += f"; expected {type_name(tp)} such as {meta['example']!r}"
        problems.append((path, message))
    return value


def load_spec(cls: type, raw: Any, key: str) -> Any:
    """Build the spec ``cls`` from configuration data (``None`` means every default), raising
    ``SpecError`` with configuration keys."""
    return load_value(cls, raw, key)


def load_value(tp: Any, raw: Any, key: str) -> Any:
    """Convert configuration data to ``tp`` (a spec, a tuple of specs, a map ...)."""
    problems: list[Problem] = []
    value = _convert(tp, raw, (), problems)
    if problems:
        raise SpecError(key, problems, config=True, data=raw)
    return value


# ---------------------------------------------------------------------------------------------
# Multi-language hosting: back from the snake_case dicts a hosted component receives.
# ---------------------------------------------------------------------------------------------


def config_from_python(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """snake_case data (as a hosted component receives it) to the camelCase config shape.

    Keys of spec fields are renamed; keys inside free-form maps (tags, labels) are kept.
    """
    hints = field_hints(cls)
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in by_name or value is None:
            out[key if key not in by_name else camel(key)] = value
            continue
        out[camel(key)] = _python_value(hints[key], value)
    return out


def _python_value(tp: Any, value: Any) -> Any:
    if is_output(value):
        return value  # an Output lifts every attribute: never probe it for ``.value``
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        return _python_value(inner[0], value)
    if origin is tuple and isinstance(value, (list, tuple)):
        return [_python_value(get_args(tp)[0], v) for v in value]
    if dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
        return config_from_python(tp, value)
    if (
        hasattr(value, "value")
        and type(value).__module__ != "builtins"
        and not isinstance(value, (str, int, float, bool))
    ):
        return value.value  # a hosted enum arrives as a Python Enum
    return value
