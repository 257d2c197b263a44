"""Probe the Go module proxy for every module version the conformance suite pins
(``make conformance`` runs it first).

Prints one line per module: served, or refused with the proxy's answer. Exit 1 when a module the
suite builds is refused, naming it; a module the suite only reports on (``OPTIONAL``) never fails
the run. KAI v0.16.8 is such a module: the proxy this project's machines reach answers 403 "This
module version is not available" for ``github.com/kai-scheduler/KAI-scheduler`` (the path in its
go.mod) in every spelling tried, so KAI's queue admission is not in the suite (README,
"Conformance").
"""

import json
import os
import subprocess
import sys

REQUIRED = (
    "k8s.io/kubernetes@v1.36.3",
    "go.etcd.io/etcd/server/v3@v3.6.16",
    "sigs.k8s.io/karpenter@v1.15.0",
    "github.com/aws/karpenter-provider-aws@v1.15.0",
    "sigs.k8s.io/controller-runtime@v0.24.1",
)
# The core's v1.15.1, which the provider's v1.15.1 requires: its zip is refused (403 "This
# module version is not available", 2026-11-27), so the suite runs the provider's v1.15.0 (the
# same provider code: the two zips differ only in go.mod and release tooling) on core v1.15.0.
OPTIONAL = (
    "github.com/kai-scheduler/KAI-scheduler@v0.16.8",
    "sigs.k8s.io/karpenter@v1.15.1",
)
# The Go toolchain every Go command of the suite runs (the Makefile's GO_TOOLCHAIN): Karpenter
# 1.15's modules need go >= 1.26.9, newer than the machines' 1.26.8.
GO_TOOLCHAIN = "go1.27.3"


def probe(module: str) -> str | None:
    """None when the proxy serves ``module``; else the proxy's answer, on one line."""
    env = {**os.environ, "GOTOOLCHAIN": GO_TOOLCHAIN}
    result = subprocess.run(
        ["go", "mod", "download", "-json", module],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    try:
        error = json.loads(result.stdout).get("Error")
    except json.JSONDecodeError:
        error = (result.stderr or result.stdout).strip() or f"exit {result.returncode}"
    return " ".join(error.split()) if error else None


def main() -> int:
    refused = []
    for module in REQUIRED + OPTIONAL:
        error = probe(module)
        kind = "optional" if module in OPTIONAL else "required"
        print(f"probe: {module} ({kind}): {'served' if error is None else 'REFUSED: ' + error}")
        if error is not None and module in REQUIRED:
            refused.append(module)
    if refused:
        print(f"probe: required modules refused: {', '.join(refused)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
