"""Issue 22, points 1 and 9 (and the Low list's checkout credentials), over the workflow files:
per job, its permissions, its environment and every variable and secret it can read.

A pull request's code runs in the `preview` job, so that job must hold nothing that can change
a stack: no deploy role, no environment, no secret, only the stack's read-only preview role and
a Pulumi token exchanged for a read-only team. Deploys run only from `main`, behind the stack's
environment, with the deploy role set on that environment.
"""

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"


def load(name: str) -> dict:
    return YAML(typ="safe").load((WORKFLOWS / name).read_text())


PR = load("pull-request.yml")
MAIN = load("main.yml")


def text_of(node) -> str:
    if isinstance(node, dict):
        return "\n".join(f"{k}\n{text_of(v)}" for k, v in node.items())
    if isinstance(node, list):
        return "\n".join(text_of(v) for v in node)
    return str(node)


def reads(job: dict) -> tuple[set[str], set[str]]:
    """The variables and secrets a job's definition (env, steps, conditions) can read."""
    text = text_of(job)
    return (
        set(re.findall(r"\bvars\.([A-Z_]+)", text)),
        set(re.findall(r"\bsecrets\.([A-Z_]+)", text)),
    )


# job -> (permissions, environment, variables, secrets)
EXPECTED = {
    ("pull-request", "stacks"): (None, None, set(), set()),
    ("pull-request", "test"): (None, None, set(), set()),
    ("pull-request", "changes"): (None, None, set(), set()),
    ("pull-request", "conformance"): (None, None, set(), set()),
    # Issue 29, point 10: the render job runs the pull request's code with a read-only token;
    # only the comment job, which runs none of it, may write to the pull request.
    ("pull-request", "render"): ({"contents": "read"}, None, set(), set()),
    ("pull-request", "comment"): ({"pull-requests": "write"}, None, set(), set()),
    ("pull-request", "preview"): (
        {"contents": "read", "id-token": "write"},
        None,
        {"AWS_PREVIEW_ROLE_ARNS", "PULUMI_ORG", "PULUMI_PREVIEW_TEAM", "PULUMI_BACKEND_URL"},
        set(),
    ),
    ("main", "stacks"): (None, None, set(), set()),
    ("main", "test"): (None, None, set(), set()),
    **{
        ("main", job): (
            {"contents": "read", "id-token": "write"},
            "${{ matrix.stack }}",
            {
                "AWS_DEPLOY_ROLE_ARN",
                "AWS_VALIDATE_ROLE_ARNS",
                "PULUMI_ORG",
                "PULUMI_DEPLOY_TEAM",
                "PULUMI_BACKEND_URL",
            },
            set(),
        )
        for job in ("up-first", "up-middle", "up-last")
    },
}


def jobs():
    for name, workflow in (("pull-request", PR), ("main", MAIN)):
        for job_id, job in workflow["jobs"].items():
            yield (name, job_id), job


def test_every_job_is_listed():
    assert sorted(key for key, _ in jobs()) == sorted(EXPECTED)


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: "/".join(k))
def test_job_permissions_environment_variables_and_secrets(key):
    job = dict(jobs())[key]
    permissions, environment, variables, secrets = EXPECTED[key]
    assert job.get("permissions") == permissions
    assert job.get("environment") == environment
    assert reads(job) == (variables, secrets)


@pytest.mark.parametrize("workflow", [PR, MAIN], ids=["pull-request", "main"])
def test_read_only_by_default_and_no_secret_anywhere(workflow):
    assert workflow["permissions"] == {"contents": "read"}
    assert re.findall(r"\bsecrets\.", text_of(workflow)) == []


def test_no_deploy_credential_is_reachable_from_a_pull_request():
    text = text_of(PR)  # comments left out
    for name in (
        "AWS_DEPLOY_ROLE_ARN",
        "AWS_ROLE_ARN",
        "PULUMI_ACCESS_TOKEN",
        "PULUMI_CONFIG_PASSPHRASE",
        "PULUMI_DEPLOY_TEAM",
    ):
        assert name not in text, name
    assert "pull_request_target" not in text
    assert PR["on"] == {"pull_request": {"branches": ["main"]}}


