"""The gh-106905 guard (tests/ast_guard.py; issue 23, point 8e): the bug reproduced on an
affected interpreter, and gone with the guard."""

import gc
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from ast_guard import _Guard, affected

TESTS = Path(__file__).resolve().parent
# One thread, deterministic: a GC pass inside ast.parse runs a finalizer that formats a
# traceback, which (Python 3.11) calls ast.parse for its carets.
REPRO = textwrap.dedent(
    """
    import ast, gc, sys, traceback
    sys.path.insert(0, {tests!r})
    if sys.argv[1] == "guard":
        import ast_guard
        ast_guard.install()
    SOURCE = open({source!r}).read()

    def boom():
        return {{}}["x"] + 1

    class Lost:
        def __init__(self):
            self.me = self

        def __del__(self):
            try:
                boom()
            except KeyError as e:
                "".join(traceback.format_exception(e))

    gc.set_threshold(100, 1, 1)
    for i in range(50):
        for _ in range(50):
            Lost()
        try:
            ast.parse(SOURCE)
        except SystemError as e:
            print(e)
            sys.exit(3)
    """
)


def run_repro(tmp_path: Path, mode: str) -> subprocess.CompletedProcess:
    # A file, not -c: the traceback needs the finalizer's source lines to parse for carets.
    script = tmp_path / "repro.py"
    script.write_text(REPRO.format(tests=str(TESTS), source=str(TESTS / "test_platform.py")))
    return subprocess.run(
        [sys.executable, str(script), mode], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ((3, 10, 14), False),
        ((3, 11, 2), True),
        ((3, 11, 7), True),
        ((3, 11, 8), False),
        ((3, 12, 1), True),
        ((3, 12, 2), False),
        ((3, 13, 0), False),
    ],
)
def test_affected_versions(version, expected):
    assert affected(version) is expected


@pytest.mark.skipif(not affected(), reason="this interpreter has the gh-106905 fix")
def test_the_bug_reproduces_without_the_guard(tmp_path):
    run = run_repro(tmp_path, "plain")
    assert run.returncode == 3, run.stderr
    assert run.stdout.startswith("AST constructor recursion depth mismatch")


def test_no_mismatch_with_the_guard(tmp_path):
    run = run_repro(tmp_path, "guard")
    assert (run.returncode, run.stdout) == (0, ""), run.stderr


def test_guard_restores_gc_only_after_the_last_concurrent_parse():
    started, release = threading.Event(), threading.Event()

    def parse(source):
        if source == "slow":
            started.set()
            release.wait(10)
        return source

    guard = _Guard(parse)
    enabled = gc.isenabled()
    gc.enable()
    try:
        worker = threading.Thread(target=guard, args=("slow",))
        worker.start()
        assert started.wait(10)
        assert not gc.isenabled()  # the worker's parse is running
        assert guard("fast") == "fast"  # a second parse ends while the first still runs
        assert not gc.isenabled()
        release.set()
        worker.join(10)
        assert gc.isenabled()  # the last one out turns it back on
    finally:
        release.set()
        if not enabled:
            gc.disable()


def test_guard_leaves_gc_off_when_it_was_off():
    enabled = gc.isenabled()
    gc.disable()
    try:
        assert _Guard(lambda s: s)("x") == "x"
        assert not gc.isenabled()
    finally:
        if enabled:
            gc.enable()
