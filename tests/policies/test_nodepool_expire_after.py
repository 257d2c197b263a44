from policy_baselines import DELETE, change, gpu_nodepool

from eks_gpu_platform.policies.rules.nodepool_expire_after import RULE, check

CONFIG = RULE.config()
EXPIRE = ("spec", "template", "spec", "expireAfter")


def test_baseline_is_compliant():
    assert check(gpu_nodepool(), CONFIG) == []
    assert check(change(gpu_nodepool(), EXPIRE, "Never"), CONFIG) == []


def test_advisory():
    assert RULE.enforcement_level == "advisory"


def test_unset():
    assert check(change(gpu_nodepool(), EXPIRE, DELETE), CONFIG) == [
        'NodePool "inference" does not set spec.template.spec.expireAfter, so Karpenter replaces '
        'its nodes every 720h (the default); set a duration, or "Never" for pools whose work must '
        "not be interrupted"
    ]
