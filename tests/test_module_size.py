"""No module of the library exceeds 500 lines (issue 33, point 2).

A module past that size has grown a second concept: split it along its concepts (not by line
count), with renders byte-identical, and give each part a docstring saying what it owns.
"""

from __future__ import annotations

from pathlib import Path

COMPONENTS = Path(__file__).resolve().parents[1] / "components"
LIMIT = 500


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_line_count_is_the_files_lines(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("a = 1\n" * (LIMIT + 1))
    assert line_count(module) == LIMIT + 1


def test_no_module_of_components_exceeds_500_lines():
    modules = sorted(COMPONENTS.rglob("*.py"))
    assert len(modules) > 50
    too_long = {str(p.relative_to(COMPONENTS)): n for p in modules if (n := line_count(p)) > LIMIT}
    assert too_long == {}
