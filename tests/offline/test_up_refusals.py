"""Issue 28, point 11: what `pulumi up` would refuse is said where users look.

The render's console ended "Policy pack: N rules, no violations" while summary.md listed the
problems `pulumi up` refuses (warnings ending "(refused by `pulumi up`)"). Both now take them from
the same place, the program's warnings (``errors.REFUSED_BY_UP``): the console ends with them,
summary.md lists them first, and neither policy line reads as all clear while any remain.

The throwaway program below warns the way the platform's components do (``pulumi.log.warn`` of
``refused_by_up(problem)``), so the expected text is written here, not taken from the platform.
"""

from pathlib import Path

from eks_gpu_platform.errors import REFUSED_BY_UP, refused_by_up, up_refusals
from eks_gpu_platform.offline.render import main
from eks_gpu_platform.policies.rules import RULES

PROGRAM = """import pulumi
import pulumi_aws as aws

from eks_gpu_platform.errors import refused_by_up

queue = aws.sqs.Queue("jobs", sqs_managed_sse_enabled=True)
pulumi.log.warn(refused_by_up("cluster.admins: the deployer is not listed"), queue)
pulumi.log.warn("node pools gpu-spot: the Spot service-linked role may be missing", queue)
CIDRS = "cluster.publicAccessCidrs: 203.0.113.0/24 is a documentation range"
pulumi.log.warn(refused_by_up(CIDRS), queue)
"""
CLEAN = 'import pulumi_aws as aws\n\naws.sqs.Queue("jobs", sqs_managed_sse_enabled=True)\n'


def project(tmp_path: Path, program: str) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: refusals\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-west-2\n")
    (folder / "__main__.py").write_text(program)
    return folder


def test_the_suffix_is_the_one_the_components_append():
    assert REFUSED_BY_UP == " (refused by `pulumi up`)"
    assert refused_by_up("a: b") == "a: b (refused by `pulumi up`)"
    assert up_refusals(["a: b (refused by `pulumi up`)", "c: d", "e (refused by `pulumi up`)"]) == [
        "a: b",
        "e",
    ]


def test_the_console_ends_with_every_refusal_and_the_policy_line_is_not_all_clear(tmp_path, capsys):
    folder = project(tmp_path, PROGRAM)
    assert main(["--project-dir", str(folder), "--out", str(folder / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-4:] == [
        "",
        "`pulumi up` refuses this stack: 2 problem(s) (`pulumi preview` only warns about them):",
        "  - cluster.admins: the deployer is not listed",
        "  - cluster.publicAccessCidrs: 203.0.113.0/24 is a documentation range",
    ]
    assert lines[-6] == (
        f"Policy pack: {len(RULES)} rules, no violations; `pulumi up` still refuses this stack: "
        "2 problem(s), listed at the end"
    )
    assert lines[-5].startswith("Wall time: ")
    assert f"Policy pack: {len(RULES)} rules, no violations" not in lines


def test_summary_md_lists_the_refusals_first_and_the_other_warnings_apart(tmp_path, capsys):
    folder = project(tmp_path, PROGRAM)
    assert main(["--project-dir", str(folder), "--out", str(folder / "out")]) == 0
    text = (folder / "out" / "summary.md").read_text()
    assert text.startswith(
        "### `dev`: 1 resources\n"
        "\n"
        "**`pulumi up` refuses this stack: 2 problem(s)** (`pulumi preview` only warns about "
        "them):\n"
        "\n"
        "- cluster.admins: the deployer is not listed\n"
        "- cluster.publicAccessCidrs: 203.0.113.0/24 is a documentation range\n"
        "\n"
        "Policy pack: no violations; `pulumi up` still refuses this stack (above).\n"
        "\n"
        "#### Warnings\n"
        "\n"
        "- node pools gpu-spot: the Spot service-linked role may be missing\n"
        "\n"
    )


def test_make_plans_render_ends_with_the_plan_and_the_refusals(tmp_path, capsys):
    """``make plan`` runs the render with ``--compare`` last (its base render's console goes to
    a file): the plan's path, then the refusals."""
    folder = project(tmp_path, PROGRAM)
    assert main(["--project-dir", str(folder), "--out", str(folder / "base")]) == 0
    capsys.readouterr()
    out = folder / "new"
    argv = ["--project-dir", str(folder), "--out", str(out), "--compare", str(folder / "base")]
    assert main([*argv, "--no-policy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-7:-4] == ["Policy pack: not run", lines[-6], f"plan: {out / 'plan.md'}"]
    assert lines[-6].startswith("Wall time: ")
    assert lines[-3] == (
        "`pulumi up` refuses this stack: 2 problem(s) (`pulumi preview` only warns about them):"
    )


def test_a_stack_up_accepts_ends_as_before(tmp_path, capsys):
    folder = project(tmp_path, CLEAN)
    assert main(["--project-dir", str(folder), "--out", str(folder / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2] == f"Policy pack: {len(RULES)} rules, no violations"
    assert lines[-1].startswith("Wall time: ")
    text = (folder / "out" / "summary.md").read_text()
    assert text.startswith("### `dev`: 1 resources\n\nPolicy pack: no violations.\n\n")
    assert "refuses" not in text