def test_the_preview_takes_the_stacks_read_only_role_and_a_read_only_team_token():
    preview = PR["jobs"]["preview"]
    assert preview["env"]["PREVIEW_ROLE_ARN"] == (
        "${{ fromJSON(vars.AWS_PREVIEW_ROLE_ARNS || '{}')[matrix.stack] }}"
    )
    (aws,) = [s for s in preview["steps"] if "configure-aws-credentials" in s.get("uses", "")]
    assert aws["with"]["role-to-assume"] == "${{ env.PREVIEW_ROLE_ARN }}"
    (login,) = [s for s in preview["steps"] if "pulumi/auth-actions" in s.get("uses", "")]
    assert login["with"] == {
        "organization": "${{ vars.PULUMI_ORG }}",
        "requested-token-type": "urn:pulumi:token-type:access_token:team",
        "scope": "team:${{ vars.PULUMI_PREVIEW_TEAM }}",
        "token-expiration": 3600,
        "cloud-url": "${{ vars.PULUMI_BACKEND_URL }}",
    }
    (pulumi,) = [s for s in preview["steps"] if s.get("uses", "").startswith("pulumi/actions@")]
    assert pulumi["with"]["command"] == "preview"
    # The diff is not posted on the pull request (public on a public repository), and the
    # summary only on private repositories.
    assert "comment-on-pr" not in pulumi["with"] and "github-token" not in pulumi["with"]
    assert pulumi["with"]["comment-on-summary"] == "${{ github.event.repository.private }}"


def test_deploys_run_only_from_main_one_per_stack():
    assert MAIN["on"] == {"push": {"branches": ["main"]}, "workflow_dispatch": None}
    for job in ("up-first", "up-middle", "up-last"):
        spec = MAIN["jobs"][job]
        assert spec["if"].removeprefix("${{ ").startswith("github.ref == 'refs/heads/main' && ")
        assert spec["concurrency"] == {
            "group": "deploy-${{ matrix.stack }}",
            "cancel-in-progress": False,
        }
        # The CLI-only install (no command) for the gate's stack tag, then preview and up.
        pulumi = [
            s
            for s in spec["steps"]
            if s.get("uses", "").startswith("pulumi/actions@") and "command" in s["with"]
        ]
        assert [p["with"]["command"] for p in pulumi] == ["preview", "up"]


def test_every_checkout_keeps_no_credentials():
    checkouts = [
        step
        for workflow in (PR, MAIN)
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if step.get("uses", "").startswith("actions/checkout@")
    ]
    # 6 in pull-request, 5 in main (the 3 deploy waves' anchor)
    assert len(checkouts) == 11
    for step in checkouts:
        assert step["with"]["persist-credentials"] is False, step


# Issue 29, point 6: pull requests never preview prod with credentials; its preview runs in the
# environment-gated deploy job, with the deploy role, right before `up`.
def test_prod_is_previewed_only_in_its_deploy_job():
    preview = PR["jobs"]["preview"]
    assert preview["strategy"]["matrix"] == {
        "stack": "${{ fromJSON(needs.stacks.outputs.previewable) }}"
    }
    assert preview["if"] == "needs.stacks.outputs.previewable != '[]'"
    assert PR["jobs"]["stacks"]["outputs"]["previewable"] == (
        "${{ steps.discover.outputs.previewable }}"
    )
    from eks_gpu_platform.offline.stacks import previewable

    assert previewable(["prod", "dev", "staging"]) == ["dev", "staging"]
    assert previewable(["prod"]) == []


