"""Edit a copy's ``Pulumi.dev.yaml`` the way a user would, for ``.ci/run`` (issue 33, point 4).

The edits: another VPC CIDR (and public-access CIDR, where the stack sets one), a new GPU pool
with a new top-level queue routed to it, and a renamed pool (the first GPU pool a leaf queue
routes to; every reference to it follows); then a new stack, ``Pulumi.staging.yaml``: the edited
dev stack under another cluster name. The stack file is the user's, so nothing here assumes more
about it than the configuration schema
(README, "Configuration"): a pool is renamed by its ``name`` and by the queues' ``nodePools``.

``python .ci/edit_dev_stack.py <project copy>`` edits the file in place and prints what it did;
``python .ci/edit_dev_stack.py --check <project copy>`` then checks that ``make snapshot``
recorded the edits in ``snapshots/dev.json`` (the NodePools of the new and the renamed pool,
none under the old name, the new queue) and wrote ``snapshots/staging.json``. Either exits 1
with a message on failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

PREFIX = "eks-gpu-platform:"
CIDR = "10.61.0.0/16"
PUBLIC_ACCESS_CIDR = "198.51.100.0/24"  # RFC 5737 TEST-NET-2
NEW_POOL = {
    "name": "ci-train-h100",
    "kind": "gpu",
    "gpus": ["h100"],
    "capacityTypes": ["on-demand"],
}
NEW_QUEUE = {
    "name": "ci-training",
    "gpu": {"quota": 8, "limit": 8, "overQuotaWeight": 1},
    "cpu": {"quota": 64, "limit": 64, "overQuotaWeight": 1},
    "memory": {"quota": 256, "limit": 256, "overQuotaWeight": 1},
    "nodePools": [NEW_POOL["name"]],
}
RENAME_SUFFIX = "-renamed"
STAGING_CLUSTER = "gpu-staging"


def fail(message: str) -> None:
    print(f"edit_dev_stack: {message}", file=sys.stderr)
    sys.exit(1)


def renamed_pool(config: dict) -> str:
    """The first GPU pool a queue routes to: renaming it moves a queue's routing too."""
    routed = [p for q in config[f"{PREFIX}scheduler"]["queues"] for p in q.get("nodePools", [])]
    for pool in config[f"{PREFIX}nodePools"]:
        if pool.get("kind") == "gpu" and pool["name"] in routed:
            return pool["name"]
    fail("Pulumi.dev.yaml has no GPU pool a queue routes to (nothing to rename)")
    raise AssertionError  # unreachable


def edit(project: Path) -> None:
    path = project / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    config = document["config"]
    old = renamed_pool(config)
    new = old + RENAME_SUFFIX
    config[f"{PREFIX}vpc"]["cidr"] = CIDR
    if config[f"{PREFIX}cluster"].get("publicAccessCidrs"):
        config[f"{PREFIX}cluster"]["publicAccessCidrs"] = [PUBLIC_ACCESS_CIDR]
    for pool in config[f"{PREFIX}nodePools"]:
        if pool["name"] == old:
            pool["name"] = new
    config[f"{PREFIX}nodePools"].append(dict(NEW_POOL))
    queues = config[f"{PREFIX}scheduler"]["queues"]
    for queue in queues:
        if "nodePools" in queue:
            queue["nodePools"] = [new if p == old else p for p in queue["nodePools"]]
    queues.append(json.loads(json.dumps(NEW_QUEUE)))
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    config[f"{PREFIX}cluster"]["name"] = STAGING_CLUSTER
    (project / "Pulumi.staging.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    state = project / "build" / "ci-edit.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"old": old, "new": new}))
    print(
        f"Pulumi.dev.yaml: vpc.cidr {CIDR}; pool {old!r} renamed {new!r}; "
        f"pool {NEW_POOL['name']!r} and top-level queue {NEW_QUEUE['name']!r} added; "
        f"Pulumi.staging.yaml: the same, cluster {STAGING_CLUSTER!r}"
    )


def check(project: Path) -> None:
    names = json.loads((project / "build" / "ci-edit.json").read_text())
    text = (project / "snapshots" / "dev.json").read_text()
    urns = json.loads(text)["urns"]

    def named(kind: str, suffix: str) -> list[str]:
        # Names: <stack prefix>-pool-<pool>-pool for a NodePool, ...-queue-<queue> for a Queue.
        return [u for u in urns if f":{kind}::" in u and u.endswith(suffix)]

    def nodepools(pool: str) -> list[str]:
        return named("karpenter.sh/v1:NodePool", f"-pool-{pool}-pool")

    problems = []
    for pool in (names["new"], NEW_POOL["name"]):
        if not nodepools(pool):
            problems.append(f"no NodePool resource named {pool!r}")
    if nodepools(names["old"]):
        problems.append(f"a NodePool resource still named {names['old']!r}")
    if not named("scheduling.run.ai/v2:Queue", f"-queue-{NEW_QUEUE['name']}"):
        problems.append(f"no Queue resource named {NEW_QUEUE['name']!r}")
    if not (project / "snapshots" / "staging.json").is_file():
        problems.append("no snapshots/staging.json for the new stack")
    if problems:
        fail("snapshots/dev.json does not record the edits: " + "; ".join(problems))
    print("snapshots/dev.json records the edits")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--check"]:
        check(Path(args[1]))
    else:
        edit(Path(args[0]))
