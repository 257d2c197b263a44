"""The GitHub workflows: schema, discovered stacks, deploy order, backends, the render comment.

Steps that hold logic are run here as GitHub runs them (``shell: bash`` is
``bash --noprofile --norc -eo pipefail {0}``, https://docs.github.com/en/actions/reference/
workflows-and-actions/workflow-syntax#jobsjob_idstepsshell), in a copy of the project, with
``$GITHUB_OUTPUT`` / ``$GITHUB_STEP_SUMMARY`` / ``$RUNNER_TEMP`` as files. Their ``run:``
scripts hold no ``${{ }}`` expression (values come in through ``env:``), so what runs here is
exactly what runs on GitHub. The ``python`` the discovery and comment steps call is run with
``-S`` (no site-packages): they must work before anything is installed.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from check_jsonschema.builtin_schemas import get_builtin_schema
from jsonschema import Draft7Validator
from ruamel.yaml import YAML
from stack_files import FIXTURE_STACKS, USER_STACKS, fixture_stack_path, user_id

from eks_gpu_platform.offline import stacks as stacks_module
from eks_gpu_platform.offline.stacks import deploy_settings, deploy_waves, discover, render_comment

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
VENV = REPO / ".venv"
# The copy's stacks before the tests add `staging`: the fixture stacks (tests/fixtures/stacks).
BASE = list(FIXTURE_STACKS)
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


def load_workflow(path: Path) -> dict:
    """Workflows are YAML 1.2: a YAML 1.1 loader would read the `on:` key as `True`."""
    return YAML(typ="safe").load(path.read_text())


PR = load_workflow(WORKFLOWS / "pull-request.yml")
MAIN = load_workflow(WORKFLOWS / "main.yml")


def step(job: dict, name: str) -> dict:
    (found,) = [s for s in job["steps"] if s.get("name") == name or s.get("id") == name]
    return found


def uses(job: dict, action: str, *, install_only: bool = False) -> dict:
    """The job's one step of ``action``. A deploy job runs pulumi/actions three times: once
    only to install the CLI (no ``command``, ``install_only``), then ``preview`` and ``up``
    (issue 29, point 6): the last is the job's own command."""
    found = [s for s in job["steps"] if s.get("uses", "").startswith(f"{action}@")]
    if action == "aws-actions/configure-aws-credentials":
        # A deploy job's second one assumes the validation role (issue 29, point 8): the
        # validation's own test reads it.
        found = [s for s in found if "AWS_VALIDATE_ROLE_ARNS" not in str(s["with"])]
    if action == "pulumi/actions":
        found = [s for s in found if ("command" in s["with"]) != install_only]
        if len(found) == 2:
            assert [f["with"]["command"] for f in found] == ["preview", "up"]
            return found[-1]
    (one,) = found
    return one


def action_name(uses_value: str) -> str:
    """``owner/repo`` of a ``uses:`` value (``owner/repo@<sha>``)."""
    return uses_value.split("@", 1)[0]


# --- schema ------------------------------------------------------------------------------------


