"""Cluster admin access (``eks_gpu_platform.cluster.access``): principal and policy ARNs."""

import pytest

from eks_gpu_platform.cluster.access import admin_policy_arn, admin_principal_arn

ACCOUNT = "111122223333"


@pytest.mark.parametrize(
    ("principal", "partition", "expected"),
    [
        ("role/PlatformAdmin", "aws", "arn:aws:iam::111122223333:role/PlatformAdmin"),
        ("user/alice", "aws-cn", "arn:aws-cn:iam::111122223333:user/alice"),
        ("role/team/Admin", "aws-us-gov", "arn:aws-us-gov:iam::111122223333:role/team/Admin"),
        (
            "arn:aws:iam::444455556666:role/Other",
            "aws",
            "arn:aws:iam::444455556666:role/Other",
        ),
    ],
    ids=["role", "user-china", "role-with-path", "full-arn-unchanged"],
)
def test_admin_principal_arn(principal, partition, expected):
    assert admin_principal_arn(principal, partition, ACCOUNT) == expected


@pytest.mark.parametrize(
    ("partition", "expected"),
    [
        ("aws", "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"),
        ("aws-cn", "arn:aws-cn:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"),
    ],
    ids=["aws", "aws-cn"],
)
def test_admin_policy_arn(partition, expected):
    assert admin_policy_arn(partition) == expected
