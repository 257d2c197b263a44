"""``.ci/edit_dev_stack.py``: CI's edit of a copy's dev stack (issue 33, point 4) and the new
staging stack beside it do what they say, and its check refuses snapshots that do not record
the edits."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest
import yaml
from stack_files import REPO, fixture_stack_path

PREFIX = "eks-gpu-platform:"


def load_script():
    spec = importlib.util.spec_from_file_location("edit_dev_stack", REPO / ".ci/edit_dev_stack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def project(tmp_path):
    shutil.copy(fixture_stack_path("dev"), tmp_path / "Pulumi.dev.yaml")
    return tmp_path


def test_the_edit_changes_the_cidr_adds_a_pool_and_a_top_level_queue_and_renames_a_pool(
    project, capsys
):
    load_script().edit(project)
    config = yaml.safe_load((project / "Pulumi.dev.yaml").read_text())["config"]
    assert config[f"{PREFIX}vpc"]["cidr"] == "10.61.0.0/16"
    assert config[f"{PREFIX}cluster"]["publicAccessCidrs"] == ["198.51.100.0/24"]
    pools = [p["name"] for p in config[f"{PREFIX}nodePools"]]
    assert pools == ["gpu-spot-renamed", "inference", "notebooks", "general", "ci-train-h100"]
    assert config[f"{PREFIX}nodePools"][-1] == {
        "name": "ci-train-h100",
        "kind": "gpu",
        "gpus": ["h100"],
        "capacityTypes": ["on-demand"],
    }
    queues = {q["name"]: q for q in config[f"{PREFIX}scheduler"]["queues"]}
    assert queues["research-batch"]["nodePools"] == ["gpu-spot-renamed"]
    assert "parent" not in queues["ci-training"]
    assert queues["ci-training"]["nodePools"] == ["ci-train-h100"]
    assert json.loads((project / "build/ci-edit.json").read_text()) == {
        "old": "gpu-spot",
        "new": "gpu-spot-renamed",
    }
    assert capsys.readouterr().out == (
        "Pulumi.dev.yaml: vpc.cidr 10.61.0.0/16; pool 'gpu-spot' renamed 'gpu-spot-renamed'; "
        "pool 'ci-train-h100' and top-level queue 'ci-training' added; "
        "Pulumi.staging.yaml: the same, cluster 'gpu-staging'\n"
    )
    staging = yaml.safe_load((project / "Pulumi.staging.yaml").read_text())["config"]
    assert staging[f"{PREFIX}cluster"]["name"] == "gpu-staging"
    assert staging[f"{PREFIX}nodePools"] == config[f"{PREFIX}nodePools"]
    assert staging[f"{PREFIX}scheduler"] == config[f"{PREFIX}scheduler"]


def test_the_check_refuses_a_snapshot_without_the_edits(project, capsys):
    script = load_script()
    script.edit(project)
    urn = "urn:pulumi:dev::eks-gpu-platform::eks-gpu-platform:index:GpuPlatform$"
    (project / "snapshots").mkdir()
    (project / "snapshots/dev.json").write_text(
        json.dumps(
            {
                "urns": [
                    urn + "eks-gpu-platform:index:NodePool$kubernetes:karpenter.sh/v1:NodePool"
                    "::platform-pool-gpu-spot-pool"
                ]
            }
        )
    )
    with pytest.raises(SystemExit) as exit_:
        script.check(project)
    assert exit_.value.code == 1
    assert capsys.readouterr().err == (
        "edit_dev_stack: snapshots/dev.json does not record the edits: no NodePool resource "
        "named 'gpu-spot-renamed'; no NodePool resource named 'ci-train-h100'; a NodePool "
        "resource still named 'gpu-spot'; no Queue resource named 'ci-training'; no "
        "snapshots/staging.json for the new stack\n"
    )
