"""The package schema other languages see: ``GpuPlatformArgs``, its nested types and enums.

``typed_dict_for`` turns a spec dataclass (``PlatformConfig``) into the ``TypedDict`` the Pulumi
component analyzer reads, with a description per property and an enum per ``Literal`` field.
"""

import dataclasses
import inspect
import json
import linecache
import re
import sys
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from .spec import camel

#
# The component analyzer of pulumi 3.272.0 (pulumi/provider/experimental/analyzer.py) reads
# the schema from type annotations, and from nothing else:
# - a property's description is the string literal right after its annotated attribute in the
#   class body, read from the class's source text (`get_docstring`, lines 707-780, through
#   `inspect.getsource`); a type's description is its `__doc__` (lines 654 and 682), the
#   component's its docstring (line 364);
# - enums come only from `enum.Enum` subclasses (`is_enum`, lines 628-669 and 850-851; the
#   members' names and values from `__members__`, lines 1046-1052); a `Literal` is not understood;
# - a TypedDict key not marked `Required` is optional (lines 414-415 and 425).
# A TypedDict built with the functional syntax has no source, so no descriptions. The TypedDicts
# are therefore generated as source text, one class per spec and one attribute docstring per
# field, taken from the field's `doc` metadata (the same text as the README's configuration
# reference), and executed in a module whose loader hands that text to `linecache`: that is how
# `inspect.getsource` finds it (Python 3.11 inspect.py 949-956: a missing file is accepted when
# its module has a `__loader__`; linecache.py 147-182: `lazycache` asks the loader's
# `get_source`). Each `Literal` field gets its own enum, named after its type and field.

SCHEMA_MODULE = f"{__name__.rpartition('.')[0]}.schema_types"