@pytest.mark.parametrize("workflow", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_workflows_validate_against_the_github_schema(workflow: Path) -> None:
    schema = get_builtin_schema("vendor.github-workflows")
    document = load_workflow(workflow)
    errors = sorted(e.message for e in Draft7Validator(schema).iter_errors(document))
    assert errors == []


# --- running steps in a copy of the project ----------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The program, the fixture stack files, ``Pulumi.staging.yaml`` (dev with its own cluster
    name and region, and no validation after deploy) and the stacks module at its path;
    ``.venv`` links to the repo's virtualenv."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, tmp_path / name)
    for stack in BASE:
        shutil.copy(fixture_stack_path(stack), tmp_path / f"Pulumi.{stack}.yaml")
    (tmp_path / "components" / "offline").mkdir(parents=True)
    shutil.copy(stacks_module.__file__, tmp_path / "components" / "offline" / "stacks.py")
    (tmp_path / ".venv").symlink_to(VENV)
    document = yaml.safe_load(fixture_stack_path("dev").read_text())
    document["config"]["aws:region"] = "eu-west-1"
    document["config"]["eks-gpu-platform:cluster"]["name"] = "gpu-staging"
    document["config"].pop("eks-gpu-platform:validation")
    (tmp_path / "Pulumi.staging.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return tmp_path


def run_step(
    spec: dict, cwd: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """Run a ``run:`` step; returns the process and what it wrote to ``$GITHUB_OUTPUT``."""
    script = spec["run"]
    assert "${{" not in script, "values reach run scripts through env:"
    shim = cwd / ".shim"
    shim.mkdir(exist_ok=True)
    # `python` on the runner is setup-python's interpreter with nothing installed.
    (shim / "python").write_text(f'#!/bin/sh\nexec "{VENV / "bin" / "python"}" -S "$@"\n')
    (shim / "python").chmod(0o755)
    output, summary = cwd / ".github_output", cwd / ".step_summary"
    output.write_text("")
    temp = cwd / ".runner_temp"
    temp.mkdir(exist_ok=True)
    process_env = {
        "PATH": f"{shim}:/usr/bin:/bin",
        "HOME": str(cwd),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(temp),
        **(env or {}),
    }
    process = subprocess.run(
        [*BASH, script], cwd=cwd, env=process_env, capture_output=True, text=True, timeout=300
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
    return process, outputs


# --- stacks are discovered ---------------------------------------------------------------------


def test_both_workflows_discover_the_stacks_with_the_same_step():
    assert step(PR["jobs"]["stacks"], "discover") == step(MAIN["jobs"]["stacks"], "discover")
    assert step(PR["jobs"]["stacks"], "discover")["run"] == (
        'python components/offline/stacks.py matrix | tee -a "$GITHUB_OUTPUT"'
    )


def test_the_discovery_step_picks_up_a_new_stack_file(project):
    process, outputs = run_step(step(MAIN["jobs"]["stacks"], "discover"), project)
    assert process.returncode == 0, process.stderr
    assert outputs == {
        "stacks": json.dumps(sorted([*BASE, "staging"])),
        "first": '["dev"]',
        "middle": json.dumps(sorted([*(s for s in BASE if s not in ("dev", "prod")), "staging"])),
        "last": '["prod"]',
        # Issue 29, point 6: every stack but prod.
        "previewable": json.dumps(sorted([*(s for s in BASE if s != "prod"), "staging"])),
    }
    assert process.stdout.splitlines() == [f"{k}={v}" for k, v in outputs.items()]


def test_the_discovery_step_fails_without_stack_files(project):
    for path in project.glob("Pulumi.*.yaml"):
        path.unlink()
    process, outputs = run_step(step(PR["jobs"]["stacks"], "discover"), project)
    assert process.returncode == 2
    assert process.stderr == f"error: no Pulumi.<stack>.yaml in {project}\n"
    assert outputs == {}


def test_a_stack_file_name_pulumi_refuses_is_named(tmp_path):
    (tmp_path / "Pulumi.my stack.yaml").write_text("config: {}\n")
    with pytest.raises(stacks_module.StackFileError) as err:
        discover(tmp_path)
    assert str(err.value) == (
        "Pulumi.my stack.yaml: 'my stack' is not a Pulumi stack name (letters, digits, '-', '_' "
        "and '.', at most 100)"
    )


@pytest.mark.parametrize(
    ("stacks", "waves"),
    [
        (["dev", "prod"], {"first": ["dev"], "middle": [], "last": ["prod"]}),
        (
            ["qa", "prod", "dev", "staging"],
            {"first": ["dev"], "middle": ["qa", "staging"], "last": ["prod"]},
        ),
        (["prod"], {"first": [], "middle": [], "last": ["prod"]}),
        (["sandbox"], {"first": [], "middle": ["sandbox"], "last": []}),
    ],
)
def test_deploy_waves_dev_first_prod_last(stacks, waves):
    assert deploy_waves(stacks) == waves


def test_every_stack_matrix_comes_from_discovery():
    from_discovery = "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    previewable = "${{ fromJSON(needs.stacks.outputs.previewable) }}"
    for job, matrix in (
        ("render", from_discovery),
        ("comment", from_discovery),
        ("preview", previewable),
    ):
        assert "stacks" in PR["jobs"][job]["needs"], job
        assert PR["jobs"][job]["strategy"] == {
            "fail-fast": False,
            "matrix": {"stack": matrix},
        }, job
    for wave in ("first", "middle", "last"):
        job = MAIN["jobs"][f"up-{wave}"]
        assert "stacks" in job["needs"]
        assert job["strategy"] == {
            "fail-fast": False,
            "matrix": {"stack": f"${{{{ fromJSON(needs.stacks.outputs.{wave}) }}}}"},
        }
        assert job["environment"] == "${{ matrix.stack }}"
        assert job["env"] == {"STACK": "${{ matrix.stack }}"}


def strings(node) -> list[str]:
    if isinstance(node, dict):
        return [s for key, value in node.items() for s in [str(key), *strings(value)]]
    if isinstance(node, list):
        return [s for item in node for s in strings(item)]
    return [str(node)]


@pytest.mark.parametrize("workflow", [PR, MAIN], ids=["pull-request", "main"])
def test_no_stack_name_or_region_is_written_in_a_workflow(workflow):
    """Comments aside, nothing names a stack (they are discovered) or a region (stack files)."""
    text = "\n".join(strings(workflow))
    assert re.findall(r"\b(?:dev|prod|staging)\b(?!-)", text) == []
    assert re.findall(r"\b[a-z]{2}-[a-z]+-\d\b", text) == []


# --- deploy order ------------------------------------------------------------------------------

WAVE_DONE = 'contains(fromJSON(\'["success", "skipped"]\'), needs.{}.result)'
HEALTHY = (
    "github.ref == 'refs/heads/main' && !cancelled() && needs.stacks.result == 'success' && "
    "needs.test.result == 'success'"
)


def test_main_deploys_dev_then_the_others_then_prod():
    jobs = MAIN["jobs"]
    assert jobs["up-first"]["needs"] == ["stacks", "test"]
    assert jobs["up-first"]["if"] == (
        "github.ref == 'refs/heads/main' && needs.stacks.outputs.first != '[]'"
    )
    assert jobs["up-middle"]["needs"] == ["stacks", "test", "up-first"]
    assert jobs["up-middle"]["if"] == (
        f"${{{{ {HEALTHY} && {WAVE_DONE.format('up-first')} "
        "&& needs.stacks.outputs.middle != '[]' }}"
    )
    assert jobs["up-last"]["needs"] == ["stacks", "test", "up-first", "up-middle"]
    assert jobs["up-last"]["if"] == (
        f"${{{{ {HEALTHY} && {WAVE_DONE.format('up-first')} && "
        f"{WAVE_DONE.format('up-middle')} && needs.stacks.outputs.last != '[]' }}}}"
    )
    # Stack-scoped, per job (issue 22, point 9): not per ref.
    assert "concurrency" not in MAIN
    for job in ("up-first", "up-middle", "up-last"):
        assert jobs[job]["concurrency"] == {
            "group": "deploy-${{ matrix.stack }}",
            "cancel-in-progress": False,
        }


def test_the_three_deploy_waves_run_the_same_job():
    first, middle, last = (MAIN["jobs"][f"up-{w}"] for w in ("first", "middle", "last"))
    for job in (middle, last):
        for key in (
            "runs-on",
            "timeout-minutes",
            "permissions",
            "environment",
            "concurrency",
            "env",
            "steps",
        ):
            assert job[key] == first[key], key
    assert first["permissions"] == {"contents": "read", "id-token": "write"}
    names = [s.get("name") or action_name(s["uses"]) for s in first["steps"]]
    order = [
        "actions/checkout",
        "actions/setup-python",
        "Offline render and policy check",
        "Region, stack name and backend of the stack",
        "aws-actions/configure-aws-credentials",
        "pulumi/auth-actions",
        "pulumi/actions",
        "Commit this stack last deployed",
        "Waits of this change",
        "Preview",
        "pulumi/actions",
        "Record the deployed commit",
        "Kubeconfig for the validation",
        "aws-actions/configure-aws-credentials",
        "Validate the cluster",
        "actions/upload-artifact",
    ]
    assert [n for n in names if n in order] == order
    assert step(first, "Offline render and policy check")["run"] == 'make render STACK="$STACK"'
    assert uses(first, "pulumi/actions")["with"]["command"] == "up"


# --- backends and the region -------------------------------------------------------------------

BACKEND_ENV = {
    "PULUMI_BACKEND_URL": "${{ vars.PULUMI_BACKEND_URL }}",
    "PULUMI_ORG": "${{ vars.PULUMI_ORG }}",
}
PULUMI_WITH = {
    "stack-name": "${{ steps.settings.outputs.stack-name }}",
    "cloud-url": "${{ vars.PULUMI_BACKEND_URL }}",
    "policyPacks": "policies",
}
DEPLOY_JOBS = [PR["jobs"]["preview"], MAIN["jobs"]["up-first"]]
ROLES = {
    "preview": "${{ env.PREVIEW_ROLE_ARN }}",
    "up": "${{ vars.AWS_DEPLOY_ROLE_ARN }}",
}


@pytest.mark.parametrize(
    ("job", "role"), zip(DEPLOY_JOBS, ROLES.values(), strict=True), ids=list(ROLES)
)
def test_pulumi_runs_on_either_backend_in_the_stack_files_region(job, role):
    settings = step(job, "settings")
    assert settings["env"] == BACKEND_ENV
    assert settings["run"] == (
        '.venv/bin/python -m eks_gpu_platform.offline.stacks settings "$STACK" --backend-url '
        '"$PULUMI_BACKEND_URL" --org "$PULUMI_ORG" | tee -a "$GITHUB_OUTPUT"'
    )
    aws = uses(job, "aws-actions/configure-aws-credentials")["with"]
    # `up` keeps its session as long as the job (issue 21, point 6); a preview needs no more
    # than the default hour.
    session = {"role-duration-seconds": 21600} if job is MAIN["jobs"]["up-first"] else {}
    assert aws == {
        "role-to-assume": role,
        "aws-region": "${{ steps.settings.outputs.region }}",
        **session,
    }
    pulumi = uses(job, "pulumi/actions")
    assert {k: pulumi["with"][k] for k in PULUMI_WITH} == PULUMI_WITH
    # No long-lived token or passphrase: Pulumi Cloud logs in with an exchanged OIDC token.
    assert "env" not in pulumi
    login = uses(job, "pulumi/auth-actions")
    assert login["with"]["organization"] == "${{ vars.PULUMI_ORG }}"
    assert login["with"]["cloud-url"] == "${{ vars.PULUMI_BACKEND_URL }}"
    assert "steps.settings.outputs.backend == 'pulumi-cloud'" in login["if"]
    names = [s.get("id") or action_name(s.get("uses", "")) for s in job["steps"]]
    assert (
        names.index("settings")
        < names.index("aws-actions/configure-aws-credentials")
        < names.index("pulumi/auth-actions")
        < names.index("pulumi/actions")
    )


@pytest.mark.parametrize("job", DEPLOY_JOBS, ids=["preview", "up"])
def test_the_pulumi_cli_is_pinned_to_the_sdk_version(job):
    """Without ``pulumi-version`` pulumi/actions v7 installs the newest 3.x CLI."""
    pins = [
        line.split("==", 1)[1]
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if line.startswith("pulumi==")
    ]
    assert uses(job, "pulumi/actions")["with"]["pulumi-version"] == pins[0] == "3.272.0"


def test_preview_needs_credentials_for_either_backend_and_skips_forks():
    assert PR["jobs"]["preview"]["env"]["CAN_PREVIEW"] == (
        "${{ github.event.pull_request.head.repo.full_name == github.repository "
        "&& fromJSON(vars.AWS_PREVIEW_ROLE_ARNS || '{}')[matrix.stack] != '' "
        "&& (vars.PULUMI_BACKEND_URL != '' "
        "|| (vars.PULUMI_ORG != '' && vars.PULUMI_PREVIEW_TEAM != '')) }}"
    )
    for spec in PR["jobs"]["preview"]["steps"][1:]:
        assert spec["if"].startswith("env.CAN_PREVIEW == 'true'"), spec


# A stack file without eks-gpu-platform:validation: no validation after `pulumi up`.
NO_VALIDATION = {"validate-phases": "", "validate-args": ""}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"PULUMI_BACKEND_URL": "", "PULUMI_ORG": "acme"},
            {
                "region": "eu-west-1",
                "stack-name": "acme/eks-gpu-platform/staging",
                "backend": "pulumi-cloud",
                **NO_VALIDATION,
            },
        ),
        (
            {"PULUMI_BACKEND_URL": "", "PULUMI_ORG": ""},
            {
                "region": "eu-west-1",
                "stack-name": "staging",
                "backend": "pulumi-cloud",
                **NO_VALIDATION,
            },
        ),
        (
            {"PULUMI_BACKEND_URL": "s3://acme-pulumi-state", "PULUMI_ORG": "acme"},
            {
                "region": "eu-west-1",
                "stack-name": "staging",
                "backend": "self-managed",
                **NO_VALIDATION,
            },
        ),
        (
            {"PULUMI_BACKEND_URL": "https://api.pulumi.acme.example", "PULUMI_ORG": "acme"},
            {
                "region": "eu-west-1",
                "stack-name": "acme/eks-gpu-platform/staging",
                "backend": "pulumi-cloud",
                **NO_VALIDATION,
            },
        ),
    ],
    ids=["cloud-org", "cloud-default-org", "s3", "self-hosted-cloud"],
)
def test_the_settings_step_reads_the_region_from_the_stack_file(project, env, expected):
    process, outputs = run_step(
        step(MAIN["jobs"]["up-first"], "settings"), project, {"STACK": "staging", **env}
    )
    assert process.returncode == 0, process.stderr
    assert outputs == expected


