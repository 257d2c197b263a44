"""Karpenter's spec module (``eks_gpu_platform.karpenter.spec``): version comparison."""

import pytest

from eks_gpu_platform.karpenter.spec import version_tuple


@pytest.mark.parametrize(
    ("version", "expected"),
    [("1.14.1", (1, 14, 1)), ("v0.37.0", (0, 37, 0)), ("1.36", (1, 36))],
    ids=["plain", "v-prefix", "minor"],
)
def test_version_tuple(version, expected):
    assert version_tuple(version) == expected
