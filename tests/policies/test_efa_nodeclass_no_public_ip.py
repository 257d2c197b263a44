from policy_baselines import change, ec2nodeclass, efa_nodeclass

from eks_gpu_platform.policies.rules.efa_nodeclass_no_public_ip import RULE, check

CONFIG = RULE.config()
PUBLIC = ("spec", "associatePublicIPAddress")


def test_baselines_are_compliant():
    assert check(efa_nodeclass(), CONFIG) == []
    assert check(change(ec2nodeclass(), PUBLIC, True), CONFIG) == []


def test_public_ip_with_efa():
    assert check(change(efa_nodeclass(), PUBLIC, True), CONFIG) == [
        'EC2NodeClass "train-efa-p5-48xlarge" has 4 efa-only interfaces and '
        "associatePublicIPAddress: true; EC2 rejects such launches "
        "(InvalidParameterCombination), so set it to false and use private subnets"
    ]
