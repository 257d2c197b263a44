"""Running the phases: pre-flight, the phases in order, clean-up always.

1. Pre-flight ``leftovers``: namespaces of older runs (``leftovers.py``: labels
   ``app.kubernetes.io/managed-by=eks-gpu-platform-validate`` and another run's id, named
   ``validate-<that run>[-...]``; the only cluster-scoped kind a run creates, its namespaces
   hold everything else; never a Queue, PriorityClass or NodePool). Reported as a failing
   check (they may hold nodes and bias capacity and scheduling results); with
   ``--delete-leftovers`` deleted, and the check passes unless a delete fails.
2. Pre-flight ``run-namespace``: the run's own namespace ``validate-<run id>``, created through
   ``Context.create`` (labelled, cleaned up). Without it no phase runs.
3. The phases, in ``core.PHASES`` order, each module imported lazily by name
   (``eks_gpu_platform.validate.<phase>``); its results are kept when ``--checks`` selects them
   (by check name or ``<phase>/<name>``). A phase that raises is a failing check ``run`` with
   the exception; SIGINT and SIGTERM raise ``KeyboardInterrupt`` (handlers installed for the
   run), the interrupted phase reports a failing ``run`` check with reason ``interrupted`` and
   no later phase runs.
4. ``finally``: ``Context.cleanup()`` (SIGINT and SIGTERM are ignored meanwhile, so a second
   Ctrl-C cannot leave objects behind; SIGKILL still can, and the next run's pre-flight finds
   them), reported as the ``cleanup`` check, failing with every delete that failed.
"""

from __future__ import annotations

import importlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from fnmatch import fnmatchcase
from types import ModuleType
from typing import Any

from .core import (
    FAIL,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    PASS,
    PHASES,
    RUN_LABEL,
    Context,
    KubeError,
    Result,
)
from .leftovers import LEFTOVER_KINDS, is_leftover

PREFLIGHT = "preflight"
CLEANUP = "cleanup"


Importer = Callable[[str], ModuleType]


def module_name(phase: str) -> str:
    return f"eks_gpu_platform.validate.{phase}"


def load_phases(
    names: Sequence[str], importer: Importer = importlib.import_module
) -> list[ModuleType]:
    """The phase modules for ``names``, in ``PHASES`` order (imported only when asked for)."""
    return [importer(module_name(name)) for name in PHASES if name in names]


def run_namespace(run_id: str) -> str:
    return f"validate-{run_id}"


def selected(checks: Sequence[str], phase: str, name: str) -> bool:
    return not checks or any(
        fnmatchcase(name, glob) or fnmatchcase(f"{phase}/{name}", glob) for glob in checks
    )


def available_checks(ctx: Context, phases: Sequence[ModuleType]) -> list[str]:
    """``<phase>/<check>`` of every check the phases would report on this render: the module's
    ``checks(ctx)`` (the names of what it plans, for a module without one)."""
    out = []
    for module in phases:
        ctx.phase = module.NAME
        names = getattr(module, "checks", None)
        found = names(ctx) if names else [p.check for p in module.planned(ctx)]
        out += [f"{module.NAME}/{name}" for name in found]
    ctx.phase = ""
    return out


