"""The render's fast paths change no output: libyaml writes a document only when it gives the
pure-Python emitter's bytes, and the command line's process (garbage collector off, exit
without teardown) still runs ``atexit`` handlers, flushes its output and keeps its exit code.
"""

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from eks_gpu_platform.offline import write
from eks_gpu_platform.scheduler import WorkloadTemplate

REPO = Path(__file__).resolve().parents[2]


def dump(data, dumper) -> str:
    """``data`` through ``dumper`` with the options the render's writers use."""
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, width=100)


def pure_python(data) -> str:
    return dump(data, write._PlainDumper)


def differ_on_libyaml(cases, c_dumper, py_dumper) -> list[tuple[str, bool]]:
    """For each case kept on the pure-Python emitter, whether libyaml would write other bytes."""
    return [
        (name, dump(data, c_dumper) != dump(data, py_dumper))
        for name, (data, libyaml) in cases.items()
        if not libyaml
    ]


LONG = "word " * 40
CASES = {
    "plain": ({"kind": "NodePool", "spec": {"limits": {"cpu": "64"}, "weight": 10}}, True),
    "long-plain-value": ({"description": LONG.strip()}, True),
    "quotes-and-indicators": ({"a": "x: y # z", "b": "'q'", "c": '"d"', "e": "- f"}, True),
    "multi-line-single-quotable": ({"script": "line one\nline two\n"}, True),
    "booleans-numbers-null-strings": ({"a": "true", "b": "1.0", "c": "", "d": "~"}, True),
    "break-then-space": ({"userData": "spec:\n  kubelet:\n    config: {}\n" + LONG}, False),
    "non-ascii": ({"name": "café " + LONG}, False),
    "tab": ({"value": "a\tb " + LONG}, False),
    "empty-key": ({"": "value"}, False),
    "multi-line-key": ({"two\nlines": 1}, False),
}


@pytest.mark.parametrize(("data", "libyaml"), CASES.values(), ids=CASES.keys())
def test_yaml_bytes_are_the_pure_python_emitters(data, libyaml):
    assert write._libyaml_safe(data) is libyaml
    assert write._dump_yaml(data) == pure_python(data)


def test_the_cases_that_keep_the_pure_python_emitter_would_differ_on_libyaml():
    """Why the fallback exists: libyaml folds long double-quoted scalars elsewhere and writes an
    empty key another way (a test that fails if a PyYAML upgrade makes the two agree)."""
    assert differ_on_libyaml(CASES, write._CPlainDumper, write._PlainDumper) == [
        ("break-then-space", True),
        ("non-ascii", True),
        ("tab", True),
        ("empty-key", True),
        ("multi-line-key", False),
    ]


def test_the_command_line_runs_atexit_handlers_flushes_and_keeps_its_exit_code(tmp_path):
    program = (
        "import atexit, gc, sys\n"
        "from eks_gpu_platform.offline.render import cli\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "print('before', end='')\n"  # no newline: only an explicit flush writes it
        "cli(['--stack', 'nope', '--out', sys.argv[1]])\n"
        "print('not reached')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == "beforeatexit ran\n"
    assert proc.stderr == f"error: stack file {REPO / 'Pulumi.nope.yaml'} does not exist\n"


def test_the_module_turns_the_cyclic_collector_off_before_importing_the_render():
    source = (REPO / "components" / "offline" / "__main__.py").read_text()
    body = [line for line in source.split('"""')[2].splitlines() if line.strip()]
    assert body == [
        "import gc",
        "gc.disable()",
        "from .render import cli  # noqa: E402  (after gc.disable: the imports allocate most "
        "objects)",
        "cli()",
    ]


def test_double_quoted_mapping_values_are_spliced_into_the_libyaml_text():
    value = "MIME-Version: 1.0\n\n--//\n  indented: line\n" + LONG
    data = {"kind": "EC2NodeClass", "spec": {"role": "r", "userData": value, "tags": {"a": "b"}}}
    paths: list[tuple] = []
    assert write._holes(data, (), paths) is True
    assert paths == [("spec", "userData")]
    assert write._dump_yaml(data) == pure_python(data)


@pytest.mark.parametrize(
    "data",
    [
        {"items": ["two\n  lines " + LONG]},  # a list item: no key path to splice under
        {"script\n  x": "v"},  # a key that would be double-quoted
        "top level\n  scalar " + LONG,
    ],
    ids=["list-item", "key", "root"],
)
def test_what_cannot_be_spliced_keeps_the_pure_python_emitter(data):
    assert write._holes(data, (), []) is False
    assert write._dump_yaml(data) == pure_python(data)


def test_the_offline_engine_skips_the_sdks_stack_walk_only_while_a_program_runs(run_program):
    import inspect

    import pulumi
    from pulumi.runtime import mocks as sdk_mocks
    from pulumi.runtime import resource as sdk_resource

    from eks_gpu_platform.offline import mocks

    original = sdk_resource._get_stack_trace
    seen = []

    def program():
        seen.append(sdk_resource._get_stack_trace)
        pulumi.ComponentResource("test:index:Thing", "thing")

    recording = run_program(program)
    assert [r.name for r in recording.resources] == ["thing"]
    assert seen == [mocks._empty_stack_trace]
    assert sdk_resource._get_stack_trace is original
    assert list(mocks._empty_stack_trace().frames) == []
    # Nothing the mock engine runs reads what the walk produces.
    source = inspect.getsource(sdk_mocks.MockMonitor.RegisterResource)
    assert "sourcePosition" not in source and "stackTrace" not in source


def test_the_scalar_analysis_agrees_with_the_emitters_on_fuzzed_text():
    """``_double_quoted`` and ``_allow_block`` answer as the pure-Python emitter's own analysis
    (``Emitter.analyze_scalar``, the oracle) does, on every piece that decides it: line breaks
    (a line feed and the three others), spaces around them, leading and trailing spaces,
    indicators, non-ASCII and control characters, and the empty text."""
    analyzer = yaml.emitter.Emitter(io.StringIO())
    rnd = random.Random(7)
    pieces = ["", " ", "  ", "x", "a: b", "- c", "# d", "'", '"', "{", "]", "%", "@", "`"]
    pieces += ["...", "---"]
    pieces += ["\n", "\n\n", " \n", "\n ", "\t", "\r", "\x85", "\u2028", "\u2029", "\x7f", "\x00"]
    pieces += ["é", "\ufeff", "\U0001f600", "~", "1.0", LONG]
    texts = ["", " ", "\n", "a", "a ", " a", "a\n", "a \nb", "a\n b"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 8))) for _ in range(5000)]
    for text in texts:
        analysis = analyzer.analyze_scalar(text)
        assert write._double_quoted(text) is (not analysis.allow_single_quoted), repr(text)
        assert write._double_quoted(text, key=True) is (
            not analysis.allow_single_quoted or analysis.multiline
        ), repr(text)
        assert write._allow_block(text) is analysis.allow_block, repr(text)


