"""Phase ``deployment``: the controllers the render deploys are ready, every kind it uses is
served, every object it wrote exists with the rendered spec (drift field by field), and
Karpenter has resolved every EC2NodeClass and NodePool.

Checks, in order:

- ``controllers-ready``: each workload of ``expected_controllers(render)`` (``controllers.py``)
  has rolled out (the test ``kubectl rollout status`` applies: k8s.io/kubectl v0.36.3
  pkg/polymorphichelpers/rollout_status.go L75-91 for a Deployment, L107-116 for a DaemonSet).
- ``crds-served``: every (apiVersion, kind) of ``manifests/`` is served by the API server.
- ``objects-match-render/<Kind>``: one check per kind; only the fields the render sets are
  compared (``drift.py``), so defaults and status the server adds are not drift.
- ``ec2nodeclasses-ready``: condition ``Ready=True`` and a non-empty ``status.amis``
  (aws/karpenter-provider-aws v1.15.0 pkg/apis/v1/ec2nodeclass_status.go L160 ``amis``,
  L168-181 the conditions ``Ready`` is made of; ``Ready`` is awslabs/operatorpkg
  status/condition.go L23).
- ``nodepools-ready``: condition ``Ready=True`` (kubernetes-sigs/karpenter v1.15.0
  pkg/apis/v1/nodepool_status.go L58-63: ValidationSucceeded and NodeClassReady).

The phase creates nothing: ``planned`` is empty, and it runs unchanged on the conformance
suite's API server (where ``vconf`` seeds the controllers' workloads from
``expected_controllers``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from . import daemonsets
from .controllers import expected_controllers
from .core import SKIP, Context, KubeError, Planned, Render, Result, result, skip
from .drift import object_drift, object_ref

NAME = "deployment"

# How long controllers-ready, ec2nodeclasses-ready and nodepools-ready wait for a rollout or a
# Ready condition right after `pulumi up` (never longer than --time-cap-minutes).
READY_WAIT_S = 300.0
READY_POLL_S = 10.0


# --- readiness ---------------------------------------------------------------------------------


def rollout_problem(obj: Mapping[str, Any]) -> str | None:
    """Why a Deployment or DaemonSet has not rolled out, None when it has: the conditions of
    ``kubectl rollout status`` (k8s.io/kubectl v0.36.3 pkg/polymorphichelpers/rollout_status.go
    L75-91, L107-116)."""
    meta, spec, status = obj.get("metadata", {}), obj.get("spec", {}), obj.get("status", {})
    if meta.get("generation", 0) > status.get("observedGeneration", 0):
        return "the spec update is not observed yet"
    if obj.get("kind") == "Deployment":
        for cond in status.get("conditions", []):
            if (
                cond.get("type") == "Progressing"
                and cond.get("reason") == "ProgressDeadlineExceeded"
            ):
                return "exceeded its progress deadline"
        want = spec.get("replicas", 1)
        updated = status.get("updatedReplicas", 0)
        if updated < want:
            return f"{updated} of {want} new replicas updated"
        if status.get("replicas", 0) > updated:
            return f"{status.get('replicas', 0) - updated} old replicas pending termination"
        if status.get("availableReplicas", 0) < updated:
            return f"{status.get('availableReplicas', 0)} of {updated} updated replicas available"
        return None
    desired = status.get("desiredNumberScheduled", 0)
    if status.get("updatedNumberScheduled", 0) < desired:
        return f"{status.get('updatedNumberScheduled', 0)} of {desired} pods updated"
    if status.get("numberAvailable", 0) < desired:
        return f"{status.get('numberAvailable', 0)} of {desired} updated pods available"
    return None


def condition(obj: Mapping[str, Any] | None, type_: str) -> Mapping[str, Any] | None:
    for cond in (obj or {}).get("status", {}).get("conditions", []) or []:
        if cond.get("type") == type_:
            return cond
    return None


def _wait_s(ctx: Context) -> float:
    return min(READY_WAIT_S, ctx.options.time_cap_s)


def _poll(ctx: Context, problems: Callable[[], list[str]]) -> list[str]:
    """Poll ``problems`` until it is empty or the wait is over; the last problems."""
    last: list[str] = []

    def ok() -> bool:
        last[:] = problems()
        return not last

    ctx.wait(ok, _wait_s(ctx), READY_POLL_S)
    return last


def check_controllers(ctx: Context) -> Result:
    expected = expected_controllers(ctx.render)
    if not expected:
        # Nothing to inspect proves nothing: the render always deploys controllers.
        return result(NAME, "controllers-ready", False, "the render names no controller workload")
    idle: list[str] = []  # DaemonSets at 0 pods with no node to run on (kept from the last poll)

    def problems() -> list[str]:
        out: list[str] = []
        idle.clear()
        nodes: list[dict] | None = None
        for c in expected:
            live = ctx.kube.get("apps/v1", c.kind, c.name, c.namespace)
            if live is None:
                out.append(f"{c.ref} ({c.release}): missing from the cluster")
                continue
            why = rollout_problem(live)
            if why:
                out.append(f"{c.ref} ({c.release}): {why}")
                continue
            if c.kind != "DaemonSet" or live.get("status", {}).get("desiredNumberScheduled", 0):
                continue
            # kubectl calls a DaemonSet of 0 pods rolled out; it is not, where nodes it should
            # run on exist (daemonsets.py: the DaemonSet controller's own test).
            if nodes is None:
                nodes = ctx.kube.list("v1", "Node")
            should = daemonsets.nodes_to_run_on(live, nodes)
            if should:
                shown = ", ".join(should[:3]) + (
                    f" and {len(should) - 3} more" if len(should) > 3 else ""
                )
                out.append(
                    f"{c.ref} ({c.release}): 0 pods scheduled, but {len(should)} nodes match its "
                    f"node selector, affinity and tolerations ({shown})"
                )
            else:
                idle.append(c.ref)
        return out

    bad = _poll(ctx, problems)
    if bad:
        return result(
            NAME, "controllers-ready", False, f"{len(bad)} of {len(expected)} not ready", bad
        )
    skipped = [
        f"{ref}: skipped: 0 pods scheduled and no node matches its node selector, affinity and "
        "tolerations"
        for ref in idle
    ]
    ready = [c.ref for c in expected if c.ref not in idle]
    if not ready:
        return Result(
            NAME,
            "controllers-ready",
            SKIP,
            f"{len(idle)} DaemonSets with no node to run on and no other workload",
            tuple(skipped),
        )
    reason = f"{len(ready)} workloads ready"
    if idle:
        reason += f"; {len(idle)} DaemonSets skipped: no node to run on"
    return result(NAME, "controllers-ready", True, reason, [*ready, *skipped])


def _kinds(render: Render) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for manifest in render.manifests:
        seen[(manifest["apiVersion"], manifest["kind"])] = None
    return list(seen)


def check_served(ctx: Context) -> Result:
    kinds = _kinds(ctx.render)
    if not kinds:
        return result(NAME, "crds-served", False, "the render has no manifest: no kind to check")
    missing = [f"{av} {kind}: not served" for av, kind in kinds if not ctx.kube.served(av, kind)]
    if missing:
        return result(
            NAME, "crds-served", False, f"{len(missing)} of {len(kinds)} kinds not served", missing
        )
    return result(
        NAME, "crds-served", True, f"{len(kinds)} kinds served", [f"{a} {k}" for a, k in kinds]
    )


def check_objects(ctx: Context) -> list[Result]:
    out = []
    for api_version, kind in _kinds(ctx.render):
        name = f"objects-match-render/{kind}"
        if not ctx.wants(name):
            continue
        objs = [
            m for m in ctx.render.manifests if m["apiVersion"] == api_version and m["kind"] == kind
        ]
        details: list[str] = []
        bad = 0
        try:
            for obj in objs:
                meta = obj["metadata"]
                live = ctx.kube.get(api_version, kind, meta["name"], meta.get("namespace"))
                lines = object_drift(obj, live)
                bad += bool(lines)
                details.extend(lines)
        except KubeError as exc:
            out.append(result(NAME, name, False, f"{api_version} {kind}: {exc}"))
            continue
        if bad:
            out.append(
                result(
                    NAME,
                    name,
                    False,
                    f"{bad} of {len(objs)} {kind} objects differ from the render",
                    details,
                )
            )
        else:
            out.append(result(NAME, name, True, f"{len(objs)} {kind} objects match the render"))
    return out


def _rendered(render: Render, kind: str) -> list[Mapping[str, Any]]:
    return [m for m in render.manifests if m.get("kind") == kind]


def _karpenter_ready(ctx: Context, kind: str, name: str, with_amis: bool) -> Result:
    objs = _rendered(ctx.render, kind)
    if not objs:
        return skip(NAME, name, f"the render has no {kind}")

    def problems() -> list[str]:
        out = []
        for obj in objs:
            live = ctx.kube.get(obj["apiVersion"], kind, obj["metadata"]["name"])
            ref = object_ref(obj)
            if live is None:
                out.append(f"{ref}: missing from the cluster")
                continue
            ready = condition(live, "Ready")
            if ready is None or ready.get("status") != "True":
                state = "no Ready condition" if ready is None else f"Ready={ready.get('status')}"
                parts = [str((ready or {}).get(k) or "") for k in ("reason", "message")]
                why = ": ".join(p for p in parts if p)
                out.append(f"{ref}: {state}" + (f" ({why})" if why else ""))
            if with_amis and not live.get("status", {}).get("amis"):
                out.append(f"{ref}: status.amis is empty")
        return out

    bad = _poll(ctx, problems)
    if bad:
        return result(NAME, name, False, f"{len(bad)} problems in {len(objs)} {kind} objects", bad)
    return result(
        NAME, name, True, f"{len(objs)} {kind} objects Ready", [object_ref(o) for o in objs]
    )


def _timed(fn: Callable[[], list[Result]]) -> list[Result]:
    start = time.monotonic()
    results = fn()
    seconds = (time.monotonic() - start) / max(len(results), 1)
    return [replace(r, seconds=round(seconds, 3)) for r in results]


def run(ctx: Context) -> list[Result]:
    """The phase's checks in order; a check ``--checks`` leaves out is not run."""
    out: list[Result] = []
    if ctx.wants("controllers-ready"):
        out += _timed(lambda: [check_controllers(ctx)])
    if ctx.wants("crds-served"):
        out += _timed(lambda: [check_served(ctx)])
    out += _timed(lambda: check_objects(ctx))
    if ctx.wants("ec2nodeclasses-ready"):
        out += _timed(lambda: [_karpenter_ready(ctx, "EC2NodeClass", "ec2nodeclasses-ready", True)])
    if ctx.wants("nodepools-ready"):
        out += _timed(lambda: [_karpenter_ready(ctx, "NodePool", "nodepools-ready", False)])
    return out


def checks(ctx: Context) -> list[str]:
    """The names of the checks ``run`` would report on this render (no API call)."""
    kinds = [f"objects-match-render/{kind}" for _, kind in _kinds(ctx.render)]
    return ["controllers-ready", "crds-served", *kinds, "ec2nodeclasses-ready", "nodepools-ready"]


def planned(ctx: Context) -> list[Planned]:
    """The phase reads only: nothing to create, no node to launch."""
    return []
