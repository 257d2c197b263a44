"""The conformance suite's mutation score (``make mutation-score``): does the suite catch the bugs
listed in ``tests/conformance/mutations.yaml``?

Each mutation of the list is one small bug, put into a copy of the repository (the working tree is
never edited):

- a *code* mutation (``file``, ``old``, ``new``) replaces the exact text ``old`` by ``new`` in one
  file under ``components/`` (the Python builders: the budget, the admission policies, the
  NodePools); ``old`` must occur exactly once, or the run stops before anything else (the list
  must not rot as the code moves). The copy's stacks are rendered with the copy's code, as
  ``make conformance-inputs`` renders them (``tests/conformance/stacks.py``);
- a *render* mutation (``render``) is one of the known-bad renders of ``tests/conformance/
  mutate.py``, applied to the rendered stacks.

Then only the conformance tests the entry names run, on those renders, with test binaries built
once (``go test -c``; ``--bin-dir`` reuses them): a test that fails *caught* the mutation, one that
passes *missed* it. First the same tests run on the unmutated copy (the baseline): a test that
fails there proves nothing, and the run stops. A pattern that runs no test is an error, never a
pass.

``python tests/conformance/mutation_score.py [--only id,...] [--report-only] [--markdown FILE]``
prints one line per mutation (``caught``/``missed``/``error``, the test that caught it and its
failure's first line) and exits 1 when a mutation is missed or in error (0 with
``--report-only``), 2 on a bad list. ``--check`` only validates the list and its edits.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "tests" / "conformance"
LIST = CONF / "mutations.yaml"
PACKAGES = ("karpenter", "apiserver")
OLDER = "dev-1.35"  # tests/conformance/stacks.py: the fixture dev stack at Kubernetes 1.35
MIG = "dev-mig"  # tests/conformance/stacks.py: the fixture dev stack plus a MIG pool
DRA = "dev-dra"  # tests/conformance/stacks.py: the fixture dev stack plus a DRA pool
# Not copied: git, virtualenvs, build outputs and the built kube-apiserver/etcd.
IGNORED = (".git", ".venv*", "build", ".bin", "__pycache__", ".pytest_cache", ".ruff_cache")
TEST_TIMEOUT = "20m"


class ListError(Exception):
    """A problem of mutations.yaml: the run stops before it renders anything."""


@dataclass(frozen=True)
class Scenario:
    package: str  # karpenter or apiserver
    pattern: str  # the go test -run pattern

    def __str__(self) -> str:
        return f"{self.package} {self.pattern}"


@dataclass(frozen=True)
class Mutation:
    id: str
    bug: str
    stacks: tuple[str, ...]
    scenarios: tuple[Scenario, ...]
    file: str | None = None
    old: str | None = None
    new: str | None = None
    render: str | None = None


@dataclass
class Outcome:
    """One test binary run: ``failed`` leaf tests with their first message, ``ran`` test names."""

    scenario: Scenario
    ran: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    messages: set[str] = field(default_factory=set)  # every message line of the run


@dataclass
class Verdict:
    mutation: Mutation
    status: str  # caught, missed, error
    outcomes: list[Outcome] = field(default_factory=list)
    error: str | None = None


def apply_edit(text: str, old: str, new: str, where: str) -> str:
    """``text`` with ``old`` replaced by ``new``; ListError unless ``old`` occurs exactly once."""
    if not old:
        raise ListError(f"{where}: the old text is empty")
    if old == new:
        raise ListError(f"{where}: the new text equals the old text (not a mutation)")
    count = text.count(old)
    if count != 1:
        found = "not found" if count == 0 else f"found {count} times"
        raise ListError(f"{where}: the old text {old!r} is {found}; it must occur exactly once")
    return text.replace(old, new)


def parse_list(doc: object, render_mutations: set[str]) -> list[Mutation]:
    """The mutations of ``doc`` (mutations.yaml), every problem of the list in one ListError."""
    problems: list[str] = []
    if not isinstance(doc, dict) or not isinstance(doc.get("mutations"), list):
        raise ListError("mutations.yaml: a mapping with a list 'mutations' is expected")
    out: list[Mutation] = []
    seen: set[str] = set()
    for i, entry in enumerate(doc["mutations"]):
        where = f"mutations[{i}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: a mapping is expected")
            continue
        mid = entry.get("id")
        if not isinstance(mid, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", mid):
            problems.append(f"{where}.id: {mid!r}: lowercase letters, digits and '-' allowed")
            continue
        where = f"mutation {mid}"
        if mid in seen:
            problems.append(f"{where}: the id is used twice")
        seen.add(mid)
        unknown = set(entry) - {"id", "bug", "stacks", "scenarios", "file", "old", "new", "render"}
        if unknown:
            problems.append(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        if not isinstance(entry.get("bug"), str) or not entry["bug"].strip():
            problems.append(f"{where}.bug: say which bug the mutation stands for")
        stacks = entry.get("stacks")
        if (
            not isinstance(stacks, list)
            or not stacks
            or not all(isinstance(s, str) for s in stacks)
        ):
            problems.append(f"{where}.stacks: a non-empty list of stack names is expected")
            stacks = []
        scenarios: list[Scenario] = []
        raw = entry.get("scenarios")
        if not isinstance(raw, list) or not raw:
            problems.append(f"{where}.scenarios: a non-empty list of '<package>: <pattern>'")
            raw = []
        for s in raw:
            if not (isinstance(s, dict) and len(s) == 1):
                problems.append(f"{where}.scenarios: {s!r}: one '<package>: <pattern>' each")
                continue
            ((package, pattern),) = s.items()
            if package not in PACKAGES or not isinstance(pattern, str) or not pattern:
                problems.append(
                    f"{where}.scenarios: {s!r}: the package is one of {', '.join(PACKAGES)}, "
                    "the pattern a go test -run pattern"
                )
                continue
            scenarios.append(Scenario(package, pattern))
        code = [k for k in ("file", "old", "new") if k in entry]
        if entry.get("render") is not None:
            if code:
                problems.append(f"{where}: either render or file/old/new, not both")
            elif entry["render"] not in render_mutations:
                problems.append(
                    f"{where}.render: {entry['render']!r} is not a mutation of mutate.py "
                    f"(allowed: {', '.join(sorted(render_mutations))})"
                )
        elif len(code) != 3 or not all(isinstance(entry[k], str) for k in code):
            problems.append(f"{where}: file, old and new (strings) or render are required")
        elif not entry["file"].startswith("components/") or ".." in entry["file"]:
            problems.append(f"{where}.file: {entry['file']!r} is not a file under components/")
        out.append(
            Mutation(
                id=mid,
                bug=str(entry.get("bug", "")).strip(),
                stacks=tuple(stacks),
                scenarios=tuple(scenarios),
                file=entry.get("file"),
                old=entry.get("old"),
                new=entry.get("new"),
                render=entry.get("render"),
            )
        )
    if problems:
        raise ListError("\n".join(problems))
    return out


def check_edits(mutations: list[Mutation], repo: Path) -> None:
    """Every code mutation's edit applies exactly once to the file as it is now (ListError)."""
    problems = []
    for m in mutations:
        if m.file is None:
            continue
        path = repo / m.file
        if not path.is_file():
            problems.append(f"mutation {m.id}: {m.file} does not exist")
            continue
        try:
            text = apply_edit(path.read_text(), m.old, m.new, f"mutation {m.id} ({m.file})")
        except ListError as exc:
            problems.append(str(exc))
            continue
        if path.suffix == ".py":
            # A mutant that does not compile is caught by any import, not by the suite.
            try:
                compile(text, m.file, "exec")
            except SyntaxError as exc:
                problems.append(
                    f"mutation {m.id}: {m.file} does not compile: {exc.msg} (line {exc.lineno})"
                )
    if problems:
        raise ListError("\n".join(problems))