def test_the_settings_step_reads_the_validation_of_the_stack_file(project):
    document = yaml.safe_load((project / "Pulumi.staging.yaml").read_text())
    document["config"]["eks-gpu-platform:validation"] = {
        "afterDeploy": ["deployment", "capacity"],
        "pools": ["gpu-a", "gpu-b"],
        "costCapUsd": 5,
        "timeCapMinutes": 12.5,
    }
    (project / "Pulumi.staging.yaml").write_text(yaml.safe_dump(document))
    process, outputs = run_step(
        step(MAIN["jobs"]["up-first"], "settings"),
        project,
        {"STACK": "staging", "PULUMI_BACKEND_URL": "", "PULUMI_ORG": ""},
    )
    assert process.returncode == 0, process.stderr
    assert outputs == {
        "region": "eu-west-1",
        "stack-name": "staging",
        "backend": "pulumi-cloud",
        "validate-phases": "deployment,capacity",
        "validate-args": "--pool gpu-a --pool gpu-b --cost-cap-usd 5 --time-cap-minutes 12.5",
    }


def test_the_settings_step_fails_on_a_bad_validation_setting(project):
    document = yaml.safe_load((project / "Pulumi.staging.yaml").read_text())
    document["config"]["eks-gpu-platform:validation"] = {"afterDeploy": ["deploy"]}
    (project / "Pulumi.staging.yaml").write_text(yaml.safe_dump(document))
    process, outputs = run_step(
        step(MAIN["jobs"]["up-first"], "settings"),
        project,
        {"STACK": "staging", "PULUMI_BACKEND_URL": "", "PULUMI_ORG": ""},
    )
    assert process.returncode == 2
    assert process.stderr == (
        "error: Pulumi.staging.yaml: validation.afterDeploy[0]: 'deploy' is not allowed; expected "
        "one of deployment, capacity, scheduling, performance, security; did you mean "
        "'deployment'?\n"
    )
    assert outputs == {}


