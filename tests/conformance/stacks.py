"""Write and render the stacks the conformance suite judges (run by ``make conformance``).

``python tests/conformance/stacks.py OUT`` renders into ``OUT/renders/<stack>/`` (the offline
render's usual output: ``manifests/``, ``helm/``, ``examples/``, ``capacity.json``):

- every ``Pulumi.<stack>.yaml`` of the project (the user's stacks, whatever they are named);
- ``dev-dra``: the fixture dev stack with a DRA pool and a queue routed to it, where the pinned
  Karpenter has DRA (1.15 and up);
- ``dev-1.35``: the fixture dev stack (``tests/fixtures/stacks/Pulumi.dev.yaml``, present whatever
  the user's stacks are) at Kubernetes 1.35, where the do-not-disrupt policies are
  ValidatingAdmissionPolicies (MutatingAdmissionPolicy v1 is served from 1.36);
- ``dev-mig``: the fixture dev stack plus a MIG pool (``mig``: p4d.24xlarge under
  ``all-1g.5gb``, routed to ``research-batch``), for the MIG startup remover's scenario
  (issue 30);
- ``gen-<seed>``: the generated configurations of the Python suite's capacity cases
  (``tests/capacity_cases.py``), the first ``GENERATED`` seeds that validate, in us-east-1, whose
  every GPU pool has at least one instance type EC2 offers in the region (the moto wheel's
  DescribeInstanceTypeOfferings data, ``instance_data.py``). A seed with a pool no type of which is
  offered there (an H200 MIG pool: p5e.48xlarge has no us-east-1 offering in that data) is skipped
  and named on the output: the real Karpenter would launch nothing for it, a known gap of the
  render, asserted by ``tests/offline/test_capacity.py``, not a scenario to judge here.

The stack files written for the last two kinds stay beside the renders (``OUT/stacks/``), so a
failing scenario can be rendered again by hand. Exit 2 with one line per failure when a stack does
not render.
"""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

PROJECT = "eks-gpu-platform"
GENERATED = 3
GENERATED_REGION = "us-east-1"
SEEDS_TRIED = 40
MIG_POOL = {
    "name": "mig",
    "kind": "gpu",
    "instanceTypes": ["p4d.24xlarge"],
    "migProfile": "all-1g.5gb",
    "capacityTypes": ["on-demand"],
}
MIG_QUEUE = "research-batch"


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


def _pins_dra_karpenter() -> bool:
    """Whether the pinned Karpenter has DRA (``nodepool.dra.DRA_MIN_KARPENTER``): the render
    refuses a DRA pool before."""
    from eks_gpu_platform import versions
    from eks_gpu_platform.nodepool.dra import DRA_MIN_KARPENTER

    def as_tuple(version: str) -> tuple[int, ...]:
        return tuple(int(p) for p in version.split("."))

    return as_tuple(versions.KARPENTER_VERSION) >= as_tuple(DRA_MIN_KARPENTER)


def mig_config(repo: Path) -> dict:
    """``dev-mig``'s configuration: the fixture dev stack of ``repo`` plus ``MIG_POOL``, routed to
    ``MIG_QUEUE`` (also rendered by mutation_score.py, in its copy of the repository)."""
    mig = yaml.safe_load((repo / "tests" / "fixtures" / "stacks" / "Pulumi.dev.yaml").read_text())
    mig["config"][f"{PROJECT}:nodePools"].append(MIG_POOL)
    for queue in mig["config"][f"{PROJECT}:scheduler"]["queues"]:
        if queue["name"] == MIG_QUEUE:
            queue["nodePools"].append(MIG_POOL["name"])
    return mig


def dra_config(repo: Path) -> dict:
    """``dev-dra``'s configuration: the fixture dev stack of ``repo`` plus a DRA pool and a queue
    routed to it (also rendered by mutation_score.py, in its copy of the repository)."""
    dra = yaml.safe_load((repo / "tests" / "fixtures" / "stacks" / "Pulumi.dev.yaml").read_text())
    dra["config"][f"{PROJECT}:nodePools"].append(
        {"name": "train-dra", "kind": "gpu", "instanceTypes": ["g6.48xlarge"], "dra": True}
    )
    dra["config"][f"{PROJECT}:scheduler"]["queues"].append(
        {
            "name": "dra-team",
            "gpu": {"quota": 16, "limit": 16, "overQuotaWeight": 1},
            "cpu": {"quota": 64, "limit": 128, "overQuotaWeight": 1},
            "memory": {"quota": 256, "limit": 512, "overQuotaWeight": 1},
            "nodePools": ["train-dra"],
            "workloadKind": "training",
        }
    )
    return dra


def _render_dra(out: Path, rendered: list[str], failures: list[str]) -> None:
    """``dev-dra``: the fixture dev stack plus a DRA pool (docs/dra-pools.md) of g6.48xlarge and a
    queue routed to it, for the dra-claim scenario (karpenter/dra_test.go)."""
    dra = dra_config(REPO)
    stack_file = out / "stacks" / "Pulumi.dev-dra.yaml"
    stack_file.write_text(yaml.safe_dump(dra, sort_keys=False))
    result = _render("dev-dra", out, stack_file)
    if result.returncode == 0:
        rendered.append("dev-dra")
    else:
        failures.append(f"dev-dra: {result.stderr.strip()[-400:]}")


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

    dev = yaml.safe_load((REPO / "tests" / "fixtures" / "stacks" / "Pulumi.dev.yaml").read_text())
    dev["config"][f"{PROJECT}:cluster"]["kubernetesVersion"] = "1.35"
    older = out / "stacks" / "Pulumi.dev-1.35.yaml"
    older.write_text(yaml.safe_dump(dev, sort_keys=False))
    result = _render("dev-1.35", out, older)
    (rendered if result.returncode == 0 else failures).append(
        "dev-1.35" if result.returncode == 0 else f"dev-1.35: {result.stderr.strip()[-400:]}"
    )

    mig = mig_config(REPO)
    with_mig = out / "stacks" / "Pulumi.dev-mig.yaml"
    with_mig.write_text(yaml.safe_dump(mig, sort_keys=False))
    result = _render("dev-mig", out, with_mig)
    (rendered if result.returncode == 0 else failures).append(
        "dev-mig" if result.returncode == 0 else f"dev-mig: {result.stderr.strip()[-400:]}"
    )
    if _pins_dra_karpenter():
        _render_dra(out, rendered, failures)

    from capacity_cases import generated_values

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from instance_data import load_offerings, moto_dir

    offered = {o["InstanceType"] for o in load_offerings(moto_dir(), GENERATED_REGION)}
    generated = 0
    for seed in range(SEEDS_TRIED):
        if generated == GENERATED:
            break
        stack = f"gen-{seed}"
        path = out / "stacks" / f"Pulumi.{stack}.yaml"
        _write_stack(path, GENERATED_REGION, generated_values(seed))
        if _render(stack, out, path).returncode != 0:
            continue
        capacity = json.loads((out / "renders" / stack / "capacity.json").read_text())
        unoffered = [
            pool["name"]
            for pool in capacity["pools"]
            if pool.get("instanceTypes") and not offered.intersection(pool["instanceTypes"])
        ]
        if unoffered:
            print(
                f"stacks: {stack} skipped: no instance type of {', '.join(unoffered)} is offered "
                f"in {GENERATED_REGION}"
            )
            shutil.rmtree(out / "renders" / stack)
            continue
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
