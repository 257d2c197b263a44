"""``dumps_indented(value)``: the text of ``json.dumps(value, indent=2, sort_keys=True)`` for the
render's JSON files (``resources.json``, ``iam/``), in one recursive pass.

With ``indent`` the standard library encodes in pure Python through nested generators (the C
encoder only serves ``indent=None``: CPython 3.11 Lib/json/encoder.py ``JSONEncoder.iterencode``
L247-257); this writes the same text (``_make_iterencode``'s layout: ``",\\n" + indent`` between
items, ``"{}"``/``"[]"`` when empty, keys sorted, strings through the same C
``encode_basestring_ascii``, numbers by ``int.__repr__``/``float.__repr__`` and its
``NaN``/``Infinity`` spellings) at about a third of the cost. Anything outside plain JSON data
(a key that is not a string, an object of another type) is handed to ``json.dumps`` itself, so
the text is always the standard library's; tests/offline/test_write_json.py compares the two.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

__all__ = ["dumps_indented"]

_INDENT = "  "


class _NotPlain(Exception):
    """A value the fast pass does not write: ``json.dumps`` writes the whole document."""


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2, sort_keys=True)``."""
    parts: list[str] = []
    try:
        _emit(value, "\n", parts)
    except _NotPlain:
        return json.dumps(value, indent=2, sort_keys=True)
    return "".join(parts)


def _emit(value: Any, newline: str, parts: list[str]) -> None:
    if isinstance(value, str):
        parts.append(encode_basestring_ascii(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(_float(value))
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + _INDENT
        separator = "{" + inner
        for key in sorted(value) if all(type(k) is str for k in value) else _not_plain():
            parts.append(separator)
            parts.append(encode_basestring_ascii(key))
            parts.append(": ")
            _emit(value[key], inner, parts)
            separator = "," + inner
        parts.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            parts.append("[]")
            return
        inner = newline + _INDENT
        separator = "[" + inner
        for item in value:
            parts.append(separator)
            _emit(item, inner, parts)
            separator = "," + inner
        parts.append(newline + "]")
    else:
        _not_plain()


def _float(value: float) -> str:
    # json.encoder's floatstr with allow_nan=True (the default).
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _not_plain() -> Any:
    raise _NotPlain
