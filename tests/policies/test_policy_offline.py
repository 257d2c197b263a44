"""``eks_gpu_platform.policies.offline``: the rules over recorded resources, no pulumi-policy."""

import json

import pytest
from policy_baselines import DOMAIN, change, compliant_stack, gpu_nodepool, props_of, urn_of

from eks_gpu_platform.policies import offline
from eks_gpu_platform.policies.offline import Violation, evaluate, report
from eks_gpu_platform.policies.rules import RULES_BY_NAME

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
POOL_URN = f"urn:pulumi:test::eks-gpu-platform::{NODEPOOL}::platform-pool-x"
NO_LIMIT = (
    'NodePool "x" launches NVIDIA GPU nodes without a spec.limits["nvidia.com/gpu"] cap; pending '
    "pods (over-quota KAI pods included) can launch GPUs without bound"
)
NO_EXPIRY = (
    'NodePool "x" does not set spec.template.spec.expireAfter, so Karpenter replaces its nodes '
    'every 720h (the default); set a duration, or "Never" for pools whose work must not be '
    "interrupted"
)


def recorded(stack):
    """The stack as ``resources.json`` entries: inputs, not props."""
    return [{"type": r.type, "name": r.name, "urn": r.urn, "inputs": r.props} for r in stack]


def pool_without_limit_or_expiry():
    props = gpu_nodepool("x", gpu_limit=8)
    del props["spec"]["limits"]
    del props["spec"]["template"]["spec"]["expireAfter"]
    props["spec"]["template"]["spec"]["nodeClassRef"]["name"] = "train-spot"
    return {"type": NODEPOOL, "name": "platform-pool-x", "urn": POOL_URN, "inputs": props}


def stack_with_bad_pool():
    return [*recorded(compliant_stack()), pool_without_limit_or_expiry()]


def test_compliant_stack_has_no_violations():
    assert evaluate(recorded(compliant_stack())) == []


def test_resource_violations():
    assert evaluate(stack_with_bad_pool()) == [
        Violation("gpu-nodepool-gpu-limit", "mandatory", POOL_URN, NO_LIMIT),
        Violation("nodepool-expire-after", "advisory", POOL_URN, NO_EXPIRY),
    ]


def test_stack_violations_name_the_resource():
    stack = compliant_stack()
    change(props_of(stack, "platform-karpenter-chart"), ("values", "settings"), {})
    (violation,) = evaluate(recorded(stack))
    assert violation.policy == "interruption-queue-for-spot-or-reserved"
    assert violation.resource == urn_of(stack, "platform-karpenter-chart")


def test_objects_with_attributes_are_accepted():
    class Registration:
        def __init__(self, entry):
            self.__dict__.update(entry)

    resources = [Registration(e) for e in stack_with_bad_pool()]
    assert [v.policy for v in evaluate(resources)] == [
        "gpu-nodepool-gpu-limit",
        "nodepool-expire-after",
    ]


def test_a_rule_of_several_types_reports_in_the_stacks_order():
    """Each rule runs on the resources of its own types only; a rule of two types still
    reports its resources in the order of the stack, interleaved, and skips the others."""
    from eks_gpu_platform.policies.rules import Rule

    rule = Rule(
        name="named",
        description="every resource of the two types, by name",
        enforcement_level="advisory",
        category="test",
        resource_checks={
            "test:a:A": lambda props, config: [f"a {props['n']}"],
            "test:b:B": lambda props, config: [f"b {props['n']}"],
        },
    )
    types = ["test:a:A", "test:c:C", "test:b:B", "test:a:A", "test:b:B"]
    resources = [
        {"type": t, "name": f"r{i}", "urn": f"urn:{i}", "inputs": {"n": i}}
        for i, t in enumerate(types)
    ]
    assert [(v.resource, v.message) for v in evaluate(resources, rules=[rule])] == [
        ("urn:0", "a 0"),
        ("urn:2", "b 2"),
        ("urn:3", "a 3"),
        ("urn:4", "b 4"),
    ]


@pytest.mark.parametrize(
    ("config", "levels"),
    [
        ({"all": "advisory"}, ["advisory", "advisory"]),
        ({"nodepool-expire-after": "mandatory"}, ["mandatory", "mandatory"]),
        ({"nodepool-expire-after": {"enforcementLevel": "disabled"}}, ["mandatory"]),
        ({"all": "advisory", "gpu-nodepool-gpu-limit": "mandatory"}, ["mandatory", "advisory"]),
    ],
    ids=["all-advisory", "promote", "disable", "all-then-specific"],
)
def test_enforcement_levels_from_config(config, levels):
    violations = evaluate(stack_with_bad_pool(), config)
    assert [v.enforcement_level for v in violations] == levels


def test_config_properties():
    rule = RULES_BY_NAME["gpu-nodepool-taint-and-pool-label"]
    config = {rule.name: {"labelDomain": "example.com"}}
    assert evaluate([pool_without_limit_or_expiry()], config, rules=[rule]) == [
        Violation(
            "gpu-nodepool-taint-and-pool-label",
            "mandatory",
            POOL_URN,
            'NodePool "x" has no "example.com/pool" label in spec.template.metadata.labels; '
            "workloads and queues cannot target the pool before it has nodes",
        )
    ]
    assert DOMAIN != "example.com"


def test_bad_config():
    with pytest.raises(ValueError, match="unknown policies: nope"):
        evaluate([], {"nope": "advisory"})
    with pytest.raises(ValueError, match="enforcement level 'blocking'"):
        evaluate([], {"all": "blocking"})


def test_report_lines_mandatory_first():
    violations = [
        Violation("nodepool-expire-after", "advisory", POOL_URN, NO_EXPIRY),
        Violation("gpu-nodepool-gpu-limit", "mandatory", POOL_URN, NO_LIMIT),
        Violation("efa-nodepool-topology", "mandatory", "stack", "m"),
    ]
    assert report(violations) == (
        [
            f"mandatory gpu-nodepool-gpu-limit: platform-pool-x: {NO_LIMIT}",
            "mandatory efa-nodepool-topology: stack: m",
            f"advisory nodepool-expire-after: platform-pool-x: {NO_EXPIRY}",
        ],
        True,
    )


def test_report_advisory_only_and_empty():
    advisory = [Violation("nodepool-expire-after", "advisory", POOL_URN, NO_EXPIRY)]
    assert report(advisory)[1] is False
    assert report([]) == ([], False)


def test_report_writes_to_a_stream(capsys):
    import sys

    report([Violation("p", "advisory", "r", "m")], sys.stderr)
    assert capsys.readouterr().err == "advisory p: r: m\n"


def test_command_line(tmp_path, capsys):
    path = tmp_path / "resources.json"
    path.write_text(json.dumps(stack_with_bad_pool()))
    assert offline.main([str(path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"mandatory gpu-nodepool-gpu-limit: platform-pool-x: {NO_LIMIT}",
        f"advisory nodepool-expire-after: platform-pool-x: {NO_EXPIRY}",
    ]
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"all": "advisory"}))
    assert offline.main([str(path), "--config", str(config)]) == 0
    path.write_text("[]")
    capsys.readouterr()
    assert offline.main([str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: no policy violations\n"