def load(path: Path = LIST, repo: Path = REPO) -> list[Mutation]:
    sys.path.insert(0, str(CONF))
    from mutate import MUTATIONS as RENDER_MUTATIONS

    mutations = parse_list(yaml.safe_load(path.read_text()), set(RENDER_MUTATIONS))
    check_edits(mutations, repo)
    return mutations


# --- go test output ------------------------------------------------------------------------------

_RUN = re.compile(r"^=== (?:RUN|CONT|NAME|PAUSE)\s+(\S+)")
_END = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")
_MSG = re.compile(r"^\s+[\w./-]+\.go:\d+: (.*)$")


def depth(pattern: str) -> int:
    """How many levels a -run pattern names (Go splits it on '/' outside brackets/parens)."""
    level, n = 0, 1
    for ch in pattern:
        if ch in "([":
            level += 1
        elif ch in ")]":
            level -= 1
        elif ch == "/" and level == 0:
            n += 1
    return n


def parse_go_output(scenario: Scenario, text: str, known: frozenset[str] = frozenset()) -> Outcome:
    """The tests a ``-test.v`` run ran and its failed leaf tests, each with its first message
    not in ``known`` (go test prints a test's logs and errors alike: the messages of the passing
    baseline run are logs)."""
    out = Outcome(scenario)
    current = None
    messages: dict[str, list[str]] = {}
    failed: list[str] = []
    for line in text.splitlines():
        if m := _RUN.match(line):
            current = m.group(1)
            if line.startswith("=== RUN") and current not in out.ran:
                out.ran.append(current)
            continue
        if m := _END.match(line):
            if m.group(1) == "FAIL":
                failed.append(m.group(2))
            continue
        if (m := _MSG.match(line)) and current is not None:
            out.messages.add(m.group(1))
            if m.group(1) not in known:
                messages.setdefault(current, []).append(m.group(1))
    leaves = [f for f in failed if not any(g.startswith(f + "/") for g in failed)]
    out.failed = [(name, (messages.get(name) or ["(no message)"])[0]) for name in leaves]
    want = depth(scenario.pattern)
    if not any(name.count("/") + 1 >= want for name in out.ran):
        out.error = f"{scenario}: ran no test at depth {want} (does the pattern still match?)"
    elif failed and not leaves:
        out.error = f"{scenario}: failed without a failing test"
    return out


