"""No test reads the user's stacks (the project root's ``Pulumi.<stack>.yaml``) for exact values
(issue 33, point 3): exact expectations are written against the fixture stacks
(``tests/fixtures/stacks``, tests/stack_files.py); the root stacks get invariant tests only.

Every test module and helper under ``tests/`` is scanned for the ways a test reaches a root stack
file: the user-stack helpers (``USER_STACKS``, ``user_stack``, ``render_user_stack``...), a glob
or path of ``Pulumi.*.yaml`` under the repository root, and the offline render run on the
project without ``--config-file`` (what tests/validate/conftest.py did). A file that does so
must be in ``ALLOWED`` with the reason it is an invariant (or the helper that provides one); a
new exact-value test that reads a root stack fails here with its file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# Lines that reach a root stack file.
ROOT_STACK_READ = re.compile(
    r"\bUSER_STACKS\b"
    r"|\buser_stack\("
    r"|\brender_user_stack\b"
    r"|\buser_stack_(?:config|render)\b"
    r"|\brendered_user_stack_resources\b"
    r"|\bdiscover\((?:REPO|ROOT)\b"
    r"|\b(?:REPO|ROOT|root)\.glob\(\s*[\"']Pulumi\."
    r"|\b(?:REPO|ROOT)\s*/\s*f?[\"']Pulumi\.(?!yaml)"  # Pulumi.yaml is the project file
    r"|\bload_stack_file\(\s*(?:REPO|ROOT)\b[^)]*,\s*None\)"
    r"|\bgen_prices\.(?:stack_regions|table_types)\(\)"  # their default folder is the root
)
# The offline render run on the repository (``--project-dir`` REPO/ROOT) reads the root stack
# file unless the same call names ``--config-file``.
RENDER_ON_REPO = re.compile(r"[\"']--project-dir[\"']\s*,\s*str\((?:REPO|ROOT)\)")

ALLOWED: dict[str, str] = {
    "stack_files.py": "defines the user's stacks (USER_STACKS, user_stack) beside the fixture ones",
    "conftest.py": "the render_user_stack fixture, for the invariant tests",
    "capacity_cases.py": "user_stack_config/user_stack_render, for the capacity invariants",
    "gen_prices.py": "the price-table generator (a maintainer's script, not a test) sizes the "
    "table for the shipped stacks' regions and system types; its test reads the fixture stacks",
    "policies/conftest.py": "rendered_user_stack_resources, for the policy invariants",
    "policies/test_policy_shipped_stacks.py": "invariant: no mandatory policy violation",
    "test_contracts.py": "invariant: every component follows the contract",
    "test_platform.py": "invariants: GPU NodePools tainted and capped, an untainted cpu pool",
    "test_user_stacks.py": "invariant: every user stack renders through the command line",
    "test_workflows.py": "invariant: every user stack names its region",
    "offline/test_capacity.py": "invariants of the capacity report on every user stack",
    "offline/test_render.py": "invariant: user stacks use only modelled types and invokes",
    "offline/test_snapshot.py": "invariant: each user stack matches its own snapshot",
    "offline/test_teardown.py": "invariants: delete ordering on every user stack",
    "offline/test_fast_paths.py": "names Pulumi.nope.yaml, a stack file that does not exist, in "
    "the render's expected error",
    "conformance/stacks.py": "renders every user stack as the conformance suite's input "
    "(the suite judges invariants: the real API server and Karpenter accept the render)",
}


def reads(text: str) -> list[int]:
    """The 1-based lines of ``text`` that reach a root stack file."""
    lines = text.splitlines()
    out = [n for n, line in enumerate(lines, 1) if ROOT_STACK_READ.search(line)]
    if "--config-file" not in text:
        out += [n for n, line in enumerate(lines, 1) if RENDER_ON_REPO.search(line)]
    return sorted(set(out))


def scanned() -> dict[str, list[int]]:
    me = Path(__file__).name
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if rel == me or "fixtures" in path.parts:
            continue
        if hits := reads(path.read_text()):
            found[rel] = hits
    return found


def test_only_the_invariant_tests_read_the_root_stacks():
    offenders = {f: lines for f, lines in scanned().items() if f not in ALLOWED}
    assert offenders == {}, (
        "these read a root Pulumi.<stack>.yaml (the user's stacks): write exact expectations "
        "against tests/fixtures/stacks (tests/stack_files.py fixture_stack), or add an "
        f"invariant test to ALLOWED with its reason: {offenders}"
    )


def test_every_allowed_file_still_reads_them():
    # a stale entry would let a later exact-value read in that file pass unseen
    assert sorted(ALLOWED) == sorted(f for f in scanned() if f in ALLOWED)


def test_the_scanner_finds_each_way_of_reading_a_root_stack():
    # tests/validate/conftest.py before issue 33.3: the offline render on the project's own
    # Pulumi.dev.yaml
    old_conftest = (
        "code = render_main(\n"
        '    ["--project-dir", str(REPO), "--stack", stack, "--out", str(out)]\n'
        ")\n"
    )
    assert reads(old_conftest) == [2]
    fixed = old_conftest.replace('"--out"', '"--config-file", str(FIXTURE), "--out"')
    assert reads(fixed) == []
    for line in (
        "@pytest.mark.parametrize('stack', USER_STACKS)",
        "config = validate(user_stack('dev'))",
        "def test_x(render_user_stack):",
        "user_stack_config('dev')",
        "for f in REPO.glob('Pulumi.*.yaml'):",
        "text = (REPO / 'Pulumi.dev.yaml').read_text()",
        "regions = discover(REPO)",
        "stack = load_stack_file(REPO, 'dev', None)",
        "assert gen_prices.stack_regions() == prices.REGIONS",
    ):
        assert reads(line) == [1], line
    for line in (
        "fixture_stack('dev')",
        "(FIXTURE_STACKS_DIR / 'Pulumi.dev.yaml').read_text()",
        "(tmp_path / 'Pulumi.dev.yaml').write_text('config: {}')",
        "# the root's Pulumi.dev.yaml",
        "text = (REPO / 'Pulumi.yaml').read_text()",
        "recording = render(project, load_stack_file(project, 'dev', None))",
        "assert gen_prices.stack_regions(FIXTURE_STACKS) == prices.REGIONS",
    ):
        assert reads(line) == [], line
