"""Names a package exports from its modules that load the Pulumi SDKs, imported on first use.

A capability package (``cluster``, ``nodepool`` ...) exports its component next to its specs and
pure builders. Importing ``eks_gpu_platform.<package>.spec`` runs the package's ``__init__``
first, so an ``__init__`` that imported its component would load ``pulumi``, ``pulumi_aws`` and
``pulumi_kubernetes`` (a second of a process's time) for every reader of a spec: the stack
configuration's validation among them, which the command lines run before anything else (a bad
configuration exits 2 without loading an SDK). Such an ``__init__`` names those exports in
``lazy_exports`` instead: a PEP 562 module ``__getattr__`` (https://peps.python.org/pep-0562/)
imports the module on first use of the name (``from eks_gpu_platform.cluster import
EksCluster`` as before) and binds it in the package, as the import at the top did.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` (a package's ``__init__``, or a module):
    ``exports`` maps each lazy name to the module that defines it, relative to ``package``'s
    own package (its ``__package__``, as its relative imports are)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        home = sys.modules[package]
        value = getattr(importlib.import_module(module, home.__package__), name)
        setattr(home, name, value)
        return value

    return __getattr__
