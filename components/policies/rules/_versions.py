"""Version strings as the charts and EKS write them."""

from __future__ import annotations

import re
from typing import Any

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")


def version_tuple(value: Any) -> tuple[int, int, int] | None:
    """``"v1.14.1"``, ``"1.14.1-rc.1"`` -> ``(1, 14, 1)``; ``"1.36"`` -> ``(1, 36, 0)``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    match = _VERSION.match(value.strip())
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def minor_version(value: Any) -> str | None:
    """A Kubernetes version as ``"<major>.<minor>"`` (``"1.36.2"`` -> ``"1.36"``)."""
    parsed = version_tuple(value)
    return None if parsed is None else f"{parsed[0]}.{parsed[1]}"
