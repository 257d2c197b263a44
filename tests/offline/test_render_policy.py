"""The offline render runs the policy pack: mandatory violations fail it, advisory ones warn.

The pack ships in the library (``eks_gpu_platform.policies``), so it runs for any project: these
throwaway projects have no ``policies/`` folder of their own.
"""

import json
from pathlib import Path

import pytest

from eks_gpu_platform.offline.render import main
from eks_gpu_platform.policies.rules import RULES

REPO = Path(__file__).resolve().parents[2]
QUEUE_LINE = (
    "mandatory sqs-queue-encrypted: jobs: the queue is not encrypted at rest: set "
    "sqsManagedSseEnabled to true, or kmsMasterKeyId to a KMS key"
)


def project(tmp_path: Path, program: str) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: violator\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-west-2\n")
    (folder / "__main__.py").write_text(program)
    return folder


UNENCRYPTED = 'import pulumi_aws as aws\n\naws.sqs.Queue("jobs", message_retention_seconds=300)\n'


def run(folder: Path, *extra: str) -> int:
    out = folder / "out"
    return main(["--project-dir", str(folder), "--out", str(out), *extra])


def test_mandatory_violation_fails_the_render_with_one_line(tmp_path, capsys):
    folder = project(tmp_path, UNENCRYPTED)
    assert run(folder) == 1
    captured = capsys.readouterr()
    assert f"  {QUEUE_LINE}\n" in captured.err
    assert "error: mandatory policy violations (see above)" in captured.err
    assert "Traceback" not in captured.err
    assert (folder / "out" / "policy.txt").read_text() == QUEUE_LINE + "\n"
    assert f"- `{QUEUE_LINE}`" in (folder / "out" / "summary.md").read_text()


def test_policy_config_can_make_it_advisory(tmp_path, capsys):
    folder = project(tmp_path, UNENCRYPTED)
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"sqs-queue-encrypted": "advisory"}))
    code = run(folder, "--policy-pack-config", str(config))
    assert code == 0
    assert "  " + QUEUE_LINE.replace("mandatory", "advisory", 1) in capsys.readouterr().out


def test_compliant_program_passes_and_no_policy_skips(tmp_path, capsys):
    folder = project(
        tmp_path,
        'import pulumi_aws as aws\n\naws.sqs.Queue("jobs", sqs_managed_sse_enabled=True)\n',
    )
    assert len(RULES) == 28
    assert run(folder) == 0
    assert "\nPolicy pack: 28 rules, no violations\n" in capsys.readouterr().out
    assert run(folder, "--no-policy") == 0
    assert "Policy pack: not run" in capsys.readouterr().out


def test_a_projects_own_policies_folder_is_not_imported(tmp_path, capsys):
    """Before the pack moved into the package, the render imported ``<project>/policies``."""
    folder = project(tmp_path, UNENCRYPTED)
    (folder / "policies").mkdir()
    (folder / "policies" / "__init__.py").write_text("")
    (folder / "policies" / "offline.py").write_text('raise RuntimeError("imported")\n')
    assert run(folder) == 1
    captured = capsys.readouterr()
    assert f"  {QUEUE_LINE}\n" in captured.err
    assert "imported" not in captured.err


def test_the_policy_pack_option_is_gone(tmp_path, capsys):
    folder = project(tmp_path, UNENCRYPTED)
    with pytest.raises(SystemExit) as exit_:
        run(folder, "--policy-pack", str(REPO / "policies"))
    assert exit_.value.code == 2
    assert "unrecognized arguments: --policy-pack" in capsys.readouterr().err
    assert not (folder / "out").exists()
