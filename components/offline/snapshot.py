"""Replacement safety: a committed snapshot of every URN and of the inputs that replace state.

Pulumi identifies a resource by its URN (type chain, parent chain and logical name). A renamed or
re-parented resource gets a new URN, so ``pulumi up`` deletes the old one and creates a new one,
unless the code carries an alias. Stateful resources are also replaced when an input that forces
replacement changes (a cluster's name, a VPC's CIDR, a queue's name ...).

``snapshot(recording)`` captures both for one stack; ``compare(old, new)`` explains every URN
that disappeared and every replacement-forcing input that changed. The test suite compares every
stack (each ``Pulumi.<stack>.yaml``, ``stacks.discover``) with ``snapshots/<stack>.json``;
``make snapshot`` rewrites them on purpose, records a new stack's and removes those of deleted
stacks. ``python -m eks_gpu_platform.offline.snapshot --check`` compares without writing (exit
1 on a problem, one line each; 2 when a stack file cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import mocks

# Inputs whose change makes the provider replace a stateful resource, or (the cluster's
# ``vpcId`` and ``encryptionConfigKeyArn``, ``plan_replace.REFUSED_INPUTS``) an update AWS
# refuses: the snapshot guards both, the plan tells them apart.
REPLACE_INPUTS: dict[str, tuple[str, ...]] = {
    "eks:index:Cluster": (
        "name",
        "vpcId",
        "encryptionConfigKeyArn",
        "kubernetesServiceIpAddressRange",
        "ipFamily",
    ),
    "aws:kms/key:Key": ("customerMasterKeySpec", "keyUsage", "multiRegion"),
    "aws:ec2/vpc:Vpc": ("cidrBlock", "instanceTenancy"),
    "aws:ec2/subnet:Subnet": ("vpcId", "cidrBlock", "availabilityZone"),
    "aws:sqs/queue:Queue": ("name", "fifoQueue"),
    "aws:iam/role:Role": ("name", "path"),
    "aws:iam/policy:Policy": ("name", "path"),
    "aws:ec2/placementGroup:PlacementGroup": ("name", "strategy"),
    # ForceNew in terraform-provider-aws internal/service/eks/node_group.go (the system nodes:
    # a replacement rolls every controller; see the plan for whether it creates first).
    "aws:eks/nodeGroup:NodeGroup": (
        "clusterName",
        "nodeGroupName",
        "nodeGroupNamePrefix",
        "nodeRoleArn",
        "subnetIds",
        "amiType",
        "capacityType",
        "diskSize",
        "instanceTypes",
    ),
    # ForceNew in internal/service/eks/access_entry.go and addon.go.
    "aws:eks/accessEntry:AccessEntry": ("clusterName", "principalArn", "type"),
    "aws:eks/addon:Addon": ("clusterName", "addonName"),
}


def _urn(stack: str, project: str, chain: list[str], name: str) -> str:
    return f"urn:pulumi:{stack}::{project}::{'$'.join(chain)}::{name}"


def _chain(urn: str | None, by_urn: dict[str, mocks.Registration]) -> list[str]:
    """The types from the outermost ancestor down to ``urn`` (the stack excluded)."""
    chain: list[str] = []
    node = by_urn.get(urn or "")
    while node is not None:
        chain.append(node.type)
        node = by_urn.get(node.parent)
    return list(reversed(chain))


def engine_urns(recording: mocks.Recording) -> dict[str, str]:
    """Each recorded resource's URN as the real engine forms it.

    The engine's qualified type is the whole chain of ancestor types (the stack excluded) then
    the resource's own type: ``GpuPlatform$EksCluster$aws:iam/role:Role``. The mock monitor
    only keeps the immediate parent's type, so the chain is rebuilt from the parents.
    """
    by_urn = {r.urn: r for r in recording.resources}
    return {
        r.urn: _urn(*_stack_project(r.urn), _chain(r.urn, by_urn), r.name)
        for r in recording.resources
    }


def _stack_project(urn: str) -> tuple[str, str]:
    parts = urn.split("::")
    return parts[0].removeprefix("urn:pulumi:"), parts[1]


def alias_urns(recording: mocks.Recording) -> dict[str, list[str]]:
    """For each resource with aliases, the engine URNs those aliases stand for."""
    by_urn = {r.urn: r for r in recording.resources}
    urns = engine_urns(recording)
    out: dict[str, list[str]] = {}
    for r in recording.resources:
        for alias in r.aliases:
            if "urn" in alias:
                old = alias["urn"]
                known = by_urn.get(old)
                out.setdefault(urns[r.urn], []).append(urns[known.urn] if known else old)
                continue
            stack, project = _stack_project(r.urn)
            parent_chain = (
                [] if alias.get("noParent") else _chain(alias.get("parentUrn", r.parent), by_urn)
            )
            chain = [*parent_chain, alias.get("type", r.type)]
            old = _urn(
                alias.get("stack", stack),
                alias.get("project", project),
                chain,
                alias.get("name", r.name),
            )
            out.setdefault(urns[r.urn], []).append(old)
    # A child of an aliased parent inherits an alias under each of the parent's (the engine's
    # generateAliases/inheritedChildAlias, pulumi/pulumi pkg/resource/deploy/step_generator.go
    # L590-652 at v3.259.0): the parent's old type chain, and, when the child's name starts
    # with the parent's, that prefix replaced by the parent's old name.
    for r in recording.resources:  # registration order: a parent's aliases come first
        parent = by_urn.get(r.parent or "")
        for parent_alias in out.get(urns[parent.urn], []) if parent else []:
            head, _, parent_old_name = parent_alias.rpartition("::")
            name = r.name
            if name.startswith(parent.name):
                name = parent_old_name + name[len(parent.name) :]
            inherited = f"{head}${r.type}::{name}"
            if inherited not in out.get(urns[r.urn], []):
                out.setdefault(urns[r.urn], []).append(inherited)
    return out


def snapshot(recording: mocks.Recording) -> dict[str, Any]:
    """URNs of every resource, and the replacement-forcing inputs of stateful ones."""
    urns = engine_urns(recording)
    stateful = {}
    for r in recording.resources:
        keys = REPLACE_INPUTS.get(r.type)
        if keys is not None:
            stateful[urns[r.urn]] = {k: r.inputs[k] for k in keys if k in r.inputs}
    versions = {
        urns[r.urn]: r.inputs["version"]
        for r in recording.resources
        if r.type == "eks:index:Cluster" and isinstance(r.inputs.get("version"), str)
    }
    return {
        "urns": sorted(urns.values()),
        "replaceInputs": dict(sorted(stateful.items())),
        "aliases": dict(sorted(alias_urns(recording).items())),
        "kubernetesVersions": dict(sorted(versions.items())),
    }


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def version_problem(urn: str, old: str, new: str) -> tuple[str, bool] | None:
    """A cluster's Kubernetes version against the last recorded one: ``(line, refused)``.

    EKS never downgrades a control plane ("Once you upgrade a cluster, you can't downgrade to a
    previous version") and updates it one minor version at a time
    (https://docs.aws.amazon.com/eks/latest/userguide/update-cluster.html). The recorded state is
    the committed snapshot: a downgrade or a jump is refused (``make snapshot`` will not record
    it either); a one-minor upgrade is reported until ``make snapshot`` records it.
    """
    if old == new:
        return None
    (old_major, old_minor), (new_major, new_minor) = _minor(old), _minor(new)
    if (new_major, new_minor) < (old_major, old_minor):
        return (
            f"{urn}: kubernetesVersion goes down from {old} to {new} - EKS cannot downgrade a "
            f"cluster; keep {old}",
            True,
        )
    if new_major != old_major or new_minor > old_minor + 1:
        step = f"{old_major}.{old_minor + 1}"
        return (
            f"{urn}: kubernetesVersion jumps from {old} to {new} - EKS upgrades one minor at a "
            f"time; upgrade to {step} first",
            True,
        )
    return (
        f"{urn}: kubernetesVersion upgrades from {old} to {new} - follow the upgrade guide "
        "(README), then run `make snapshot` to record it",
        False,
    )


def version_problems(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, bool]]:
    renamed = {o: n for n, olds in new.get("aliases", {}).items() for o in olds}
    now = new.get("kubernetesVersions", {})
    out = []
    for urn, version in old.get("kubernetesVersions", {}).items():
        current = urn if urn in now else renamed.get(urn)
        if current in now and (found := version_problem(urn, version, now[current])):
            out.append(found)
    return out


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What would replace or delete existing resources, one line each (empty: safe)."""
    problems = []
    new_urns = set(new["urns"])
    aliased = {old_urn for olds in new.get("aliases", {}).values() for old_urn in olds}
    for urn in old["urns"]:
        if urn not in new_urns and urn not in aliased:
            problems.append(
                f"{urn}: no longer registered (renamed or re-parented?) - Pulumi would delete "
                "it; add `aliases=[...]` with the old name/parent, or run `make snapshot` if "
                "the deletion is intended"
            )
    problems += [line for line, _ in version_problems(old, new)]
    renamed = {o: n for n, olds in new.get("aliases", {}).items() for o in olds}
    for urn, inputs in old["replaceInputs"].items():
        current = urn if urn in new["replaceInputs"] else renamed.get(urn)
        if current not in new["replaceInputs"]:
            continue
        now = new["replaceInputs"][current]
        for key in sorted(set(inputs) | set(now)):
            if inputs.get(key) != now.get(key):
                problems.append(
                    f"{urn}: {key} changes from {json.dumps(inputs.get(key))} to "
                    f"{json.dumps(now.get(key))} - this replaces the resource; run "
                    "`make snapshot` if that is intended"
                )
    return problems


def snapshot_path(project_dir: Path, stack: str) -> Path:
    return project_dir / "snapshots" / f"{stack}.json"


def missing_message(stack: str) -> str:
    return f"snapshots/{stack}.json is missing: run `make snapshot` to record it"


def check(project_dir: Path, stack: str, current: dict[str, Any]) -> list[str]:
    """``compare`` against the committed ``snapshots/<stack>.json``; one line when it is missing.

    A stack added by dropping in ``Pulumi.<stack>.yaml`` has no snapshot until ``make snapshot``
    records one: that is reported as a problem naming the command, not a traceback.
    """
    path = snapshot_path(project_dir, stack)
    if not path.is_file():
        return [missing_message(stack)]
    return compare(json.loads(path.read_text()), current)


def orphans(project_dir: Path, stacks: list[str]) -> list[str]:
    """Committed snapshots whose ``Pulumi.<stack>.yaml`` is gone, by stack name."""
    folder = project_dir / "snapshots"
    recorded = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    return [name for name in recorded if name not in stacks]


def orphan_message(stack: str) -> str:
    return (
        f"snapshots/{stack}.json belongs to no stack (Pulumi.{stack}.yaml is gone): run "
        "`make snapshot` to remove it"
    )


def main(argv: list[str] | None = None) -> int:
    from .render import ConfigFileError, find_project, load_stack_file, render
    from .stacks import StackFileError, discover

    parser = argparse.ArgumentParser(description="Write or check the replacement snapshots.")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--project-dir", type=Path, help="folder of Pulumi.yaml (default: cwd)")
    parser.add_argument("stacks", nargs="*", help="stacks (default: every Pulumi.<stack>.yaml)")
    args = parser.parse_args(argv)
    try:
        project_dir = args.project_dir or find_project(Path.cwd())
        discovered = discover(project_dir)
        stacks = args.stacks or discovered
        loaded = [load_stack_file(project_dir, stack, None) for stack in stacks]
    except (ConfigFileError, StackFileError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    failed = False
    for stack in loaded:
        current = snapshot(render(project_dir, stack))
        if args.check:
            problems = check(project_dir, stack.name, current)
            for line in problems:
                print(f"{stack.name}: {line}", file=sys.stderr)
            failed = failed or bool(problems)
            continue
        path = snapshot_path(project_dir, stack.name)
        if path.is_file():
            refused = [
                line
                for line, refuse in version_problems(json.loads(path.read_text()), current)
                if refuse
            ]
            if refused:
                for line in refused:
                    print(f"{stack.name}: {line}", file=sys.stderr)
                failed = True
                continue
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
        print(f"wrote {path.relative_to(project_dir)} ({len(current['urns'])} URNs)")
    if not args.stacks:
        for name in orphans(project_dir, discovered):
            if args.check:
                print(orphan_message(name), file=sys.stderr)
                failed = True
            else:
                snapshot_path(project_dir, name).unlink()
                print(f"removed snapshots/{name}.json (no Pulumi.{name}.yaml)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
