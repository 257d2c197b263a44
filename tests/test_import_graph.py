"""The package's import graph, read with ``ast``: no cycle, and the GPU budget at the bottom.

Edges are the imports that run when a module is imported: module-level statements (``if``/
``try`` bodies included), not function bodies and not ``if TYPE_CHECKING:`` blocks. Importing
``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``, so those are edges too (except the
importer's own packages, which are already importing).
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "components"
PACKAGE = "eks_gpu_platform"


def module_names() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if "__pycache__" in parts:
            continue
        out[".".join([PACKAGE, *parts])] = path
    return out


MODULES = module_names()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                out += _top_level_imports(node.body)
            out += _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                out += _top_level_imports(block)
            for handler in node.handlers:
                out += _top_level_imports(handler.body)
    return out


def _with_packages(target: str, importer: str) -> set[str]:
    """``target`` and the packages above it whose ``__init__`` the import runs."""
    parts = target.split(".")
    out = set()
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        own = importer == name or importer.startswith(name + ".")
        if name in MODULES and not own:
            out.add(name)
    return out


def imports_of(name: str) -> set[str]:
    path = MODULES[name]
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in _top_level_imports(ast.parse(path.read_text()).body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE):
                    out |= _with_packages(alias.name, name)
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if not source.startswith(PACKAGE):
            continue
        out |= _with_packages(source, name)
        for alias in node.names:
            sub = f"{source}.{alias.name}"
            if sub in MODULES:
                out |= _with_packages(sub, name)
    out.discard(name)
    return out


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each module's imports of the package (``imports_of``), computed on first use, not at
    collection: a worker that runs none of these tests does not parse every module."""
    return {name: imports_of(name) for name in MODULES}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_sees_the_imports_it_must():
    # The walker is not vacuous: known edges are found, TYPE_CHECKING ones are not.
    assert "eks_gpu_platform.budget" in graph()["eks_gpu_platform.config"]
    assert "eks_gpu_platform.budget.nodepools" in graph()["eks_gpu_platform.nodepool.spec"]
    assert "eks_gpu_platform.nodepool" in graph()["eks_gpu_platform.gpu_operator.component"]
    assert "eks_gpu_platform.config" not in graph()["eks_gpu_platform.budget.stack"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    assert find_cycle(graph()) is None


def reachable(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph()[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_budget_imports_no_capability_package():
    """The GPU budget is one package at the bottom: config, the components and the render
    import it; it imports only the leaf modules (issue 19 item "One capacity model")."""
    budget = {n for n in MODULES if n == "eks_gpu_platform.budget" or ".budget." in n}
    outside = set().union(*(reachable(n) for n in budget)) - budget
    assert outside == {
        "eks_gpu_platform.catalog",
        "eks_gpu_platform.catalog_mig",
        "eks_gpu_platform.errors",
        "eks_gpu_platform.fields",
        "eks_gpu_platform.prices",
        "eks_gpu_platform.spec",
        "eks_gpu_platform.versions",
    }
    for user in ("config", "platform", "nodepool.component", "offline.capacity", "scheduler"):
        assert "eks_gpu_platform.budget" in reachable(f"eks_gpu_platform.{user}"), user


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not n.endswith("__main__")))
def test_every_module_imports_on_its_own(name):
    importlib.import_module(name)


def test_every_package_is_in_the_wheel():
    import tomllib

    listed = set(
        tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["tool"]["setuptools"][
            "packages"
        ]
    )
    packages = {n for n, p in MODULES.items() if p.name == "__init__.py"}
    assert packages == listed


# The modules that make up the stack configuration (issue 33, point 2): they read it whole.
CONFIG_MODULES = {
    f"{PACKAGE}.{n}"
    for n in ("config", "config_load", "config_cross", "config_checks", "gang_checks")
}


def config_references(name: str) -> list[str]:
    """Where module ``name`` refers to the stack configuration: an import of a module of it
    (``CONFIG_MODULES``) anywhere (under ``if TYPE_CHECKING:`` and in function bodies too), or
    the name ``PlatformConfig`` (as a name, an attribute, or in a string: a string annotation,
    a docstring)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        sources: list[str] = []
        if isinstance(node, ast.Import):
            sources = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            sources = [source, *(f"{source}.{alias.name}" for alias in node.names)]
        for source in sources:
            if source in CONFIG_MODULES:
                out.append(f"line {node.lineno}: imports {source}")
        if (
            (isinstance(node, ast.Name) and node.id == "PlatformConfig")
            or (isinstance(node, ast.Attribute) and node.attr == "PlatformConfig")
            or (isinstance(node, ast.alias) and node.name == "PlatformConfig")
            or (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "PlatformConfig" in node.value
            )
        ):
            out.append(f"line {node.lineno}: names PlatformConfig")
    return out


def test_config_references_are_found():
    # Not vacuous: the config's own modules name it; an import under TYPE_CHECKING counts.
    assert config_references(f"{PACKAGE}.gang_checks")[:2] == [
        "line 1: names PlatformConfig",
        "line 20: imports eks_gpu_platform.config",
    ]
    assert any("imports" in r for r in config_references(f"{PACKAGE}.platform"))


def test_nothing_below_the_config_refers_up_to_it():
    """The GPU budget and every module the configuration imports take the specs they read (the
    pools, the queues, the GPU Operator's settings, ...), never the stack configuration: no
    import of it, even for type checking, and no ``PlatformConfig`` in a name or a string
    (issue 33, point 5)."""
    budget = {n for n in MODULES if n == f"{PACKAGE}.budget" or n.startswith(f"{PACKAGE}.budget.")}
    below = set().union(*(reachable(n) for n in CONFIG_MODULES)) - CONFIG_MODULES
    assert budget <= below
    found = {n: refs for n in sorted(below) if (refs := config_references(n))}
    assert found == {}