def verdict(mutation: Mutation, outcomes: list[Outcome]) -> Verdict:
    errors = [o.error for o in outcomes if o.error]
    if errors:
        return Verdict(mutation, "error", outcomes, "; ".join(errors))
    caught = any(o.failed for o in outcomes)
    return Verdict(mutation, "caught" if caught else "missed", outcomes)


def format_report(verdicts: list[Verdict]) -> str:
    """One line per mutation and the score: ``caught <id>: <package> <test>: <first line>``."""
    lines = []
    width = max((len(v.mutation.id) for v in verdicts), default=0)
    for v in verdicts:
        head = f"{v.status:<6}  {v.mutation.id:<{width}}"
        if v.status == "error":
            lines.append(f"{head}  {v.error}")
        elif v.status == "caught":
            o = next(o for o in v.outcomes if o.failed)
            name, message = o.failed[0]
            more = f" (+{len(o.failed) - 1} more)" if len(o.failed) > 1 else ""
            lines.append(f"{head}  {o.scenario.package} {name}: {message}{more}")
        else:
            ran = ", ".join(str(o.scenario) for o in v.outcomes)
            lines.append(f"{head}  passed: {ran}")
        lines.append(f"{'':<6}  {'':<{width}}  bug: {v.mutation.bug}")
    caught = sum(v.status == "caught" for v in verdicts)
    lines.append(f"mutation score: {caught} of {len(verdicts)} caught")
    return "\n".join(lines)


def format_markdown(verdicts: list[Verdict]) -> str:
    rows = ["| Mutation | Bug it stands for | Result | Caught by (first failure line) |"]
    rows.append("|---|---|---|---|")
    for v in verdicts:
        if v.status == "caught":
            o = next(o for o in v.outcomes if o.failed)
            by = f"`{o.failed[0][0]}`: {o.failed[0][1]}"
        else:
            by = v.error or "passed: " + ", ".join(f"`{o.scenario}`" for o in v.outcomes)
        by = by.replace("|", "\\|")
        rows.append(f"| `{v.mutation.id}` | {v.mutation.bug} | {v.status} | {by} |")
    return "\n".join(rows) + "\n"


# --- running ------------------------------------------------------------------------------------


