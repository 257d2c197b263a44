"""The run namespace of a queue with the run's ServiceAccount in it (``probes.SERVICE_ACCOUNT``):
what every probe pod of the scheduling and security phases needs before its first create."""

from __future__ import annotations

from collections.abc import Callable

from .core import FAIL, Context, Planned, Result
from .probes import SERVICE_ACCOUNT, service_account


def queue_workspace(ctx: Context, queue: str) -> str:
    """``ctx.queue_namespace(queue)``, plus the run's ServiceAccount there, each created once per
    run (both recorded for cleanup). Raises what ``queue_namespace`` and ``create`` raise."""
    namespace = ctx.queue_namespace(queue)
    if not any(
        kind == "ServiceAccount" and name == SERVICE_ACCOUNT and ns == namespace
        for _, kind, name, ns in ctx.created
    ):
        ctx.create(service_account(namespace))
    return namespace


def workspace_objects(ctx: Context, queue: str) -> tuple[str, ...]:
    """What ``queue_workspace`` creates, as ``Planned.objects`` lists it."""
    namespace = ctx.queue_namespace_name(queue)
    return (f"Namespace {namespace}", f"ServiceAccount {namespace}/{SERVICE_ACCOUNT}")


def timed(ctx: Context, phase: str, name: str, check: Callable[[], Result]) -> Result:
    """Run one check, never raising (an exception is a ``fail`` naming it), timed on ctx.clock."""
    start = ctx.clock()
    try:
        out = check()
    except Exception as exc:  # a check never raises to the runner
        return Result(phase, name, FAIL, f"{type(exc).__name__}: {exc}", (), ctx.clock() - start)
    return Result(out.phase, out.name, out.status, out.reason, out.details, ctx.clock() - start)


def first_listed(planned: list[Planned]) -> list[Planned]:
    """``planned`` with each object listed only under the first check that creates it (the run
    namespace and ServiceAccount of a queue are created once per run)."""
    seen: set[str] = set()
    out = []
    for p in planned:
        objects = tuple(o for o in p.objects if o not in seen)
        seen.update(objects)
        out.append(
            Planned(p.phase, p.check, objects, p.pool, p.instance_types, p.nodes, p.max_minutes)
        )
    return out