def test_the_settings_step_fails_on_a_stack_file_without_region(project):
    document = yaml.safe_load((project / "Pulumi.staging.yaml").read_text())
    del document["config"]["aws:region"]
    (project / "Pulumi.staging.yaml").write_text(yaml.safe_dump(document))
    process, outputs = run_step(
        step(PR["jobs"]["preview"], "settings"),
        project,
        {"STACK": "staging", "PULUMI_BACKEND_URL": "", "PULUMI_ORG": ""},
    )
    assert process.returncode == 2  # pipefail: tee does not hide the failure
    assert process.stderr == (
        "error: Pulumi.staging.yaml: aws:region is not set (the workflows take the AWS region "
        "from it)\n"
    )
    assert outputs == {}


def test_the_stacks_regions_come_from_their_files(project):
    assert {s: deploy_settings(project, s)["region"] for s in discover(project)} == {
        "dev": "us-west-2",
        "prod": "us-east-1",
        "staging": "eu-west-1",
    }


@pytest.mark.parametrize("stack", USER_STACKS, ids=user_id)
def test_every_user_stack_names_its_region(stack):
    """The workflows take each stack's AWS region from its file (``settings``)."""
    assert deploy_settings(REPO, stack)["region"]


def test_dev_validates_after_deploy_and_prod_does_not(project):
    """Issue 24: the deploy workflow runs the deployment and scheduling phases after
    `pulumi up` on dev, switchable per stack (the stack files' eks-gpu-platform:validation; the
    fixture copies of dev and prod, and staging without the key)."""
    settings = {s: deploy_settings(project, s) for s in ("dev", "prod", "staging")}
    assert {s: (v["validate-phases"], v["validate-args"]) for s, v in settings.items()} == {
        "dev": ("deployment,scheduling", ""),
        "prod": ("", ""),
        "staging": ("", ""),
    }


# --- every variable and secret is documented ---------------------------------------------------


def header(path: Path) -> str:
    lines = path.read_text().splitlines()
    return "\n".join(line for line in lines[: lines.index("on:")] if line.startswith("#"))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "pull-request.yml",
            {"AWS_PREVIEW_ROLE_ARNS", "PULUMI_ORG", "PULUMI_PREVIEW_TEAM", "PULUMI_BACKEND_URL"},
        ),
        (
            "main.yml",
            {
                "AWS_DEPLOY_ROLE_ARN",
                "AWS_VALIDATE_ROLE_ARNS",
                "PULUMI_ORG",
                "PULUMI_DEPLOY_TEAM",
                "PULUMI_BACKEND_URL",
            },
        ),
    ],
)
def test_every_variable_and_secret_is_documented_in_the_header(name, expected):
    text = (WORKFLOWS / name).read_text()
    used = set(re.findall(r"\b(?:vars|secrets)\.([A-Z_]+)", text)) - {"GITHUB_TOKEN"}
    assert used == expected
    documented = set(
        re.findall(r"^#   ([A-Z_]+) +(?:variable|secret) ", header(WORKFLOWS / name), re.M)
    )
    assert documented == used
    for variable in re.findall(r"\bvars\.([A-Z_]+)", text):
        assert re.search(rf"^#   {variable} +variable ", header(WORKFLOWS / name), re.M)
    for secret in set(re.findall(r"\bsecrets\.([A-Z_]+)", text)) - {"GITHUB_TOKEN"}:
        assert re.search(rf"^#   {secret} +secret ", header(WORKFLOWS / name), re.M)


# --- pip cache and action versions -------------------------------------------------------------

# The newest release of each action, pinned to its tag's commit (the action repositories'
# tags, read with `git rev-parse <tag>^{commit}` in their mirrors): issue 22, point 9.
ACTIONS = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
    "actions/download-artifact": ("3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", "v8.0.1"),
    "aws-actions/configure-aws-credentials": ("e6de054238d6b7531b4efff3b6587d9aade6a06c", "v6.2.3"),
    "pulumi/auth-actions": ("141415910c3beb54e03b48e9057c204c97b956f2", "v2.1.0"),
    "pulumi/actions": ("8e5e406f4007fca908480587cb9893c07090f58d", "v7.0.0"),
    "marocchino/sticky-pull-request-comment": (
        "5770ad5eb8f42dd2c4f34da00c94c5381e49af88",
        "v3.0.5",
    ),
    "actions/setup-go": ("b7ad1dad31e06c5925ef5d2fc7ad053ef454303e", "v7.0.0"),
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
}


def all_steps() -> list[tuple[str, dict]]:
    return [
        (f"{name}/{job_id}", spec)
        for name, workflow in (("pull-request", PR), ("main", MAIN))
        for job_id, job in workflow["jobs"].items()
        for spec in job["steps"]
    ]


def test_every_action_is_on_its_current_release():
    used = {spec["uses"] for _, spec in all_steps() if "uses" in spec}
    assert used == {f"{action}@{sha}" for action, (sha, _) in ACTIONS.items()}


@pytest.mark.parametrize("name", ["pull-request.yml", "main.yml"])
def test_every_uses_is_a_full_commit_sha_with_its_version_in_a_comment(name):
    """GitHub's hardening guide: a full-length commit SHA is the only immutable reference."""
    lines = [line for line in (WORKFLOWS / name).read_text().splitlines() if "uses:" in line]
    assert lines
    for line in lines:
        m = re.fullmatch(
            r"\s*(?:- )?uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)", line
        )
        assert m, line
        assert ACTIONS[m.group(1)] == (m.group(2), m.group(3)), line


def test_pip_is_cached_wherever_dependencies_are_installed():
    for where, workflow in (("pull-request", PR), ("main", MAIN)):
        for job_id, job in workflow["jobs"].items():
            installs = any(
                re.search(r"\bmake (test|render|venv|conformance)\b|pip install", s.get("run", ""))
                for s in job["steps"]
            )
            if job_id == "comment":  # runs no Python (issue 29, point 10)
                assert [s.get("uses", "").split("@")[0] for s in job["steps"]] == [
                    "actions/download-artifact",
                    "marocchino/sticky-pull-request-comment",
                ]
                continue
            if not any(s.get("uses", "").startswith("actions/setup-python@") for s in job["steps"]):
                assert not installs, f"{where}/{job_id}"  # git only (the `changes` job)
                continue
            setup = uses(job, "actions/setup-python")["with"]
            if installs:
                assert setup == {
                    "python-version": "3.11",
                    "cache": "pip",
                    "cache-dependency-path": "requirements*.txt",
                }, f"{where}/{job_id}"
            else:
                assert setup == {"python-version": "3.11"}, f"{where}/{job_id}"
    assert sorted(p.name for p in REPO.glob("requirements*.txt")) == [
        "requirements-build.txt",
        "requirements-dev.txt",
        "requirements.txt",
    ]


