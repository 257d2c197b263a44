"""Write and render the stacks the conformance suite judges (run by ``make conformance``).

``python tests/conformance/stacks.py OUT`` renders into ``OUT/renders/<stack>/`` (the offline
render's usual output: ``manifests/``, ``helm/``, ``examples/``, ``capacity.json``):

- every ``Pulumi.<stack>.yaml`` of the project (dev and prod, and any stack a user adds);
- ``dev-1.35``: the dev stack at Kubernetes 1.35, where the do-not-disrupt policies are
  ValidatingAdmissionPolicies (MutatingAdmissionPolicy v1 is served from 1.36);
- ``gen-<seed>``: the generated configurations of the Python suite's capacity cases
  (``tests/capacity_cases.py``), the first ``GENERATED`` seeds that validate, in us-east-1.

The stack files written for the last two kinds stay beside the renders (``OUT/stacks/``), so a
failing scenario can be rendered again by hand. Exit 2 with one line per failure when a stack does
not render.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

PROJECT = "eks-gpu-platform"
GENERATED = 3
SEEDS_TRIED = 40


def _write_stack(path: Path, region: str, values: dict) -> None:
    config = {"aws:region": region}
    config.update({f"{PROJECT}:{key}": value for key, value in values.items()})
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))


def _render(stack: str, out: Path, config_file: Path | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "eks_gpu_platform.offline", "--stack", stack, "--no-policy"]
    if config_file is not None:
        cmd += ["--config-file", str(config_file)]
    cmd += ["--out", str(out / "renders" / stack)]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    (out / "stacks").mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    rendered: list[str] = []

    for stack_file in sorted(REPO.glob("Pulumi.*.yaml")):
        stack = stack_file.name[len("Pulumi.") : -len(".yaml")]
        result = _render(stack, out)
        (rendered if result.returncode == 0 else failures).append(
            stack if result.returncode == 0 else f"{stack}: {result.stderr.strip()[-400:]}"
        )

    dev = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())
    dev["config"][f"{PROJECT}:cluster"]["kubernetesVersion"] = "1.35"
    older = out / "stacks" / "Pulumi.dev-1.35.yaml"
    older.write_text(yaml.safe_dump(dev, sort_keys=False))
    result = _render("dev-1.35", out, older)
    (rendered if result.returncode == 0 else failures).append(
        "dev-1.35" if result.returncode == 0 else f"dev-1.35: {result.stderr.strip()[-400:]}"
    )

    from capacity_cases import generated_values

    generated = 0
    for seed in range(SEEDS_TRIED):
        if generated == GENERATED:
            break
        stack = f"gen-{seed}"
        path = out / "stacks" / f"Pulumi.{stack}.yaml"
        _write_stack(path, "us-east-1", generated_values(seed))
        if _render(stack, out, path).returncode == 0:
            rendered.append(stack)
            generated += 1
    if generated < GENERATED:
        failures.append(f"only {generated} of the first {SEEDS_TRIED} generated seeds render")

    (out / "stacks.json").write_text(json.dumps(rendered, indent=2) + "\n")
    for line in failures:
        print(f"stacks: {line}", file=sys.stderr)
    print(f"stacks: rendered {', '.join(rendered)} into {out / 'renders'}")
    return 2 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