def selection_problem(ctx: Context, phases: Sequence[ModuleType]) -> str | None:
    """Why ``--checks`` selects nothing of the chosen phases (a run of nothing would pass),
    naming the checks there are; None when it selects a check or is not given."""
    globs = ctx.options.checks
    if not globs:
        return None
    available = available_checks(ctx, phases)
    if any(selected(globs, *name.split("/", 1)) for name in available):
        return None
    chosen = ", ".join(m.NAME for m in phases)
    return (
        f"--checks {', '.join(globs)} selects no check of the phases {chosen}; the checks of "
        f"this render are: {', '.join(available) or 'none'}"
    )


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def _signals(handler: Any) -> Iterator[None]:
    """Install ``handler`` for SIGINT and SIGTERM (main thread only), restoring the old ones."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def _ref(obj: dict) -> str:
    meta = obj.get("metadata", {})
    where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name")
    return f"{obj.get('kind')} {where}"


def find_leftovers(ctx: Context) -> list[dict]:
    """Objects of older runs (``leftovers.is_leftover``): only the namespaces a run creates,
    carrying both labels and another run's well-formed id, named as that run names them, not
    already being deleted (a namespace stays ``Terminating`` while its content goes)."""
    out = []
    for api_version, kind in LEFTOVER_KINDS:
        if not ctx.kube.served(api_version, kind):
            continue
        for obj in ctx.kube.list(
            api_version, kind, label_selector=f"{MANAGED_BY_LABEL}={MANAGED_BY_VALUE}"
        ):
            obj = {"apiVersion": api_version, "kind": kind, **obj}
            if is_leftover(obj, ctx.run_id):
                out.append(obj)
    return out


def preflight_leftovers(ctx: Context, delete: bool) -> Result:
    try:
        found = find_leftovers(ctx)
    except KubeError as exc:
        return Result(PREFLIGHT, "leftovers", FAIL, f"cannot list older runs' objects: {exc}")
    if not found:
        return Result(PREFLIGHT, "leftovers", PASS, "no objects of older runs")
    refs = [f"{_ref(o)} (run {o['metadata'].get('labels', {}).get(RUN_LABEL, '?')})" for o in found]
    if not delete:
        return Result(
            PREFLIGHT,
            "leftovers",
            FAIL,
            f"{len(found)} objects of older runs: delete them with --delete-leftovers",
            tuple(refs),
        )
    errors = []
    for obj in found:
        meta = obj["metadata"]
        try:
            ctx.kube.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        except Exception as exc:
            errors.append(f"delete {_ref(obj)}: {exc}")
    if errors:
        return Result(
            PREFLIGHT,
            "leftovers",
            FAIL,
            f"{len(errors)} of {len(found)} objects of older runs not deleted",
            tuple(errors),
        )
    return Result(
        PREFLIGHT, "leftovers", PASS, f"deleted {len(found)} objects of older runs", tuple(refs)
    )


def _run_phase(ctx: Context, module: ModuleType) -> list[Result]:
    phase = module.NAME
    ctx.phase = phase
    start = time.monotonic()
    results = [r for r in module.run(ctx) if selected(ctx.options.checks, phase, r.name)]
    elapsed = time.monotonic() - start
    # A phase that does not time its checks: its one check gets the phase's time.
    if len(results) == 1 and results[0].seconds == 0.0:
        results = [replace(results[0], seconds=round(elapsed, 3))]
    return results


def run(
    ctx: Context,
    phases: Sequence[ModuleType],
    *,
    delete_leftovers: bool = False,
    install_signals: bool = True,
) -> list[Result]:
    """Pre-flight, ``phases`` in order, clean-up; every result, the cleanup check last."""
    results: list[Result] = []
    handler = _raise_interrupt if install_signals else None
    current = PREFLIGHT
    try:
        with _signals(handler) if handler else _nothing():
            results.append(preflight_leftovers(ctx, delete_leftovers))
            try:
                ctx.create(
                    {
                        "apiVersion": "v1",
                        "kind": "Namespace",
                        "metadata": {"name": ctx.namespace},
                    }
                )
            except Exception as exc:
                # Without its namespace no phase can run.
                results.append(
                    Result(PREFLIGHT, "run-namespace", FAIL, f"create {ctx.namespace}: {exc}")
                )
                phases = ()
            else:
                results.append(Result(PREFLIGHT, "run-namespace", PASS, f"created {ctx.namespace}"))
            for module in phases:
                current = module.NAME
                try:
                    results.extend(_run_phase(ctx, module))
                except KeyboardInterrupt:
                    raise
                except Exception as exc:
                    results.append(
                        Result(current, "run", FAIL, f"raised {type(exc).__name__}: {exc}")
                    )
    except KeyboardInterrupt:
        results.append(Result(current, "run", FAIL, "interrupted"))
    finally:
        results.append(_cleanup(ctx, install_signals))
    return results


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _cleanup(ctx: Context, install_signals: bool) -> Result:
    count = len(ctx.created)
    with _signals(signal.SIG_IGN) if install_signals else _nothing():
        errors = ctx.cleanup()
    if errors:
        return Result(
            CLEANUP,
            CLEANUP,
            FAIL,
            f"{len(errors)} of {count} objects not deleted: find them by the label "
            f"{RUN_LABEL}={ctx.run_id}",
            tuple(errors),
        )
    return Result(CLEANUP, CLEANUP, PASS, f"deleted {count} objects")


def exit_code(results: Sequence[Result]) -> int:
    return 1 if any(r.status == FAIL for r in results) else 0
