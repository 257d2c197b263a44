"""An in-memory stand-in for ``eks_gpu_platform.validate.core.Kube`` for the phases' unit tests.

It stores objects by (apiVersion, kind, namespace, name), returns deep copies, records every call
in ``calls`` and lets a test make any create fail (``deny``: an admission denial's message) or
mutate the object as an admission plugin would (``on_create``). It is not a model of the API
server: behaviour of the API server is judged by the conformance suite's real one.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable

from eks_gpu_platform.validate.core import KubeError

# Every call the validation's own code made to any FakeKube of this test process, with the
# function of the validation that made it: (call..., (module, function)). test_rbac.py checks
# each against the validation's ClusterRole (issue 29, point 8).
JOURNAL: list[tuple[tuple, tuple[str, str]]] = []

_VALIDATION = "eks_gpu_platform.validate."
_FAKES = ("fake_kube", "gpu_cluster")


def _caller() -> tuple[str, str] | None:
    """The validation code that called the fake: the first frame outside the fakes, when it is
    in ``eks_gpu_platform.validate``; for ``core`` (Context.create, cleanup, queue_namespace),
    only when the code that called *it* is the validation's too (not a test's stand-in phase)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").endswith(_FAKES):
        frame = frame.f_back
    if frame is None:
        return None
    module, function = frame.f_globals.get("__name__", ""), frame.f_code.co_name
    if not module.startswith(_VALIDATION):
        return None
    if module == f"{_VALIDATION}core":
        outer = frame.f_back
        while outer is not None and outer.f_globals.get("__name__") == module:
            outer = outer.f_back
        if outer is None or not outer.f_globals.get("__name__", "").startswith(_VALIDATION):
            return None
    return module, function


class FakeKube:
    def __init__(self, objects: list[dict] = (), served: set[tuple[str, str]] | None = None):
        self.objects: dict[tuple[str, str, str | None, str], dict] = {}
        self.calls: list[tuple] = []
        self.served_kinds = served
        self.deny: Callable[[dict], str | None] = lambda obj: None
        self.on_create: Callable[[dict], dict] = lambda obj: obj
        self.pod_logs: dict[tuple[str, str], str] = {}
        for obj in objects:
            self.put(obj)

    @staticmethod
    def key(obj: dict) -> tuple[str, str, str | None, str]:
        meta = obj["metadata"]
        return (obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])

    def _record(self, call: tuple) -> None:
        self.calls.append(call)
        caller = _caller()
        if caller is not None:
            JOURNAL.append((call, caller))

    def put(self, obj: dict) -> None:
        self.objects[self.key(obj)] = copy.deepcopy(obj)

    def served(self, api_version: str, kind: str) -> bool:
        self._record(("served", api_version, kind))
        return self.served_kinds is None or (api_version, kind) in self.served_kinds

    def get(self, api_version, kind, name, namespace=None):
        self._record(("get", api_version, kind, name, namespace))
        obj = self.objects.get((api_version, kind, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, api_version, kind, namespace=None, label_selector=None):
        self._record(("list", api_version, kind, namespace, label_selector))
        wanted = {}
        for term in (label_selector or "").split(","):
            if term:
                k, _, v = term.partition("=")
                wanted[k] = v
        out = []
        for (av, k, ns, _), obj in sorted(self.objects.items(), key=lambda kv: str(kv[0])):
            if av != api_version or k != kind or (namespace is not None and ns != namespace):
                continue
            labels = obj["metadata"].get("labels", {})
            if all(labels.get(lk) == lv for lk, lv in wanted.items()):
                out.append(copy.deepcopy(obj))
        return out

    def create(self, obj, *, dry_run=False):
        self._record(("create", self.key(obj), dry_run))
        denial = self.deny(obj)
        if denial is not None:
            raise KubeError(403 if "denied" in denial else 422, "Forbidden", denial)
        if self.key(obj) in self.objects:
            raise KubeError(409, "AlreadyExists", f"{obj['kind']} already exists")
        stored = self.on_create(copy.deepcopy(obj))
        if not dry_run:
            self.put(stored)
        return copy.deepcopy(stored)

    def delete(self, api_version, kind, name, namespace=None):
        self._record(("delete", api_version, kind, name, namespace))
        self.objects.pop((api_version, kind, namespace, name), None)

    def logs(self, name, namespace, container=None):
        self._record(("logs", name, namespace, container))
        return self.pod_logs.get((namespace, name), "")
