"""Documentation sections generated from the code: the component inputs, the configuration
reference, the policy table and the versions table.

Each lives between ``<!-- BEGIN GENERATED: <name> -->`` and ``<!-- END GENERATED: <name> -->``
markers in the page of ``PAGES`` that holds it (the reference pages under ``docs/``).
``python -m eks_gpu_platform.docs`` rewrites them in place; ``--check`` exits 1 when one is
stale (the test suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

from . import versions
from .config import PROJECT, PlatformConfig
from .policies.rules import RULES
from .spec import camel, show, type_name

BEGIN = "<!-- BEGIN GENERATED: {name} -->"
END = "<!-- END GENERATED: {name} -->"


def _spec_of(tp: Any) -> type | None:
    """The spec class inside a field type (itself, a tuple of it, or an optional one)."""
    if dataclasses.is_dataclass(tp):
        return tp
    for arg in get_args(tp):
        found = _spec_of(arg)
        if found is not None:
            return found
    return None


def _default(f: dataclasses.Field) -> str:
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
        return "**required**"
    value = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    if dataclasses.is_dataclass(value):
        return "see below"
    if value is None:
        return "(see description)"
    if value in ((), {}):
        return "empty"
    return f"`{show(value)}`"


def _type(tp: Any) -> str:
    spec = _spec_of(tp)
    if spec is not None:
        if get_origin(tp) is tuple or any(get_origin(a) is tuple for a in get_args(tp)):
            return "list of objects"
        return "object"
    name = type_name(tp)
    for article in ("a ", "an "):
        name = name.removeprefix(article)
    return name.replace("|", "\\|")


def spec_tables(cls: type, key: str) -> list[str]:
    """Markdown tables for ``cls`` and every spec nested in it, keys spelled as in config."""
    hints = typing.get_type_hints(cls)
    rows = [f"### `{key}`", "", "| Key | Type | Default | Description |", "|---|---|---|---|"]
    nested: list[tuple[type, str]] = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        name = camel(f.name)
        text = f.metadata.get("doc", "").replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(tp)} | {_default(f)} | {text} |")
        spec = _spec_of(tp)
        if spec is not None:
            is_list = "list" in _type(tp)
            nested.append((spec, f"{key}.{name}{'[]' if is_list else ''}"))
    out = [*rows, ""]
    for spec, path in nested:
        out += spec_tables(spec, path)
    return out


def config_reference() -> str:
    """The configuration reference: one section per top-level key of the project namespace."""
    hints = typing.get_type_hints(PlatformConfig)
    lines = []
    for f in dataclasses.fields(PlatformConfig):
        if f.name == "region":
            continue
        key = camel(f.name)
        tp = hints[f.name]
        spec = _spec_of(tp)
        lines += [f"## `{PROJECT}:{key}`", "", f.metadata.get("doc", ""), ""]
        if spec is None:
            lines += [f"Type: {_type(tp)}. Default: {_default(f)}.", ""]
            continue
        prefix = f"{key}[]" if "list" in _type(tp) else key
        lines += spec_tables(spec, prefix)
    return "\n".join(lines).rstrip() + "\n"


def versions_table() -> str:
    """Every pinned chart and AMI version, from ``versions``."""
    rows = ["| Component | Version | Source |", "|---|---|---|"]
    for label, chart in (
        ("Karpenter chart", versions.KARPENTER),
        ("Karpenter CRD chart", versions.KARPENTER_CRD),
        ("NVIDIA GPU Operator", versions.GPU_OPERATOR),
        ("AWS EFA device plugin", versions.EFA_DEVICE_PLUGIN),
        ("KAI scheduler", versions.KAI_SCHEDULER),
        ("NVIDIA DRA driver (DRA pools only)", versions.DRA_DRIVER),
    ):
        source = (
            chart.reference
            if chart.repository.startswith("oci://")
            else (f"{chart.repository} ({chart.name})")
        )
        rows.append(f"| {label} | `{chart.version}` | `{source}` |")
    rows.append(
        f"| AL2023 AMI alias | `al2023@{versions.AL2023_AMI_ALIAS_VERSION}` | "
        "EKS-optimized NVIDIA variant |"
    )
    rows.append(
        f"| Bottlerocket AMI alias | `bottlerocket@{versions.BOTTLEROCKET_AMI_ALIAS_VERSION}` | "
        "Bottlerocket NVIDIA variant |"
    )
    kube = ", ".join(versions.SUPPORTED_KUBERNETES_VERSIONS)
    rows.append(
        f"| Kubernetes (EKS) | {kube} (default {versions.DEFAULT_KUBERNETES_VERSION}) | "
        "Karpenter compatibility matrix |"
    )
    for addon in versions.EKS_ADDONS:
        floor = (
            f"; with EFA pools at least `{versions.VPC_CNI_EFA_MIN_VERSION}`"
            if addon == "vpc-cni"
            else ""
        )
        rows.append(
            f"| EKS add-on {addon} | resolved at deploy{floor} | `cluster.addonVersions.{addon}` "
            "pin, else the installed one for the minor, else EKS's most recent for the minor |"
        )
    return "\n".join(rows) + "\n"


def policies_table() -> str:
    """The policy pack's rules (``eks_gpu_platform.policies.rules``): name, level, checks, why."""
    rows = ["| Policy | Default level | Checks | Why |", "|---|---|---|---|"]
    for rule in RULES:
        scope = (
            "stack"
            if rule.check_stack
            else ", ".join(f"`{t.rsplit(':', 1)[-1]}`" for t in rule.resource_checks)
        )
        why = rule.description.replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{rule.name}` | {rule.enforcement_level} | {scope} | {why} |")
    return "\n".join(rows) + "\n"


def component_inputs() -> str:
    """Each component's ``*Args`` fields: what a program passes in (generated from the code)."""
    from .cluster import EksClusterArgs
    from .efa import EfaDevicePluginArgs
    from .gpu_operator import GpuOperatorArgs
    from .karpenter import KarpenterArgs
    from .network import NetworkArgs
    from .nodepool import NodePoolArgs
    from .scheduler import KaiSchedulerArgs

    rows = ["| Component | Args | Inputs (required first) |", "|---|---|---|"]
    for component, args in (
        ("Network", NetworkArgs),
        ("EksCluster", EksClusterArgs),
        ("Karpenter", KarpenterArgs),
        ("NodePool", NodePoolArgs),
        ("EfaDevicePlugin", EfaDevicePluginArgs),
        ("GpuOperator", GpuOperatorArgs),
        ("KaiScheduler", KaiSchedulerArgs),
    ):
        fields = dataclasses.fields(args)
        # Fields derived from another component's argument (``spec.derived``) follow it.
        gives: dict[str, list[str]] = {}
        for f in fields:
            if "derived_from" in f.metadata:
                gives.setdefault(f.metadata["derived_from"], []).append(f"`{f.name}`")
        required = [
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        first = required + [name for name in gives if name not in required]
        optional = [
            f"`{f.name}`"
            for f in fields
            if f.name not in first and "derived_from" not in f.metadata
        ]
        listed = ", ".join(
            f"`{name}`" + (f" (gives {', '.join(gives[name])})" if name in gives else "")
            for name in first
        ) + (f"; optional {', '.join(optional)}" if optional else "")
        rows.append(f"| `{component}` | `{args.__name__}` | {listed} |")
    rows.append(
        "| `GpuPlatform` | `GpuPlatformArgs` (or a `PlatformConfig`) | the configuration keys "
        "below, snake_case, plus `region` |"
    )
    return "\n".join(rows) + "\n"


SECTIONS = {
    "component-inputs": component_inputs,
    "config-reference": config_reference,
    "versions": versions_table,
    "policies": policies_table,
}

# The page (relative to the repository root) holding each generated section; every section of
# SECTIONS is in exactly one page.
PAGES: dict[str, tuple[str, ...]] = {
    "docs/components.md": ("component-inputs",),
    "docs/configuration.md": ("config-reference",),
    "docs/policies.md": ("policies",),
    "docs/versions.md": ("versions",),
}


def render_page(text: str, names: tuple[str, ...], page: str = "page") -> str:
    """``text`` with each generated section of ``names`` replaced by its current content."""
    for name in names:
        build = SECTIONS[name]
        begin, end = BEGIN.format(name=name), END.format(name=name)
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise ValueError(f"{page} has no {begin} ... {end} section")
        text = pattern.sub(lambda _m, b=build, s=begin, e=end: f"{s}\n{b()}{e}", text)
    return text


def render_pages(root: Path) -> dict[Path, tuple[str, str]]:
    """Per page under ``root``: its current text and the text with fresh generated sections."""
    out = {}
    for page, names in PAGES.items():
        path = root / page
        current = path.read_text()
        out[path] = (current, render_page(current, names, page))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rewrite the docs pages' generated sections.")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is stale")
    args = parser.parse_args(argv)
    pages = render_pages(args.root)
    if args.check:
        stale = [path for path, (current, fresh) in pages.items() if fresh != current]
        for path in stale:
            print(f"{path} is stale: run `make docs`", file=sys.stderr)
        return 1 if stale else 0
    for path, (current, fresh) in pages.items():
        if fresh != current:
            path.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
