"""``make security-scan`` (security/scan.py, issue 22): its verdict over findings and the
allowlist, and the allowlist itself. The scanners run in the make target, not here."""

import importlib.util
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("security_scan", REPO / "security" / "scan.py")
scan = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scan)

TRUST = ("parliament", "platform-karpenter-node-trust.json", "MALFORMED")
NEW = ("zizmor", "main.yml", "unpinned-uses")


def test_an_unlisted_finding_and_a_stale_entry_are_both_problems():
    assert scan.problems({TRUST, NEW}, {TRUST: "trust policies have no Resource"}) == [
        "not in security/allowlist.yaml: zizmor unpinned-uses in main.yml"
    ]
    assert scan.problems(set(), {TRUST: "trust policies have no Resource"}) == [
        "in security/allowlist.yaml but no longer found (remove it): parliament MALFORMED in "
        "platform-karpenter-node-trust.json"
    ]
    assert scan.problems({TRUST}, {TRUST: "reason"}) == []


def test_every_allowlist_entry_has_a_reason_and_is_listed_once():
    entries = yaml.safe_load((REPO / "security" / "allowlist.yaml").read_text())["findings"]
    keys = [(e["tool"], e["file"], e["id"]) for e in entries]
    assert len(keys) == len(set(keys))
    assert all(len(e["reason"].strip()) > 40 for e in entries)
    assert {e["tool"] for e in entries} <= {"parliament", "cloudsplaining", "checkov", "zizmor"}
    assert scan.allowlisted() == {k: e["reason"] for k, e in zip(keys, entries, strict=True)}


def test_identity_policies_are_told_from_trust_and_resource_policies():
    names = ["platform-karpenter-node-trust", "platform-karpenter-interruption-queue-policy"]
    assert [scan.is_identity_policy(Path(f"{n}.json")) for n in names] == [False, False]
    assert scan.is_identity_policy(Path("platform-karpenter-nodelifecycle.json"))


def test_the_scanners_are_pinned_outside_the_test_requirements():
    pins = {
        line.split("==")[0]: line.split("==")[1]
        for name in ("requirements.txt", "requirements-checkov.txt")
        for line in (REPO / "security" / name).read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    assert pins == {
        "parliament": "1.6.4",
        "cloudsplaining": "0.9.1",
        "zizmor": "1.32.0",
        "checkov": "3.3.30",
    }
    assert "make security-scan" in (REPO / ".ci" / "run").read_text()


def test_the_ci_role_documents_are_scanned_with_their_placeholders_filled(tmp_path, monkeypatch):
    """Issue 29: the CI roles' IAM documents go through parliament (and the identity policy
    through cloudsplaining) with example values for `<partition>`, `<account>` and the rest."""
    monkeypatch.setattr(scan, "OUT", tmp_path)
    paths = scan.ci_role_documents()
    assert [p.name for p in paths] == [
        "deploy-trust.json",
        "preview-policy.json",
        "preview-trust.json",
    ]
    deploy = paths[0].read_text()
    assert "<" not in "".join(p.read_text() for p in paths)
    assert (
        '"token.actions.githubusercontent.com:sub": '
        '"repo:example-org/eks-gpu-platform:environment:dev:ref:refs/heads/main"'
    ) in deploy
    assert "arn:aws:iam::111122223333:oidc-provider/token.actions.githubusercontent.com" in deploy
    assert [scan.is_identity_policy(p) for p in paths] == [False, True, False]
