"""core.py: the render's region, which every phase that prices nodes reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from eks_gpu_platform.validate.core import Render


@pytest.mark.parametrize(
    ("outputs", "region"),
    [
        ({"clusterEndpoint": "https://24AF.gr7.us-east-1.eks.amazonaws.com"}, "us-east-1"),
        (
            {
                "oidcProviderArn": "arn:aws:iam::123456789012:oidc-provider/"
                "oidc.eks.us-west-2.amazonaws.com/id/24AF"
            },
            "us-west-2",
        ),
        ({"clusterEndpoint": "https://24AF.gr7.us-gov-west-1.eks.amazonaws.com"}, "us-gov-west-1"),
        ({}, None),
    ],
)
def test_region_from_the_stack_outputs(outputs, region):
    render = Render(dir=Path("build/dev"), manifests=(), capacity={}, helm={}, outputs=outputs)
    assert render.region == region
