"""Post-deploy validation (``python -m eks_gpu_platform.validate``): results, the run context and
the Kubernetes client seam every phase uses.

A *phase* is a module of this package exposing::

    NAME: str                                   # one of PHASES
    def run(ctx: Context) -> list[Result]       # the phase's checks, in order, never raising
    def planned(ctx: Context) -> list[Planned]  # what run() would create, for --dry-run

A check never raises to the runner: a failure of the cluster is a ``fail`` with its reason, a
check that does not apply (no EFA pool, pool not opted in, API not served) is a ``skip`` with its
reason. Every object a phase creates goes through ``Context.create``, which puts the run's labels
on it and records it for ``Context.cleanup`` (run at the end, on failure and on interrupt).
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

PASS = "pass"
FAIL = "fail"
SKIP = "skip"
STATUSES = (PASS, FAIL, SKIP)

# The phases, in the order they run.
PHASES = ("deployment", "capacity", "scheduling", "performance", "security")

# Every object the validation creates carries these labels (the run id as the value of RUN_LABEL),
# so a run's leftovers can be found and deleted by label even after the process died.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "eks-gpu-platform-validate"
RUN_LABEL = "eks-gpu-platform.validate/run"


@dataclass(frozen=True)
class Result:
    """One named check's outcome. ``details`` are report lines (drift field by field, recorded
    command output), shown under the check in the markdown report and in JUnit's system-out."""

    phase: str
    name: str
    status: str
    reason: str
    details: tuple[str, ...] = ()
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"Result.status {self.status!r}: allowed {', '.join(STATUSES)}")


@dataclass(frozen=True)
class Planned:
    """What a check would create (``--dry-run``) and the nodes it may make Karpenter launch."""

    phase: str
    check: str
    objects: tuple[str, ...]  # "Kind namespace/name", in creation order
    pool: str | None = None
    instance_types: tuple[str, ...] = ()  # the types Karpenter may launch for it
    nodes: int = 0  # at most this many nodes at once
    max_minutes: float = 0.0  # bounded by the time cap


class KubeError(Exception):
    """An API error: HTTP status, the Status reason (``NotFound``, ``Invalid``, ``Forbidden``...)
    and the server's message (an admission denial's text is in ``message``)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class Kube(Protocol):
    """The API calls the phases make. ``kube.py`` implements it on the Kubernetes client; the
    tests use a fake (tests/validate/fake_kube.py) and the conformance suite a real API server."""

    def served(self, api_version: str, kind: str) -> bool: ...

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict | None: ...  # None when not found

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> list[dict]: ...

    def create(self, obj: dict, *, dry_run: bool = False) -> dict: ...  # raises KubeError

    def delete(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> None: ...  # a missing object is not an error

    def logs(self, name: str, namespace: str, container: str | None = None) -> str: ...


@dataclass(frozen=True)
class Options:
    stack: str
    phases: tuple[str, ...] = ("deployment", "scheduling", "security")
    pools: tuple[str, ...] = ()  # GPU pools opted in to the capacity and performance phases
    cost_cap_usd: float = 20.0  # the most the run may spend on nodes, estimated before it starts
    time_cap_s: float = 1800.0  # the longest any one check may wait
    dry_run: bool = False
    checks: tuple[str, ...] = ()  # --checks: fnmatch globs over check names; empty = every check
    # --price: user-supplied hourly USD by instance type, used only where the price table has no
    # price for the type in the stack's region (prices.hourly_usd)
    prices: Mapping[str, float] = field(default_factory=dict)
    # --nccl-floor: a stricter all-reduce floor (GB/s) by instance type than AICR's
    # (nccl_floor.FLOORS); only raises a published floor
    nccl_floors: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Render:
    """The stack's own render (``make render STACK=...``, build/<stack>/): what should be there."""

    dir: Path
    manifests: tuple[dict, ...]  # manifests/*.yaml, every document
    capacity: dict  # capacity.json
    helm: dict[str, dict]  # helm/<release>.yaml: release name -> its values and chart pin
    outputs: dict  # outputs.json

    @property
    def cluster_name(self) -> str | None:
        """The EKS cluster's name (the stack output ``clusterName``)."""
        return self.outputs.get("clusterName")

    @property
    def region(self) -> str | None:
        """The stack's AWS region, read from the cluster's OIDC issuer
        (``oidc.eks.<region>.amazonaws.com``) or API endpoint (``<id>.<zone>.<region>.eks.
        amazonaws.com``) in the stack outputs; None when neither is there."""
        for key, pattern in (
            ("oidcProviderArn", r"oidc\.eks\.([a-z0-9-]+)\.amazonaws\.com"),
            ("clusterEndpoint", r"\.([a-z]{2}(?:-[a-z]+)+-\d+)\.eks\.amazonaws\.com"),
        ):
            found = re.search(pattern, str(self.outputs.get(key, "")))
            if found:
                return found.group(1)
        return None


