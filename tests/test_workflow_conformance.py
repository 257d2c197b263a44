"""The pull-request workflow's conformance job (issue 32, point 7): `make conformance` runs, with
no credential and no secret (so forks' pull requests are judged too), whenever the change
touches what the suite judges, with the Go module and build caches keyed on the suite's go.sum
files. The `changes` step is run here as GitHub runs it, in a git repository whose HEAD is a
commit over the base (on GitHub: the pull request's merge commit, first parent the base head)."""

import subprocess
from pathlib import Path

import pytest
from test_workflows import PR, run_step, step, uses

CHANGES = PR["jobs"]["changes"]
CONFORMANCE = PR["jobs"]["conformance"]


def repo_with_change(tmp_path: Path, files: list[str]) -> Path:
    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    (tmp_path / "README.md").write_text("base\n")
    git("add", "-A")
    git("commit", "-qm", "base")
    for name in files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("changed\n")
    git("add", "-A")
    git("commit", "-qm", "change")
    return tmp_path


@pytest.mark.parametrize(
    ("files", "runs"),
    [
        (["Pulumi.prod.yaml"], "true"),  # pools and queues
        (["components/budget/queues.py"], "true"),
        (["policies/PulumiPolicy.yaml"], "true"),
        (["tests/conformance/go.mod"], "true"),  # Karpenter's version, its CRDs' too
        (["tests/conformance/karpenter/scenarios_test.go"], "true"),
        (["tests/fixtures/kai-pods/must-match.yaml"], "true"),
        (["tests/upstream_facts/crds/kai-scheduler.yaml"], "true"),  # the CRDs it installs
        (["Makefile"], "true"),
        (["requirements.txt"], "true"),
        ([".github/workflows/pull-request.yml"], "true"),
        (["docs/conformance.md", "README.md", "tests/test_config.py"], "false"),
        (["examples/Pulumi.yaml", "requirements-dev.txt"], "false"),
    ],
)
def test_the_suite_runs_when_the_change_touches_what_it_judges(tmp_path, files, runs):
    repo = repo_with_change(tmp_path, files)
    process, outputs = run_step(step(CHANGES, "paths"), repo, {"PATH": "/usr/bin:/bin"})
    assert process.returncode == 0, process.stderr
    assert outputs == {"conformance": runs}
    if runs == "true":
        assert process.stdout.splitlines()[0] == "The conformance suite runs: the change touches"
    else:
        assert process.stdout == (
            "The conformance suite is skipped: the change touches nothing it judges.\n"
        )


def test_changes_compares_the_merge_commit_with_the_base_head():
    checkout = uses(CHANGES, "actions/checkout")
    assert checkout["with"] == {"fetch-depth": 2, "persist-credentials": False}
    assert CHANGES["outputs"] == {"conformance": "${{ steps.paths.outputs.conformance }}"}


def test_the_conformance_job_runs_make_conformance_with_no_credential():
    assert CONFORMANCE["needs"] == "changes"
    assert CONFORMANCE["if"] == "needs.changes.outputs.conformance == 'true'"
    assert "permissions" not in CONFORMANCE  # the workflow's contents: read
    assert "environment" not in CONFORMANCE and "env" not in CONFORMANCE
    assert step(CONFORMANCE, "The rendered stacks judged by the real kube-apiserver and Karpenter")[
        "run"
    ] == ("make conformance")
    assert uses(CONFORMANCE, "actions/setup-go")["with"] == {"go-version": "1.26.8", "cache": False}
    assert PR["on"] == {"pull_request": {"branches": ["main"]}}  # forks' pull requests too


def test_the_go_caches_are_keyed_on_the_suites_go_sum():
    caches = [s for s in CONFORMANCE["steps"] if s.get("uses", "").startswith("actions/cache@")]
    assert [c["with"] for c in caches] == [
        {
            "path": "~/go/pkg/mod\n~/.cache/go-build\n",
            "key": "conformance-go-${{ runner.os }}-${{ hashFiles('tests/conformance/go.sum', "
            "'tests/conformance/k8sbins/go.sum') }}",
            "restore-keys": "conformance-go-${{ runner.os }}-",
        },
        {
            "path": "tests/conformance/.bin/envtest",
            "key": "conformance-envtest-${{ runner.os }}-${{ hashFiles("
            "'tests/conformance/k8sbins/go.mod', 'tests/conformance/k8sbins/go.sum') }}",
        },
    ]
    touch = step(CONFORMANCE, "The restored kube-apiserver and etcd are up to date")
    assert touch["if"] == "steps.envtest.outputs.cache-hit == 'true'"
    assert caches[1]["id"] == "envtest"
    # The keys name files that exist: a missing file would hash to the same empty key.
    repo = Path(__file__).resolve().parents[1]
    for name in ("go.sum", "k8sbins/go.mod", "k8sbins/go.sum"):
        assert (repo / "tests" / "conformance" / name).is_file()
