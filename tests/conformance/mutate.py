"""Write the known-bad renders the conformance suite must reject (run by ``make conformance``).

``python tests/conformance/mutate.py RENDERS OUT`` copies each render of ``RENDERS/<stack>/``
(``dev``, ``prod`` and ``dev-1.35`` when present, or the stacks ``--stacks`` names) to
``OUT/<mutation>/<stack>/`` with one known defect put in, for every mutation of ``MUTATIONS``
that applies to the stack, and writes ``OUT/mutations.json`` (mutation -> stacks). The Go tests
run each scenario on these and expect its specific failure (``CONFORMANCE_BAD``):

- ``admission-unscoped``: the do-not-disrupt policies and bindings as the render wrote them before
  issue 19's fix (``testdata/admission-unscoped/``: keyed on priority alone, in every namespace,
  ReplicaSets included): MutatingAdmissionPolicy in a render that writes MutatingAdmissionPolicies
  (Kubernetes 1.36), ValidatingAdmissionPolicy in one that writes ValidatingAdmissionPolicies.
- ``tenancy-open``: the tenancy pod policy (``platform-tenant-pods``) admits everything.
- ``psa-privileged``: the namespace of the first ``restricted`` workload template enforces
  ``privileged`` instead (in every file that declares it).
- ``nodepool-invalid``: the first NodePool's ``expireAfter`` is ``30d``, outside the CRD's
  pattern ``^(([0-9]+(s|m|h))+|Never)$`` (karpenter-provider-aws v1.15.0
  pkg/apis/crds/karpenter.sh_nodepools.yaml L246).

A mutation is a function of the copied render directory that changes it in place and returns
False when it does not apply to that render (the copy is then removed). Add one by writing the
function and an entry in ``MUTATIONS``; the Go package that judges it names it in its test.
"""

import argparse
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from karpenter_mutations import MUTATIONS as KARPENTER_MUTATIONS

HERE = Path(__file__).resolve().parent
TESTDATA = HERE / "testdata"
DEFAULT_STACKS = ("dev", "prod", "dev-1.35")
POLICY_KINDS = {
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}
ENFORCE = "pod-security.kubernetes.io/enforce"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _header(path: Path) -> list[str]:
    """The comment lines before the first document (the templates' ``# pod-security:`` header)."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, as the render writes them (a ConfigMap's script)."""


_Dumper.add_representer(
    str,
    lambda dumper, value: dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None
    ),
)


def _write(path: Path, docs: list[dict], header: list[str] = ()) -> None:
    body = "---\n".join(yaml.dump(d, Dumper=_Dumper, sort_keys=False) for d in docs)
    path.write_text("".join(f"{line}\n" for line in header) + ("---\n" if header else "") + body)


def _kinds(render: Path) -> dict[Path, set[str]]:
    return {
        p: {d.get("kind") for d in _docs(p)} for p in sorted((render / "manifests").glob("*.yaml"))
    }


def admission_unscoped(render: Path) -> bool:
    kinds = _kinds(render)
    written = set().union(*kinds.values()) if kinds else set()
    if "MutatingAdmissionPolicy" in written:
        form = "mutate"
    elif "ValidatingAdmissionPolicy" in written:
        form = "validate"
    else:
        return False
    for path, found in kinds.items():
        if found & POLICY_KINDS:
            path.unlink()
    for source in sorted((TESTDATA / "admission-unscoped" / form).glob("*.yaml")):
        shutil.copyfile(source, render / "manifests" / source.name)
    return True


def psa_privileged(render: Path) -> bool:
    templates = sorted((render / "examples").glob("*.yaml"))
    for template in templates:
        header = _header(template)
        if not header or header[0].split(":", 1)[-1].strip().split(" ")[0] != "restricted":
            continue
        namespace = next(
            (d["metadata"]["namespace"] for d in _docs(template) if d["metadata"].get("namespace")),
            None,
        )
        changed = False
        # Every declaration of the namespace (templates of one queue each write it).
        for path in [*templates, *sorted((render / "manifests").glob("*.yaml"))]:
            docs = _docs(path)
            found = [
                d
                for d in docs
                if d.get("kind") == "Namespace" and d["metadata"]["name"] == namespace
            ]
            for doc in found:
                doc["metadata"].setdefault("labels", {})[ENFORCE] = "privileged"
            if found:
                _write(path, docs, _header(path))
                changed = True
        return changed
    return False


def nodepool_invalid(render: Path) -> bool:
    for path, found in _kinds(render).items():
        if "NodePool" in found:
            docs = _docs(path)
            pool = next(d for d in docs if d.get("kind") == "NodePool")
            pool["spec"]["template"]["spec"]["expireAfter"] = "30d"
            _write(path, docs, _header(path))
            return True
    return False


def tenancy_open(render: Path) -> bool:
    """The tenancy pod policy judging nothing: every validation of ``platform-tenant-pods``
    always true (the queue policy stays, so the scenario's probe still sees the policies act)."""
    for path, found in _kinds(render).items():
        if "ValidatingAdmissionPolicy" not in found:
            continue
        docs = _docs(path)
        policy = next(
            (
                d
                for d in docs
                if d.get("kind") == "ValidatingAdmissionPolicy"
                and d["metadata"]["name"] == "platform-tenant-pods"
            ),
            None,
        )
        if policy is None:
            continue
        for validation in policy["spec"]["validations"]:
            validation["expression"] = "true"
        _write(path, docs, _header(path))
        return True
    return False


MUTATIONS: dict[str, Callable[[Path], bool]] = {
    "admission-unscoped": admission_unscoped,
    "psa-privileged": psa_privileged,
    "nodepool-invalid": nodepool_invalid,
    "tenancy-open": tenancy_open,
    # The Karpenter scenarios' (tests/conformance/karpenter): efa-split, nodepool-limit-raised,
    # overlay-missing.
    **KARPENTER_MUTATIONS,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("renders", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--stacks", help="comma-separated stacks (default: dev, prod, dev-1.35 when rendered)"
    )
    parser.add_argument("--mutations", help="comma-separated mutations (default: all)")
    args = parser.parse_args(argv)
    chosen = args.mutations.split(",") if args.mutations else list(MUTATIONS)
    unknown = [m for m in chosen if m not in MUTATIONS]
    if unknown:
        print(f"mutate: unknown mutation {', '.join(unknown)}", file=sys.stderr)
        return 2
    stacks = (
        args.stacks.split(",")
        if args.stacks
        else [s for s in DEFAULT_STACKS if (args.renders / s).is_dir()]
    )
    missing = [s for s in stacks if not (args.renders / s / "manifests").is_dir()]
    if missing or not stacks:
        print(
            f"mutate: no render of {', '.join(missing) or 'any stack'} under {args.renders}",
            file=sys.stderr,
        )
        return 2
    if args.out.exists():
        shutil.rmtree(args.out)
    written: dict[str, list[str]] = {}
    for name in chosen:
        mutation = MUTATIONS[name]
        for stack in stacks:
            target = args.out / name / stack
            shutil.copytree(args.renders / stack, target)
            if mutation(target):
                written.setdefault(name, []).append(stack)
            else:
                shutil.rmtree(target)
        if name not in written:
            print(f"mutate: {name} applies to none of {', '.join(stacks)}", file=sys.stderr)
            return 2
    (args.out / "mutations.json").write_text(json.dumps(written, indent=2) + "\n")
    print(
        f"mutate: wrote {', '.join(f'{k} ({len(v)})' for k, v in written.items())} into {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
