"""Running the library's policy pack (``eks_gpu_platform.policies.offline``) over a recording."""

from __future__ import annotations

from typing import Any

from . import mocks


def load_policy_pack() -> Any:
    """The library's policy pack runner, ``eks_gpu_platform.policies.offline``.

    The pack ships in the package, so every project's render runs it, this repository's or a
    library consumer's; its rules need no pulumi-policy (only ``policies.pack`` imports it).
    """
    from ..policies import offline

    return offline


def check_policies(
    recording: mocks.Recording, pack: Any, config: dict[str, Any] | None
) -> tuple[list[str], bool]:
    """Run the pack's rules over the recorded resources: lines and whether any is mandatory."""
    return pack.report(pack.evaluate(recording.resources, config))
