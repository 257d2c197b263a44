"""Issue 29, point 9 (review 2026-11-27, M5): the deploy and preview path installs Python
packages from ``requirements.lock``, every one pinned with its sha256 hashes, and pip checks
them (``--require-hashes``; pip's "Secure installs": hash-checking mode refuses any download
whose hash is not listed, and needs every requirement pinned with ``==``).

The lock is ``make lock`` (uv pip compile --generate-hashes --universal); these tests read it
as text with their own parser and compare it with requirements.txt and requirements-build.txt.
"""

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def normalise(name: str) -> str:
    # PEP 503 name normalisation.
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            out[normalise(match.group(1))] = match.group(2)
    return out


def lock_entries() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of requirements.lock; every non-comment logical line must be
    one pinned requirement."""
    text = (ROOT / "requirements.lock").read_text().replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip() if not line.startswith("#") else ""
        if not line:
            continue
        match = PIN.match(line)
        assert match, f"not a pinned requirement: {line!r}"
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})\b", line)
        out[normalise(match.group(1))] = (match.group(2), hashes)
    return out


LOCK = lock_entries()


def test_the_lock_is_not_empty_and_has_no_editable_or_unpinned_line():
    assert len(LOCK) > 9  # the direct pins and their transitive dependencies
    text = (ROOT / "requirements.lock").read_text()
    assert not re.search(r"^\s*-e\s", text, re.M)


@pytest.mark.parametrize("source", ["requirements.txt", "requirements-build.txt"])
def test_the_lock_pins_every_requirement_at_its_version(source):
    wanted = pins(ROOT / source)
    assert wanted
    assert {name: LOCK[name][0] for name in wanted if name in LOCK} == wanted
    assert sorted(set(wanted) - set(LOCK)) == []


def test_every_lock_entry_has_a_hash():
    assert sorted(name for name, (_, hashes) in LOCK.items() if not hashes) == []


def test_the_editable_project_is_the_only_requirement_outside_the_lock():
    lines = [
        line.strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert [line for line in lines if not PIN.match(line)] == ["-e ."]


def test_make_installs_the_lock_with_hashes_then_the_project_without_dependencies():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("$(VENV)/.render-installed: requirements.lock pyproject.toml\n", 1)[1]
    recipe = recipe.split("\n\n", 1)[0]
    assert recipe.replace("\\\n\t\t", "") == (
        "\t$(PYTHON) -m venv $(VENV)\n"
        "\t$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps "
        "-r requirements.lock\n"
        "\t$(PY) -m pip install --quiet --disable-pip-version-check --no-deps "
        "--no-build-isolation -e .\n"
        "\ttouch $@"
    )
    lock = makefile.split("\nlock: venv\n", 1)[1].split("\n\n", 1)[0]
    assert "--generate-hashes" in lock and "--universal" in lock
    assert "--python-version 3.11" in lock


def load(name: str) -> dict:
    return YAML(typ="safe").load((ROOT / ".github" / "workflows" / name).read_text())


def run_lines(job: dict) -> list[str]:
    return [line for step in job["steps"] for line in str(step.get("run", "")).splitlines()]


@pytest.mark.parametrize(
    ("workflow", "job", "command"),
    [
        ("pull-request.yml", "render", "make render-venv"),
        ("pull-request.yml", "preview", "make render-venv"),
        ("main.yml", "up-first", 'make render STACK="$STACK"'),
    ],
)
def test_the_render_preview_and_deploy_jobs_install_through_the_lock(workflow, job, command):
    lines = run_lines(load(workflow)["jobs"][job])
    assert command in lines
    # Nothing else installs packages in these jobs.
    assert [line for line in lines if "pip install" in line or "make venv" in line] == []