@pytest.mark.parametrize("job", ["up-first", "up-middle", "up-last"])
def test_the_deploy_job_previews_with_the_deploy_role_right_before_up(job):
    steps = MAIN["jobs"][job]["steps"]
    uses = [s.get("uses", "").split("@")[0] or s.get("name") for s in steps]
    aws = uses.index("aws-actions/configure-aws-credentials")
    # After the credentials and the gate (the CLI install, the deployed commit, the waits:
    # issue 28, point 9), the preview runs right before `up`.
    (preview,) = [i for i, s in enumerate(steps) if s.get("with", {}).get("command") == "preview"]
    assert uses[aws:preview] == [
        "aws-actions/configure-aws-credentials",
        "pulumi/auth-actions",
        "pulumi/actions",
        "Commit this stack last deployed",
        "Waits of this change",
    ]
    assert uses[preview + 1] == "pulumi/actions"
    assert steps[preview]["with"] == {
        "command": "preview",
        "stack-name": "${{ steps.settings.outputs.stack-name }}",
        "cloud-url": "${{ vars.PULUMI_BACKEND_URL }}",
        "policyPacks": "policies",
        "pulumi-version": "3.272.0",
        "comment-on-summary": "${{ github.event.repository.private }}",
        "diff": True,
    }
    assert steps[preview + 1]["with"]["command"] == "up"


def test_the_pull_request_preview_does_not_refresh():
    """A refresh reads each resource (the Helm releases' Secrets among them), which the
    preview role (AmazonEKSViewPolicy) may not; pulumi/actions v7.0.0 action.yml L85-88:
    `refresh` defaults to false."""
    (pulumi,) = [
        s for s in PR["jobs"]["preview"]["steps"] if s.get("uses", "").startswith("pulumi/actions@")
    ]
    assert "refresh" not in pulumi["with"]
    assert "--refresh" not in text_of(PR)


# Issue 29, point 10 (review L10): the write token never meets the pull request's code.
def test_the_comment_job_runs_none_of_the_pull_requests_code():
    comment = PR["jobs"]["comment"]
    assert [s["uses"].split("@")[0] for s in comment["steps"]] == [
        "actions/download-artifact",
        "marocchino/sticky-pull-request-comment",
    ]
    assert all("run" not in s for s in comment["steps"])
    assert comment["steps"][0]["with"] == {"name": "render-${{ matrix.stack }}", "path": "render"}
    assert comment["steps"][1]["with"] == {
        "header": "render-${{ matrix.stack }}",
        "path": "render/comment.md",
    }
    assert "github.event.pull_request.head.repo.full_name == github.repository" in comment["if"]
    render = PR["jobs"]["render"]
    assert [s for s in render["steps"] if "sticky-pull-request-comment" in s.get("uses", "")] == []


# Review L9: the validation report is cluster detail; public repositories do not publish it.
def test_the_validation_report_is_published_on_private_repositories_only():
    steps = MAIN["jobs"]["up-first"]["steps"]
    (validate,) = [s for s in steps if s.get("id") == "validate"]
    assert validate["env"]["PRIVATE_REPOSITORY"] == "${{ github.event.repository.private }}"
    assert (
        'if [ "$PRIVATE_REPOSITORY" = true ] && [ -f "build/validate/$STACK/validate.md" ]; then'
        in validate["run"].splitlines()
    )
    (upload,) = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["if"] == (
        "always() && steps.validate.outcome != 'skipped' && github.event.repository.private"
    )


# Review L8/L12: the rules that guard the deploys have owners; the placeholder is documented as
# a required first-setup step.
def test_codeowners_cover_the_rules_and_say_to_replace_the_placeholder():
    root = WORKFLOWS.parents[1]
    text = (root / ".github" / "CODEOWNERS").read_text()
    owners = dict(line.split() for line in text.splitlines() if line and not line.startswith("#"))
    for path in ("/policies/", "/components/policies/", "/.github/", "/security/"):
        assert owners[path] == "@OWNER/platform-security", path
    assert "FIRST SETUP: replace @OWNER/platform-security" in text
    security = (root / "docs" / "security.md").read_text()
    assert "**first setup: replace its placeholder team `@OWNER/platform-security`**" in security