def test_every_run_step_is_bash_with_pipefail():
    for workflow in (PR, MAIN):
        assert workflow["defaults"] == {"run": {"shell": "bash"}}
    assert all("shell" not in spec for _, spec in all_steps())


# --- the render comment: the summary, or the error lines ---------------------------------------

RENDER = PR["jobs"]["render"]
COMMENT_STEPS = ("The comment (the summary, or the render's error lines)", "Publish the summary")


def run_render_job(
    project: Path, stack: str
) -> tuple[str, str, subprocess.CompletedProcess | None]:
    """The render job's steps after `make venv`: the render, the comment, the summary and the
    final check. Returns the render's status, the comment and the final step's process."""
    env = {"STACK": stack}
    render, outputs = run_step(step(RENDER, "render"), project, env)
    assert render.returncode == 0, render.stderr
    env["STATUS"] = outputs["status"]
    for name in COMMENT_STEPS:
        process, _ = run_step(step(RENDER, name), project, env)
        assert process.returncode == 0, process.stderr
    comment = (project / "build" / stack / "comment.md").read_text()
    assert (project / ".step_summary").read_text() == comment
    # The last step runs when `steps.render.outputs.status != '0'` (its `if:`, checked below).
    final = None
    if outputs["status"] != "0":
        final, _ = run_step(step(RENDER, "Fail when the render failed"), project, env)
    return outputs["status"], comment, final


