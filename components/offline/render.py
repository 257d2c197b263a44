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

The steps live in their own modules: ``run.py`` (load the stack file, run the program under the
mocks), ``write.py`` (write the desired state), ``summary.py`` (summarise) and ``policies.py``
(run the policy pack); this module is the command line, and re-exports their names.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..errors import up_refusals
from ..lazy import lazy_exports
from ..spec import SpecError
from .stackfile import (
    SECRET_PLACEHOLDER,
    ConfigFileError,
    StackFile,
    find_project,
    load_stack_file,
)

if TYPE_CHECKING:
    from .capacity import capacity_document, capacity_markdown, write_capacity
    from .policies import check_policies, load_policy_pack
    from .run import (
        print_spec_error,
        render,
        reusing_validated,
        spec_error,
        spec_errors_made,
        validate,
    )
    from .summary import (
        component_counts,
        markdown_summary,
        node_pool_rows,
        refusal_header,
        summary,
    )
    from .write import (
        HEAD_KEYS,
        HELM_RELEASE,
        IAM_DOCUMENT_INPUTS,
        _dump_yaml,
        example_workloads,
        helm_releases,
        iam_documents,
        kubernetes_objects,
        template_text,
        write_state,
    )

# The names this module re-exports from the render's steps, by module, in the order ``main``
# needs them. They are imported on first use (PEP 562 module ``__getattr__``,
# https://peps.python.org/pep-0562/), not with this module: the steps load the Pulumi SDKs
# (a second of a process's time), and a command line that stops at its arguments or at the
# stack's configuration (exit 2) needs none of them. ``main`` imports them (``_load``) once
# the configuration is valid, the run's checks first.
_LAZY = {
    ".run": (
        "print_spec_error",
        "render",
        "reusing_validated",
        "spec_error",
        "spec_errors_made",
        "validate",
    ),
    ".capacity": ("capacity_document", "capacity_markdown", "write_capacity"),
    ".policies": ("check_policies", "load_policy_pack"),
    ".summary": (
        "component_counts",
        "markdown_summary",
        "node_pool_rows",
        "refusal_header",
        "summary",
    ),
    ".write": (
        "HEAD_KEYS",
        "HELM_RELEASE",
        "IAM_DOCUMENT_INPUTS",
        "_dump_yaml",
        "example_workloads",
        "helm_releases",
        "iam_documents",
        "kubernetes_objects",
        "template_text",
        "write_state",
    ),
}


def _load(*modules: str) -> None:
    """Bind the names of ``modules`` (keys of ``_LAZY``) here, as the imports at the top of a
    module would; a name bound already (a test's ``monkeypatch`` of ``render``) is kept."""
    for module in modules:
        loaded = importlib.import_module(module, __package__)
        for name in _LAZY[module]:
            globals().setdefault(name, getattr(loaded, name))


__getattr__ = lazy_exports(__name__, {n: m for m, names in _LAZY.items() for n in names})


__all__ = [
    "EXIT_CONFIG",
    "EXIT_ERROR",
    "EXIT_OK",
    "HEAD_KEYS",
    "HELM_RELEASE",
    "IAM_DOCUMENT_INPUTS",
    "SECRET_PLACEHOLDER",
    "ConfigFileError",
    "StackFile",
    "_dump_yaml",
    "check_policies",
    "cli",
    "component_counts",
    "default_out",
    "example_workloads",
    "find_project",
    "helm_releases",
    "iam_documents",
    "kubernetes_objects",
    "load_policy_pack",
    "load_stack_file",
    "main",
    "markdown_summary",
    "node_pool_rows",
    "parse_args",
    "print_spec_error",
    "render",
    "spec_error",
    "spec_errors_made",
    "summary",
    "template_text",
    "validate",
    "write_state",
]

EXIT_OK, EXIT_ERROR, EXIT_CONFIG = 0, 1, 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m eks_gpu_platform.offline",
        description="Render a stack's desired state offline (no Pulumi CLI, no AWS).",
        # No prefixes: the removed `--policy-pack <dir>` must not pass for `--policy-pack-config`.
        allow_abbrev=False,
    )
    parser.add_argument("--stack", default="dev", help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--config-file", type=Path, help="any stack file instead")
    parser.add_argument(
        "--out",
        type=Path,
        help="output directory (default build/<stack>; with --config-file build/file-<name>)",
    )
    parser.add_argument(
        "--project-dir", type=Path, default=None, help="folder of Pulumi.yaml (default: cwd)"
    )
    parser.add_argument(
        "--policy-pack-config", type=Path, help="policy config JSON, as for the CLI"
    )
    parser.add_argument("--no-policy", action="store_true", help="skip the policy pack")
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="DIR",
        help="a previous render's output directory: write plan.json and plan.md (offline.plan)",
    )
    return parser.parse_args(argv)


