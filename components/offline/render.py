"""Offline render: run the real stack program under the project's mocks and write its desired state.

No Pulumi CLI, no AWS account, no network. For a stack file it writes, under ``--out``:

- ``resources.json``: every registered resource (type, logical name, URN, parent, camelCase
  inputs as the engine sees them, dependencies, options);
- ``manifests/``: every Kubernetes object the stack creates, one YAML file each;
- ``helm/``: one file per Helm release (repository, chart, version, namespace, values);
- ``iam/``: every IAM policy document, named after its resource;
- ``outputs.json``: the stack outputs (secrets masked);

and prints a summary. Exit codes: 0 rendered; 2 configuration error (one line per problem, no
traceback, nothing written), whether the stack file or the program (a ``SpecError`` raised while
it runs: a spec, a component, the region) finds it; 1 anything else.

Any project renders (``--project-dir``), not only this one: a program that sets everything in
code needs no stack file, and ``aws:region`` only when it gives no region in code. Resource types
and invokes the mocks do not model are answered generically, with one notice line per type.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import runpy
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .. import catalog, versions
from ..config import PROJECT, PlatformConfig, partition_for_region
from ..efa import nccl_test_manifest
from ..platform import stack_config_values
from ..scheduler import (
    fractional_pod_template,
    inference_deployment_template,
    leaf_queue_names,
    training_job_template,
)
from ..spec import SpecError
from . import mocks

EXIT_OK, EXIT_ERROR, EXIT_CONFIG = 0, 1, 2
SECRET_PLACEHOLDER = "[secret]"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


class ConfigFileError(Exception):
    """The stack file itself cannot be used (missing, not YAML, wrong project)."""


@dataclass
class StackFile:
    """A stack's configuration as the Pulumi CLI would hand it to the program."""

    name: str
    project: str
    config: dict[str, Any]
    secret_keys: list[str]

    @property
    def region(self) -> str | None:
        value = self.config.get("aws:region")
        return value if isinstance(value, str) else None


def find_project(start: Path) -> Path:
    """The directory holding ``Pulumi.yaml``: ``start`` or one of its parents."""
    for folder in [start, *start.parents]:
        if (folder / "Pulumi.yaml").is_file():
            return folder
    raise ConfigFileError(f"no Pulumi.yaml in {start} or its parents")


def load_stack_file(project_dir: Path, stack: str, config_file: Path | None) -> StackFile:
    """Read ``Pulumi.<stack>.yaml`` (or ``config_file``) plus project-level config defaults.

    This project's program reads all of its configuration from the stack file, so the file must
    exist. Another project's stack may have none, as with the Pulumi CLI (a stack without
    configuration has no ``Pulumi.<stack>.yaml``): its program sets everything in code.
    """
    path = config_file or project_dir / f"Pulumi.{stack}.yaml"
    project_file = project_dir / "Pulumi.yaml"
    try:
        project = yaml.safe_load(project_file.read_text()) or {}
    except yaml.YAMLError as err:
        raise ConfigFileError(f"{project_file} is not valid YAML: {err}") from None
    if not isinstance(project, dict):
        raise ConfigFileError(f"{project_file}: expected a mapping")
    name = project.get("name")
    if not path.is_file() and (config_file is not None or name == PROJECT):
        raise ConfigFileError(f"stack file {path} does not exist")
    try:
        document = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    except yaml.YAMLError as err:
        raise ConfigFileError(f"{path} is not valid YAML: {err}") from None
    if not isinstance(document, dict) or not isinstance(document.get("config", {}), dict):
        raise ConfigFileError(f"{path}: expected a mapping with a 'config' mapping")
    config: dict[str, Any] = {}
    for key, decl in (project.get("config") or {}).items():
        full = key if ":" in key else f"{name}:{key}"
        if isinstance(decl, dict) and "default" in decl:
            config[full] = decl["default"]
        elif isinstance(decl, dict) and "value" in decl:
            config[full] = decl["value"]
    secret_keys = []
    for key, value in (document.get("config") or {}).items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            # Offline there is no secrets provider: the value is masked, never decrypted.
            value = SECRET_PLACEHOLDER
            secret_keys.append(key)
        config[key] = value
    if not name:
        raise ConfigFileError(f"{project_file} has no project name")
    return StackFile(name=stack, project=name, config=config, secret_keys=secret_keys)