def test_an_invalid_stack_gets_a_failure_comment_with_the_error_lines(project):
    document = yaml.safe_load((project / "Pulumi.staging.yaml").read_text())
    document["config"]["eks-gpu-platform:cluster"]["kubernetesVersion"] = "1.20"
    document["config"]["eks-gpu-platform:vpc"]["azCount"] = 9
    (project / "Pulumi.staging.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    status, comment, final = run_render_job(project, "staging")
    assert status == "2"
    assert comment == (
        "### `staging`: the offline render failed: invalid stack configuration (exit 2)\n"
        "\n"
        "```text\n"
        "invalid stack configuration:\n"
        "  cluster.kubernetesVersion: '1.20' is not supported; expected one of 1.30, 1.31, "
        "1.32, 1.33, 1.34, 1.35, 1.36\n"
        "  vpc.azCount: 9 is out of range; expected a number from 2 to 6\n"
        "```\n"
    )
    assert final.returncode == 1
    assert final.stdout == (
        "::error title=offline render of staging::exit 2; see the comment or the render step\n"
    )


def test_a_valid_stack_gets_its_summary_as_the_comment(project):
    status, comment, final = run_render_job(project, "staging")
    assert status == "0"
    assert comment == (project / "build" / "staging" / "summary.md").read_text()
    assert comment.startswith("### `staging`: ")
    # The placeholder CIDR of the fixture dev stack is refused by `pulumi up` (issue 28).
    assert "Policy pack: no violations; `pulumi up` still refuses this stack (above)." in comment
    assert final is None


def test_a_render_that_did_not_run_still_gets_a_comment(project):
    env = {"STACK": "staging", "STATUS": ""}
    for name in COMMENT_STEPS:
        process, _ = run_step(step(RENDER, name), project, env)
        assert process.returncode == 0, process.stderr
    assert (project / "build" / "staging" / "comment.md").read_text() == (
        "### `staging`: the offline render did not run (an earlier step failed; see the job log)\n"
    )
    final, _ = run_step(step(RENDER, "Fail when the render failed"), project, env)
    assert final.returncode == 1
    assert "exit none" in final.stdout


def test_the_comment_and_summary_steps_run_whatever_happened():
    for name in COMMENT_STEPS:
        assert step(RENDER, name)["if"] == "always()"
    assert step(RENDER, "Fail when the render failed")["if"] == (
        "always() && steps.render.outputs.status != '0'"
    )
    # The comment is posted by the `comment` job from the render's artifact (issue 29,
    # point 10): the artifact holds build/<stack>, comment.md included, whatever happened.
    upload = uses(RENDER, "actions/upload-artifact")
    assert upload["if"] == "always()"
    assert upload["with"] == {
        "name": "render-${{ matrix.stack }}",
        "path": "build/${{ matrix.stack }}",
    }
    comment = PR["jobs"]["comment"]
    assert comment["needs"] == ["stacks", "render"]
    assert comment["if"] == (
        "${{ !cancelled() && needs.stacks.result == 'success' "
        "&& github.event.pull_request.head.repo.full_name == github.repository }}"
    )


SUMMARY = "### `dev`: 100 resources\n\nPolicy violations:\n\n- `mandatory ...`\n"


@pytest.mark.parametrize(
    ("status", "stderr", "summary", "expected"),
    [
        ("0", "", SUMMARY, SUMMARY),
        (
            "1",
            "error: mandatory policy violations (see above)\n",
            SUMMARY,
            "### `dev`: the offline render failed (exit 1)\n\n```text\nerror: mandatory policy "
            "violations (see above)\n```\n\n" + SUMMARY,
        ),
        (
            "1",
            "Traceback:\n  ```odd```\nKeyError: 'x'\n",
            None,
            "### `dev`: the offline render failed (exit 1)\n\n````text\nTraceback:\n  ```odd```"
            "\nKeyError: 'x'\n````\n",
        ),
        (
            "2",
            "",
            None,
            "### `dev`: the offline render failed: invalid stack configuration (exit 2)\n\n"
            "(no error output; see the job log)\n",
        ),
        (
            "0",
            "",
            None,
            "### `dev`: the offline render wrote no summary (exit 0)\n\n"
            "(no error output; see the job log)\n",
        ),
    ],
    ids=["ok", "policy", "traceback-with-backticks", "no-stderr", "no-summary"],
)
def test_render_comment(status, stderr, summary, expected):
    assert render_comment("dev", status, stderr, summary) == expected


def test_render_comment_keeps_the_last_error_lines():
    stderr = "".join(f"line {i}\n" for i in range(250))
    comment = render_comment("dev", "1", stderr, None)
    assert comment.splitlines()[2:5] == [
        "(first 50 line(s) left out; see the job log)",
        "",
        "```text",
    ]
    assert comment.splitlines()[5] == "line 50"
    assert comment.splitlines()[-1] == "```"
    assert comment.splitlines()[-2] == "line 249"


def test_stacks_module_needs_no_third_party_package_for_the_workflow_commands():
    text = Path(stacks_module.__file__).read_text()
    top_level = re.findall(r"^(?:import|from) (\S+)", text, re.M)
    assert top_level == ["argparse", "json", "re", "sys", "collections.abc", "pathlib"]


def test_deploy_jobs_outlast_every_wait_ci_lets_through():
    """Issue 21, point 6; fails on the old code (90-minute jobs, 1-hour OIDC sessions, no gate):
    the gate refuses a change whose waits exceed 300 minutes, and the job's timeout and AWS
    session are longer than that; a minor upgrade's chain fits, a 48h pool drain does not.

    Issue 28, point 6: the chain is computed from the timeouts the program sets
    (cluster/timeouts.py) for each fixture stack's system node group; by hand, dev (maxSize 3):
    60 + 45 + (15 + 3 * 20) + 20 = 200 minutes, prod (maxSize 6): 60 + 45 + 135 + 20 = 260."""
    from stack_files import fixture_stack

    from eks_gpu_platform.cluster.timeouts import minor_upgrade_minutes
    from eks_gpu_platform.offline.run import validate

    job = MAIN["jobs"]["up-first"]
    gate = step(job, "Waits of this change")
    budget = int(gate["run"].rsplit("--budget-minutes", 1)[1].split()[0])
    assert budget == 300
    session = uses(job, "aws-actions/configure-aws-credentials")["with"]["role-duration-seconds"]
    assert budget < job["timeout-minutes"] <= session // 60
    assert job["timeout-minutes"] <= 360  # GitHub-hosted runners' job limit
    chains = {
        stack: minor_upgrade_minutes(validate(fixture_stack(stack)).system_node_group.max_size)
        for stack in ("dev", "prod")
    }
    assert chains == {"dev": 200, "prod": 260}
    assert max(chains.values()) < budget
    # The Pulumi token lasts as long (a token that expired mid-`up` fails its checkpoints).
    login = uses(job, "pulumi/auth-actions")["with"]
    assert login["token-expiration"] == session
    # The gate needs the stack's tag (issue 28, point 9), read with the job's credentials; its
    # renders run without them, and it needs no fetch: the checkout keeps no credentials
    # (issue 22) and brings the whole history instead.
    names = [s.get("name") or action_name(s.get("uses", "")) for s in job["steps"]]
    assert (
        names.index("aws-actions/configure-aws-credentials")
        < names.index("pulumi/auth-actions")
        < names.index("Commit this stack last deployed")
        < names.index("Waits of this change")
        < len(names) - names[::-1].index("pulumi/actions") - 1  # the `up` step
    )
    assert gate["run"].splitlines()[0] == (
        "unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN PULUMI_ACCESS_TOKEN"
    )
    assert uses(job, "actions/checkout")["with"] == {
        "persist-credentials": False,
        "fetch-depth": 0,
    }
    assert "git fetch" not in gate["run"]
    assert 'make plan STACK="$STACK" BASE="$BASE"' in gate["run"]


# --- the plan gate's base: the commit the stack last deployed (issue 28, point 9) ---------------

DEPLOY_JOB = MAIN["jobs"]["up-first"]
DEPLOYED = step(DEPLOY_JOB, "deployed")
GATE = step(DEPLOY_JOB, "Waits of this change")
RECORD = step(DEPLOY_JOB, "Record the deployed commit")
SHA = "0123456789abcdef0123456789abcdef01234567"
# Records each call (one line each) and answers `stack tag ls` / `stack export` from files.
FAKE_PULUMI_CLI = """#!/bin/sh
echo "$@" >> "$CALLS/pulumi"
case "$*" in
  *"stack tag ls"*) cat "$CALLS/tags.json";;
  *"stack export"*) cat "$CALLS/state.json";;
esac
"""


def test_the_gate_takes_its_base_from_the_stack_tag_not_the_push():
    """Fails on the old code, whose BASE was ``github.event.before`` (the previous tip of main,
    not what the stack runs: pending runs are cancelled, failed deploys leave changes behind)."""
    assert "github.event.before" not in json.dumps(DEPLOY_JOB)
    assert GATE["env"] == {"BASE": "${{ steps.deployed.outputs.base }}"}
    assert DEPLOYED["env"] == {
        "PULUMI_BACKEND_URL": "${{ vars.PULUMI_BACKEND_URL }}",
        "STACK_NAME": "${{ steps.settings.outputs.stack-name }}",
    }
    # The CLI comes from pulumi/actions' install-only mode (no `command`), at the pinned version.
    assert uses(DEPLOY_JOB, "pulumi/actions", install_only=True)["with"] == {
        "pulumi-version": "3.272.0"
    }
    # The tag is written only after a successful `up` (no `if:`: steps run on success only).
    assert "if" not in RECORD
    assert RECORD["env"] == {"STACK_NAME": "${{ steps.settings.outputs.stack-name }}"}


def run_deployed_step(
    tmp_path: Path, tags: dict, state: dict, backend: str = ""
) -> tuple[subprocess.CompletedProcess, str, dict[str, str]]:
    calls = tmp_path / "calls"
    calls.mkdir()
    (calls / "tags.json").write_text(json.dumps(tags))
    (calls / "state.json").write_text(json.dumps(state))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pulumi").write_text(FAKE_PULUMI_CLI)
    (bin_dir / "pulumi").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / ".venv").symlink_to(VENV)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CALLS": str(calls),
        "STACK": "dev",
        "STACK_NAME": "acme/eks-gpu-platform/dev",
        "PULUMI_BACKEND_URL": backend,
    }
    process, outputs = run_step(DEPLOYED, work, env)
    return process, (calls / "pulumi").read_text(), outputs


def test_the_deployed_commit_is_the_stack_tag(tmp_path):
    tags = {"pulumi:project": "eks-gpu-platform", "eks-gpu-platform:deployedCommit": SHA}
    process, calls, outputs = run_deployed_step(tmp_path, tags, {"version": 3})
    assert process.returncode == 0, process.stderr
    assert outputs == {"base": SHA}
    assert calls == (
        "--non-interactive login\n"
        "--non-interactive stack tag ls --json --stack acme/eks-gpu-platform/dev\n"
        "--non-interactive stack export --stack acme/eks-gpu-platform/dev\n"
    )
    assert not list((tmp_path / "work" / ".runner_temp").iterdir())  # tags and state removed


def test_a_stack_that_deployed_nothing_is_planned_against_an_empty_state(tmp_path):
    state = {"version": 3, "deployment": {"manifest": {}, "resources": []}}
    process, calls, outputs = run_deployed_step(tmp_path, {}, state, backend="s3://state")
    assert process.returncode == 0, process.stderr
    assert outputs == {"base": ""}
    assert calls.splitlines()[0] == "--non-interactive login s3://state"


