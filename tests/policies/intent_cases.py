"""Shared cases machinery for ``test_policy_intents_*.py`` (issue 13, items 7 and 8): every
mandatory policy detects its intent, not one spelling of it.

One compliant stack (``full_stack``: the stack-rule baseline plus one resource of every other
type a mandatory rule checks) has no violation at all. Each row of ``CASES`` changes it in one
way that either breaks the policy's intent (several distinct ways per policy: another field,
another spelling, another resource type) or keeps it (compliant controls: ``[]``), and asserts
the exact messages of that policy.
"""

import json
from collections.abc import Callable
from typing import Any

from policy_baselines import (
    AWS_EKS_CLUSTER,
    IAM_POLICY,
    IAM_ROLE,
    KMS_KEY,
    LAUNCH_TEMPLATE,
    NODEPOOL,
    aws_eks_cluster,
    compliant_stack,
    gpu_nodepool,
    iam_document,
    iam_policy,
    kms_key,
    launch_template,
    props_of,
    queue_policy_document,
    resource,
    without,
)

from eks_gpu_platform.policies.offline import evaluate
from eks_gpu_platform.policies.rules import StackResource

Stack = list[StackResource]

ROLE = "arn:aws:iam::123456789012:role/Other"
QUEUE_ARN = "arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-test"


def full_stack() -> Stack:
    return [
        *compliant_stack(),
        resource(AWS_EKS_CLUSTER, "platform-cluster-eks-cluster", aws_eks_cluster()),
        resource(KMS_KEY, "platform-cluster-key", kms_key()),
        resource(LAUNCH_TEMPLATE, "platform-cluster-system-lt", launch_template()),
        resource(IAM_POLICY, "platform-karpenter-controller", iam_policy()),
        resource(IAM_ROLE, "platform-karpenter-role", {"name": "KarpenterController"}),
    ]


def entries(stack: Stack) -> list[dict[str, Any]]:
    return [{"type": r.type, "name": r.name, "urn": r.urn, "inputs": r.props} for r in stack]


# --- mutation helpers: each returns a function of the stack ------------------------------------


def at(name: str, *path: Any, value: Any = None, delete: bool = False) -> Callable[[Stack], Stack]:
    """Set (or delete) ``props[path...]`` of the resource ``name``."""

    def mutate(stack: Stack) -> Stack:
        target = props_of(stack, name)
        for key in path[:-1]:
            target = target[key]
        if delete:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return stack

    return mutate


def drop(name: str) -> Callable[[Stack], Stack]:
    return lambda stack: without(stack, name)


def add(type_: str, name: str, props: dict[str, Any]) -> Callable[[Stack], Stack]:
    return lambda stack: [*stack, resource(type_, name, props)]


def both(*mutations: Callable[[Stack], Stack]) -> Callable[[Stack], Stack]:
    def mutate(stack: Stack) -> Stack:
        for m in mutations:
            stack = m(stack)
        return stack

    return mutate


def document(statement: dict[str, Any], index: int = 1) -> Callable[[Stack], Stack]:
    """The controller policy with statement ``index`` replaced."""
    doc = iam_document()
    doc["Statement"][index] = statement
    return at("platform-karpenter-controller", "policy", value=json.dumps(doc))


def queue_deny(**changes: Any) -> Callable[[Stack], Stack]:
    """The queue policy with its TLS deny statement changed (``None`` removes a key)."""
    doc = queue_policy_document()
    deny = doc["Statement"][1]
    for key, value in changes.items():
        if value is None:
            deny.pop(key, None)
        else:
            deny[key] = value
    name = "platform-karpenter-interruption-queue-policy"
    return at(name, "policy", value=json.dumps(doc))


def gpu_pool_by(requirement: dict[str, Any], **extra: Any) -> Callable[[Stack], Stack]:
    """A new NodePool ``x`` that selects GPUs only through ``requirement`` (no GPU label, no
    manufacturer, no limit, no taint)."""
    props = gpu_nodepool("x", **extra)
    spec = props["spec"]
    spec.pop("limits")
    spec["template"]["spec"]["requirements"] = [
        requirement,
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ]
    spec["template"]["spec"].pop("taints")
    spec["template"]["spec"]["nodeClassRef"]["name"] = "train-spot"
    return add(NODEPOOL, "platform-pool-x", props)


def req(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


NP = "platform-pool-train-spot"
EFA_NP = "platform-pool-train-efa-p5-48xlarge"
EFA_NC = "platform-pool-train-efa-p5-48xlarge-class"
SPOT_NC = "platform-pool-train-spot-class"
TEMPLATE = ("spec", "template", "spec")
LABELS = ("spec", "template", "metadata", "labels")
TYPE = "node.kubernetes.io/instance-type"


V = ...  # a violating case: its exact messages are in the test module's EXPECTED


def found_messages(policy: str, mutate: Callable[[Stack], Stack]) -> list[str]:
    """The messages of ``policy`` over the full stack changed by ``mutate``."""
    stack = mutate(full_stack())
    return [v.message for v in evaluate(entries(stack)) if v.policy == policy]


def params(cases: list[Any], expected: dict[str, list[str]]) -> list[Any]:
    import pytest

    out = []
    for policy, case_id, mutate, messages in cases:
        if messages is V:
            messages = expected[f"{policy}/{case_id}"]
        out.append(pytest.param(policy, mutate, messages, id=f"{policy}/{case_id}"))
    return out
