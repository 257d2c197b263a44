"""Validate rendered Kubernetes custom resources against the upstream CRDs, as the API server does.

The CRDs come from a list of sources (:data:`CRD_SOURCES`), each a function returning its CRD
files: the project's own structural schemas of KAI's Queue and PodGroup and mpi-operator's
MPIJob (``tests/upstream_facts/crds/``, each fact cited there), and Karpenter's four CRDs from the
``github.com/aws/karpenter-provider-aws`` Go module at the version ``tests/conformance/go.mod``
pins (``pkg/apis/crds/``, read through ``tests/upstream_modules.py``, checked by ``go.sum``). For a
create request the API server:

1. prunes fields the structural schema does not declare (reported here as errors, as with
   ``fieldValidation=Strict``, which ``kubectl`` uses by default);
2. applies the schema ``default`` values (:func:`apply_defaults`);
3. validates the OpenAPI v3 schema (here with :mod:`jsonschema`, plus the Kubernetes extensions
   ``x-kubernetes-int-or-string``, ``x-kubernetes-list-type`` and ``nullable``);
4. unless step 3 found an error that makes CEL unsafe to run (wrong type, missing required field,
   value not in the enum, too long or too many items), evaluates every ``x-kubernetes-validations``
   CEL rule (here with cel-python, extended with the Kubernetes string and regex libraries).

Transition rules (those referencing ``oldSelf``) are skipped: only creation is validated. A rule
this CEL engine cannot evaluate (syntax it does not parse, a function it lacks) never passes
silently: it is recorded, see :func:`unevaluable_rules` and :func:`check_compilable`.

CEL values are built from the JSON data as is (``celpy.json_to_cel``). The API server types them
from the schema instead (``number`` as double, ``date-time`` strings as timestamps, escaped
property names such as ``__dash__``); no rule in these CRDs depends on that difference.
"""

from __future__ import annotations

import copy
import datetime
import functools
import json
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import cel_programs
import celpy
import jsonschema
import re2  # google-re2, a cel-python dependency: Go regexp (RE2) semantics
import upstream_modules
import yaml
from celpy import celtypes