_REST_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?(?:[\w.]*\.)?([^`.]+)`")


def plain_text(text: str | None) -> str:
    """A docstring as the package schema shows it. Schema descriptions are Markdown (Pulumi's
    metaschema, pulumi/pulumi pkg/codegen/schema/pulumi.json, propertySpec.description), so reST
    markup goes: a role such as :class:`x.Y` becomes `Y`, a ``literal`` becomes `literal`; the
    text is dedented and each paragraph joined into one line."""
    text = _REST_ROLE.sub(lambda m: f"`{m.group(1)}`", inspect.cleandoc(text or ""))
    text = text.replace("``", "`")
    paragraphs = (" ".join(p.split()) for p in re.split(r"\n\s*\n", text))
    return "\n\n".join(p for p in paragraphs if p)


def field_description(f: dataclasses.Field) -> str:
    """A spec field's schema description: its documentation, then its default when that is a
    plain value (the defaults of nested objects are described by their own fields)."""
    text = plain_text(f.metadata.get("doc", ""))
    if f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        value = None if f.default is dataclasses.MISSING else f.default
    if value is None or dataclasses.is_dataclass(value) or value in ((), {}):
        return text
    shown = json.dumps(list(value) if isinstance(value, tuple) else value)
    return f"{text} Default: `{shown}`."


def enum_member_name(value: Any) -> str:
    """``on-demand`` -> ``OnDemand``: an enum member's name (the schema enum value's name)."""
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^0-9A-Za-z]+", str(value)) if p)


# Spec fields that are required in Python but optional as hosted inputs, because the hosted
# component falls back to something else (``platform_config_from_args`` below): to what.
HOSTED_FALLBACKS = {("PlatformConfig", "region"): "the stack's `aws:region`"}


class _GeneratedSource:
    """The generated module's loader, for ``linecache``: it only knows the module's source."""

    def __init__(self, source: str):
        self.source = source

    def get_source(self, fullname: str) -> str:
        return self.source


class _SchemaSource:
    """Source text of the TypedDicts (and enums) mirroring a spec and every spec inside it."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.names: dict[Any, str] = {}

    def _claim(self, name: str, owner: Any) -> None:
        if name in self.names.values():
            raise TypeError(f"two schema types would be named {name}")
        self.names[owner] = name

    def typed_dict(self, cls: type, name: str) -> str:
        if cls in self.names:
            return self.names[cls]
        self._claim(name, cls)
        stem = name.removesuffix("Inputs").removesuffix("Args")
        hints = typing.get_type_hints(cls)
        body = [f"    {plain_text(cls.__doc__)!r}", ""]
        for f in dataclasses.fields(cls):
            tp = self.annotation(hints[f.name], stem, f.name)
            description = field_description(f)
            fallback = HOSTED_FALLBACKS.get((cls.__name__, f.name))
            if fallback:
                description = f"{description} Optional here: without it, {fallback}."
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                tp = f"typing.Required[{tp}]"
            body += [f"    {f.name}: {tp}", f"    {description!r}"]
        self.blocks.append(f"class {name}(typing.TypedDict, total=False):\n" + "\n".join(body))
        return name

    def annotation(self, tp: Any, stem: str, field: str, in_list: bool = False) -> str:
        origin = get_origin(tp)
        if origin in (Union, types.UnionType):
            inner = [a for a in get_args(tp) if a is not type(None)]
            return self.annotation(inner[0], stem, field, in_list)
        if origin is Literal:
            return f"pulumi.Input[{self.enum(stem, field, get_args(tp), in_list)}]"
        if origin is tuple:
            return f"pulumi.Input[list[{self.annotation(get_args(tp)[0], stem, field, True)}]]"
        if origin in (Mapping, dict):
            return f"pulumi.Input[dict[str, {self.annotation(get_args(tp)[1], stem, field)}]]"
        if dataclasses.is_dataclass(tp):
            inputs = self.typed_dict(tp, tp.__name__.removesuffix("Spec") + "Inputs")
            return f"pulumi.Input[{inputs}]"
        if tp in (str, int, float, bool):
            return f"pulumi.Input[{tp.__name__}]"
        raise TypeError(f"{stem}.{field}: {tp!r} has no package schema type")

    def enum(self, stem: str, field: str, values: tuple[Any, ...], in_list: bool) -> str:
        key = camel(field)
        name = stem + key[:1].upper() + key[1:]
        if in_list:  # capacity_types -> NodePoolCapacityType: an enum names one value
            name = name.removesuffix("s")
        self._claim(name, (stem, field))
        members = [(enum_member_name(v), v) for v in values]
        doc = f"The values of {key}: {', '.join(map(str, values))}."
        self.blocks.append(
            f"{name} = enum.Enum({name!r}, {members!r}, module=__name__, qualname={name!r})\n"
            f"{name}.__doc__ = {doc!r}"
        )
        return name


def typed_dict_for(cls: type, name: str, module: str = SCHEMA_MODULE) -> type:
    """A ``TypedDict`` (``total=False``; required fields marked ``Required``) mirroring a spec.

    The Pulumi component analyzer reads it to publish the component's inputs in the package
    schema, so TypeScript, Go and .NET programs get the same configuration surface: every
    property described by its field's documentation, every ``Literal`` field an enum. It is
    defined, with the types nested in it, in the generated module ``module``.
    """
    gen = _SchemaSource()
    gen.typed_dict(cls, name)
    source = (
        f'"""Generated by {__name__}.typed_dict_for from {cls.__module__}.{cls.__name__}."""\n\n'
        "import enum\nimport typing\n\nimport pulumi\n\n\n" + "\n\n\n".join(gen.blocks) + "\n"
    )
    filename = str(Path(__file__).with_name(f"{module.rpartition('.')[2]}.generated.py"))
    generated = types.ModuleType(module, f"Package schema types generated from {cls.__name__}.")
    generated.__file__ = filename
    generated.__loader__ = _GeneratedSource(source)  # type: ignore[assignment]
    linecache.cache.pop(filename, None)
    sys.modules[module] = generated
    exec(compile(source, filename, "exec"), generated.__dict__)
    return getattr(generated, name)
