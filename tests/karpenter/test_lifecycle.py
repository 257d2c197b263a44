"""Delete timeouts of Karpenter objects (issue 11, item 3): the pool's terminationGracePeriod
plus 20 minutes (instance termination and the EC2NodeClass finalizer's 10-minute recheck)."""

import pytest

from eks_gpu_platform.karpenter.lifecycle import (
    duration_seconds,
    finalizer_delete_timeout,
    go_duration,
)


@pytest.mark.parametrize(
    ("duration", "seconds"), [("48h", 172800), ("1h30m", 5400), ("90s", 90), ("4h", 14400)]
)
def test_duration_seconds(duration, seconds):
    assert duration_seconds(duration) == seconds


@pytest.mark.parametrize("bad", ["", "4d", "h", "4h x"])
def test_duration_seconds_refuses(bad):
    with pytest.raises(ValueError, match="is not a duration like '4h' or '1h30m'"):
        duration_seconds(bad)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (59, "59s"), (3600, "1h"), (174000, "48h20m"), (3661, "1h1m1s")],
)
def test_go_duration(seconds, text):
    assert go_duration(seconds) == text


@pytest.mark.parametrize(("grace", "timeout"), [("48h", "48h20m"), ("4h", "4h20m"), ("30m", "50m")])
def test_finalizer_delete_timeout(grace, timeout):
    assert finalizer_delete_timeout(grace) == timeout


def test_prod_render_creates_the_spot_role(render_stack):
    """Issue 28, point 7 (fails on the old code: a warning only, and the first spot launch of a
    fresh account failed): the mocks model a fresh account, without the role, so the render
    declares it, kept by destroy, and Karpenter's release waits for it."""
    rec = render_stack("prod")
    (slr,) = rec.of_type("aws:iam/serviceLinkedRole:ServiceLinkedRole")
    assert (slr.name, slr.inputs["awsServiceName"], slr.retain_on_delete) == (
        "platform-karpenter-spot",
        "spot.amazonaws.com",
        True,
    )
    (chart,) = [
        r
        for r in rec.of_type("kubernetes:helm.sh/v3:Release")
        if r.name.endswith("-chart") and "karpenter" in r.name
    ]
    assert slr.urn in chart.dependencies
