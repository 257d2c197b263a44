"""The fields of a resource's inputs that change between two renders, for a reviewer: dotted
paths into the inputs with the old and the new value, secrets masked, long values shortened.

``field_changes(old, new)`` walks both values together:
- mappings key by key (``spec.limits.nvidia.com/gpu``: keys are written as they are, dots
  included);
- lists whose items are mappings named by one key (``name``, ``key``, ``deviceName``,
  ``resourceType``, ``Sid``) item by item under that name (``requirements[key=karpenter.sh/
  capacity-type].values``), so an inserted item is one change and not a shift of every index;
  other lists of mappings of equal length by index, and any other list whole;
- a string holding a JSON document (an IAM policy) as that document;
- a multi-line string (user data; base64 of text is decoded first) line by line: one change per
  differing run of lines (``userData (line 12)``).
A secret is already masked in ``resources.json`` (``[secret]``, written by ``write._mask`` for
every value the engine marks secret, and by ``stackfile`` for every ``secure:`` config value): a
change on whose either side a secret stands shows ``[secret]`` on both sides, so a value made
secret is not shown in the clear either. Two secrets compare equal offline (the render never
decrypts them): only ``pulumi preview`` sees a secret's new value.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
from typing import Any

from .stackfile import SECRET_PLACEHOLDER

# Keys that name the items of a list of mappings (Kubernetes containers and requirements, EC2
# block device mappings and tag specifications, IAM statements).
ITEM_KEYS = ("name", "key", "deviceName", "resourceType", "Sid")
ABSENT = "(none)"
# A shown value longer than this is cut in the middle.
MAX_VALUE = 80


class _Absent:
    def __repr__(self) -> str:
        return ABSENT


_MISSING = _Absent()


def field_changes(old: Any, new: Any, path: str = "") -> list[tuple[str, str, str]]:
    """``(path, old, new)`` for every changed field, the values as shown (masked, shortened)."""
    if old == new:
        return []
    if old == SECRET_PLACEHOLDER or new == SECRET_PLACEHOLDER:
        return [(path, SECRET_PLACEHOLDER, SECRET_PLACEHOLDER)]
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, str, str]] = []
        for key in sorted(set(old) | set(new), key=str):
            out += field_changes(old.get(key, _MISSING), new.get(key, _MISSING), _join(path, key))
        return out
    if isinstance(old, list) and isinstance(new, list):
        return _list_changes(old, new, path)
    if isinstance(old, str) and isinstance(new, str):
        documents = _json_document(old), _json_document(new)
        if documents[0] is not None and documents[1] is not None:
            return field_changes(documents[0], documents[1], path)
        texts = _text(old), _text(new)
        if "\n" in texts[0][0] + texts[1][0]:
            return _line_changes(texts[0], texts[1], path)
    return [(path, show(old), show(new))]


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _item_key(old: list[Any], new: list[Any]) -> str | None:
    for key in ITEM_KEYS:
        names = []
        for items in (old, new):
            found = [i.get(key) for i in items if isinstance(i, dict)]
            if len(found) != len(items) or not all(isinstance(n, str) for n in found):
                break
            if len(set(found)) != len(found):
                break
            names.append(found)
        else:
            return key
    return None


def _list_changes(old: list[Any], new: list[Any], path: str) -> list[tuple[str, str, str]]:
    key = _item_key(old, new)
    if key is not None and (old or new):
        before = {i[key]: i for i in old}
        after = {i[key]: i for i in new}
        names = [i[key] for i in old] + [i[key] for i in new if i[key] not in before]
        out: list[tuple[str, str, str]] = []
        for name in names:
            out += field_changes(
                before.get(name, _MISSING), after.get(name, _MISSING), f"{path}[{key}={name}]"
            )
        if not out:  # the same items, in another order
            return [(f"{path} (order)", show(list(before)), show(list(after)))]
        return out
    nested = any(isinstance(i, (dict, list)) for i in [*old, *new])
    if nested and len(old) == len(new):
        out = []
        for index, (before_item, after_item) in enumerate(zip(old, new, strict=True)):
            out += field_changes(before_item, after_item, f"{path}[{index}]")
        return out
    return [(path, show(old), show(new))]


def _json_document(text: str) -> Any:
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return None
    return document if isinstance(document, (dict, list)) else None


def _text(value: str) -> tuple[str, str]:
    """The string, or the text it is the base64 of (EC2 launch template user data), and how it
    was read."""
    if len(value) >= 16 and "\n" not in value.strip():
        try:
            decoded = base64.b64decode(value, validate=True).decode()
        except (binascii.Error, ValueError):
            return value, ""
        if "\n" in decoded:
            return decoded, ", base64-decoded"
    return value, ""


def _line_changes(
    old: tuple[str, str], new: tuple[str, str], path: str
) -> list[tuple[str, str, str]]:
    before, after = old[0].splitlines(), new[0].splitlines()
    how = old[1] or new[1]
    out = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        lines = f"line {i1 + 1}" if i2 - i1 <= 1 else f"lines {i1 + 1}-{i2}"
        out.append(
            (
                f"{path} ({lines}{how})",
                show("\n".join(before[i1:i2])) if i2 > i1 else ABSENT,
                show("\n".join(after[j1:j2])) if j2 > j1 else ABSENT,
            )
        )
    return out


def show(value: Any) -> str:
    """A value on one line: a plain string as it is, anything else as JSON; cut in the middle
    when longer than ``MAX_VALUE`` (its length said)."""
    if value is _MISSING:
        return ABSENT
    if isinstance(value, str) and value and "\n" not in value and value.strip() == value:
        text = value
    else:
        text = json.dumps(value, sort_keys=True, default=str)
    if len(text) > MAX_VALUE:
        text = f"{text[:50]}…{text[-20:]} ({len(text)} chars)"
    return text


def code(text: str) -> str:
    """``text`` as inline Markdown code, whatever backticks it holds."""
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``"
