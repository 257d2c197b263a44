"""Rules read props through the engine's read-only proxies, never assuming dict or list."""

import pytest
from policy_baselines import (
    compliant_stack,
    ec2nodeclass,
    efa_nodeclass,
    gpu_nodepool,
    iam_document,
    iam_policy,
    launch_template,
    queue_policy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from eks_gpu_platform.policies.rules import RULES, RULES_BY_NAME, StackResource

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
EC2NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
IAM_POLICY = "aws:iam/policy:Policy"
QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"


def violating_nodepool():
    props = gpu_nodepool(capacity_types=("spot",))
    spec = props["spec"]
    del spec["template"]["spec"]["taints"]
    del spec["limits"]
    del spec["template"]["spec"]["expireAfter"]
    return props


def violating_nodeclass():
    props = efa_nodeclass()
    spec = props["spec"]
    spec["metadataOptions"]["httpPutResponseHopLimit"] = 2
    spec["blockDeviceMappings"][0]["ebs"]["encrypted"] = False
    spec["blockDeviceMappings"][0]["ebs"]["volumeSize"] = "4Ti"
    spec["associatePublicIPAddress"] = True
    spec["amiSelectorTerms"] = [{"alias": "al2023@latest"}]
    return props


def violating_iam_policy():
    document = iam_document()
    document["Statement"][0]["Resource"] = "*"
    document["Statement"][1]["Action"] = "*"
    return iam_policy(document)


CASES = [
    (NODEPOOL, gpu_nodepool),
    (NODEPOOL, violating_nodepool),
    (EC2NODECLASS, ec2nodeclass),
    (EC2NODECLASS, violating_nodeclass),
    (LAUNCH_TEMPLATE, launch_template),
    (IAM_POLICY, violating_iam_policy),
    (QUEUE_POLICY, queue_policy),
]


def run_resource_rules(resource_type, props):
    return {
        rule.name: rule.check(resource_type, props, rule.config())
        for rule in RULES
        if not rule.is_stack
    }


@pytest.mark.parametrize(("resource_type", "build"), CASES, ids=lambda c: getattr(c, "__name__", c))
def test_resource_rules_give_the_same_answers_through_the_proxy(resource_type, build):
    plain = run_resource_rules(resource_type, build())
    proxied = run_resource_rules(resource_type, unknown_checking_proxy(build()))
    assert proxied == plain


def violated(resource_type, props):
    return {name for name, found in run_resource_rules(resource_type, props).items() if found}


def test_violating_cases_do_violate():
    """So the proxy comparison above compares real violations, not empty lists."""
    assert violated(NODEPOOL, unknown_checking_proxy(violating_nodepool())) == {
        "gpu-nodepool-taint-and-pool-label",
        "spot-only-on-preemptible-pools",
        "nodepool-expire-after",
    }
    assert violated(EC2NODECLASS, unknown_checking_proxy(violating_nodeclass())) == {
        "imdsv2-required",
        "node-volumes-encrypted",
        "node-volume-size",
        "ami-version-pinned",
    }
    assert violated(IAM_POLICY, unknown_checking_proxy(violating_iam_policy())) == {
        "iam-no-wildcard-actions",
        "iam-no-passrole-on-wildcard",
    }


def test_stack_rules_through_the_proxy():
    stack = [
        StackResource(r.type, r.name, r.urn, unknown_checking_proxy(r.props))
        for r in compliant_stack()
    ]
    for rule in RULES:
        if rule.is_stack:
            assert rule.check_stack(stack, rule.config()) == [], rule.name


def test_unknown_values_reach_the_engine():
    """A preview-unknown value raises UnknownValueError out of the rule (the engine reports it
    as an advisory "can't run policy during preview"); rules must not swallow it."""
    props = gpu_nodepool()
    props["spec"]["template"]["metadata"]["labels"]["eks-gpu-platform.io/pool"] = (
        UNKNOWN_STRING_VALUE
    )
    rule = RULES_BY_NAME["gpu-nodepool-taint-and-pool-label"]
    with pytest.raises(UnknownValueError):
        rule.check(NODEPOOL, unknown_checking_proxy(props), rule.config())


def test_the_stack_rules_that_read_one_resource_violate_through_the_proxy():
    """gpu-nodepool-gpu-limit and efa-nodeclass-no-public-ip became stack rules (issue 29,
    point 11: they read the queues and the subnets): their per-resource findings still come
    through the proxy."""
    stack = [
        StackResource(NODEPOOL, "platform-pool-bad", "urn:bad-pool", violating_nodepool()),
        StackResource(EC2NODECLASS, "platform-bad-class", "urn:bad-class", violating_nodeclass()),
    ]
    proxied = [StackResource(r.type, r.name, r.urn, unknown_checking_proxy(r.props)) for r in stack]
    found = {
        rule.name for rule in RULES if rule.is_stack and rule.stack_messages(proxied, rule.config())
    }
    assert {"gpu-nodepool-gpu-limit", "efa-nodeclass-no-public-ip"} <= found