def validate(stack: StackFile) -> PlatformConfig | None:
    """The stack's configuration as this project's program parses it; raises ``SpecError``.

    Other projects (programs that import the library) have their own configuration, and may
    give the region in code: their program validates it all as it runs (a missing region is
    then a ``SpecError`` naming ``aws:region``, from the mocks or from ``PlatformConfig``).
    """
    if stack.project != PROJECT:
        return None
    return PlatformConfig.load(stack_config_values(stack.config), stack.region)


@contextlib.contextmanager
def spec_errors_made() -> Iterator[list[SpecError]]:
    """Every ``SpecError`` created while the block runs (the program's run).

    The SDK does not always keep the chain back to one: a ``SpecError`` raised in an ``apply``
    whose output is a resource input is wrapped in a ``ValueError`` naming the resource and the
    input ("While processing input ...", pulumi/runtime/rpc.py ``serialize_properties`` and
    pulumi/runtime/resource.py ``do_register``, both ``from`` it), and ``wait_for_rpcs`` then
    re-raises that error ``from`` itself (pulumi/runtime/stack.py), dropping the link. Its text
    still ends with the ``SpecError``'s: ``spec_error`` matches the two.
    """
    made: list[SpecError] = []
    original = SpecError.__init__

    def recording_init(self: SpecError, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    SpecError.__init__ = recording_init  # type: ignore[method-assign]
    try:
        yield made
    finally:
        SpecError.__init__ = original  # type: ignore[method-assign]


def spec_error(err: BaseException, made: Sequence[SpecError] = ()) -> SpecError | None:
    """The ``SpecError`` behind ``err``: itself, one it was raised from or while handling (a
    program may wrap it, e.g. in ``pulumi.RunError``), or, when the SDK broke that chain, one of
    ``made`` whose text the error's ends with."""
    seen: set[int] = set()
    node: BaseException | None = err
    while node is not None and id(node) not in seen:
        if isinstance(node, SpecError):
            return node
        seen.add(id(node))
        node = node.__cause__ or node.__context__
    text = str(err)
    return next((m for m in reversed(made) if str(m) and text.endswith(str(m))), None)


def print_spec_error(err: SpecError, header: str) -> None:
    print(header, file=sys.stderr)
    for line in err.lines:
        print(f"  {line}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Writing the desired state
# ---------------------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_").lower()


def _mask(value: Any) -> Any:
    """Replace secret wrappers with a placeholder, and whole-number floats with ints.

    Numbers cross the mock engine as protobuf doubles (``replicas: 2.0``); the real engine
    hands providers ``2``.
    """
    if isinstance(value, dict):
        if value.get("4dabf18193072939515e22adb298388d") == "1b47061264138c4ac30d75fd1eb44270":
            return SECRET_PLACEHOLDER
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _sorted(value: Any) -> Any:
    """Sort mapping keys at every level: the engine's maps arrive in no stable order, and a
    stable file is what makes the render diffable in a pull request."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


HEAD_KEYS = ("apiVersion", "kind", "metadata")


def kubernetes_objects(recording: mocks.Recording) -> list[dict[str, Any]]:
    """Every Kubernetes object the program registers (CustomResources and typed kinds)."""
    objects = []
    for r in recording.resources:
        if not r.type.startswith("kubernetes:") or r.type == HELM_RELEASE:
            continue
        inputs = r.inputs
        if "apiVersion" not in inputs or "kind" not in inputs:
            continue
        obj = {key: _sorted(inputs[key]) for key in HEAD_KEYS if key in inputs}
        for key in sorted(inputs):
            if key not in HEAD_KEYS:
                obj[key] = _sorted(inputs[key])
        objects.append(obj)
    return objects


def helm_releases(recording: mocks.Recording) -> list[dict[str, Any]]:
    """Every Helm release: where the chart comes from, its version, namespace and values."""
    releases = []
    for r in sorted(recording.of_type(HELM_RELEASE), key=lambda r: r.name):
        chart = r.inputs.get("chart", "")
        repo_opts = r.inputs.get("repositoryOpts") or {}
        if chart.startswith("oci://"):
            repository, _, chart_name = chart.rpartition("/")
        else:
            repository, chart_name = repo_opts.get("repo", ""), chart
        releases.append(
            {
                "name": r.inputs.get("name", r.name),
                "resource": r.name,
                "repository": repository,
                "chart": chart_name,
                "version": r.inputs.get("version"),
                "namespace": r.inputs.get("namespace"),
                "createNamespace": r.inputs.get("createNamespace", False),
                "skipCrds": r.inputs.get("skipCrds", False),
                "values": _sorted(r.inputs.get("values", {})),
            }
        )
    return releases


IAM_DOCUMENT_INPUTS = {
    "aws:iam/policy:Policy": ("policy", ""),
    "aws:iam/rolePolicy:RolePolicy": ("policy", ""),
    "aws:iam/role:Role": ("assumeRolePolicy", "-trust"),
    "aws:sqs/queuePolicy:QueuePolicy": ("policy", "-queue-policy"),
}


def iam_documents(recording: mocks.Recording) -> dict[str, dict[str, Any]]:
    """Every IAM policy document, keyed by the resource's logical name (roles: ``-trust``)."""
    documents = {}
    for r in recording.resources:
        spec = IAM_DOCUMENT_INPUTS.get(r.type)
        if spec is None or spec[0] not in r.inputs:
            continue
        key, suffix = spec
        documents[f"{r.name}{suffix}"] = json.loads(r.inputs[key])
    return documents


def component_counts(recording: mocks.Recording) -> dict[str, int]:
    """For each component (``Type name``), how many resources it holds, descendants included."""
    by_urn = {r.urn: r for r in recording.resources}
    counts: Counter[str] = Counter()
    for r in recording.resources:
        if not r.custom:
            continue
        parent = by_urn.get(r.parent)
        while parent is not None:
            counts[f"{parent.type.rsplit(':', 1)[-1]} {parent.name}"] += 1
            parent = by_urn.get(parent.parent)
    return dict(counts)


def node_pool_rows(recording: mocks.Recording) -> list[dict[str, str]]:
    """One row per Karpenter NodePool: what it launches, on which capacity, with what caps."""
    rows = []
    pools = [o for o in kubernetes_objects(recording) if o["kind"] == "NodePool"]
    for obj in sorted(pools, key=lambda o: o["metadata"]["name"]):
        spec = obj["spec"]
        template = spec["template"]
        reqs = {r["key"]: r.get("values", []) for r in template["spec"]["requirements"]}
        launches = (
            reqs.get("node.kubernetes.io/instance-type")
            or reqs.get("karpenter.k8s.aws/instance-gpu-name")
            or reqs.get("karpenter.k8s.aws/instance-family")
            or reqs.get("karpenter.k8s.aws/instance-category")
            or []
        )
        labels = template["metadata"].get("labels", {})
        preemptible = next((v for k, v in labels.items() if k.endswith("/preemptible")), "")
        rows.append(
            {
                "NodePool": obj["metadata"]["name"],
                "Launches": ", ".join(launches),
                "Capacity": ", ".join(reqs.get("karpenter.sh/capacity-type", [])),
                "Zone": ", ".join(reqs.get("topology.kubernetes.io/zone", [])) or "any",
                "GPU limit": str(spec.get("limits", {}).get("nvidia.com/gpu", "-")),
                "Preemptible": preemptible,
                "Consolidation": spec["disruption"]["consolidationPolicy"],
                "Expire after": template["spec"].get("expireAfter", ""),
            }
        )
    return rows


def markdown_summary(
    recording: mocks.Recording,
    stack: str,
    policy_lines: list[str] | None = None,
    pack: Any | None = None,
) -> str:
    """The render as a pull-request comment: counts, policies, node pools, a component diagram."""
    lines = [f"### `{stack}`: {len(recording.resources)} resources", ""]
    if recording.notices:
        lines += [f"- {notice}" for notice in recording.notices] + [""]
    if pack is not None:
        if policy_lines:
            lines += ["Policy violations:", ""] + [f"- `{line}`" for line in policy_lines] + [""]
        else:
            lines += ["Policy pack: no violations.", ""]
    lines += ["| Component | Resources |", "|---|---:|"]
    for component, n in sorted(component_counts(recording).items()):
        lines.append(f"| {component} | {n} |")
    rows = node_pool_rows(recording)
    if rows:
        lines += ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(row.values()) + " |" for row in rows]
    lines += ["", "| Helm release | Chart | Version | Namespace |", "|---|---|---|---|"]
    for release in helm_releases(recording):
        lines.append(
            f"| {release['name']} | {release['repository']}/{release['chart']} | "
            f"{release['version']} | {release['namespace']} |"
        )
    lines += ["", "```mermaid", "flowchart LR"]
    by_urn = {r.urn: r for r in recording.resources}
    ids = {}
    for r in sorted(recording.resources, key=lambda r: r.urn):
        if not r.custom:
            ids[r.urn] = f"c{len(ids)}"
            lines.append(f'  {ids[r.urn]}["{r.type.rsplit(":", 1)[-1]}<br/>{r.name}"]')
    for urn, node in ids.items():
        parent = by_urn[urn].parent
        if parent in ids:
            lines.append(f"  {ids[parent]} --> {node}")
    lines += ["```", ""]
    return "\n".join(lines)


class _PlainDumper(yaml.SafeDumper):
    """Writes shared objects out in full: no ``&id001`` anchors in manifests people read."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _dump_yaml(data: Any) -> str:
    return yaml.dump(
        data, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, width=100
    )


def example_workloads(config: PlatformConfig) -> dict[str, dict[str, Any]]:
    """Example manifests for this stack (not applied by Pulumi): an NCCL test per EFA pool, and
    with the scheduler, a workload per leaf queue routed to a GPU pool (friction point 4)."""
    domain = config.cluster.label_domain
    examples = {}
    for pool in config.efa_pools:
        examples[f"nccl-allreduce-{pool.name}"] = nccl_test_manifest(
            pool, instance_type=pool.efa_types[0], label_domain=domain
        )
    if not config.scheduler.enabled:
        return examples
    pools = {p.name: p for p in config.gpu_pools}
    leaves = leaf_queue_names(config.scheduler.queues)
    fractional_done = False
    for queue in config.scheduler.queues:
        routed = [pools[n] for n in queue.node_pools if n in pools]
        if queue.name not in leaves or not routed:
            continue
        pool = routed[0]
        smallest = min(pool.catalog_types, key=lambda t: (t.gpu_count, t.name))
        common = {
            "namespace": "default",
            "queue": queue.name,
            "pool": pool.name,
            "pool_label_key": f"{domain}/pool",
        }
        if pool.kind == "efa" or pool.preemptible:
            examples[f"training-{queue.name}"] = training_job_template(
                name=f"train-{queue.name}",
                replicas=2,
                gpus_per_pod=smallest.gpu_count,
                image=versions.EXAMPLE_TRAINING_IMAGE,
                command=["torchrun", "--nnodes=2", "--nproc-per-node=gpu", "train.py"],
                priority_class="train" if pool.preemptible else "build",
                efa_per_pod=smallest.efa_interfaces if pool.kind == "efa" else 0,
                hugepages_2mi=catalog.EFA_HUGEPAGES_2MI if pool.kind == "efa" else None,
                cpu="32" if pool.kind == "efa" else None,
                memory="256Gi" if pool.kind == "efa" else None,
                **common,
            )
        else:
            examples[f"inference-{queue.name}"] = inference_deployment_template(
                name=f"serve-{queue.name}",
                replicas=2,
                gpus_per_pod=1,
                image=versions.EXAMPLE_INFERENCE_IMAGE,
                command=["tritonserver", "--model-repository=/models"],
                **common,
            )
        if pool.preemptible and config.scheduler.gpu_sharing and not fractional_done:
            fractional_done = True
            examples[f"fractional-{queue.name}"] = fractional_pod_template(
                name=f"notebook-{queue.name}",
                image=versions.EXAMPLE_TRAINING_IMAGE,
                command=["sleep", "infinity"],
                gpu_fraction=0.5,
                **common,
            )
    return examples


def write_state(
    recording: mocks.Recording, out: Path, examples: dict[str, dict[str, Any]] | None = None
) -> dict[str, int]:
    """Write the desired state to ``out`` atomically: a failed run leaves nothing partial."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        # Registration order varies from run to run (the engine is asynchronous): sort.
        resources = [_mask(r.to_json()) for r in sorted(recording.resources, key=lambda r: r.urn)]
        for resource in resources:
            resource["dependencies"] = sorted(resource["dependencies"])
        (staging / "resources.json").write_text(
            json.dumps(resources, indent=2, sort_keys=True) + "\n"
        )
        outputs = {
            k: SECRET_PLACEHOLDER if k in recording.secret_outputs else _mask(v)
            for k, v in recording.outputs.items()
        }
        (staging / "outputs.json").write_text(
            json.dumps(outputs, indent=2, default=str, sort_keys=True) + "\n"
        )
        objects = kubernetes_objects(recording)
        (staging / "manifests").mkdir()
        for obj in objects:
            meta = obj.get("metadata") or {}
            parts = [obj["kind"], meta.get("namespace", ""), meta.get("name", "")]
            path = staging / "manifests" / (_slug("-".join(p for p in parts if p)) + ".yaml")
            if path.exists():
                raise ValueError(f"two Kubernetes objects render to {path.name}")
            path.write_text(_dump_yaml(_mask(obj)))
        releases = helm_releases(recording)
        (staging / "helm").mkdir()
        for release in releases:
            (staging / "helm" / f"{_slug(release['name'])}.yaml").write_text(
                _dump_yaml(_mask(release))
            )
        documents = iam_documents(recording)
        (staging / "iam").mkdir()
        for name, document in documents.items():
            path = staging / "iam" / f"{_slug(name)}.json"
            if path.exists():
                raise ValueError(f"two IAM documents render to {path.name}; rename one resource")
            path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        (staging / "examples").mkdir()
        for name, manifest in (examples or {}).items():
            (staging / "examples" / f"{name}.yaml").write_text(_dump_yaml(manifest))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {
        "resources": len(resources),
        "manifests": len(objects),
        "helm": len(releases),
        "iam": len(documents),
    }


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


def load_policy_pack() -> Any:
    """The library's policy pack runner, ``eks_gpu_platform.policies.offline``.

    The pack ships in the package, so every project's render runs it, this repository's or a
    library consumer's; its rules need no pulumi-policy (only ``policies.pack`` imports it).
    """
    from ..policies import offline

    return offline


def check_policies(
    recording: mocks.Recording, pack: Any, config: dict[str, Any] | None
) -> tuple[list[str], bool]:
    """Run the pack's rules over the recorded resources: lines and whether any is mandatory."""
    return pack.report(pack.evaluate(recording.resources, config))


def render(project_dir: Path, stack: StackFile) -> mocks.Recording:
    """Run the project's ``__main__.py`` for ``stack`` under the recording mocks.

    The mocks are not strict: a type or invoke they do not model gets generic outputs and is
    listed in ``Recording.unmodelled`` (the test suite checks the shipped stacks have none).
    """
    validate(stack)
    program = project_dir / "__main__.py"
    cwd = os.getcwd()
    os.chdir(project_dir)
    try:
        return mocks.run(
            lambda: runpy.run_path(str(program), run_name="__main__"),
            project=stack.project,
            stack=stack.name,
            config=stack.config,
            region=stack.region,
            partition=partition_for_region(stack.region) if stack.region else None,
            secret_keys=stack.secret_keys,
            strict=False,
        )
    finally:
        os.chdir(cwd)


def summary(recording: mocks.Recording, counts: dict[str, int], out: Path) -> str:
    lines = [f"Rendered {counts['resources']} resources to {out}"]
    lines.append(
        f"  {counts['manifests']} Kubernetes manifests, {counts['helm']} Helm releases, "
        f"{counts['iam']} IAM documents"
    )
    lines.append("Resources per component:")
    for component, n in sorted(component_counts(recording).items()):
        lines.append(f"  {component:<48} {n:>4}")
    lines.append("Helm releases:")
    for release in helm_releases(recording):
        lines.append(
            f"  {release['name']:<28} {release['chart']} {release['version']} "
            f"-> {release['namespace']}"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m eks_gpu_platform.offline",
        description="Render a stack's desired state offline (no Pulumi CLI, no AWS).",
        # No prefixes: the removed `--policy-pack <dir>` must not pass for `--policy-pack-config`.
        allow_abbrev=False,
    )
    parser.add_argument("--stack", default="dev", help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--config-file", type=Path, help="any stack file instead")
    parser.add_argument("--out", type=Path, help="output directory (default build/<stack>)")
    parser.add_argument(
        "--project-dir", type=Path, default=None, help="folder of Pulumi.yaml (default: cwd)"
    )
    parser.add_argument(
        "--policy-pack-config", type=Path, help="policy config JSON, as for the CLI"
    )
    parser.add_argument("--no-policy", action="store_true", help="skip the policy pack")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    try:
        project_dir = (args.project_dir or find_project(Path.cwd())).resolve()
        stack = load_stack_file(project_dir, args.stack, args.config_file)
        config = validate(stack)
    except ConfigFileError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_CONFIG
    except SpecError as err:
        print_spec_error(err, "invalid stack configuration:")
        return EXIT_CONFIG
    out = args.out or project_dir / "build" / stack.name
    try:
        pack = None if args.no_policy else load_policy_pack()
        policy_config = (
            json.loads(args.policy_pack_config.read_text()) if args.policy_pack_config else None
        )
        try:
            with spec_errors_made() as made:
                recording = render(project_dir, stack)
        except Exception as err:
            # A SpecError from the program (a spec, a component, the region), however the
            # engine or the program wrapped it: the same one-line-per-problem exit as above.
            found = spec_error(err, made)
            if found is None:
                raise
            print_spec_error(found, "invalid configuration:")
            return EXIT_CONFIG
        examples = example_workloads(config) if config is not None else {}
        counts = write_state(recording, out, examples)
        lines, mandatory = check_policies(recording, pack, policy_config) if pack else ([], False)
    except Exception:
        traceback.print_exc()
        print("error: the offline render failed (see above)", file=sys.stderr)
        return EXIT_ERROR
    elapsed = time.perf_counter() - started
    (out / "summary.md").write_text(markdown_summary(recording, stack.name, lines, pack))
    (out / "policy.txt").write_text("".join(f"{line}\n" for line in lines))
    print(summary(recording, counts, out))
    for notice in recording.notices:
        print(notice)
    if pack is None:
        print("Policy pack: not run")
    elif lines:
        print(f"Policy pack: {len(lines)} violation(s)")
        for line in lines:
            print(f"  {line}", file=sys.stderr if line.startswith("mandatory") else sys.stdout)
    else:
        print(f"Policy pack: {len(pack.RULES)} rules, no violations")
    print(f"Wall time: {elapsed:.2f} s")
    if mandatory:
        print("error: mandatory policy violations (see above)", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
