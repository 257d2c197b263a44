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
    # The suite runs with the collector off (conftest.py): what the session left so far is
    # frozen first, or the collector's first pass here would free every cycle of it.
    gc.freeze()
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


# The crash as the suite saw it: pytest formats a failure (an ast.parse of the whole test module)
# while the GC collects asyncio futures whose exceptions were never retrieved; each logs its
# traceback, and Python 3.11's traceback module calls ast.parse for the carets.
FAILING_MODULE = textwrap.dedent(
    """
    import asyncio, gc

    gc.set_threshold(100, 1, 1)


    class Holder:
        def __init__(self, loop):
            self.me = self
            self.future = loop.create_future()
            try:
                {}["missing"] + 1
            except KeyError as e:
                self.future.set_exception(e)


    def test_fails():
        loop = asyncio.new_event_loop()
        for _ in range(400):
            Holder(loop)
        assert {"a": 1} == {"a": 2}
    """
) + "".join(
    f"\n\ndef helper_{i}(x):\n    return [x + {i} for _ in range(3)]\n" for i in range(1500)
)


def run_failing_suite(tmp_path: Path, guard: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_big.py").write_text(FAILING_MODULE)
    if guard:
        (tmp_path / "conftest.py").write_text(
            f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport ast_guard\n"
            "ast_guard.install()\n"
        )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "-c",
            str(tmp_path / "pytest.ini"),
            "--rootdir",
            str(tmp_path),
            "test_big.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(not affected(), reason="this interpreter has the gh-106905 fix")
def test_pytest_crashes_reporting_a_failure_without_the_guard(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    run = run_failing_suite(tmp_path, guard=False)
    assert run.returncode == 3  # pytest's INTERNALERROR exit code
    assert "SystemError: AST constructor recursion depth mismatch" in run.stdout + run.stderr


def test_pytest_reports_the_failure_with_the_guard(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    run = run_failing_suite(tmp_path, guard=True)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert "1 failed" in run.stdout.splitlines()[-1]
    assert "recursion depth mismatch" not in run.stdout + run.stderr
