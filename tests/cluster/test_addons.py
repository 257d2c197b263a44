"""Tests for ``eks_gpu_platform.cluster.addons``: the add-ons' configuration values."""

import json

import pytest

from eks_gpu_platform.cluster.addons import addon_configuration_values


def test_vpc_cni_enables_the_network_policy_agent():
    # The EKS user guide's exact value: a JSON object, the string "true" (not a boolean).
    assert addon_configuration_values("vpc-cni") == '{"enableNetworkPolicy": "true"}'
    assert json.loads(addon_configuration_values("vpc-cni")) == {"enableNetworkPolicy": "true"}


@pytest.mark.parametrize("addon", ["kube-proxy", "eks-pod-identity-agent", "coredns"])
def test_other_addons_keep_eks_defaults(addon):
    assert addon_configuration_values(addon) is None