def copy_repo(dst: Path) -> Path:
    shutil.copytree(REPO, dst, ignore=shutil.ignore_patterns(*IGNORED), symlinks=True)
    shim = dst.parent / f"{dst.name}-shim"
    shim.mkdir()
    (shim / "eks_gpu_platform").symlink_to(dst / "components")
    return shim


def render(copy: Path, shim: Path, stacks: tuple[str, ...], out: Path) -> None:
    """Render ``stacks`` with the copy's code, as tests/conformance/stacks.py does."""
    env = {**os.environ, "PYTHONPATH": str(shim)}
    for stack in stacks:
        cmd = [sys.executable, "-m", "eks_gpu_platform.offline", "--stack", stack, "--no-policy"]
        if stack == OLDER:
            dev = yaml.safe_load((copy / "tests/fixtures/stacks/Pulumi.dev.yaml").read_text())
            dev["config"]["eks-gpu-platform:cluster"]["kubernetesVersion"] = "1.35"
            stack_file = out.parent / f"Pulumi.{OLDER}.yaml"
            stack_file.write_text(yaml.safe_dump(dev, sort_keys=False))
            cmd += ["--config-file", str(stack_file)]
        elif stack in (MIG, DRA):
            sys.path.insert(0, str(CONF))
            from stacks import dra_config, mig_config

            config = (mig_config if stack == MIG else dra_config)(copy)
            # beside the renders, where stacks.py writes it and the scenarios read it
            stack_file = out.parent / "stacks" / f"Pulumi.{stack}.yaml"
            stack_file.parent.mkdir(exist_ok=True)
            stack_file.write_text(yaml.safe_dump(config, sort_keys=False))
            cmd += ["--config-file", str(stack_file)]
        elif not (copy / f"Pulumi.{stack}.yaml").is_file():
            raise ListError(f"stack {stack}: no Pulumi.{stack}.yaml in the repository")
        cmd += ["--out", str(out / stack)]
        result = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"render of {stack} failed: {result.stderr.strip()[-600:]}")


def apply_render_mutation(name: str, renders: Path, stacks: tuple[str, ...]) -> None:
    sys.path.insert(0, str(CONF))
    from mutate import MUTATIONS as RENDER_MUTATIONS

    for stack in stacks:
        if not RENDER_MUTATIONS[name](renders / stack):
            raise RuntimeError(f"render mutation {name} does not apply to {stack}")


def build_binaries(bin_dir: Path) -> None:
    # The Makefile's GO_TOOLCHAIN (Karpenter 1.15 needs go >= 1.26.9; probe.GO_TOOLCHAIN).
    env = {**os.environ, "GOTOOLCHAIN": "go1.27.3", "CGO_ENABLED": "0"}
    for package in PACKAGES:
        target = bin_dir / f"{package}.test"
        if target.exists():
            continue
        go = os.environ.get("GO", "go")
        cmd = [go, "test", "-c", "-o", str(target), f"./{package}"]
        subprocess.run(cmd, cwd=CONF, env=env, check=True)


def run_scenario(
    scenario: Scenario,
    bin_dir: Path,
    copy: Path,
    shim: Path,
    renders: Path,
    instance_data: Path,
    known: frozenset[str] = frozenset(),
) -> Outcome:
    env = {
        **os.environ,
        "KUBEBUILDER_ASSETS": os.environ.get("KUBEBUILDER_ASSETS", str(CONF / ".bin" / "envtest")),
        "CONFORMANCE_REPO": str(copy),
        "CONFORMANCE_RENDERS": str(renders),
        "CONFORMANCE_INSTANCE_DATA": str(instance_data),
        "CONFORMANCE_PYTHON": sys.executable,
        "PYTHONPATH": str(shim),
    }
    env.pop("CONFORMANCE_BAD", None)
    cmd = [
        str(bin_dir / f"{scenario.package}.test"),
        "-test.run",
        scenario.pattern,
        "-test.v",
        "-test.count=1",
        "-test.timeout",
        TEST_TIMEOUT,
    ]
    start = time.monotonic()
    result = subprocess.run(
        cmd,
        cwd=copy / "tests/conformance" / scenario.package,
        env=env,
        capture_output=True,
        text=True,
    )
    outcome = parse_go_output(scenario, result.stdout + result.stderr, known)
    outcome.seconds = round(time.monotonic() - start, 1)
    if result.returncode != 0 and not outcome.failed and not outcome.error:
        tail = (result.stdout + result.stderr).strip().splitlines()[-3:]
        outcome.error = f"{scenario}: exit {result.returncode}: {' | '.join(tail)}"
    return outcome