# Schema validation failures after which the API server does not run CEL rules.
_BLOCKING_KEYWORDS = frozenset(
    {
        "type",
        "x-kubernetes-int-or-string",
        "required",
        "enum",
        "maxLength",
        "maxItems",
        "maxProperties",
    }
)
_CEL_SKIPPED = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)
_CEL_MACROS = frozenset({"has", "dyn", "all", "exists", "exists_one", "map", "filter"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


# --------------------------------------------------------------------------------------------
# CRD lookup
# --------------------------------------------------------------------------------------------


# libyaml's parser under PyYAML's safe constructor: the same documents as yaml.safe_load_all,
# 0.6 s -> 0.05 s for the vendored CRDs (checked equal when written).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# The project's own structural schemas of the KAI and MPIJob kinds it writes (cited facts).
FACTS_CRDS = Path(__file__).resolve().parent / "upstream_facts" / "crds"


# Karpenter's CRDs in github.com/aws/karpenter-provider-aws ``pkg/apis/crds/`` (the files the
# provider embeds, ``pkg/apis/apis.go``, and the ``karpenter-crd`` chart ships); the folder also
# holds ``autoscaling.x-k8s.io_capacitybuffers.yaml``, a kind the project does not render.
KARPENTER_CRDS = (
    "pkg/apis/crds/karpenter.sh_nodepools.yaml",
    "pkg/apis/crds/karpenter.sh_nodeclaims.yaml",
    "pkg/apis/crds/karpenter.sh_nodeoverlays.yaml",
    "pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml",
)


def karpenter_crd_files() -> tuple[Path, ...]:
    """Karpenter's four CRDs, from the Go module at the conformance suite's version."""
    return tuple(upstream_modules.karpenter_file(path) for path in KARPENTER_CRDS)


def facts_crd_files() -> tuple[Path, ...]:
    """The project's own CRD files (``tests/upstream_facts/crds/``)."""
    return _yaml_files(FACTS_CRDS)


@functools.cache
def _yaml_files(folder: Path) -> tuple[Path, ...]:
    return tuple(sorted(folder.rglob("*.yaml")))


# Where the CRDs come from: each source returns its files, read in this order.
CRD_SOURCES: tuple[Callable[[], tuple[Path, ...]], ...] = (
    karpenter_crd_files,
    facts_crd_files,
)


def crd_files() -> tuple[Path, ...]:
    """Every CRD file of every source in :data:`CRD_SOURCES`."""
    return tuple(path for source in CRD_SOURCES for path in source())


@functools.cache
def _load_crds(files: tuple[Path, ...]) -> tuple[dict[str, Any], ...]:
    """Load every CustomResourceDefinition document found in ``files``."""
    crds = []
    for path in files:
        text = path.read_text()
        if "CustomResourceDefinition" not in text:
            continue
        crds.extend(
            doc
            for doc in yaml.load_all(text, Loader=_LOADER)
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"
        )
    return tuple(crds)


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def find_crd(api_version: str, kind: str) -> dict[str, Any]:
    """Return the CRD serving ``kind`` at ``api_version`` (``group/version``).

    Raises:
        LookupError: no CRD of :data:`CRD_SOURCES` serves that group, version and kind.
    """
    return _find_crd(crd_files(), api_version, kind)


def _find_crd(files: tuple[Path, ...], api_version: str, kind: str) -> dict[str, Any]:
    group, version = _split_api_version(api_version)
    for crd in _load_crds(files):
        spec = crd["spec"]
        if (
            spec["group"] == group
            and spec["names"]["kind"] == kind
            and any(entry["name"] == version for entry in spec["versions"])
        ):
            return crd
    raise LookupError(f"no CRD for {kind} in {api_version!r} in {len(files)} CRD files")


def _version_schema(crd: dict[str, Any], version: str) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of a version the CRD is known to serve."""
    return next(
        entry["schema"]["openAPIV3Schema"]
        for entry in crd["spec"]["versions"]
        if entry["name"] == version
    )


def _iter_schema(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(path, node)`` for ``schema`` and every nested schema node.

    Array items and map values are written ``[*]``. A node's children are read after the node
    is yielded, so the caller may edit the node in place.
    """
    yield path or "<root>", schema
    for name, child in schema.get("properties", {}).items():
        yield from _iter_schema(child, f"{path}.{name}" if path else name)
    for keyword in ("items", "additionalProperties"):
        child = schema.get(keyword)
        if isinstance(child, dict):
            yield from _iter_schema(child, f"{path}[*]")
    for keyword in ("allOf", "anyOf", "oneOf"):
        for child in schema.get(keyword, []):
            yield from _iter_schema(child, path)


# --------------------------------------------------------------------------------------------
# Pruning and defaulting
# --------------------------------------------------------------------------------------------


def _format_path(path: tuple[str | int, ...]) -> str:
    """Render a value path such as ``spec.items[0].labels[a/b]`` (non-identifiers bracketed)."""
    rendered = ""
    for segment in path:
        if isinstance(segment, int) or not _IDENTIFIER.fullmatch(segment):
            rendered += f"[{segment}]"
        else:
            rendered += f".{segment}" if rendered else segment
    return rendered or "<root>"


def _child_schema(schema: dict[str, Any], key: str) -> dict[str, Any] | None:
    """Return the schema of an object's member ``key``, or None if the schema lacks it."""
    declared = schema.get("properties", {}).get(key)
    if declared is not None:
        return declared
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


def _prune(
    schema: dict[str, Any], value: Any, path: tuple[str | int, ...], errors: list[str]
) -> Any:
    """Return a copy of ``value`` without undeclared object fields, reporting each one dropped."""
    if isinstance(value, dict):
        pruned = {}
        for key, item in value.items():
            child = _child_schema(schema, key)
            if child is not None:
                pruned[key] = _prune(child, item, (*path, key), errors)
            elif schema.get("x-kubernetes-preserve-unknown-fields"):
                pruned[key] = copy.deepcopy(item)
            else:
                errors.append(f"{_format_path((*path, key))}: unknown field")
        return pruned
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [
            _prune(schema["items"], item, (*path, index), errors)
            for index, item in enumerate(value)
        ]
    return copy.deepcopy(value)


def apply_defaults(schema: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``obj`` with the structural-schema defaults of ``schema`` applied.

    Follows the API server: an absent property with a ``default`` gets a deep copy of it, and so
    does a ``null`` one unless the property is ``nullable``; other non-nullable ``null`` object
    members are dropped. Defaulting recurses into present objects, array items and map values,
    including the values just defaulted.
    """
    return _default(schema, copy.deepcopy(obj))


def _default(schema: dict[str, Any], value: Any) -> Any:
    """Apply defaults to ``value`` in place and return it."""
    if isinstance(value, dict):
        for key, prop in schema.get("properties", {}).items():
            if key not in value and "default" in prop:
                value[key] = copy.deepcopy(prop["default"])
        for key in list(value):
            child = _child_schema(schema, key)
            if child is None:
                continue
            if value[key] is None and not child.get("nullable"):
                if "default" not in child:
                    del value[key]
                    continue
                value[key] = copy.deepcopy(child["default"])
            _default(child, value[key])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        for index, item in enumerate(value):
            if item is None and "default" in items and not items.get("nullable"):
                value[index] = copy.deepcopy(items["default"])
            _default(items, value[index])
    return value


# --------------------------------------------------------------------------------------------
# OpenAPI schema validation
# --------------------------------------------------------------------------------------------


def _is_integer(_checker: Any, instance: Any) -> bool:
    """OpenAPI integers are JSON integers: neither booleans nor floats such as ``1.0``."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _nullable_type(
    validator: Any, types: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """``type``, letting ``null`` through where the schema says ``nullable: true``."""
    if instance is None and schema.get("nullable"):
        return
    yield from jsonschema.Draft202012Validator.VALIDATORS["type"](
        validator, types, instance, schema
    )


def _int_or_string(
    validator: Any, enabled: bool, instance: Any, _schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """``x-kubernetes-int-or-string: true``: the value is an integer or a string."""
    if enabled and not (
        validator.is_type(instance, "integer") or validator.is_type(instance, "string")
    ):
        yield jsonschema.ValidationError(f"{instance!r} is not of type 'integer' or 'string'")


def _list_type(
    _validator: Any, list_type: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """``x-kubernetes-list-type``: ``set`` items and ``map`` keys must be unique."""
    if not isinstance(instance, list) or list_type not in ("set", "map"):
        return
    key_names = schema.get("x-kubernetes-list-map-keys", [])
    seen = set()
    for index, item in enumerate(instance):
        if list_type == "map" and isinstance(item, dict):
            key = json.dumps([item.get(name) for name in key_names])
        else:
            key = json.dumps(item, sort_keys=True)
        if key in seen:
            yield jsonschema.ValidationError(f"Duplicate value: {key}", path=[index])
        seen.add(key)


_FORMAT_CHECKER = jsonschema.FormatChecker(formats=())


@_FORMAT_CHECKER.checks("int32")
def _is_int32(instance: Any) -> bool:
    return not isinstance(instance, int) or -(2**31) <= instance < 2**31


@_FORMAT_CHECKER.checks("int64")
def _is_int64(instance: Any) -> bool:
    return not isinstance(instance, int) or -(2**63) <= instance < 2**63


@_FORMAT_CHECKER.checks("date-time", raises=ValueError)
def _is_date_time(instance: Any) -> bool:
    """RFC 3339, e.g. ``2024-05-01T12:00:00Z``; ``strptime`` rejects out-of-range fields."""
    if not isinstance(instance, str):
        return True
    if not _RFC3339.fullmatch(instance):
        return False
    datetime.datetime.strptime(instance[:19].upper(), "%Y-%m-%dT%H:%M:%S")
    return True


_SchemaValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    validators={
        "type": _nullable_type,
        "x-kubernetes-int-or-string": _int_or_string,
        "x-kubernetes-list-type": _list_type,
    },
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


# --------------------------------------------------------------------------------------------
# CEL: Kubernetes library functions missing from cel-python
# --------------------------------------------------------------------------------------------

_LOWER_ASCII = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_UPPER_ASCII = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)


def _char_at(text: str, index: int) -> Any:
    if not 0 <= index <= len(text):
        return celpy.CELEvalError(f"index out of range: {index}")
    return celtypes.StringType(text[index : index + 1])


def _index_of(text: str, sub: str, offset: int = 0) -> Any:
    if not 0 <= offset <= len(text):
        return celpy.CELEvalError(f"index out of range: {offset}")
    return celtypes.IntType(text.find(sub, offset))


def _last_index_of(text: str, sub: str, offset: int | None = None) -> Any:
    if offset is None:
        return celtypes.IntType(text.rfind(sub))
    if not 0 <= offset <= len(text):
        return celpy.CELEvalError(f"index out of range: {offset}")
    return celtypes.IntType(text.rfind(sub, 0, offset + len(sub)))


def _lower_ascii(text: str) -> celtypes.StringType:
    return celtypes.StringType(text.translate(_LOWER_ASCII))


def _upper_ascii(text: str) -> celtypes.StringType:
    return celtypes.StringType(text.translate(_UPPER_ASCII))


def _replace(text: str, old: str, new: str, limit: int = -1) -> celtypes.StringType:
    return celtypes.StringType(text.replace(old, new, limit))


def _split(text: str, separator: str, limit: int = -1) -> celtypes.ListType:
    """Go ``strings.SplitN``: at most ``limit`` parts (all if negative, none if zero)."""
    if limit == 0:
        return celtypes.ListType()
    if separator:
        parts = text.split(separator, limit - 1 if limit > 0 else -1)
    else:
        parts = list(text)
        if 0 < limit < len(parts):
            parts = [*parts[: limit - 1], "".join(parts[limit - 1 :])]
    return celtypes.ListType(celtypes.StringType(part) for part in parts)


def _substring(text: str, start: int, end: int | None = None) -> Any:
    stop = len(text) if end is None else end
    if not 0 <= start <= stop <= len(text):
        return celpy.CELEvalError(
            f"substring out of range: [{start}, {stop}) of {len(text)} characters"
        )
    return celtypes.StringType(text[start:stop])


def _trim(text: str) -> celtypes.StringType:
    return celtypes.StringType(text.strip())


def _join(items: list[str], separator: str = "") -> celtypes.StringType:
    return celtypes.StringType(separator.join(items))


def _find(text: str, pattern: str) -> celtypes.StringType:
    """Kubernetes regex library: the first match of ``pattern`` in ``text``, or ``""``."""
    match = re2.search(pattern, text)
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(text: str, pattern: str, limit: int = -1) -> celtypes.ListType:
    """Kubernetes regex library: up to ``limit`` (all if negative) matches of ``pattern``."""
    matches = [m.group(0) for m in re2.finditer(pattern, text)]
    if limit >= 0:
        matches = matches[:limit]
    return celtypes.ListType(celtypes.StringType(m) for m in matches)


_KUBERNETES_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii,
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": _trim,
    "join": _join,
    "find": _find,
    "findAll": _find_all,
}
_KNOWN_FUNCTIONS = frozenset(celpy.base_functions) | _KUBERNETES_FUNCTIONS.keys() | _CEL_MACROS


# --------------------------------------------------------------------------------------------
# CEL: compiling and evaluating rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Program:
    """A compiled CEL expression, or the reason this engine cannot evaluate it."""

    runner: celpy.Runner | None
    error: str | None
    uses_old_self: bool


@functools.cache
def _compile(expression: str) -> _Program:
    """Parse ``expression`` once and check that every function it calls is available."""
    try:
        ast = cel_programs.environment().compile(expression)
    except celpy.CELParseError as exc:
        return _Program(None, f"parse error: {exc}", uses_old_self=False)
    called = set()
    uses_old_self = False
    for node in ast.iter_subtrees():
        if node.data == "member_dot_arg":
            called.add(node.children[1].value)
        elif node.data in ("ident_arg", "dot_ident_arg"):
            called.add(node.children[0].value)
        elif node.data == "ident" and node.children[0].value == "oldSelf":
            uses_old_self = True
    missing = sorted(called - _KNOWN_FUNCTIONS)
    if missing:
        return _Program(None, f"unsupported function(s): {', '.join(missing)}", uses_old_self)
    runner = cel_programs.environment().program(ast, _KUBERNETES_FUNCTIONS)
    return _Program(runner, None, uses_old_self)


class _EngineGap(Exception):
    """The CEL engine, not the object, is why an expression could not be evaluated."""


def _evaluate(expression: str, value: Any) -> Any:
    """Evaluate ``expression`` with ``self`` bound to ``value`` (a CEL value).

    Raises:
        _EngineGap: the engine cannot evaluate the expression.
        celpy.CELEvalError: the expression failed on this value (e.g. a missing key).
    """
    program = _compile(expression)
    if program.runner is None:
        raise _EngineGap(program.error)
    try:
        return program.runner.evaluate({"self": value})
    except celpy.CELEvalError as exc:
        if str(exc.args[0]).startswith("undeclared reference"):
            raise _EngineGap(exc.args[0]) from exc
        raise
    except Exception as exc:  # any other exception is a defect inside cel-python
        raise _EngineGap(f"{type(exc).__name__}: {exc}") from exc


def _describe(error: celpy.CELEvalError) -> str:
    """One line describing a CEL evaluation error, with the Python error behind it if any."""
    message = str(error.args[0])
    details = error.args[2] if len(error.args) > 2 else None
    if isinstance(details, tuple) and details and isinstance(details[0], str):
        return f"{message} ({details[0]})"
    return message


def _engine_problem(rule: dict[str, Any]) -> str | None:
    """Why this CEL engine cannot evaluate ``rule`` on creation, or None if it can."""
    program = _compile(rule["rule"])
    if program.error is not None:
        return program.error
    if program.uses_old_self and rule.get("optionalOldSelf"):
        return "optionalOldSelf rules need CEL optional types, which cel-python lacks"
    return None


_UNEVALUABLE: set[str] = set()


def unevaluable_rules() -> set[str]:
    """Rules (and message expressions) met by :func:`validate` that could not be evaluated."""
    return set(_UNEVALUABLE)


def _failure_message(rule: dict[str, Any], value: Any) -> str:
    """The message the API server reports when ``rule`` evaluates to false.

    As in the API server, a ``messageExpression`` that fails or yields a blank string falls back
    to ``message``, then to the rule text.
    """
    if "messageExpression" in rule:
        try:
            message = _evaluate(rule["messageExpression"], value)
        except _EngineGap:
            _UNEVALUABLE.add(rule["messageExpression"])
        except celpy.CELEvalError:
            pass
        else:
            if isinstance(message, str) and message.strip():
                return str(message)
    return rule.get("message") or f"failed rule: {rule['rule']}"


def _check_rules(
    schema: dict[str, Any], value: Any, path: tuple[str | int, ...], errors: list[str]
) -> None:
    """Evaluate the ``x-kubernetes-validations`` of ``schema`` and its children on ``value``."""
    rules = schema.get("x-kubernetes-validations", [])
    if rules:
        cel_value = _CelValue(value)
        key = json.dumps(value, sort_keys=True)
        for rule in rules:
            _check_rule(rule, cel_value, path, errors, key)
    if isinstance(value, dict):
        for key, item in value.items():
            child = _child_schema(schema, key)
            if child is not None:
                _check_rules(child, item, (*path, key), errors)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _check_rules(schema["items"], item, (*path, index), errors)


class _CelValue:
    """A JSON value and its CEL value, converted when first needed: when every rule's outcome
    on the value is already known (:data:`_OUTCOMES`), never."""

    def __init__(self, value: Any) -> None:
        self.json = value

    @functools.cached_property
    def cel(self) -> Any:
        return celpy.json_to_cel(self.json)


# Outcomes of evaluating an expression on a value (by its JSON text): a CEL expression is a pure
# function of ``self``, and the suite validates the same rendered objects and parts many times.
_OUTCOMES: dict[tuple[str, str], tuple[Any, Exception | None]] = {}


def _evaluate_once(expression: str, value: _CelValue, key: str) -> Any:
    """``_evaluate``, computed once per expression and value."""
    if (expression, key) not in _OUTCOMES:
        try:
            _OUTCOMES[expression, key] = (_evaluate(expression, value.cel), None)
        except (_EngineGap, celpy.CELEvalError) as exc:
            _OUTCOMES[expression, key] = (None, exc)
    result, exc = _OUTCOMES[expression, key]
    if exc is not None:
        raise exc.with_traceback(None)  # not a traceback that grows with every hit
    return result


def _check_rule(
    rule: dict[str, Any],
    value: _CelValue,
    path: tuple[str | int, ...],
    errors: list[str],
    key: str,
) -> None:
    """Evaluate one rule on ``value`` (``key``: its JSON text), appending an error if it
    fails."""
    expression = rule["rule"]
    if _engine_problem(rule) is not None:
        _UNEVALUABLE.add(expression)
        return
    if _compile(expression).uses_old_self:
        return  # a transition rule: the API server only evaluates it on updates
    where = _format_path(path) + rule.get("fieldPath", "")
    try:
        result = _evaluate_once(expression, value, key)
    except _EngineGap:
        _UNEVALUABLE.add(expression)
        return
    except celpy.CELEvalError as exc:
        errors.append(f"{where}: {_describe(exc)} evaluating rule: {expression}")
        return
    if not isinstance(result, celtypes.BoolType):
        _UNEVALUABLE.add(expression)  # the API server only accepts rules typed bool
    elif not result:
        errors.append(f"{where}: {_failure_message(rule, value.cel)}")


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PreparedSchema:
    schema: dict[str, Any]
    validator: jsonschema.protocols.Validator
    has_rules: bool


def _prepare(schema: dict[str, Any]) -> _PreparedSchema:
    """Adapt a CRD ``openAPIV3Schema`` to validation.

    The top-level ``metadata`` is validated by the API server's own ObjectMeta code, so here it
    only has to be an object; ``x-kubernetes-int-or-string`` replaces its redundant ``anyOf``
    (giving one clear error instead of two).
    """
    prepared = copy.deepcopy(schema)
    prepared.setdefault("properties", {})["metadata"] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    has_rules = False
    for _, node in _iter_schema(prepared):
        if node.get("x-kubernetes-int-or-string"):
            node.pop("anyOf", None)
        has_rules = has_rules or bool(node.get("x-kubernetes-validations"))
    validator = _SchemaValidator(prepared, format_checker=_FORMAT_CHECKER)
    return _PreparedSchema(prepared, validator, has_rules)


@functools.cache
def _prepared_for(files: tuple[Path, ...], api_version: str, kind: str) -> _PreparedSchema:
    crd = _find_crd(files, api_version, kind)
    return _prepare(_version_schema(crd, _split_api_version(api_version)[1]))


def validate(obj: dict[str, Any]) -> list[str]:
    """Validate a custom resource (a plain dict) as the API server would on creation.

    Returns human-readable errors (``path: message``), empty when the object is valid. Rules the
    CEL engine cannot evaluate are left out of the errors and recorded for
    :func:`unevaluable_rules`.

    Raises:
        LookupError: no CRD of :data:`CRD_SOURCES` serves the object's ``apiVersion`` and
            ``kind``.
    """
    prepared = _prepared_for(crd_files(), obj.get("apiVersion", ""), obj.get("kind", ""))
    return _validate_prepared(prepared, obj)


def validate_against_schema(schema: dict[str, Any], obj: dict[str, Any]) -> list[str]:
    """Like :func:`validate`, with an explicit CRD ``openAPIV3Schema`` (not cached)."""
    return _validate_prepared(_prepare(schema), obj)


def _validate_prepared(prepared: _PreparedSchema, obj: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    value = _default(prepared.schema, _prune(prepared.schema, obj, (), errors))  # a new copy
    schema_errors = sorted(
        prepared.validator.iter_errors(value),
        key=lambda error: (_format_path(tuple(error.absolute_path)), error.message),
    )
    errors.extend(f"{_format_path(tuple(e.absolute_path))}: {e.message}" for e in schema_errors)
    if not prepared.has_rules:
        return errors
    if any(error.validator in _BLOCKING_KEYWORDS for error in schema_errors):
        errors.append(_CEL_SKIPPED)
    else:
        _check_rules(prepared.schema, value, (), errors)
    return errors


class RuleLocation(NamedTuple):
    """Where a CEL rule sits in the CRDs (``path`` as in ``spec.items[*].name``)."""

    crd: str
    version: str
    path: str
    rule: str


def _iter_rules() -> Iterator[tuple[RuleLocation, dict[str, Any]]]:
    for crd in _load_crds(crd_files()):
        for version in crd["spec"]["versions"]:
            for path, node in _iter_schema(version["schema"]["openAPIV3Schema"]):
                for rule in node.get("x-kubernetes-validations", []):
                    location = RuleLocation(
                        crd["metadata"]["name"], version["name"], path, rule["rule"]
                    )
                    yield location, rule


def all_rules() -> list[RuleLocation]:
    """Every ``x-kubernetes-validations`` rule in every CRD version."""
    return [location for location, _ in _iter_rules()]


def check_compilable() -> dict[str, str]:
    """Map each CRD rule or message expression this engine cannot evaluate to why.

    Transition rules (``oldSelf``) compile fine; :func:`validate` skips them as creation-only.
    """
    problems = {}
    for _, rule in _iter_rules():
        problem = _engine_problem(rule)
        if problem is not None:
            problems[rule["rule"]] = problem
        if "messageExpression" in rule:
            error = _compile(rule["messageExpression"]).error
            if error is not None:
                problems[rule["messageExpression"]] = error
    return problems
