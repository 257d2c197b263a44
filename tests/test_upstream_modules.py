"""``upstream_modules``: Karpenter's files read from the Go module the conformance suite pins, with
``go.sum`` checking the download, and a one-line failure when that cannot be done (issue 33)."""

from __future__ import annotations

import shutil
from pathlib import Path

import crd_validation
import pytest
import upstream_modules
import yaml
from upstream_modules import KARPENTER_AWS, module_dir, required_version

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "tests" / "conformance"
# go.sum's line for the module's zip (tests/conformance/go.sum), written out here: the download
# must match it.
ZIP_SUM = "h1:3qnrxRxKHPg9Hd71D7xH4xKxPfmcrB30EFBrMz74mOs="
# The NodePool CRD's rule on spec.template.metadata.labels (aws/karpenter-provider-aws v1.15.0
# pkg/apis/crds/karpenter.sh_nodepools.yaml L225): a template label in karpenter.sh's domain is
# refused, the two listed keys excepted. The stack check of label keys (components/checks.py
# RESERVED_DOMAINS) refuses that domain before the API server would.
LABEL_DOMAIN_RULE = (
    'self.all(x, x in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || '
    '!x.find("^([^/]+)").endsWith("karpenter.sh"))'
)


def failure(module: str, conformance: Path) -> str:
    with pytest.raises(pytest.fail.Exception) as raised:
        module_dir(module, conformance)
    assert raised.value.pytrace is False
    return str(raised.value)


def test_the_version_is_the_one_go_mod_requires():
    assert required_version(KARPENTER_AWS) == "v1.15.0"
    assert module_dir(KARPENTER_AWS).name == "karpenter-provider-aws@v1.15.0"
    assert f"\n{KARPENTER_AWS} v1.15.0 {ZIP_SUM}\n" in (CONF / "go.sum").read_text()


def test_the_toolchain_is_the_makefile_s():
    assert upstream_modules.go_toolchain() == "go1.27.3"


def test_the_nodepool_crd_comes_from_the_module_with_the_label_domain_rule():
    nodepools = crd_validation.karpenter_crd_files()[0]
    assert nodepools == module_dir(KARPENTER_AWS) / "pkg/apis/crds/karpenter.sh_nodepools.yaml"
    assert f"rule: {LABEL_DOMAIN_RULE}\n" in nodepools.read_text()
    assert (
        crd_validation.RuleLocation(
            "nodepools.karpenter.sh", "v1", "spec.template.metadata.labels", LABEL_DOMAIN_RULE
        )
        in crd_validation.all_rules()
    )


def test_a_module_go_mod_does_not_require_is_named(tmp_path: Path):
    (tmp_path / "go.mod").write_text("module example.test/none\n\ngo 1.26.9\n")
    assert failure(KARPENTER_AWS, tmp_path) == (
        f"{tmp_path / 'go.mod'} requires no module github.com/aws/karpenter-provider-aws"
    )


def test_a_version_the_proxy_does_not_give_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "go.mod").write_text(
        "module example.test/bad\n\ngo 1.26.9\n\n"
        "require github.com/aws/karpenter-provider-aws v1.15.99\n"
    )
    monkeypatch.setenv("GOPROXY", "off")  # no network: the cache has no v1.15.99
    assert failure(KARPENTER_AWS, tmp_path) == (
        "upstream module github.com/aws/karpenter-provider-aws@v1.15.99: go mod download failed: "
        "github.com/aws/karpenter-provider-aws@v1.15.99: module lookup disabled by GOPROXY=off"
    )


def test_go_sum_checks_the_download(tmp_path: Path):
    shutil.copy(CONF / "go.mod", tmp_path)
    text = (CONF / "go.sum").read_text()
    tampered = "h1:" + "A" * 43 + "="
    (tmp_path / "go.sum").write_text(text.replace(ZIP_SUM, tampered))
    assert failure(KARPENTER_AWS, tmp_path) == (
        "upstream module github.com/aws/karpenter-provider-aws@v1.15.0: go mod download failed: "
        "verifying github.com/aws/karpenter-provider-aws@v1.15.0: checksum mismatch "
        f"downloaded: {ZIP_SUM} go.sum: {tampered} SECURITY ERROR This download does NOT match "
        "an earlier download recorded in go.sum. The bits may have been replaced on the origin "
        "server, or an attacker may have intercepted the download attempt. For more information, "
        "see 'go help module-auth'."
    )


def test_no_go_command_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    shutil.copy(CONF / "go.mod", tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert failure(KARPENTER_AWS, tmp_path) == (
        "upstream module github.com/aws/karpenter-provider-aws@v1.15.0: no go command on PATH "
        "(make test needs Go and the Go module proxy: the tests read Karpenter's CRDs, chart "
        "values and bootstrap code from the module)"
    )


def test_a_failure_is_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """One ``go`` run per module and process, failures included: the next call fails at once."""
    (tmp_path / "go.mod").write_text(
        "module example.test/bad\n\ngo 1.26.9\n\n"
        "require github.com/aws/karpenter-provider-aws v1.15.99\n"
    )
    monkeypatch.setenv("GOPROXY", "off")
    first = failure(KARPENTER_AWS, tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # a second go run would fail differently
    assert failure(KARPENTER_AWS, tmp_path) == first


@pytest.mark.parametrize("workflow", ["pull-request.yml", "main.yml"])
def test_ci_sets_up_go_before_make_test(workflow: str):
    jobs = yaml.safe_load((REPO / ".github" / "workflows" / workflow).read_text())["jobs"]
    steps = jobs["test"]["steps"]
    runs = [i for i, s in enumerate(steps) if s.get("run") == "make test"]
    go = [i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/setup-go@")]
    assert len(runs) == 1 and len(go) == 1 and go[0] < runs[0]
    assert steps[go[0]]["with"] == {"go-version": "1.26.8", "cache": False}