@dataclass
class Context:
    kube: Kube
    render: Render
    options: Options
    run_id: str
    namespace: str  # the run's own namespace, created by the runner before any phase
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    created: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    # The estimates of the checks that created something so far, summed over the run's phases:
    # --cost-cap-usd bounds this total plus the next check's estimate, not each check alone.
    committed_usd: float = 0.0
    # The phase running (set by the runner), for ``wants``'s ``<phase>/<name>`` globs.
    phase: str = ""

    def wants(self, check: str) -> bool:
        """Whether ``--checks`` selects ``check`` (the check's name within its phase, e.g.
        ``objects-match-render/NodePool``), by its name or by ``<phase>/<name>`` (the phase
        running, ``self.phase``), as the runner filters the results. A phase asks before
        running a check that creates objects or launches nodes."""
        names = (check, f"{self.phase}/{check}") if self.phase else (check,)
        return not self.options.checks or any(
            fnmatch.fnmatchcase(name, glob) for glob in self.options.checks for name in names
        )

    @property
    def labels(self) -> dict[str, str]:
        return {MANAGED_BY_LABEL: MANAGED_BY_VALUE, RUN_LABEL: self.run_id}

    def create(self, obj: dict, *, dry_run: bool = False) -> dict:
        """Create ``obj`` with the run's labels; a real create is recorded for cleanup."""
        meta = obj.setdefault("metadata", {})
        meta["labels"] = {**meta.get("labels", {}), **self.labels}
        out = self.kube.create(obj, dry_run=dry_run)
        if not dry_run:
            self.created.append(
                (obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
            )
        return out

    def run_object_name(self, what: str) -> str:
        """The name of this run's object ``what`` (a namespace, a pod, a PodGroup):
        ``validate-<run id>-<what>``, cut to the 63 characters a DNS label allows."""
        return f"validate-{self.run_id}-{what}"[:63].rstrip("-")

    def queue_namespace_name(self, queue: str) -> str:
        """The name ``queue_namespace`` gives (and ``planned`` lists) without creating it."""
        return self.run_object_name(queue)

    def queue_namespace(self, queue: str) -> str:
        """A namespace of this run for ``queue``'s workloads, created once: the labels of the
        queue's rendered namespace (Pod Security level, ``<labelDomain>/queue: <queue>``, which
        the platform's admission bindings select) plus the run's labels. Raises ``KeyError``
        naming the queue when the render has no namespace for it (not a leaf queue)."""
        name = self.queue_namespace_name(queue)
        if any(kind == "Namespace" and n == name for _, kind, n, _ in self.created):
            return name
        for manifest in self.render.manifests:
            labels = manifest.get("metadata", {}).get("labels", {})
            if manifest.get("kind") == "Namespace" and any(
                key.endswith("/queue") and value == queue for key, value in labels.items()
            ):
                break
        else:
            raise KeyError(f"the render has no namespace for queue {queue!r} (not a leaf queue?)")
        self.create(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": dict(labels)},
            }
        )
        return name

    def cleanup(self) -> list[str]:
        """Delete what this run created, newest first; returns the errors (never raises)."""
        errors: list[str] = []
        while self.created:
            api_version, kind, name, namespace = self.created.pop()
            try:
                self.kube.delete(api_version, kind, name, namespace)
            except Exception as exc:  # cleanup goes on; the runner reports what is left
                where = f"{namespace}/{name}" if namespace else name
                errors.append(f"delete {kind} {where}: {exc}")
        return errors

    def wait(
        self, what: Callable[[], Any], timeout_s: float, interval_s: float = 5.0
    ) -> tuple[Any, float]:
        """Poll ``what`` until it returns a truthy value or ``timeout_s`` passes; returns the last
        value and the seconds waited (the caller turns a falsy value into a ``fail``)."""
        start = self.clock()
        while True:
            value = what()
            waited = self.clock() - start
            if value or waited >= timeout_s:
                return value, waited
            self.sleep(min(interval_s, max(timeout_s - waited, 0.0)))


def result(phase: str, name: str, ok: bool, reason: str, details: Iterable[str] = ()) -> Result:
    return Result(phase, name, PASS if ok else FAIL, reason, tuple(details))


def skip(phase: str, name: str, reason: str) -> Result:
    return Result(phase, name, SKIP, reason)
