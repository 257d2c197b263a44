"""The README and the pages under docs/ hold together (issue 23, point 9).

Every relative link (a file, a folder, a heading anchor) of README.md and docs/*.md resolves the
way GitHub resolves it, every docs page is linked from README.md or docs/README.md, and the README
stays a ten-minute read. ``docs/_changes/`` is the other branches' drafts, folded in at merge: not
checked here.

Anchors follow GitHub's heading ids. GitHub Docs, "Basic writing and formatting syntax", section
links: letters lower-cased, spaces replaced by hyphens, other whitespace and punctuation removed,
markup removed leaving its text, and a repeated id gets "-1", "-2", ... GitHub renders them with
github-slugger (Flet/github-slugger 2.0.0, commit 3461c43): ``index.js`` L73-77 lower-cases and
removes ``regex`` then turns each space into ``-``; ``script/generate-regex.js`` builds that regex
from the Unicode general categories Other_Number, every punctuation category but ``-`` (Pc, the
connector ``_``, is kept), Symbol, Control, Private_Use, Format, Unassigned and Separator but the
space, less the Alphabetic code points; ``index.js`` L34-47 de-duplicates.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# The README is read in ten minutes: at about 240 words a minute (silent reading of non-fiction)
# that is about 2,400 words, and the README's lines average about 7 words with its tables and
# code blocks: 300 lines, at most.
README_MAX_LINES = 300

# Unicode general categories github-slugger removes (script/generate-regex.js); ``-`` and the
# space are kept, and so is any alphabetic character whatever its category.
_REMOVED = {"No", "Pe", "Pf", "Pi", "Ps", "Po", "Pd", "Sm", "Sc", "Sk", "So"}
_REMOVED |= {"Cc", "Co", "Cf", "Cn", "Zs", "Zl", "Zp"}


def slug(text: str) -> str:
    """github-slugger's ``slug``: lower-case, drop the removed characters, each space to ``-``."""
    kept = (
        ch
        for ch in text.lower()
        if ch in " -" or ch.isalpha() or unicodedata.category(ch) not in _REMOVED
    )
    return "".join(kept).replace(" ", "-")


class Slugger:
    """github-slugger's ``BananaSlug.slug``: a repeated slug gets ``-<n>`` (index.js L34-47)."""

    def __init__(self) -> None:
        self.occurrences: dict[str, int] = {}

    def slug(self, text: str) -> str:
        original = result = slug(text)
        while result in self.occurrences:
            self.occurrences[original] += 1
            result = f"{original}-{self.occurrences[original]}"
        self.occurrences[result] = 0
        return result


_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
_HTML_ID = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def _prose_lines(text: str):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            yield number, line


def heading_text(raw: str) -> str:
    """A heading's rendered text: code spans keep their content, links their text, no emphasis."""
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip().replace("*", "\0").replace("_", "\1"), raw)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*\*|__|\*|(?<!\w)_|_(?!\w))", "", text)
    return text.replace("\0", "*").replace("\1", "_").strip()


