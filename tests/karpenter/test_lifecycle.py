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


SPOT_WARNING = (
    "node pools train-spot, general may launch spot instances: unless this account already has "
    "the EC2 Spot service-linked role (AWSServiceRoleForEC2Spot), Karpenter's launches fail with "
    "ServiceLinkedRoleCreationNotPermitted; create it once with `aws iam "
    "create-service-linked-role --aws-service-name spot.amazonaws.com`, or set "
    "karpenter.spotServiceLinkedRole: true (fails if the role already exists)"
)


def test_spot_role_warning():
    from eks_gpu_platform.karpenter.lifecycle import spot_role_warning

    assert spot_role_warning(["train-spot", "general"], False) == SPOT_WARNING
    assert spot_role_warning(["train-spot"], True) is None
    assert spot_role_warning([], False) is None


def test_prod_render_warns_about_the_spot_role(repo, caplog):
    """Issue 11, item 9 (fails on the old code: no warning; the first spot launch failed)."""
    import logging

    from stack_files import fixture_stack

    from eks_gpu_platform.offline.render import render

    caplog.set_level(logging.WARNING)
    render(repo, fixture_stack("prod"))
    assert SPOT_WARNING in caplog.text
