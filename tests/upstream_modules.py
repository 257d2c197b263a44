"""Files of the upstream Go modules the project depends on, read at test time (issue 33).

The conformance suite (``tests/conformance``) imports ``github.com/aws/karpenter-provider-aws``:
its ``go.mod`` pins the version and its ``go.sum`` the module's hash. The Python tests that need
a file of that release (the CRDs, the chart's ``values.yaml``, the bootstrap code) read it from
the module's directory in the Go module cache, never from a copy in this repository.
:func:`module_dir` runs ``go mod download -json <module>@<version>`` once per test process in
``tests/conformance``, so the go command checks the zip against ``go.sum`` (a mismatch is its
"SECURITY ERROR", and the run fails), with the Makefile's ``GO_TOOLCHAIN`` and
``CGO_ENABLED=0``. The version is the one ``tests/conformance/go.mod`` requires: one pin. So
``make test`` needs Go (any release: ``GOTOOLCHAIN`` fetches the pinned one) and the Go module
proxy, the first time; afterwards the module cache answers.

Karpenter v1.15.0, not the chart's 1.15.1 (``components/versions.py``): the provider's v1.15.1
requires ``sigs.k8s.io/karpenter`` v1.15.1, whose zip the proxy refuses (``probe.py``), so the
suite's module stays at v1.15.0. The two provider zips (both served, hashes checked against
sum.golang.org: v1.15.0 ``h1:3qnrxRxKHPg9Hd71D7xH4xKxPfmcrB30EFBrMz74mOs=``, v1.15.1
``h1:6eH///KgWKDwD2R6wHRnKGN8Vu8OHueaXjNdx64TnuY=``) differ in six files only:
``.github/workflows/release.yaml``, ``go.mod``, ``go.sum``, ``hack/docgen.sh``,
``hack/release/common.sh`` and ``hack/release/stable-pr.sh`` (``diff -rq`` of the two module
directories, 2026-11-27; the upstream git mirror reachable here stops at v1.14.1). Every file
the tests read (``pkg/apis/crds/karpenter.sh_{nodepools,nodeclaims,nodeoverlays}.yaml``,
``pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml``, ``charts/karpenter/values.yaml``,
``pkg/providers/amifamily/bootstrap/{nodeadm,bottlerocket,bottlerocketsettings}.go``) is
byte-identical in the two, so what is checked at v1.15.0 holds for the deployed 1.15.1.
Go module zips leave out nested modules' directories; ``charts/`` and ``pkg/`` are in this one.

A failure (no ``go`` on ``PATH``, a refused or unverifiable download, a module ``go.mod`` does
not require) fails the test with one line naming the module and the cause, not a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO / "tests" / "conformance"

KARPENTER_AWS = "github.com/aws/karpenter-provider-aws"

# Per process (one per pytest-xdist worker): module@version -> directory, or the failure line.
_RESOLVED: dict[tuple[str, Path], Path | str] = {}


class UpstreamModuleError(Exception):
    """A module's directory could not be resolved; the message is one line."""


def go_toolchain(makefile: Path = REPO / "Makefile") -> str:
    """The Makefile's ``GO_TOOLCHAIN`` (e.g. ``go1.27.3``): every Go command runs it."""
    match = re.search(r"^GO_TOOLCHAIN := (\S+)$", makefile.read_text(), flags=re.M)
    if match is None:
        raise UpstreamModuleError(f"{makefile} sets no GO_TOOLCHAIN")
    return match.group(1)


def required_version(module: str, conformance: Path = CONFORMANCE) -> str:
    """The version of ``module`` that ``<conformance>/go.mod`` requires."""
    gomod = (conformance / "go.mod").read_text()
    for line in re.findall(r"^require \((.*?)^\)", gomod, flags=re.S | re.M) + re.findall(
        r"^require (\S+ \S+)", gomod, flags=re.M
    ):
        for entry in line.strip().splitlines():
            fields = entry.split("//")[0].split()
            if len(fields) == 2 and fields[0] == module:
                return fields[1]
    raise UpstreamModuleError(f"{conformance / 'go.mod'} requires no module {module}")


def _download(module: str, conformance: Path) -> Path:
    version = required_version(module, conformance)
    target = f"{module}@{version}"
    env = {**os.environ, "GOTOOLCHAIN": go_toolchain(), "CGO_ENABLED": "0"}
    try:
        result = subprocess.run(
            ["go", "mod", "download", "-json", target],
            cwd=conformance,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        raise UpstreamModuleError(
            f"upstream module {target}: no go command on PATH (make test needs Go and the Go "
            "module proxy: the tests read Karpenter's CRDs, chart values and bootstrap code "
            "from the module)"
        ) from None
    try:
        answer = json.loads(result.stdout)
    except json.JSONDecodeError:
        answer = {}
    error = answer.get("Error") or (result.stderr.strip() if result.returncode else "")
    if error or not answer.get("Dir"):
        cause = " ".join((error or f"exit {result.returncode}, no Dir").split())
        raise UpstreamModuleError(f"upstream module {target}: go mod download failed: {cause}")
    return Path(answer["Dir"])


def module_dir(module: str, conformance: Path = CONFORMANCE) -> Path:
    """The directory of ``module`` at the version ``<conformance>/go.mod`` requires.

    Resolved once per process; a failure fails the calling test with its one-line message
    (``pytest.fail(pytrace=False)``), every later call again without retrying.
    """
    key = (module, conformance)
    if key not in _RESOLVED:
        try:
            _RESOLVED[key] = _download(module, conformance)
        except UpstreamModuleError as exc:
            _RESOLVED[key] = str(exc)
    resolved = _RESOLVED[key]
    if isinstance(resolved, str):
        pytest.fail(resolved, pytrace=False)
    return resolved


def karpenter_file(path: str) -> Path:
    """A file of ``github.com/aws/karpenter-provider-aws`` at the suite's version."""
    return module_dir(KARPENTER_AWS) / path