def prepare(work: Path, name: str, mutation: Mutation | None, stacks: tuple[str, ...]):
    copy = work / name / "repo"
    copy.parent.mkdir(parents=True)
    shim = copy_repo(copy)
    if mutation is not None and mutation.file is not None:
        path = copy / mutation.file
        path.write_text(apply_edit(path.read_text(), mutation.old, mutation.new, mutation.id))
    renders = work / name / "renders"
    renders.mkdir()
    render(copy, shim, stacks, renders)
    if mutation is not None and mutation.render is not None:
        apply_render_mutation(mutation.render, renders, stacks)
    return copy, shim, renders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", type=Path, default=LIST)
    parser.add_argument("--only", help="comma-separated mutation ids (default: all)")
    parser.add_argument("--bin-dir", type=Path, help="built test binaries (default: build them)")
    parser.add_argument("--work", type=Path, help="work directory (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--report-only", action="store_true", help="exit 0 whatever is missed")
    parser.add_argument("--markdown", type=Path, help="also write the table in Markdown")
    parser.add_argument("--check", action="store_true", help="only check the list and its edits")
    args = parser.parse_args(argv)
    try:
        mutations = load(args.list)
        if args.only:
            wanted = args.only.split(",")
            unknown = [w for w in wanted if w not in {m.id for m in mutations}]
            if unknown:
                raise ListError(f"--only: no mutation {', '.join(unknown)}")
            mutations = [m for m in mutations if m.id in wanted]
    except ListError as exc:
        print(f"mutation-score: {args.list}:\n{exc}", file=sys.stderr)
        return 2
    if args.check:
        print(f"mutation-score: {len(mutations)} mutations, every edit applies exactly once")
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="mutation-score-"))
    bin_dir = args.bin_dir or work / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    try:
        build_binaries(bin_dir)
        stacks = tuple(dict.fromkeys(s for m in mutations for s in m.stacks))
        copy, shim, renders = prepare(work, "baseline", None, stacks)
        instance_data = work / "instance-types.json"
        subprocess.run(
            [
                sys.executable,
                str(CONF / "instance_data.py"),
                *[str(renders / s) for s in stacks],
                "--out",
                str(instance_data),
            ],
            check=True,
            capture_output=True,
        )
        scenarios = list(dict.fromkeys(s for m in mutations for s in m.scenarios))
        bad = []
        logs: dict[Scenario, frozenset[str]] = {}
        for s in scenarios:
            o = run_scenario(s, bin_dir, copy, shim, renders, instance_data)
            logs[s] = frozenset(o.messages)
            print(f"baseline {s}: {len(o.ran)} tests, {o.seconds:g} s", flush=True)
            if o.error or o.failed:
                bad.append(o.error or f"{s}: {o.failed[0][0]}: {o.failed[0][1]}")
        if bad:
            print("mutation-score: the unmutated code fails:\n" + "\n".join(bad), file=sys.stderr)
            return 1
        verdicts = []
        for m in mutations:
            try:
                copy, shim, renders = prepare(work, m.id, m, m.stacks)
            except (RuntimeError, ListError) as exc:
                verdicts.append(Verdict(m, "error", error=str(exc)))
            else:
                outcomes = [
                    run_scenario(s, bin_dir, copy, shim, renders, instance_data, logs[s])
                    for s in m.scenarios
                ]
                verdicts.append(verdict(m, outcomes))
            print(format_report(verdicts[-1:]).splitlines()[0], flush=True)
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(format_report(verdicts))
    if args.markdown:
        args.markdown.write_text(format_markdown(verdicts))
    missed = [v for v in verdicts if v.status != "caught"]
    return 0 if args.report_only or not missed else 1


if __name__ == "__main__":
    sys.exit(main())
