"""The order ``pulumi destroy`` deletes a stack in, computed from a render's recorded
dependency graph (``resources.json``: parent, dependencies, provider of every resource). Pure.

The model follows the engine (pulumi/pulumi at v3.259.0):
- a resource's dependencies are its provider, its parent, its ``dependencies`` (the Python SDK
  sends explicit ``depends_on`` and every property dependency there: pulumi/runtime/resource.py
  L276-281 of the 3.272.0 SDK) and, for a dependency on a component, the component's transitive
  children that come earlier in the snapshot (pkg/resource/graph/dependency_graph.go L202-255,
  ``DependenciesOf``; a topological order of the recorded graph stands in for the snapshot's);
- deletes are scheduled in antichains: repeatedly, every condemned resource none of whose
  dependencies is still condemned forms the next antichain; the list is then reversed
  (pkg/resource/deploy/step_generator.go L2745-2793, ``ScheduleDeletes``). Each antichain runs
  in parallel and completes before the next starts (deployment_executor.go L501-553).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _direct(resource: Mapping[str, Any], known: set[str]) -> set[str]:
    deps = set(resource.get("dependencies") or ())
    for values in (resource.get("propertyDependencies") or {}).values():
        deps |= set(values)
    if resource.get("parent"):
        deps.add(resource["parent"])
    provider = resource.get("provider") or ""
    if provider:
        deps.add(provider.rsplit("::", 1)[0])
    return {d for d in deps if d in known and d != resource["urn"]}


def topological_order(resources: Sequence[Mapping[str, Any]]) -> list[str]:
    """URNs with every resource after its direct dependencies, otherwise in the given order
    (a recording's registration order is the snapshot's order; a URN-sorted resources.json
    gives an approximation)."""
    by_urn = {r["urn"]: r for r in resources}
    known = set(by_urn)
    deps = {u: _direct(r, known) for u, r in by_urn.items()}
    order: list[str] = []
    done: set[str] = set()
    pending = list(by_urn)
    while pending:
        left = []
        for urn in pending:
            if deps[urn] <= done:
                order.append(urn)
                done.add(urn)
            else:
                left.append(urn)
        if len(left) == len(pending):
            raise ValueError(f"dependency cycle among {sorted(left)[:5]}")
        pending = left
    return order


def dependencies(resources: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    """Each URN's dependencies as the engine's ``DependenciesOf`` counts them."""
    by_urn = {r["urn"]: r for r in resources}
    known = set(by_urn)
    order = topological_order(resources)
    index = {u: i for i, u in enumerate(order)}
    children: dict[str, list[str]] = {}
    for r in resources:
        if r.get("parent") in known:
            children.setdefault(r["parent"], []).append(r["urn"])

    def descendants(urn: str) -> Iterable[str]:
        for child in children.get(urn, ()):
            yield child
            yield from descendants(child)

    out: dict[str, set[str]] = {}
    for urn, r in by_urn.items():
        deps = _direct(r, known)
        for dep in list(deps):
            if not by_urn[dep].get("custom", True) and dep != r.get("parent"):
                deps |= {c for c in descendants(dep) if index[c] < index[urn]}
        out[urn] = deps
    return out


def delete_order(resources: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """The antichains ``pulumi destroy`` runs, first to last; each sorted by URN."""
    deps = dependencies(resources)
    condemned = set(deps)
    antichains: list[list[str]] = []
    while condemned:
        step = sorted(u for u in condemned if not (deps[u] & condemned))
        if not step:
            raise ValueError(f"dependency cycle among {sorted(condemned)[:5]}")
        antichains.append(step)
        condemned -= set(step)
    antichains.reverse()
    return antichains


def delete_step(resources: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each URN's antichain number in ``delete_order`` (0 is deleted first)."""
    return {u: i for i, step in enumerate(delete_order(resources)) for u in step}


def kept_if_delete_fails(resources: Sequence[Mapping[str, Any]], urn: str) -> set[str]:
    """What the engine no longer deletes once ``urn``'s delete fails (a NodePool whose
    finalizer outlasts its delete timeout): its transitive dependencies
    (deployment_executor.go L515-547, ``dg.TransitiveDependenciesOf``). Everything else in
    later antichains is still deleted."""
    deps = dependencies(resources)
    seen: set[str] = set()
    stack = [urn]
    while stack:
        for dep in deps[stack.pop()]:
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen
