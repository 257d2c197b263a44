"""Which objects of older runs the pre-flight may report and ``--delete-leftovers`` may delete.

A run creates exactly one cluster-scoped kind, ``Namespace`` (the run's own ``validate-<run>``,
a queue's ``validate-<run>-<queue>``, the NCCL test's ``validate-<run>-nccl``: every name comes
from ``Context.run_object_name`` or ``runner.run_namespace``); everything else it creates
(ServiceAccounts, Pods, Jobs, PodGroups, MPIJobs) lives in those namespaces and goes with them.
It never creates a Queue, PriorityClass or NodePool, so those are never candidates, whatever
their labels (security review 2026-11-27, M1: a label-only sweep deleted queue namespaces,
Queues, PriorityClasses and NodePools carrying ``app.kubernetes.io/managed-by``).

An object is another run's leftover only when all of these hold:

- its kind is one a run creates at cluster scope (``LEFTOVER_KINDS``);
- it carries ``MANAGED_BY_LABEL=MANAGED_BY_VALUE`` *and* a run id label ``RUN_LABEL`` that is a
  well-formed run id (``RUN_ID_PATTERN``, the ids ``--run-id`` accepts) other than this run's;
- its name is that run's namespace or one of that run's object names (``validate-<run>`` or
  ``validate-<run>-...``), as the run would have named it;
- it is not already being deleted.

A missing or malformed run label is not "another run": such an object was not made by a run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .core import MANAGED_BY_LABEL, MANAGED_BY_VALUE, RUN_LABEL

# The cluster-scoped kinds a run creates (its namespaces hold everything else).
LEFTOVER_KINDS: tuple[tuple[str, str], ...] = (("v1", "Namespace"),)

# A run id as ``--run-id`` accepts it (cli.RUN_ID_RE): 1 to 16 lowercase letters, digits and
# inner hyphens.
RUN_ID_PATTERN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?$")

NAME_PREFIX = "validate-"


def run_of(obj: Mapping[str, Any]) -> str | None:
    """The run id an object carries, when it is a validation run's object: both labels, the run
    id well formed; None otherwise."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    run = labels.get(RUN_LABEL)
    if labels.get(MANAGED_BY_LABEL) != MANAGED_BY_VALUE or not isinstance(run, str):
        return None
    return run if RUN_ID_PATTERN.match(run) else None


def named_by_run(name: str, run: str) -> bool:
    """Whether ``name`` is a name run ``run`` gives its objects."""
    own = f"{NAME_PREFIX}{run}"
    return name == own or name.startswith(f"{own}-")


def is_leftover(obj: Mapping[str, Any], current_run: str) -> bool:
    """Whether ``obj`` is an older run's object that ``--delete-leftovers`` may delete."""
    if (obj.get("apiVersion"), obj.get("kind")) not in LEFTOVER_KINDS:
        return False
    meta = obj.get("metadata") or {}
    run = run_of(obj)
    if run is None or run == current_run or meta.get("deletionTimestamp"):
        return False
    return named_by_run(str(meta.get("name", "")), run)
