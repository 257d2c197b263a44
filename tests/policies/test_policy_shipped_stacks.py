"""Every user stack (each ``Pulumi.<stack>.yaml`` of the project root, discovered) and every
fixture stack, rendered offline, passes every mandatory policy; the fixture dev and prod stacks
(tests/fixtures/stacks) also cover every resource type the rules read."""

import copy

import pytest
from pulumi_policy.proxy import unknown_checking_proxy
from stack_files import FIXTURE_STACKS, USER_STACKS, user_id

from eks_gpu_platform.policies.offline import evaluate, report
from eks_gpu_platform.policies.rules import RULES

STACKS = USER_STACKS
SHIPPED = FIXTURE_STACKS
# Resource types the rules read that each shipped stack registers: if a type token drifts,
# the rules would silently check nothing.
EXPECTED_TYPES = {
    "eks:index:Cluster",
    "aws:kms/key:Key",
    "aws:sqs/queue:Queue",
    "aws:sqs/queuePolicy:QueuePolicy",
    "aws:iam/policy:Policy",
    "aws:iam/role:Role",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:ec2/launchTemplate:LaunchTemplate",
    "kubernetes:karpenter.sh/v1:NodePool",
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:scheduling.run.ai/v2:Queue",
}
# Read by stack rules only.
STACK_RULE_TYPES = {"kubernetes:helm.sh/v3:Release", "kubernetes:scheduling.run.ai/v2:Queue"}


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_no_mandatory_violation(stack, rendered_user_stack_resources):
    violations = evaluate(rendered_user_stack_resources(stack))
    lines, has_mandatory = report(violations)
    assert not has_mandatory, "\n".join(lines)


@pytest.mark.parametrize("stack", SHIPPED)
def test_no_mandatory_violation_in_the_fixture_stacks(stack, rendered_stack_resources):
    lines, has_mandatory = report(evaluate(rendered_stack_resources(stack)))
    assert not has_mandatory, "\n".join(lines)


@pytest.mark.parametrize("stack", SHIPPED)
def test_the_rules_see_the_stacks_resources(stack, rendered_stack_resources):
    types = {r.type for r in rendered_stack_resources(stack)}
    assert types >= EXPECTED_TYPES
    checked = {t for rule in RULES if not rule.is_stack for t in rule.resource_types}
    assert checked >= EXPECTED_TYPES - STACK_RULE_TYPES


def test_prod_efa_pool_is_one_nodepool_that_holds_a_64_gpu_gang(rendered_stack_resources):
    """Issue 19 blocker 3: p5.48xlarge and p5e.48xlarge have the same EFA layout, so prod's
    train-efa pool is ONE NodePool with one limit of 64: llm-training's 64-GPU gang (8 p5 nodes,
    one instance type) fits it. Before, two NodePools of 32 each could never hold it (limits
    are per NodePool: karpenter v1.15.0 scheduler.go filterByRemainingResources)."""
    pools = [
        r.inputs
        for r in rendered_stack_resources("prod")
        if r.type == "kubernetes:karpenter.sh/v1:NodePool"
        and r.inputs["spec"]["template"]["metadata"]["labels"]["eks-gpu-platform.io/pool"]
        == "train-efa"
    ]
    assert [p["metadata"]["name"] for p in pools] == ["train-efa"]
    (pool,) = pools
    assert pool["spec"]["limits"]["nvidia.com/gpu"] == "64"
    requirements = {r["key"]: r["values"] for r in pool["spec"]["template"]["spec"]["requirements"]}
    assert requirements["node.kubernetes.io/instance-type"] == ["p5.48xlarge", "p5e.48xlarge"]
    p5_nodes = 8
    assert p5_nodes * 8 <= int(pool["spec"]["limits"]["nvidia.com/gpu"])


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_same_verdicts_through_the_engines_proxies(stack, rendered_user_stack_resources):
    resources = rendered_user_stack_resources(stack)
    proxied = [
        {"type": r.type, "name": r.name, "urn": r.urn, "inputs": unknown_checking_proxy(r.inputs)}
        for r in resources
    ]
    assert evaluate(proxied) == evaluate(resources)


def editable(resources):
    """The recorded resources as resources.json-style entries with deep-copied inputs."""
    return [
        {"type": r.type, "name": r.name, "urn": r.urn, "inputs": copy.deepcopy(r.inputs)}
        for r in resources
    ]


def entry(resources, type_, name):
    return next(r for r in resources if r["type"] == type_ and r["name"] == name)


def test_stack_rules_engage_on_prod(rendered_stack_resources):
    """Prod's pools, queues and GPU Operator release are really compared, not skipped."""
    resources = editable(rendered_stack_resources("prod"))
    entry(resources, "kubernetes:karpenter.sh/v1:NodePool", "platform-pool-inference-pool")[
        "inputs"
    ]["spec"]["limits"]["nvidia.com/gpu"] = "24"
    operator = entry(resources, "kubernetes:helm.sh/v3:Release", "platform-gpu-operator-chart")
    operator["inputs"]["values"]["driver"]["enabled"] = True
    found = {
        (v.policy, v.message)
        for v in evaluate(resources)
        if v.policy
        in ("nodepool-gpu-limit-within-queue-capacity", "gpu-operator-preinstalled-driver")
    }
    assert found == {
        (
            "nodepool-gpu-limit-within-queue-capacity",
            'pool "inference" (NodePools "inference") caps 24 GPUs, but the queues routed to this '
            'non-preemptible pool ("serving") admit only 16 (sum of gpu.quota); Karpenter would '
            "launch GPUs no queue can use",
        ),
        (
            "gpu-operator-preinstalled-driver",
            'GPU Operator release "gpu-operator" has values.driver.enabled true, but every GPU '
            'EC2NodeClass ("inference", "train-efa", "train-spot") uses an AL2023 or Bottlerocket '
            "AMI alias whose NVIDIA AMI already ships the NVIDIA driver; set driver.enabled: false",
        ),
    }