def default_out(project_dir: Path, stack: str, config_file: Path | None) -> Path:
    """Where a render without ``--out`` writes: ``build/<stack>`` for a stack's own file, and
    ``build/file-<name>`` for ``--config-file`` (``<name>``: the file name without ``Pulumi.``
    and ``.yaml``/``.yml``), so rendering another file never overwrites a stack's render
    (issue 23, point 8c). The ``file-`` prefix keeps the two apart even for a file named after
    a stack."""
    if config_file is None:
        return project_dir / "build" / stack
    name = config_file.name
    for suffix in (".yaml", ".yml"):
        name = name.removesuffix(suffix)
    return project_dir / "build" / f"file-{name.removeprefix('Pulumi.')}"


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    try:
        project_dir = (args.project_dir or find_project(Path.cwd())).resolve()
        stack = load_stack_file(project_dir, args.stack, args.config_file)
        _load(".run")
        config = validate(stack)
    except ConfigFileError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_CONFIG
    except SpecError as err:
        print_spec_error(err, "invalid stack configuration:")
        return EXIT_CONFIG
    _load(".capacity", ".policies", ".summary", ".write")
    out = args.out or default_out(project_dir, stack.name, args.config_file)
    try:
        pack = None if args.no_policy else load_policy_pack()
        policy_config = (
            json.loads(args.policy_pack_config.read_text()) if args.policy_pack_config else None
        )
        try:
            with spec_errors_made() as made, reusing_validated(stack, config):
                recording = render(project_dir, stack, validated=True)
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
        # One capacity plan for capacity.json and summary.md.
        document = capacity_document(config) if config is not None else None
        capacity = capacity_markdown(config, document) if config is not None else ""
        # capacity.json's warnings are ``budget.capacity_warnings`` of the configuration.
        warnings = document["warnings"] if document is not None else []
        if config is not None:
            write_capacity(config, out, document)
        # After capacity.json: plan.md shows its cost at full budget.
        if args.compare is not None:
            from .plan import write_plan  # only with --compare: a render needs none of offline.plan

            write_plan(args.compare, out)
        lines, mandatory = check_policies(recording, pack, policy_config) if pack else ([], False)
    except Exception:
        traceback.print_exc()
        print("error: the offline render failed (see above)", file=sys.stderr)
        return EXIT_ERROR
    elapsed = time.perf_counter() - started
    # The program's warnings, less those the capacity section already lists.
    shown = [w for w in recording.warnings if f"warning: {w}" not in warnings]
    (out / "summary.md").write_text(
        markdown_summary(recording, stack.name, lines, pack, shown) + capacity
    )
    (out / "policy.txt").write_text("".join(f"{line}\n" for line in lines))
    print(summary(recording, counts, out))
    for notice in recording.notices:
        print(notice)
    for warning in warnings:
        print(warning)
    # The problems `pulumi up` refuses: the program's warnings marked so (errors.REFUSED_BY_UP,
    # the same warnings summary.md lists), printed last so that no "no violations" line is the
    # end of a render that `up` would refuse.
    refused = up_refusals(recording.warnings)
    if pack is None:
        print("Policy pack: not run")
    elif lines:
        print(f"Policy pack: {len(lines)} violation(s)")
        for line in lines:
            print(f"  {line}", file=sys.stderr if line.startswith("mandatory") else sys.stdout)
    elif refused:
        print(
            f"Policy pack: {len(pack.RULES)} rules, no violations; `pulumi up` still refuses "
            f"this stack: {len(refused)} problem(s), listed at the end"
        )
    else:
        print(f"Policy pack: {len(pack.RULES)} rules, no violations")
    print(f"Wall time: {elapsed:.2f} s")
    if args.compare is not None:
        print(f"plan: {out / 'plan.md'}")
    if refused:
        print("")
        print(refusal_header(len(refused)).replace("**", ""))
        for problem in refused:
            print(f"  - {problem}")
    if mandatory:
        print("error: mandatory policy violations (see above)", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def cli(argv: list[str] | None = None) -> NoReturn:
    """``main`` as a process (``python -m eks_gpu_platform.offline``, the console script): flush
    the output, then end the process with ``os._exit`` instead of the interpreter's teardown.

    Teardown frees every module, class and object one by one: with the SDK's modules loaded it
    takes half a second (``make bench``), longer than the program's own work, and it writes
    nothing. ``main`` has written and closed every file by then (``write_text`` closes); the
    ``atexit`` handlers (the SDK registers one when tracing, pulumi/runtime/_instrumentation.py)
    still run, as at a normal exit. An exception ``main`` does not handle ends the process the
    ordinary way, with its traceback.
    """
    gc.disable()  # as __main__ does before its imports (see there); the console script lands here
    status = main(argv)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    cli()
