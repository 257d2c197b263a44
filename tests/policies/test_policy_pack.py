"""``eks_gpu_platform.policies.pack``: the rules as pulumi-policy objects, without the engine."""

import pytest
from policy_baselines import DOMAIN, NODEPOOL, compliant_stack, gpu_nodepool, props_of, urn_of
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from eks_gpu_platform.policies.pack import PACK_NAME, build_policies
from eks_gpu_platform.policies.rules import RULES

OPTS = PolicyResourceOptions(
    protect=False,
    ignore_changes=[],
    delete_before_replace=None,
    aliases=[],
    custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
    additional_secret_outputs=[],
)
NO_LABEL = (
    'NodePool "inference" has no "{domain}/pool" label in spec.template.metadata.labels; '
    "workloads and queues cannot target the pool before it has nodes"
)


def policy(name, **levels):
    return next(p for p in build_policies(levels) if p.name == name)


def validate_resource(policy, props, config=None):
    out = []
    args = ResourceValidationArgs(
        NODEPOOL, props, f"urn:pulumi:test::p::{NODEPOOL}::np", "np", OPTS, None, config
    )
    policy.validate(args, lambda message, urn=None: out.append((message, urn)))
    return out


def test_pack_name():
    assert PACK_NAME == "eks-gpu-platform"


def test_one_policy_per_rule_with_its_level_and_kind():
    policies = build_policies()
    assert [p.name for p in policies] == [r.name for r in RULES]
    for p, rule in zip(policies, RULES, strict=True):
        assert p.enforcement_level == EnforcementLevel(rule.enforcement_level)
        assert p.description == rule.description
        kind = StackValidationPolicy if rule.is_stack else ResourceValidationPolicy
        assert isinstance(p, kind)
        assert p.tags == [rule.category]
        if rule.config_schema:
            assert p.config_schema.properties == {k: dict(v) for k, v in rule.config_schema.items()}
        else:
            assert p.config_schema is None


def test_levels_can_be_overridden():
    p = policy("gpu-nodepool-gpu-limit", **{"gpu-nodepool-gpu-limit": "advisory"})
    assert p.enforcement_level == EnforcementLevel.ADVISORY


def test_unknown_policy_in_levels():
    with pytest.raises(ValueError, match="no policy named nope"):
        build_policies({"nope": "advisory"})


def test_resource_policy_reports_on_the_resource():
    props = gpu_nodepool()
    del props["spec"]["template"]["metadata"]["labels"][f"{DOMAIN}/pool"]
    assert validate_resource(policy("gpu-nodepool-taint-and-pool-label"), props) == [
        (NO_LABEL.format(domain=DOMAIN), None)
    ]


def test_config_from_the_engine_overrides_the_defaults():
    p = policy("gpu-nodepool-taint-and-pool-label")
    assert validate_resource(p, gpu_nodepool(), {"labelDomain": "example.com"}) == [
        (NO_LABEL.format(domain="example.com"), None)
    ]


def test_resource_policy_ignores_other_types():
    p = policy("gpu-nodepool-taint-and-pool-label")
    out = []
    args = ResourceValidationArgs("aws:s3/bucket:Bucket", {}, "urn:x", "b", OPTS, None)
    p.validate(args, lambda message, urn=None: out.append(message))
    assert out == []


def test_stack_policy_reports_against_the_offending_resource():
    stack = compliant_stack()
    props_of(stack, "platform-pool-train-spot")["spec"]["template"]["spec"]["nodeClassRef"][
        "name"
    ] = "missing"
    resources = [
        PolicyResource(r.type, r.props, r.urn, r.name, OPTS, None, None, [], {}) for r in stack
    ]
    out = []
    policy("nodepool-nodeclass-exists").validate(
        StackValidationArgs(resources), lambda message, urn=None: out.append((message, urn))
    )
    assert out == [
        (
            'NodePool "train-spot" references EC2NodeClass "missing", which this stack does not '
            "define; Karpenter never launches nodes for it",
            urn_of(stack, "platform-pool-train-spot"),
        )
    ]
