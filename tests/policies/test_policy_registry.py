"""The registry: every rule module is registered once, with complete metadata."""

import importlib
import pkgutil

import pytest

from eks_gpu_platform.policies import rules
from eks_gpu_platform.policies.rules import ADVISORY, MANDATORY, RULES, RULES_BY_NAME, STACK, Rule

RULE_MODULES = sorted(
    m.name for m in pkgutil.iter_modules(rules.__path__) if not m.name.startswith("_")
)


def test_at_least_seventeen_policies():
    assert len(RULES) >= 17


def test_every_rule_module_is_registered_exactly_once():
    registered = [importlib.import_module(f"{rules.__name__}.{m}").RULE for m in RULE_MODULES]
    assert sorted(r.name for r in registered) == sorted(RULES_BY_NAME)
    assert len(RULE_MODULES) == len(RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_rule_metadata(rule: Rule):
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.enforcement_level in (MANDATORY, ADVISORY)
    assert rule.category in ("security", "correctness", "cost")
    assert len(rule.description) > 60 and rule.description.endswith(".")
    if rule.is_stack:
        assert rule.resource_types == STACK
    else:
        assert rule.resource_types and all(":" in t for t in rule.resource_types)
    for key, prop in rule.config_schema.items():
        assert "default" in prop and "type" in prop and "description" in prop, key


def test_security_and_correctness_rules_are_mandatory():
    for rule in RULES:
        if rule.category in ("security", "correctness"):
            assert rule.enforcement_level == MANDATORY, rule.name


def test_label_domain_is_configurable_wherever_labels_are_read():
    uses_labels = {
        "gpu-nodepool-taint-and-pool-label",
        "gpu-nodepool-gpu-limit",
        "spot-only-on-preemptible-pools",
        "non-preemptible-consolidate-when-empty",
        "nodepool-gpu-limit-within-queue-capacity",
    }
    assert {r.name for r in RULES if "labelDomain" in r.config_schema} == uses_labels


def test_rule_validation():
    with pytest.raises(ValueError, match="enforcement_level 'blocking'"):
        Rule(name="x", description="d", enforcement_level="blocking", category="security")
    with pytest.raises(ValueError, match="either resource_checks or check_stack"):
        Rule(name="x", description="d", enforcement_level=MANDATORY, category="security")
