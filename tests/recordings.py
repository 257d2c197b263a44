"""Helpers over a render's recorded registrations (``offline.mocks.Recording``), imported by name.

Not in ``conftest.py``: ``from conftest import ...`` resolves to whichever ``conftest`` module
pytest imported first (``tests/policies/conftest.py`` too: neither folder is a package), so a
helper there is found or not depending on the command line.
"""

from __future__ import annotations

from eks_gpu_platform.offline import mocks


def one(recording: mocks.Recording, typ: str, name: str) -> mocks.Registration:
    """The single resource of type ``typ`` named ``name`` (names repeat across types)."""
    matches = [r for r in recording.resources if r.type == typ and r.name == name]
    assert len(matches) == 1, f"{len(matches)} resources of type {typ} named {name!r}"
    return matches[0]
