"""`make security-scan`: the pinned security scanners over both stacks' renders and the
workflows, every finding checked against security/allowlist.yaml (issue 22).

- parliament (`--minimum_severity LOW`) over every IAM document the render writes
  (build/security/<stack>/iam/*.json) and over the CI roles' documents (security/ci-roles/,
  their `<placeholders>` filled with example values: `ci_role_documents`);
- cloudsplaining (`scan-policy-file`) over the identity policies among them (not the trust
  policies, not the queue's resource policy: it reads identity policies only);
- checkov over the rendered Kubernetes examples (`--framework kubernetes`) and the workflows
  (`--framework github_actions`);
- zizmor (`--offline --persona auditor`, its most thorough persona) over the workflows.

A finding is ``(tool, file, id)``: the file's name (the same across stacks; ``examples/*.yaml``
for the rendered workload templates) and the check's id.
Every finding must be in the allowlist with a reason; an allowlisted finding no longer found
fails too, so the list never outgrows what the scanners report. Exit 0 when both hold, 1 with
one line per problem otherwise.

Runs with the project's virtualenv (PyYAML), the scanners from .venv-security and .venv-checkov.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "build" / "security"
SECURITY_BIN = REPO / ".venv-security" / "bin"
CHECKOV = REPO / ".venv-checkov" / "bin" / "checkov"
ALLOWLIST = REPO / "security" / "allowlist.yaml"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

Finding = tuple[str, str, str]


def stacks() -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in REPO.glob("Pulumi.*.yaml"))


def render(stack: str) -> Path:
    out = OUT / stack
    process = subprocess.run(
        [sys.executable, "-m", "eks_gpu_platform.offline", "--stack", stack, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if process.returncode != 0:
        raise SystemExit(f"security-scan: the {stack} render failed:\n{process.stderr}")
    return out


def is_identity_policy(path: Path) -> bool:
    return not path.stem.endswith("-trust") and not path.stem.endswith("-queue-policy")


def parliament(path: Path) -> set[Finding]:
    process = subprocess.run(
        [str(SECURITY_BIN / "parliament"), "--json", "--minimum_severity", "LOW"],
        input=path.read_text(),
        capture_output=True,
        text=True,
        check=False,
    )
    found = set()
    for line in process.stdout.splitlines():
        if line.strip():
            found.add(("parliament", path.name, json.loads(line)["issue"]))
    return found


def cloudsplaining(path: Path) -> set[Finding]:
    process = subprocess.run(
        [str(SECURITY_BIN / "cloudsplaining"), "scan-policy-file", "-i", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    text = ANSI.sub("", process.stdout)
    return {
        ("cloudsplaining", path.name, risk.strip())
        for risk in re.findall(r"Potential Issue found: Policy is capable of (.+)", text)
    }


def checkov(directory: Path, framework: str, where: str | None = None) -> set[Finding]:
    """checkov's failed checks, by file name (or all under ``where``: the rendered examples,
    whose file names differ between stacks, share one entry per check)."""
    process = subprocess.run(
        [
            str(CHECKOV),
            *("-d", str(directory), "--framework", framework),
            *("-o", "json", "--quiet", "--compact"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    reports = json.loads(process.stdout or "[]")
    found = set()
    for report in reports if isinstance(reports, list) else [reports]:
        for check in report.get("results", {}).get("failed_checks", []):
            found.add(("checkov", where or Path(check["file_path"]).name, check["check_id"]))
    return found


def zizmor(directory: Path) -> set[Finding]:
    process = subprocess.run(
        [
            str(SECURITY_BIN / "zizmor"),
            *("--offline", "--persona", "auditor", "--format", "json", str(directory)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    found = set()
    for finding in json.loads(process.stdout):
        key = finding["locations"][0]["symbolic"]["key"]["Local"]["verbatim_path"]
        found.add(("zizmor", Path(key).name, finding["ident"]))
    return found


CI_ROLES = REPO / "security" / "ci-roles"
# Example values for the CI role documents' placeholders (docs/ci.md): parliament checks ARN
# formats, so a placeholder must become a well-formed value.
CI_ROLE_VALUES = {
    "<partition>": "aws",
    "<account>": "111122223333",
    "<region>": "us-west-2",
    "<owner>/<repo>": "example-org/eks-gpu-platform",
    "<stack>": "dev",
    "<state-bucket>": "example-pulumi-state",
}


def ci_role_documents() -> list[Path]:
    """The IAM documents of security/ci-roles (not the GitHub subject template), placeholders
    filled, written to build/security/ci-roles/ under the same names."""
    out_dir = OUT / "ci-roles"
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for source in sorted(CI_ROLES.glob("*.json")):
        text = source.read_text()
        if '"Statement"' not in text:
            continue
        for placeholder, value in CI_ROLE_VALUES.items():
            text = text.replace(placeholder, value)
        target = out_dir / source.name
        target.write_text(text)
        paths.append(target)
    return paths


def scan() -> set[Finding]:
    found: set[Finding] = set()
    for path in ci_role_documents():
        found |= parliament(path)
        if is_identity_policy(path):
            found |= cloudsplaining(path)
    for stack in stacks():
        out = render(stack)
        for path in sorted((out / "iam").glob("*.json")):
            found |= parliament(path)
            if is_identity_policy(path):
                found |= cloudsplaining(path)
        found |= checkov(out / "examples", "kubernetes", where="examples/*.yaml")
    workflows = REPO / ".github" / "workflows"
    found |= checkov(workflows, "github_actions")
    found |= zizmor(workflows)
    return found


def allowlisted() -> dict[Finding, str]:
    entries = yaml.safe_load(ALLOWLIST.read_text())["findings"]
    out = {}
    for entry in entries:
        key = (entry["tool"], entry["file"], entry["id"])
        if key in out:
            raise SystemExit(f"security/allowlist.yaml: {key} is listed twice")
        if not str(entry.get("reason", "")).strip():
            raise SystemExit(f"security/allowlist.yaml: {key} has no reason")
        out[key] = entry["reason"]
    return out


def problems(found: set[Finding], allowed: dict[Finding, str]) -> list[str]:
    out = [
        f"not in security/allowlist.yaml: {tool} {check} in {file}"
        for tool, file, check in sorted(found - set(allowed))
    ]
    out += [
        f"in security/allowlist.yaml but no longer found (remove it): {tool} {check} in {file}"
        for tool, file, check in sorted(set(allowed) - found)
    ]
    return out


def main() -> int:
    found = scan()
    allowed = allowlisted()
    lines = problems(found, allowed)
    for line in lines:
        print(line, file=sys.stderr)
    print(
        f"security-scan: {len(found)} findings (parliament, cloudsplaining, checkov, zizmor), "
        f"{len(found & set(allowed))} allowlisted with a reason, {len(lines)} problems"
    )
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
