"""Run the pack's rules over an offline render, without pulumi-policy or the Pulumi engine.

    from eks_gpu_platform.policies.offline import evaluate, report
    violations = evaluate(recording.resources)       # or the entries of resources.json
    lines, has_mandatory = report(violations)

or ``python -m eks_gpu_platform.policies.offline build/prod/resources.json [--config
policy-config.json]`` (exit 1 on a mandatory violation).

Resource rules see each resource's ``inputs``, as in the engine. Stack rules see them too,
which differs from the engine: there, stack policies get each resource's *outputs*. The rules
read only fields that have the same shape in both (Kubernetes objects, Helm ``values``/
``version``/``chart``, security-group rule ids, ``version``), and where a field exists only on
one side they look in both places (the cluster version: ``eks:index:Cluster`` inputs offline,
its ``aws:eks/cluster:Cluster`` child's outputs in the engine).

``config`` takes the CLI's ``--policy-pack-config`` shape: ``{"all": "advisory"}``,
``{"<policy>": "disabled"}`` or ``{"<policy>": {"enforcementLevel": "advisory", "labelDomain":
"example.com"}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from .rules import ADVISORY, MANDATORY, RULES, Rule, StackResource

DISABLED = "disabled"
LEVELS = (MANDATORY, ADVISORY, DISABLED)
STACK_TARGET = "stack"


class Violation(NamedTuple):
    policy: str
    enforcement_level: str  # "mandatory" or "advisory"
    resource: str  # the resource's URN, else its logical name, else "stack"
    message: str


def _field(resource: Any, key: str) -> Any:
    if isinstance(resource, Mapping):
        return resource.get(key)
    return getattr(resource, key, None)


def _as_stack_resource(resource: Any) -> StackResource:
    inputs = _field(resource, "inputs")
    props = inputs if isinstance(inputs, Mapping) else {}
    # The engine's outputs carry the resource's ``id`` (a subnet's, a route table's): rules that
    # join resources by id (efa-nodeclass-no-public-ip) read it there; offline, the recorded id.
    rid = _field(resource, "id")
    if isinstance(rid, str) and rid and "id" not in props:
        props = {**props, "id": rid}
    return StackResource(
        type=str(_field(resource, "type") or ""),
        name=str(_field(resource, "name") or ""),
        urn=str(_field(resource, "urn") or ""),
        props=props,
    )


def _level_of(value: Any) -> str | None:
    if isinstance(value, Mapping):
        value = value.get("enforcementLevel")
    if value is None:
        return None
    if value not in LEVELS:
        raise ValueError(f"enforcement level {value!r}; expected one of {', '.join(LEVELS)}")
    return value


def _settings(rule: Rule, config: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The rule's enforcement level and config properties under ``config``."""
    own = config.get(rule.name)
    level = _level_of(own) or _level_of(config.get("all")) or rule.enforcement_level
    return level, rule.config(own if isinstance(own, Mapping) else None)


def evaluate(
    resources: Sequence[Any],
    config: Mapping[str, Any] | None = None,
    rules: Sequence[Rule] = RULES,
) -> list[Violation]:
    """Every violation of ``rules`` in ``resources``.

    ``resources``: mappings (``resources.json`` entries) or objects (``Recording.resources``)
    with ``type``, ``name``, ``urn`` and ``inputs``.
    """
    config = config or {}
    unknown = sorted(set(config) - {rule.name for rule in rules} - {"all"})
    if unknown:
        raise ValueError(f"policy config names unknown policies: {', '.join(unknown)}")
    stack = [_as_stack_resource(r) for r in resources]
    # Each resource rule runs on the resources of its types only (in the stack's order), not
    # on every resource: a rule's check is empty for any other type (``Rule.check``).
    by_type: dict[str, list[StackResource]] = {}
    for resource in stack:
        by_type.setdefault(resource.type, []).append(resource)
    out: list[Violation] = []
    for rule in rules:
        level, props = _settings(rule, config)
        if level == DISABLED:
            continue
        if rule.check_stack is not None:
            for message in rule.stack_messages(stack, props):
                target = getattr(message, "urn", None) or STACK_TARGET
                out.append(Violation(rule.name, level, target, str(message)))
            continue
        types = [t for t in rule.resource_checks if t in by_type]
        if len(types) == 1:
            checked = by_type[types[0]]
        else:
            checked = [r for r in stack if r.type in types] if types else []
        for resource in checked:
            for message in rule.check(resource.type, resource.props, props):
                target = resource.urn or resource.name or STACK_TARGET
                out.append(Violation(rule.name, level, target, str(message)))
    return out


def _display(resource: str) -> str:
    """A URN's logical name (``urn:…::platform-pool-general`` -> ``platform-pool-general``)."""
    return resource.rsplit("::", 1)[-1] if resource.startswith("urn:pulumi:") else resource


def report(violations: Sequence[Violation], stream: TextIO | None = None) -> tuple[list[str], bool]:
    """One line per violation, mandatory first: ``<level> <policy>: <resource>: <message>``.

    Returns the lines and whether any violation is mandatory; writes the lines to ``stream``
    too when one is given.
    """
    ordered = sorted(violations, key=lambda v: v.enforcement_level != MANDATORY)
    lines = [
        f"{v.enforcement_level} {v.policy}: {_display(v.resource)}: {v.message}" for v in ordered
    ]
    if stream is not None:
        for line in lines:
            print(line, file=stream)
    return lines, any(v.enforcement_level == MANDATORY for v in violations)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eks_gpu_platform.policies.offline",
        description="Check an offline render's resources.json against the policy pack.",
    )
    parser.add_argument("resources", type=Path, help="resources.json written by the render")
    parser.add_argument("--config", type=Path, help="policy pack config (JSON), as for the CLI")
    args = parser.parse_args(argv)
    resources = json.loads(args.resources.read_text())
    config = json.loads(args.config.read_text()) if args.config else None
    lines, has_mandatory = report(evaluate(resources, config), sys.stdout)
    if not lines:
        print(f"{args.resources}: no policy violations")
    return 1 if has_mandatory else 0


if __name__ == "__main__":
    sys.exit(main())
