"""How a bad value is named and reported: problem paths, ``SpecError`` (one ``<key>: <problem>``
line per problem), values as messages show them, and did-you-mean suggestions. The base of the
spec machinery (``spec.py``, ``fields.py``); no Pulumi import here.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable
from typing import Any

Path = tuple[str | int, ...]
Problem = tuple[Path, str]


def camel(name: str) -> str:
    """``kubernetes_version`` -> ``kubernetesVersion``: how a field is spelled in stack config."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class RawKey(str):
    """A key as the user typed it (an unknown key, a map key): never camelCased in messages."""

    __slots__ = ()


class Item(int):
    """A list index that knows the item's name: shown as ``[1](inference)`` in messages, so a
    problem inside ``nodePools`` or ``queues`` names the pool or queue, not only its index."""

    label: str

    def __new__(cls, index: int, label: str) -> Item:
        obj = super().__new__(cls, index)
        obj.label = label
        return obj


def _child(node: Any, part: str | int) -> Any:
    if isinstance(part, int):
        return (
            node[part]
            if isinstance(node, (list, tuple)) and -len(node) <= part < len(node)
            else None
        )
    if isinstance(node, dict):
        if isinstance(part, RawKey):
            return node.get(part)
        return node.get(camel(part), node.get(part))
    return None if isinstance(node, (str, int, float)) else getattr(node, part, None)


def _label(item: Any) -> str | None:
    name = item.get("name") if isinstance(item, dict) else getattr(item, "name", None)
    return name if isinstance(name, str) and name else None


def named(path: Path, data: Any) -> Path:
    """``path`` with each list index that points at a named item (a dict or spec with a string
    ``name``) in ``data`` turned into an ``Item`` carrying that name."""
    out: list[str | int] = []
    node = data
    for part in path:
        node = _child(node, part)
        if isinstance(part, int) and not isinstance(part, (bool, Item)):
            label = _label(node)
            out.append(Item(part, label) if label else part)
        else:
            out.append(part)
    return tuple(out)


def one_line(text: str) -> str:
    """``text`` with every non-printable character (newline, carriage return, tab, the Unicode
    line and paragraph separators...) written as its backslash escape, as ``repr`` writes it
    (``'\n'`` becomes ``\\n``): a value a user typed can never split a message into lines or
    rewrite a terminal line. Printable text is returned as is."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode() for c in text
    )


def _part(text: str) -> str:
    """A name inside a problem path (a list item's name, a key as typed): as is when printable,
    else its ``repr`` (``'gpu\\nx'``), so it stays on one line and shows it was quoted."""
    return text if text.isprintable() else repr(text)


def format_path(root: str, path: Path, *, config: bool) -> str:
    """Join a problem path onto its root, camelCasing field names for configuration keys."""
    out = root
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]" + (f"({_part(part.label)})" if isinstance(part, Item) else "")
        else:
            name = camel(part) if config and not isinstance(part, RawKey) else part
            name = _part(name)
            out = f"{out}.{name}" if out else name
    return out


def show(value: Any) -> str:
    """A value as it appears in an error message."""
    if is_output(value):
        return "a pulumi.Output"
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

    def __init__(
        self, root: str, problems: list[Problem], *, config: bool = False, data: Any = None
    ):
        """``data``: the value the paths point into (configuration data or the spec), whose
        named list items the messages then name."""
        self.root = root
        self.problems = (
            [(named(p, data), m) for p, m in problems] if data is not None else list(problems)
        )
        self.config = config
        self.lines = [
            one_line(f"{format_path(root, p, config=config)}: {m}") for p, m in self.problems
        ]
        super().__init__("\n".join(self.lines))

    @classmethod
    def from_lines(cls, lines: list[str]) -> SpecError:
        """An error made of finished ``<key>: <problem>`` lines from several sections."""
        err = cls("", [])
        err.lines = [one_line(line) for line in lines]
        err.args = ("\n".join(err.lines),)
        return err


# A problem ``pulumi preview`` only warns about and ``pulumi up`` refuses (a placeholder CIDR, an
# unlisted deployer, a missing AMI parameter...): the warning carries this suffix, and the offline
# render lists every warning that does at the end of its console output and in summary.md's
# "Refused by `pulumi up`" section (``offline.render``, ``offline.summary``).
REFUSED_BY_UP = " (refused by `pulumi up`)"


def refused_by_up(problem: str) -> str:
    """The warning text of a problem ``pulumi up`` refuses (``REFUSED_BY_UP`` appended)."""
    return problem + REFUSED_BY_UP


def up_refusals(warnings: Iterable[str]) -> list[str]:
    """The problems among ``warnings`` that ``pulumi up`` refuses, without the suffix."""
    return [w.removesuffix(REFUSED_BY_UP) for w in warnings if w.endswith(REFUSED_BY_UP)]


def is_output(value: Any) -> bool:
    """Whether ``value`` is a ``pulumi.Output``. Pulumi is not imported here: until a program
    imports it, no Output can exist."""
    pulumi = sys.modules.get("pulumi")
    return pulumi is not None and isinstance(value, pulumi.Output)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices``, or ``""``. Case is ignored:
    ``'L4'`` suggests ``'l4'`` (issue 23, point 8f), ``'NodePools'`` ``'nodePools'``."""
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    folded = word.casefold()
    if folded in by_folded:
        return f"; did you mean {by_folded[folded]!r}?"
    match = difflib.get_close_matches(folded, list(by_folded), n=1, cutoff=0.6)
    return f"; did you mean {by_folded[match[0]]!r}?" if match else ""
