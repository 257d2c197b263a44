"""The small machinery behind every validated spec: typed loading, exact errors, did-you-mean.

Specs are frozen keyword-only dataclasses. Each validates itself in ``__post_init__`` through
``_problems()``, which returns ``(field path, message)`` pairs. Constructed from Python, a bad spec
raises ``SpecError`` naming ``ClassName.field``; loaded from stack configuration with
``load_spec``, the same problem names the configuration key the user typed (``karpenter.replicas``).
No Pulumi import here: specs are plain data, testable without mocks.
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import re
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Union, get_args, get_origin

Path = tuple[str | int, ...]
Problem = tuple[Path, str]


def camel(name: str) -> str:
    """``kubernetes_version`` -> ``kubernetesVersion``: how a field is spelled in stack config."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class RawKey(str):
    """A key as the user typed it (an unknown key, a map key): never camelCased in messages."""

    __slots__ = ()


def format_path(root: str, path: Path, *, config: bool) -> str:
    """Join a problem path onto its root, camelCasing field names for configuration keys."""
    out = root
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = camel(part) if config and not isinstance(part, RawKey) else part
            out = f"{out}.{name}" if out else name
    return out


def show(value: Any) -> str:
    """A value as it appears in an error message."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


class SpecError(ValueError):
    """One or more invalid values, each reported as ``<key>: <problem>`` on its own line."""

    def __init__(self, root: str, problems: list[Problem], *, config: bool = False):
        self.root = root
        self.problems = list(problems)
        self.config = config
        self.lines = [f"{format_path(root, p, config=config)}: {m}" for p, m in self.problems]
        super().__init__("\n".join(self.lines))

    @classmethod
    def from_lines(cls, lines: list[str]) -> SpecError:
        """An error made of finished ``<key>: <problem>`` lines from several sections."""
        err = cls("", [])
        err.lines = list(lines)
        err.args = ("\n".join(lines),)
        return err


class Spec:
    """Base for validated specs: subclasses are frozen keyword-only dataclasses."""

    def _problems(self) -> list[Problem]:
        return []

    def __post_init__(self) -> None:
        problems = self._problems()
        if problems:
            raise SpecError(type(self).__name__, problems)


def doc(default: Any = dataclasses.MISSING, text: str = "", **kwargs: Any) -> Any:
    """A dataclass field with its documentation (shown in the README's configuration reference)."""
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={"doc": text}, **kwargs)
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple or a MappingProxy-free default; specs are immutable")
    return dataclasses.field(default=default, metadata={"doc": text}, **kwargs)


# ---------------------------------------------------------------------------------------------
# Reusable checks: each returns a message, or None when the value is fine.
# ---------------------------------------------------------------------------------------------


def check_range(value: int | float, low: int | float, high: int | float) -> str | None:
    if value < low or value > high:
        return f"{show(value)} is out of range; expected a number from {low} to {high}"
    return None


def check_pattern(value: str, pattern: str, what: str) -> str | None:
    if not re.fullmatch(pattern, value):
        return f"{show(value)} is not {what}"
    return None


def check_cidr(value: str) -> str | None:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        return f"{show(value)} is not a CIDR block; expected a network such as '10.0.0.0/16'"
    return None


def check_one_of(value: Any, allowed: Iterable[Any]) -> str | None:
    allowed = list(allowed)
    if value not in allowed:
        return f"{show(value)} is not allowed; expected one of {', '.join(map(str, allowed))}"
    return None


QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$"
DURATION = r"^([0-9]+(s|m|h))+$"
DURATION_OR_NEVER = r"^(([0-9]+(s|m|h))+|Never)$"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


# ---------------------------------------------------------------------------------------------
# Loading plain configuration data (parsed YAML) into specs.
# ---------------------------------------------------------------------------------------------

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


def _convert(tp: Any, raw: Any, path: Path, problems: list[Problem]) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if raw is None:
            return None
        return _convert(inner[0], raw, path, problems)
    if origin is Literal:
        allowed = get_args(tp)
        if raw not in allowed:
            problems.append(
                (
                    path,
                    f"{show(raw)} is not allowed; expected one of "
                    + ", ".join(str(a) for a in allowed)
                    + did_you_mean(str(raw), [str(a) for a in allowed]),
                )
            )
        return raw
    if origin is tuple:
        if not isinstance(raw, list):
            problems.append((path, f"{show(raw)} is not a list; expected {type_name(tp)}"))
            return ()
        return tuple(_convert(get_args(tp)[0], v, (*path, i), problems) for i, v in enumerate(raw))
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
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            problems.append((path, f"{show(raw)} is not a number"))
        return float(raw) if isinstance(raw, (int, float)) else raw
    if tp is Any:
        return raw
    if (isinstance(raw, bool) and tp is not bool) or not isinstance(raw, tp):
        hint = ""
        if tp is str and isinstance(raw, (int, float)) and not isinstance(raw, bool):
            hint = " (quote it in YAML)"
        problems.append((path, f"{show(raw)} is not {type_name(tp)}{hint}"))
    return raw


def _load(cls: type, raw: Any, path: Path, problems: list[Problem]) -> Any:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        problems.append((path, f"{show(raw)} is not an object"))
        return None
    hints = typing.get_type_hints(cls)
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
    for key, f in fields.items():
        if key in raw:
            kwargs[f.name] = _convert(hints[f.name], raw[key], (*path, f.name), problems)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            problems.append(((*path, f.name), "is required"))
    if len(problems) > before:
        return None
    try:
        return cls(**kwargs)
    except SpecError as err:
        problems.extend(((*path, *p), m) for p, m in err.problems)
        return None


def load_spec(cls: type, raw: Any, key: str) -> Any:
    """Build the spec ``cls`` from configuration data (``None`` means every default), raising
    ``SpecError`` with configuration keys."""
    return load_value(cls, raw, key)


def load_value(tp: Any, raw: Any, key: str) -> Any:
    """Convert configuration data to ``tp`` (a spec, a tuple of specs, a map ...)."""
    problems: list[Problem] = []
    value = _convert(tp, raw, (), problems)
    if problems:
        raise SpecError(key, problems, config=True)
    return value


# ---------------------------------------------------------------------------------------------
# Multi-language hosting: back from the snake_case dicts a hosted component receives.
# ---------------------------------------------------------------------------------------------


def config_from_python(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """snake_case data (as a hosted component receives it) to the camelCase config shape.

    Keys of spec fields are renamed; keys inside free-form maps (tags, labels) are kept.
    """
    hints = typing.get_type_hints(cls)
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in by_name or value is None:
            out[key if key not in by_name else camel(key)] = value
            continue
        out[camel(key)] = _python_value(hints[key], value)
    return out


def _python_value(tp: Any, value: Any) -> Any:
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
