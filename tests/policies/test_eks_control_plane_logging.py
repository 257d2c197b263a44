"""``eks-control-plane-logging`` (issue 22, Low list): audit and authenticator required."""

import pytest
from policy_baselines import DELETE, aws_eks_cluster, change, eks_cluster

from eks_gpu_platform.policies.rules.eks_control_plane_logging import RULE, check

CONFIG = RULE.config()


def test_baselines_are_compliant():
    assert check(eks_cluster(), CONFIG) == []
    assert check(aws_eks_cluster(), CONFIG) == []


@pytest.mark.parametrize(
    ("value", "shown", "missing"),
    [
        (DELETE, "[]", "audit, authenticator"),
        ([], "[]", "audit, authenticator"),
        (["api", "audit"], "['api', 'audit']", "authenticator"),
    ],
    ids=["unset", "empty", "no-authenticator"],
)
def test_missing_logs(value, shown, missing):
    props = change(eks_cluster(), ("enabledClusterLogTypes",), value)
    assert check(props, CONFIG) == [
        f"enabledClusterLogTypes {shown} leaves out {missing}: without the audit and "
        "authenticator logs nobody can tell who did what on the cluster"
    ]