def test_a_stack_with_resources_and_no_tag_is_refused(tmp_path):
    state = {"version": 3, "deployment": {"resources": [{"urn": "a"}, {"urn": "b"}]}}
    process, _, outputs = run_deployed_step(tmp_path, {"pulumi:project": "x"}, state)
    assert process.returncode == 2
    assert outputs == {}
    assert process.stderr == (
        "error: stack dev has 2 resources but no eks-gpu-platform:deployedCommit tag, so the "
        "commit it runs is unknown and this change's waits cannot be planned; record the commit "
        "it was last deployed from: pulumi stack tag set eks-gpu-platform:deployedCommit "
        "<commit> --stack <stack>\n"
    )


def test_a_tag_that_is_not_a_commit_is_refused():
    with pytest.raises(stacks_module.StackFileError) as err:
        stacks_module.deployed_base("dev", {"eks-gpu-platform:deployedCommit": "main"}, {})
    assert str(err.value) == (
        "stack dev: its tag eks-gpu-platform:deployedCommit is 'main', not a full commit hash"
    )


# Stand-ins for make and the venv's python in the gate step: each records its arguments and
# whether an AWS or Pulumi credential reached it.
FAKE_TOOL = """#!/bin/sh
echo "$(basename "$0") $* creds=${AWS_ACCESS_KEY_ID:-}${AWS_SECRET_ACCESS_KEY:-}\
${AWS_SESSION_TOKEN:-}${PULUMI_ACCESS_TOKEN:-}" >> "$CALLS/tools"
"""


def run_gate_step(tmp_path: Path, base: str | None) -> tuple[subprocess.CompletedProcess, str]:
    """The gate in a git repository whose first commit has Pulumi.dev.yaml; ``base`` None: that
    commit."""
    work, calls = tmp_path / "work", tmp_path / "calls"
    (work / ".venv" / "bin").mkdir(parents=True)
    calls.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for path in (bin_dir / "make", work / ".venv" / "bin" / "python"):
        path.write_text(FAKE_TOOL)
        path.chmod(0o755)
    (work / "Pulumi.dev.yaml").write_text("config: {}\n")
    for args in (
        ["init", "--quiet"],
        ["add", "Pulumi.dev.yaml"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one"],
    ):
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, check=True, capture_output=True, text=True
    ).stdout.strip()
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CALLS": str(calls),
        "STACK": "dev",
        "BASE": head if base is None else base,
        "AWS_ACCESS_KEY_ID": "AKIA",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_SESSION_TOKEN": "session",
        "PULUMI_ACCESS_TOKEN": "pul-token",
    }
    process, _ = run_step(GATE, work, env)
    tools = calls / "tools"
    return process, (tools.read_text() if tools.exists() else "").replace(head, "<head>")


def test_the_gate_plans_against_the_deployed_commit_without_credentials(tmp_path):
    process, tools = run_gate_step(tmp_path, None)
    assert process.returncode == 0, process.stderr
    assert tools == (
        "make plan STACK=dev BASE=<head> creds=\n"
        "python -m eks_gpu_platform.offline.plan gate build/plan/dev/new/plan.json "
        "--budget-minutes 300 creds=\n"
    )


def test_the_gate_of_a_stack_that_deployed_nothing_plans_against_an_empty_state(tmp_path):
    process, tools = run_gate_step(tmp_path, "")
    assert process.returncode == 0, process.stderr
    assert tools == (
        "python -m eks_gpu_platform.offline --stack dev --no-policy --out build/plan/dev/new "
        "--compare build/plan/dev/base creds=\n"
        "python -m eks_gpu_platform.offline.plan gate build/plan/dev/new/plan.json "
        "--budget-minutes 300 creds=\n"
    )
    base = tmp_path / "work" / "build" / "plan" / "dev" / "base" / "resources.json"
    assert base.read_text() == "[]\n"


def test_the_gate_refuses_a_deployed_commit_outside_the_history(tmp_path):
    process, tools = run_gate_step(tmp_path, SHA)
    assert process.returncode == 1
    assert process.stderr.endswith(
        f"::error::the commit dev last deployed, {SHA}, is not in main's history\n"
    )
    assert tools == ""


def test_an_empty_state_plans_every_resource_as_a_create_with_no_wait(tmp_path):
    """What the gate's empty base gives: the plan of a fresh stack waits for nothing."""
    from eks_gpu_platform.offline.plan import plan
    from eks_gpu_platform.offline.plan_waits import waits

    new = [
        {
            "type": "kubernetes:karpenter.sh/v1:NodePool",
            "name": "pool",
            "urn": "urn:pulumi:dev::p::kubernetes:karpenter.sh/v1:NodePool::pool",
            "custom": True,
            "inputs": {},
        }
    ]
    rows = plan([], new)
    assert [r["action"] for r in rows] == ["create"]
    assert waits(rows, []) == []


# --- the validation after `pulumi up` (issue 24) -----------------------------------------------

VALIDATE = step(MAIN["jobs"]["up-first"], "Validate the cluster")
KUBECONFIG_STEP = step(MAIN["jobs"]["up-first"], "Kubeconfig for the validation")
VALIDATE_ROLE = "${{ fromJSON(vars.AWS_VALIDATE_ROLE_ARNS || '{}')[matrix.stack] }}"

FAKE_PULUMI = """#!/bin/sh
echo "$@" > "$CALLS/pulumi"
echo '{"apiVersion": "v1", "kind": "Config"}'
"""
# Stands in for .venv/bin/python: records its arguments and the kubeconfig's mode, writes a
# report and exits with $FAKE_STATUS.
FAKE_PYTHON = """#!/bin/sh
echo "$@" > "$CALLS/python"
while [ $# -gt 0 ]; do
  case "$1" in
    --kubeconfig) stat -c %a "$2" > "$CALLS/mode"; cp "$2" "$CALLS/kubeconfig";;
    --report-dir) mkdir -p "$2"; echo "dev: 3 passed, 1 failed, 0 skipped" > "$2/validate.md";;
  esac
  shift
done
exit "$FAKE_STATUS"
"""
VALIDATE_ROLE_ARN = "arn:aws:iam::111122223333:role/GitHubActionsValidate-dev"