def anchors(text: str) -> set[str]:
    """The ids GitHub gives a page's headings (and explicit ``<a name|id>`` anchors)."""
    slugger = Slugger()
    found = set()
    for _, line in _prose_lines(text):
        match = _HEADING.match(line)
        if match:
            found.add(slugger.slug(heading_text(match.group(2))))
        found.update(_HTML_ID.findall(line))
    return found


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link, image and link definition outside code."""
    out = []
    for number, line in _prose_lines(text):
        prose = _CODE_SPAN.sub("", line)
        out += [(number, m.group(2)) for m in _LINK.finditer(prose)]
        definition = _DEFINITION.match(prose)
        if definition:
            out.append((number, definition.group(1)))
    return out


def pages(root: Path) -> list[Path]:
    """README.md and the docs pages; ``docs/_changes/`` (drafts of other branches) excluded."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def broken_links(root: Path) -> list[str]:
    """One line per link of ``pages(root)`` that does not resolve: page, line, target, why."""
    problems = []
    cache: dict[Path, set[str]] = {}
    for page in pages(root):
        for number, target in links(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # https:, mailto:: not checked offline
            where = f"{page.relative_to(root)}:{number}: {target}"
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page.resolve()
            try:
                relative = dest.relative_to(root.resolve()).as_posix()
            except ValueError:
                problems.append(f"{where}: outside the repository")
                continue
            if not dest.exists():
                problems.append(f"{where}: no such file")
                continue
            if not anchor:
                continue
            if dest.suffix != ".md":
                problems.append(f"{where}: an anchor into a file that is not markdown")
                continue
            if dest not in cache:
                cache[dest] = anchors(dest.read_text(encoding="utf-8"))
            if anchor not in cache[dest]:
                problems.append(f"{where}: no heading with this anchor in {relative}")
    return problems


def unlinked_pages(root: Path) -> list[str]:
    """docs/*.md pages linked from neither README.md nor docs/README.md."""
    linked = set()
    for index in (root / "README.md", root / "docs" / "README.md"):
        for _, target in links(index.read_text(encoding="utf-8")):
            path_part = target.partition("#")[0]
            if path_part and not re.match(r"^[a-z][a-z0-9+.-]*:", path_part, re.I):
                linked.add((index.parent / path_part).resolve())
    return [
        page.relative_to(root).as_posix()
        for page in sorted((root / "docs").glob("*.md"))
        if page.name != "README.md" and page.resolve() not in linked
    ]


# GitHub's ids for headings of this repository's pages, and github-slugger's own fixtures
# (test/fixtures.json at 3461c43).
@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Upgrades and tear-down", "upgrades-and-tear-down"),
        (
            "Node start: GPU nodes that start at the hardware's pace",
            "node-start-gpu-nodes-that-start-at-the-hardwares-pace",
        ),
        ("`nodePools[].capacityReservations[]`", "nodepoolscapacityreservations"),
        ("`eks-gpu-platform:cluster`", "eks-gpu-platformcluster"),
        (
            "1. Karpenter scales up for pods KAI keeps pending over quota",
            "1-karpenter-scales-up-for-pods-kai-keeps-pending-over-quota",
        ),
        ("GPU Operator / KAI scheduler", "gpu-operator--kai-scheduler"),
        (
            "Tenant guardrails (Pod Security and admission)",
            "tenant-guardrails-pod-security-and-admission",
        ),
        ("First `up`", "first-up"),
        ("**Bold** and _italic_ and `snake_case`", "bold-and-italic-and-snake_case"),
        ("[Linked](other.md) heading", "linked-heading"),
        ("bravoCharlieDelta", "bravocharliedelta"),
        ("Привет non-latin 你好", "привет-non-latin-你好"),
        ("I ♥ unicode", "i--unicode"),
        ("Emoji 😄 :smile:", "emoji--smile"),
        ("a\u00a0b", "ab"),
    ],
)
def test_heading_ids_follow_github(heading, expected):
    assert Slugger().slug(heading_text(heading)) == expected


def test_repeated_headings_are_numbered_as_github_slugger_numbers_them():
    slugger = Slugger()
    assert [slugger.slug(t) for t in ("echo", "echo", "echo 1", "echo-1", "echo")] == [
        "echo",
        "echo-1",
        "echo-1-1",
        "echo-1-2",
        "echo-2",
    ]


def test_the_checker_reports_each_broken_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "_changes").mkdir()
    (tmp_path / "examples").mkdir()
    (tmp_path / "README.md").write_text(
        "# Guide\n\n## Setup\n\n[ok](#setup) [bad](#set-up) [page](docs/a.md#part-two)\n"
        "[gone](docs/missing.md) [dir](examples)\n"
        "```\n[in code](nowhere.md)\n```\n`[span](nowhere.md)` [web](https://example.com/x#y)\n"
    )
    (tmp_path / "docs" / "a.md").write_text(
        "# A\n\n## Part two\n\n## Part two\n\n[back](../README.md#guide) [dup](#part-two-1)\n"
        "[up](../../outside.md) [code](../examples#x)\n"
    )
    (tmp_path / "docs" / "README.md").write_text("# Docs\n\n[A](a.md)\n")
    (tmp_path / "docs" / "_changes" / "draft.md").write_text("[unchecked](nowhere.md)\n")
    assert broken_links(tmp_path) == [
        "README.md:5: #set-up: no heading with this anchor in README.md",
        "README.md:6: docs/missing.md: no such file",
        "docs/a.md:8: ../../outside.md: outside the repository",
        "docs/a.md:8: ../examples#x: an anchor into a file that is not markdown",
    ]
    assert unlinked_pages(tmp_path) == []
    (tmp_path / "docs" / "b.md").write_text("# B\n")
    assert unlinked_pages(tmp_path) == ["docs/b.md"]


def test_every_relative_link_and_anchor_resolves():
    assert broken_links(REPO) == []


def test_every_docs_page_is_linked_from_the_readme_or_the_docs_index():
    assert unlinked_pages(REPO) == []


def test_the_readme_is_a_ten_minute_read():
    lines = len((REPO / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES}"
