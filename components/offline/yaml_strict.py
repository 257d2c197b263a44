"""Reading stack files as the Pulumi CLI does: a key given twice in one mapping is an error.

PyYAML's ``safe_load`` keeps the last value of a duplicated key silently (a second
``eks-gpu-platform:nodePools`` replaces the first whole block). The Pulumi CLI refuses such a
file: it reads stack files with
``gopkg.in/yaml.v3`` v3.0.1 (pulumi/pulumi@1b5949891b3c sdk/go/common/workspace/loaders.go line
181, ``LoadProjectStackBytes`` -> ``encoding.YAML.Unmarshal``, sdk/go/common/encoding/marshal.go
lines 27 and 115: ``yaml.Unmarshal``), whose decoder checks unique keys by default and fails
with "line %d: mapping key %#v already defined at line %d" (go-yaml v3.0.1 decode.go line 776,
``decoder.mapping``). ``load`` refuses them too, naming every duplicated key (its path) and its
lines in one error.

Booleans are YAML 1.2's, as yaml.v3 resolves them: only ``true``/``True``/``TRUE`` and
``false``/``False``/``FALSE`` (go-yaml v3.0.1 resolve.go lines 52-53, ``resolveMapList``); the
YAML 1.1 words ``yes``/``no``/``on``/``off``/``y``/``n`` become booleans only when decoded into a
typed Go ``bool`` (decode.go lines 683-693), and the CLI decodes a config value into ``any``:
``config.Value.UnmarshalYAML`` -> ``object.UnmarshalYAML`` (pulumi/pulumi@1b5949891b3c
sdk/go/common/resource/config/value.go line 238, object.go lines 455-462, ``unmarshal(&v)`` with
``var v any``), whose ``unmarshalObject`` keeps a string a string (object.go line 488), and an
object value reaches the program as JSON text (``MarshalString``, object.go line 403). So
``cluster: {endpointPublicAccess: yes}`` hands the program ``{"endpointPublicAccess": "yes"}``:
``load`` reads ``yes`` as the string ``"yes"`` too (PyYAML's YAML 1.1 resolver would make it
``True``), and the configuration's bool check refuses it. Other YAML 1.1 forms PyYAML still
resolves and yaml.v3 does not (base-60 numbers such as ``1:30``) are left as they were: no
configuration key takes one.
"""

from __future__ import annotations

import re
from typing import Any

import yaml


class DuplicateKeyError(ValueError):
    """One or more mappings of a YAML document repeat a key; one line per duplicate."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        super().__init__("\n".join(lines))


def _key_text(node: yaml.Node) -> str:
    return node.value if isinstance(node, yaml.ScalarNode) else f"<{node.id}>"


def _duplicates(node: yaml.Node, path: str, out: list[tuple[int, str]], seen: set[int]) -> None:
    """Every key repeated within one mapping under ``node``, with its path and lines."""
    if id(node) in seen:
        return  # an alias of a node already walked
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _duplicates(item, f"{path}[{i}]", out, seen)
    elif isinstance(node, yaml.MappingNode):
        first: dict[tuple[str, str], int] = {}  # yaml.v3: same node kind and text
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # '<<' merges another mapping in; it is not a key of this one
            key = _key_text(key_node)
            line = key_node.start_mark.line + 1
            where = f"{path}.{key}" if path else key
            ident = (type(key_node).__name__, key)
            if ident in first:
                out.append(
                    (
                        line,
                        f"{where}: defined twice, at lines {first[ident]} and "
                        f"{line}; YAML keeps only the last one and the Pulumi CLI refuses the "
                        "file: remove one",
                    )
                )
            else:
                first[ident] = line
            _duplicates(value_node, where, out, seen)


_BOOL_1_1 = "tag:yaml.org,2002:bool"
# yaml.v3's booleans (resolve.go lines 52-53), the only plain scalars resolved as !!bool.
_BOOL_1_2 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


def _yaml_1_2_booleans(loader: Any) -> Any:
    """A subclass of ``loader`` whose implicit !!bool resolver is yaml.v3's: ``yes``, ``no``,
    ``on``, ``off`` stay strings."""
    resolvers = {
        first: [(tag, regexp) for tag, regexp in entries if tag != _BOOL_1_1]
        for first, entries in loader.yaml_implicit_resolvers.items()
    }
    for first in "tTfF":
        resolvers.setdefault(first, []).insert(0, (_BOOL_1_1, _BOOL_1_2))
    return type(f"YAML12{loader.__name__}", (loader,), {"yaml_implicit_resolvers": resolvers})


_SAFE_LOADER = _yaml_1_2_booleans(yaml.SafeLoader)


# libyaml's parser builds the same nodes (same classes, tags and marks) ten times faster: a stack
# file of 500 pools parses in 40 ms instead of 270 ms. A document it rejects is parsed again by
# the pure-Python parser, so an error reads the same with or without libyaml.
_FAST_LOADER = (
    _yaml_1_2_booleans(yaml.CSafeLoader) if getattr(yaml, "__with_libyaml__", False) else None
)


def load(text: str) -> Any:
    """The YAML document in ``text``; raises ``DuplicateKeyError`` listing every duplicated key
    with its path and both lines (and ``yaml.YAMLError`` for a document that is not YAML)."""
    if _FAST_LOADER is not None:
        try:
            return _load(text, _FAST_LOADER)
        except DuplicateKeyError:
            raise
        except yaml.YAMLError:
            pass
    return _load(text, _SAFE_LOADER)


def _load(text: str, loader_class: Any) -> Any:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        found: list[tuple[int, str]] = []
        if node is not None:
            _duplicates(node, "", found, set())
        if found:
            raise DuplicateKeyError([line for _, line in sorted(found, key=lambda f: f[0])])
        return loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
