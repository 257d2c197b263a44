"""``RULES`` as CrossGuard policies (the only module of the pack that imports pulumi-policy).

The pack directory's ``policies/__main__.py`` hands ``build_policies()`` to ``PolicyPack``;
tests call it too.
Enforcement levels default to each rule's own; override them per policy with the CLI's
``--policy-pack-config`` (``{"<policy>": "advisory"}``, or ``{"all": "advisory"}``) or here
with ``build_policies(levels={...})``. Config properties (``labelDomain``, ``maxVolumeGiB``)
are declared with their defaults, and the defaults are applied even when the engine passes none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from .rules import RULES, Rule, StackResource

PACK_NAME = "eks-gpu-platform"


def _schema(rule: Rule) -> PolicyConfigSchema | None:
    if not rule.config_schema:
        return None
    return PolicyConfigSchema(
        properties={key: dict(prop) for key, prop in rule.config_schema.items()}
    )


def _resource_validation(rule: Rule):
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in rule.check(args.resource_type, args.props, rule.config(args.get_config())):
            report_violation(str(message), None)

    return validate


def _stack_validation(rule: Rule):
    assert rule.check_stack is not None

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        # The engine hands stack policies each resource's *outputs* (offline.py passes inputs).
        resources = [StackResource(r.resource_type, r.name, r.urn, r.props) for r in args.resources]
        for message in rule.stack_messages(resources, rule.config(args.get_config())):
            report_violation(str(message), getattr(message, "urn", None))

    return validate


def to_policy(rule: Rule, level: EnforcementLevel | str | None = None) -> Policy:
    """One rule as a ``ResourceValidationPolicy`` or ``StackValidationPolicy``."""
    enforcement = EnforcementLevel(level or rule.enforcement_level)
    common = {
        "name": rule.name,
        "description": rule.description,
        "enforcement_level": enforcement,
        "config_schema": _schema(rule),
        "severity": Severity(rule.severity),
        "tags": [rule.category],
    }
    if rule.is_stack:
        return StackValidationPolicy(validate=_stack_validation(rule), **common)
    return ResourceValidationPolicy(validate=_resource_validation(rule), **common)


def build_policies(
    levels: Mapping[str, EnforcementLevel | str] | None = None,
    rules: Sequence[Rule] = RULES,
) -> list[Policy]:
    """Every rule as a policy; ``levels`` overrides enforcement levels by policy name."""
    levels = dict(levels or {})
    unknown = sorted(set(levels) - {rule.name for rule in rules})
    if unknown:
        raise ValueError(f"build_policies: no policy named {', '.join(unknown)}")
    return [to_policy(rule, levels.get(rule.name)) for rule in rules]