def test_the_quoted_writer_writes_the_emitters_bytes_on_fuzzed_documents():
    """``_QuotedDumper`` (the splice's writer of double-quoted values) against the pure-Python
    emitter it speeds up, ``_PlainDumper``: long values with spaces, runs of spaces, escapes
    (quotes, backslashes, tabs, line breaks, non-ASCII) at every column, at several depths and
    in lists, keys that are double-quoted too."""
    rnd = random.Random(5)
    pieces = [" ", "  ", "word", "x" * 30, '"', "\\", "\t", "\n", "\n ", " \n", "é", "\x85"]
    pieces += ["\u2028", "\ufeff", "\U0001f600", "\x00", "\x7f", "a: b", "# c", "'"]
    written = 0
    for _ in range(1500):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 60)))
        key = rnd.choice(["k", "a-much-longer-key-name", "x" * 60, text[:20], text[:200]])
        data = {key: text}
        for _ in range(rnd.randint(0, 4)):
            data = rnd.choice([{"level": data}, {"items": [data, text]}, {"n": 1, "m": data}])
        written += write._double_quoted(text)
        assert dump(data, write._QuotedDumper) == pure_python(data), repr(text)
    assert written > 1000


def pure_python_template(data) -> str:
    return dump(data, write._TemplateDumper)


TEMPLATE_CASES = {
    "script": ({"data": {"run.sh": "#!/bin/sh\nset -eu\nexec x\n"}, "kind": "ConfigMap"}, True),
    "no-final-break": ({"data": {"s": "a\nb"}, "n": 1}, True),
    "list-item": ({"args": ["a\nb\n", "c"]}, True),
    # Double-quoted without the literal style (a line break then a space), a block with it.
    "indented-script": ({"command": ["sh", "-c", "set -eu\nif x; then\n  exec y\nfi\n"]}, True),
    "indented-value": ({"data": {"s": "a:\n  b: c\n"}, "n": 1}, True),
    "keep-final-breaks": ({"data": {"s": "a\nb\n\n"}, "n": 1}, False),
    "only-a-break": ({"data": {"s": "\n"}, "n": 1}, False),
    "trailing-space": ({"s": "line one \nline two\n" + LONG}, False),
    "tab": ({"s": "a\tb\n" + LONG}, False),
}


@pytest.mark.parametrize(("data", "libyaml"), TEMPLATE_CASES.values(), ids=TEMPLATE_CASES.keys())
def test_template_bytes_are_the_pure_python_emitters(data, libyaml):
    template = WorkloadTemplate(documents=(data, {"b": "x\ny\n"}), notes=("a note",))
    assert write._template_libyaml_safe(data) is libyaml
    assert write.template_text(template) == (
        "# pod-security: restricted\n# a note\n"
        f"---\n{pure_python_template(data)}---\nb: |\n  x\n  y\n"
    )


def test_the_templates_that_keep_the_pure_python_emitter_would_differ_on_libyaml():
    """Why ``_template_libyaml_safe`` refuses them: libyaml ends the document with ``...``
    after a ``|+`` block that is not the last value, and folds long double-quoted scalars
    elsewhere (a test that fails if a PyYAML upgrade makes the two agree)."""
    assert differ_on_libyaml(TEMPLATE_CASES, write._CTemplateDumper, write._TemplateDumper) == [
        ("keep-final-breaks", True),
        ("only-a-break", True),
        ("trailing-space", True),
        ("tab", True),
    ]


def test_templates_libyaml_writes_are_byte_for_byte_on_fuzzed_documents():
    rnd = random.Random(11)
    pieces = ["", " ", "  ", "x", "a: b", "- item", "# c", "'q'", '"d"', "{x}", "[y]", "%p", "@a"]
    pieces += ["`b`", "é", "\t", LONG, "|", ">", "...", "---", "\r", "\x85", "~", "null", "1.0"]
    written = 0
    for _ in range(3000):
        lines = [rnd.choice(pieces) + rnd.choice(pieces) for _ in range(rnd.randint(1, 6))]
        text = rnd.choice(["", "\n", " "]) + "\n".join(lines)
        text += rnd.choice(["", "\n", "\n\n", " \n", "\n\n\n", "\n \n"])
        data = rnd.choice(
            [
                {"data": {"s": text, "n": 1}},
                {"a": {"b": [{"s": text}, text]}, "z": "x"},
                {"s": text},
            ]
        )
        if write._template_libyaml_safe(data):
            written += 1
            assert dump(data, write._CTemplateDumper) == pure_python_template(data), repr(text)
    assert written > 100