def run_validate_steps(
    tmp_path: Path,
    status: int,
    args: str = "",
    role: str = VALIDATE_ROLE_ARN,
    private: str = "true",
) -> tuple[subprocess.CompletedProcess, Path]:
    """The kubeconfig step, then (when it succeeded) the validation step, as the job runs them
    (the credentials step between them only changes the AWS session)."""
    bin_dir, calls, work, temp = (tmp_path / d for d in ("bin", "calls", "work", "temp"))
    for d in (bin_dir, calls, work / ".venv" / "bin", temp):
        d.mkdir(parents=True)
    for path, text in ((bin_dir / "pulumi", FAKE_PULUMI), (work / ".venv/bin/python", FAKE_PYTHON)):
        path.write_text(text)
        path.chmod(0o755)
    summary = tmp_path / "summary.md"
    summary.write_text("before\n")
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CALLS": str(calls),
        "FAKE_STATUS": str(status),
        "RUNNER_TEMP": str(temp),
        "GITHUB_STEP_SUMMARY": str(summary),
        "STACK": "dev",
        "STACK_NAME": "acme/eks-gpu-platform/dev",
        "VALIDATE_ROLE_ARN": role,
        "VALIDATE_PHASES": "deployment,scheduling",
        "VALIDATE_ARGS": args,
        "PRIVATE_REPOSITORY": private,
    }
    proc = subprocess.run(
        [*BASH, KUBECONFIG_STEP["run"]],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode == 0:
        proc = subprocess.run(
            [*BASH, VALIDATE["run"]], cwd=work, env=env, capture_output=True, text=True, timeout=60
        )
    return proc, tmp_path


def test_the_validation_step_is_switched_per_stack_by_its_stack_file():
    assert VALIDATE["if"] == "steps.settings.outputs.validate-phases != ''"
    assert VALIDATE["env"] == {
        "VALIDATE_PHASES": "${{ steps.settings.outputs.validate-phases }}",
        "VALIDATE_ARGS": "${{ steps.settings.outputs.validate-args }}",
        "PRIVATE_REPOSITORY": "${{ github.event.repository.private }}",
    }
    assert "${{" not in VALIDATE["run"]
    upload = uses(MAIN["jobs"]["up-first"], "actions/upload-artifact")
    assert upload["if"] == (
        "always() && steps.validate.outcome != 'skipped' && github.event.repository.private"
    )
    assert upload["with"] == {
        "name": "validate-${{ matrix.stack }}",
        "path": "build/validate/${{ matrix.stack }}",
        "if-no-files-found": "ignore",
    }


def test_the_validation_runs_as_the_validation_role_not_the_deploy_role():
    """Issue 29, point 8: after `up` and the tag (deploy role), the kubeconfig (still the deploy
    role: the state), then the validation role through OIDC, then the validation."""
    steps = MAIN["jobs"]["up-first"]["steps"]
    names = [s.get("name") or action_name(s.get("uses", "")) for s in steps]
    at = names.index("Kubeconfig for the validation")
    assert names[at - 1 : at + 4] == [
        "Record the deployed commit",
        "Kubeconfig for the validation",
        "aws-actions/configure-aws-credentials",
        "Validate the cluster",
        "actions/upload-artifact",
    ]
    credentials = steps[at + 1]
    assert credentials["if"] == "steps.settings.outputs.validate-phases != ''"
    assert credentials["with"] == {
        "role-to-assume": VALIDATE_ROLE,
        "aws-region": "${{ steps.settings.outputs.region }}",
        "unset-current-credentials": True,
        "role-duration-seconds": 21600,
    }
    assert KUBECONFIG_STEP["if"] == "steps.settings.outputs.validate-phases != ''"
    assert KUBECONFIG_STEP["env"] == {
        "STACK_NAME": "${{ steps.settings.outputs.stack-name }}",
        "VALIDATE_ROLE_ARN": VALIDATE_ROLE,
    }
    # The deploy role is assumed once, before `up`, and nowhere after the validation role.
    deploy = [
        i
        for i, s in enumerate(steps)
        if s.get("with", {}).get("role-to-assume") == ("${{ vars.AWS_DEPLOY_ROLE_ARN }}")
    ]
    assert len(deploy) == 1 and deploy[0] < at


def test_without_a_validation_role_the_job_fails_and_nothing_runs(tmp_path):
    proc, root = run_validate_steps(tmp_path, 0, role="")
    assert proc.returncode == 1
    assert proc.stdout == (
        "::error title=No validation role for dev::The stack file's "
        "eks-gpu-platform:validation.afterDeploy asks for a validation after pulumi up, but the "
        "repository variable AWS_VALIDATE_ROLE_ARNS has no role for stack dev. The validation "
        "never runs as the deploy role: set validation.principal in Pulumi.dev.yaml, deploy, and "
        "add the role to AWS_VALIDATE_ROLE_ARNS (docs/ci.md), or remove afterDeploy.\n"
    )
    assert sorted(p.name for p in (root / "calls").iterdir()) == []  # no pulumi, no python
    assert not (root / "temp" / "kubeconfig.json").exists()


@pytest.mark.parametrize("status", [0, 1, 2])
def test_the_validation_step_runs_the_cli_with_the_stack_output_kubeconfig(tmp_path, status):
    proc, root = run_validate_steps(tmp_path, status)
    assert proc.returncode == status, proc.stderr
    calls = root / "calls"
    assert (calls / "pulumi").read_text() == (
        "stack output kubeconfig --show-secrets --stack acme/eks-gpu-platform/dev\n"
    )
    kubeconfig = root / "temp" / "kubeconfig.json"
    assert (calls / "python").read_text() == (
        f"-m eks_gpu_platform.validate --stack dev --phases deployment,scheduling --kubeconfig "
        f"{kubeconfig} --report-dir build/validate/dev --delete-leftovers\n"
    )
    assert (calls / "kubeconfig").read_text() == '{"apiVersion": "v1", "kind": "Config"}\n'
    assert (calls / "mode").read_text() == "600\n"
    assert not kubeconfig.exists()  # deleted when the step ends, whatever the result
    # The report goes to the job's summary also when a check failed.
    assert (root / "summary.md").read_text() == "before\ndev: 3 passed, 1 failed, 0 skipped\n"


def test_the_validation_step_passes_the_stack_files_pools_and_caps(tmp_path):
    proc, root = run_validate_steps(tmp_path, 0, "--pool gpu-spot --cost-cap-usd 5")
    assert proc.returncode == 0, proc.stderr
    kubeconfig = root / "temp" / "kubeconfig.json"
    assert (root / "calls" / "python").read_text() == (
        "-m eks_gpu_platform.validate --stack dev --phases deployment,scheduling --pool gpu-spot "
        f"--cost-cap-usd 5 --kubeconfig {kubeconfig} --report-dir build/validate/dev "
        "--delete-leftovers\n"
    )


# Review 2026-11-27, L9: on a public repository the report stays out of the job summary.
def test_the_validation_report_stays_out_of_a_public_repositorys_summary(tmp_path):
    proc, root = run_validate_steps(tmp_path, 1, private="false")
    assert proc.returncode == 1, proc.stderr
    assert (root / "summary.md").read_text() == "before\n"
