"""Reading props without assuming ``dict``/``list``.

In the engine, props are ``pulumi_policy.proxy`` objects: read-only ``Mapping``/``Sequence``
proxies that raise ``UnknownValueError`` when a preview-unknown value is touched. These helpers
only use the ``collections.abc`` protocols, never mutate, and let that error propagate (the
engine turns it into an advisory "can't run policy during preview").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})

_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([a-zA-Z]*)$")
_QUANTITY_SUFFIX = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
}
GIB = 2**30


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else EMPTY


def sequence(value: Any) -> Sequence[Any]:
    """``value`` if it is a list-like (not a string), else an empty tuple."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return value
    return ()


def dig(value: Any, *path: str) -> Any:
    """``value[path[0]][path[1]]...``, or ``None`` as soon as a level is missing."""
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def strings(value: Any) -> list[str]:
    """A string or a list of strings (IAM's ``Action``/``Resource`` style) as a list."""
    if isinstance(value, str):
        return [value]
    return [v for v in sequence(value) if isinstance(v, str)]


def is_true(value: Any) -> bool:
    """``True`` or the string ``"true"`` (pulumi-aws carries some booleans as strings)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def is_false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() == "false")


def number(value: Any) -> float | None:
    """An int/float, or a plain numeric string; ``None`` otherwise (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def quantity_bytes(value: Any) -> float | None:
    """A Kubernetes quantity (``"100Gi"``, ``"2Ti"``, ``"500G"``, ``1024``) in bytes."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value.strip())
    if match is None or match.group(2) not in _QUANTITY_SUFFIX:
        return None
    return float(match.group(1)) * _QUANTITY_SUFFIX[match.group(2)]


def fmt_number(value: float) -> str:
    """``32.0`` -> ``32``; ``0.5`` -> ``0.5``."""
    return str(int(value)) if float(value).is_integer() else str(value)


def show(value: Any) -> str:
    """A prop value for a message: strings quoted, numbers plain, ``None`` as "not set"."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return fmt_number(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {show(value[k])}" for k in value) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


def show_list(values: Sequence[str]) -> str:
    """``["a", "b"]`` as ``"a", "b"`` for messages."""
    return ", ".join(json.dumps(v) for v in values)
