"""Phase ``deployment``: the controllers the render deploys are ready, every kind it uses is
served, every object it wrote exists with the rendered spec (drift field by field), and
Karpenter has resolved every EC2NodeClass and NodePool.

Checks, in order:

- ``controllers-ready``: each workload of ``expected_controllers(render)`` has rolled out (the
  test ``kubectl rollout status`` applies: k8s.io/kubectl v0.36.3
  pkg/polymorphichelpers/rollout_status.go L75-91 for a Deployment, L107-116 for a DaemonSet).
- ``crds-served``: every (apiVersion, kind) of ``manifests/`` is served by the API server.
- ``objects-match-render/<Kind>``: one check per kind; only the fields the render sets are
  compared (``drift``), so defaults and status the server adds are not drift.
- ``ec2nodeclasses-ready``: condition ``Ready=True`` and a non-empty ``status.amis``
  (aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass_status.go L160 ``amis``,
  L168-181 the conditions ``Ready`` is made of; ``Ready`` is awslabs/operatorpkg
  status/condition.go L23).
- ``nodepools-ready``: condition ``Ready=True`` (kubernetes-sigs/karpenter v1.14.1
  pkg/apis/v1/nodepool_status.go L58-63: ValidationSucceeded and NodeClassReady).

The phase creates nothing: ``planned`` is empty, and it runs unchanged on the conformance
suite's API server (where ``vconf`` seeds the controllers' workloads from
``expected_controllers``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from . import daemonsets
from .core import SKIP, Context, KubeError, Planned, Render, Result, result, skip

NAME = "deployment"

# How long controllers-ready, ec2nodeclasses-ready and nodepools-ready wait for a rollout or a
# Ready condition right after `pulumi up` (never longer than --time-cap-minutes).
READY_WAIT_S = 300.0
READY_POLL_S = 10.0


@dataclass(frozen=True)
class Controller:
    """A workload a controller of the render runs: a Deployment or DaemonSet by namespace and
    name, the Helm release (or ``manifests``) that makes it, and where its name comes from."""

    kind: str
    namespace: str
    name: str
    release: str
    source: str

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


def helm_fullname(release: str, chart: str, values: Mapping[str, Any]) -> str:
    """The ``<chart>.fullname`` helper of the Helm starter template, which the Karpenter, NFD
    and EFA device plugin charts use unchanged (aws/karpenter-provider-aws v1.14.1
    charts/karpenter/templates/_helpers.tpl L13-24; NVIDIA/gpu-operator v26.7.0
    deployments/gpu-operator/charts/node-feature-discovery/templates/_helpers.tpl L14-25;
    aws/eks-charts stable/aws-efa-k8s-device-plugin/templates/_helpers.tpl L13-24 at chart
    v0.5.30, commit 5239609)."""
    if values.get("fullnameOverride"):
        return str(values["fullnameOverride"])[:63].rstrip("-")
    name = values.get("nameOverride") or chart
    if name in release:
        return release[:63].rstrip("-")
    return f"{release}-{name}"[:63].rstrip("-")


def _enabled(values: Mapping[str, Any], path: str, default: bool) -> bool:
    node: Any = values
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return bool(node)


_KAI = "kai-scheduler/KAI-Scheduler v0.17.0"
# The operands the KAI operator starts, in the order it reconciles them (pkg/operator/controller/
# config_controller.go L52-61, the same file at v0.16.8: no operand was added in v0.17.0):
# (Deployment name, the chart value that enables it, its chart default, the source of the
# name). The names are the operands' defaultResourceName /
# deploymentName constants; the chart's kai-config template (deployments/kai-scheduler/
# templates/_helpers.tpl) sets each operand's service.enabled from the value named. Prometheus
# (prometheus.enabled, default false: values.yaml L308-310) and the NUMA placement exporter (only
# with the numa plugin in a shard) are not started by this platform's values.
_KAI_OPERANDS = (
    (
        "pod-grouper",
        "podgrouper.enabled",
        True,
        "pkg/operator/operands/pod_grouper/resources.go L20",
    ),
    ("binder", "binder.enabled", True, "pkg/operator/operands/binder/resources.go L33"),
    (
        "queue-controller",
        "queuecontroller.enabled",
        True,
        "pkg/operator/operands/queue_controller/resources.go L28",
    ),
    (
        "podgroup-controller",
        "podgroupcontroller.enabled",
        True,
        "pkg/operator/operands/pod_group_controller/resources.go L27",
    ),
    (
        "node-scale-adjuster",
        "global.clusterAutoscaling",
        False,
        "pkg/operator/operands/node_scale_adjuster/resources.go L23; enabled by "
        "global.clusterAutoscaling (templates/_helpers.tpl L260-262, default false: "
        "values.yaml L22)",
    ),
    ("admission", "admission.enabled", True, "pkg/operator/operands/admission/resources.go L28"),
)


def _karpenter(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    return [
        Controller(
            "Deployment",
            spec["namespace"],
            helm_fullname(release, "karpenter", values),
            release,
            "aws/karpenter-provider-aws v1.14.1 charts/karpenter/templates/deployment.yaml L2-5 "
            "(karpenter.fullname)",
        )
    ]


def _kai(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    namespace = spec["namespace"]
    out = [
        Controller(
            "Deployment",
            namespace,
            "kai-operator",
            release,
            f"{_KAI} deployments/kai-scheduler/templates/services/operator.yaml L5-8",
        )
    ]
    # The operator deploys its operands into the Config's spec.namespace, the release's
    # namespace (templates/_helpers.tpl L59).
    for name, value, default, source in _KAI_OPERANDS:
        if _enabled(values, value, default):
            out.append(Controller("Deployment", namespace, name, release, f"{_KAI} {source}"))
    # One scheduler per SchedulingShard, "<schedulerName>-<shard>" (pkg/operator/operands/
    # scheduler/resources_for_shard.go L394-396); the scheduler name defaults to kai-scheduler
    # (pkg/apis/kai/v1/global.go L125, pkg/common/constants/constants.go L21); the chart makes
    # the shard "default" (templates/default-shard.yaml L4-8, defaultShard.enabled values.yaml
    # L188-189).
    if _enabled(values, "scheduler.enabled", True) and _enabled(
        values, "defaultShard.enabled", True
    ):
        out.append(
            Controller(
                "Deployment",
                namespace,
                "kai-scheduler-default",
                release,
                f"{_KAI} pkg/operator/operands/scheduler/resources_for_shard.go L394-396 "
                "(shard default, templates/default-shard.yaml L8)",
            )
        )
    return out


def _gpu_operator(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    namespace = spec["namespace"]
    out = [
        Controller(
            "Deployment",
            namespace,
            "gpu-operator",
            release,
            "NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/templates/operator.yaml L2-5",
        )
    ]
    # The node-feature-discovery subchart 0.19.0 (Chart.yaml: condition nfd.enabled, default
    # true: values.yaml L8-9), named by its fullname helper from the parent's release.
    if _enabled(values, "nfd.enabled", True):
        nfd = values.get("node-feature-discovery") or {}
        nfd_ns = nfd.get("namespaceOverride") or namespace
        base = helm_fullname(release, "node-feature-discovery", nfd)
        where = "NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/charts/node-feature-discovery"
        for kind, suffix, key, template in (
            ("Deployment", "master", "master.enable", "master.yaml L1-6"),
            ("Deployment", "gc", "gc.enable", "nfd-gc.yaml L1-6"),
            ("DaemonSet", "worker", "worker.enable", "worker.yaml L1-6"),
        ):
            if _enabled(nfd, key, True):
                out.append(
                    Controller(
                        kind, nfd_ns, f"{base}-{suffix}", release, f"{where}/templates/{template}"
                    )
                )
    return out


def _efa(release: str, spec: Mapping[str, Any]) -> list[Controller]:
    values = spec.get("values") or {}
    return [
        Controller(
            "DaemonSet",
            spec["namespace"],
            helm_fullname(release, "aws-efa-k8s-device-plugin", values),
            release,
            "aws/eks-charts stable/aws-efa-k8s-device-plugin/templates/daemonset.yaml L2-4 "
            "(chart v0.5.30, commit 5239609)",
        )
    ]


_CHARTS = {
    "karpenter": _karpenter,
    "kai-scheduler": _kai,
    "gpu-operator": _gpu_operator,
    "aws-efa-k8s-device-plugin": _efa,
}


def expected_controllers(render: Render) -> list[Controller]:
    """The workloads of the controllers ``render`` deploys, in order: per Helm release (by its
    chart: Karpenter, KAI with the operands its operator starts, the GPU Operator with NFD, the
    EFA device plugin), then every Deployment and DaemonSet of ``manifests/`` (the MIG-ready
    remover where a MIG pool deploys it). Pure: plain data in, names out."""
    out: list[Controller] = []
    for chart, build in _CHARTS.items():
        for release, spec in render.helm.items():
            if spec.get("chart") == chart:
                out.extend(build(release, spec))
    for manifest in render.manifests:
        if manifest.get("kind") in ("Deployment", "DaemonSet"):
            meta = manifest["metadata"]
            out.append(
                Controller(
                    manifest["kind"],
                    meta.get("namespace", "default"),
                    meta["name"],
                    "manifests",
                    "the render's manifests/",
                )
            )
    return out


# --- drift -------------------------------------------------------------------------------------

# What the render writes for a secret value (offline/write.py ``_mask``, offline/stackfile.py
# ``SECRET_PLACEHOLDER``): the value is not in the render, so it is not compared.
SECRET_PLACEHOLDER = "[secret]"

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key(path: str, key: str) -> str:
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _show(value: Any) -> str:
    return "missing" if value is _MISSING else json.dumps(value, sort_keys=True)


_MISSING = object()


def _scalar_equal(rendered: Any, live: Any) -> bool:
    # int-or-string fields (NodePool limits, resource quantities the server keeps as given)
    # come back as the type they were sent in; 8 and "8" are the same value.
    if isinstance(rendered, bool) or isinstance(live, bool):
        return rendered == live
    if isinstance(rendered, int | float | str) and isinstance(live, int | float | str):
        return str(rendered) == str(live)
    return rendered == live


def _named(items: list) -> bool:
    return bool(items) and all(isinstance(i, Mapping) and "name" in i for i in items)


def drift(rendered: Any, live: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """The differences between what the render sets and the live object, as (path, rendered,
    live): only the fields ``rendered`` sets are compared (the server's defaults and status are
    not drift), recursively; lists of named items (every item a mapping with ``name``) by name,
    other lists by index and length; a secret the render masks is not compared. A field missing
    from the live object is ``_MISSING``."""
    if rendered is None or rendered == SECRET_PLACEHOLDER:
        return []
    if isinstance(rendered, Mapping):
        if not isinstance(live, Mapping):
            return [(path, rendered, live)]
        out: list[tuple[str, Any, Any]] = []
        for key, value in rendered.items():
            out.extend(drift(value, live.get(key, _MISSING), _key(path, str(key))))
        return out
    if isinstance(rendered, list):
        if not isinstance(live, list):
            return [(path, rendered, live)]
        if _named(rendered) and _named(live):
            by_name = {item["name"]: item for item in live}
            out = []
            for item in rendered:
                out.extend(
                    drift(item, by_name.get(item["name"], _MISSING), f"{path}[name={item['name']}]")
                )
            return out
        if len(rendered) != len(live):
            return [(path, rendered, live)]
        out = []
        for index, (r, lv) in enumerate(zip(rendered, live, strict=True)):
            out.extend(drift(r, lv, f"{path}[{index}]"))
        return out
    if live is _MISSING or not _scalar_equal(rendered, live):
        return [(path, rendered, live)]
    return []


def _ref(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata", {})
    where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name")
    return f"{obj.get('kind')} {where}"


def object_drift(rendered: Mapping[str, Any], live: Mapping[str, Any] | None) -> list[str]:
    """Report lines for one rendered object: ``NodePool gpu-spot: missing from the cluster``, or
    one line per drifted field, ``NodePool gpu-spot: spec.limits["nvidia.com/gpu"]: rendered 8,
    live 16``. Empty when the live object matches."""
    if live is None:
        return [f"{_ref(rendered)}: missing from the cluster"]
    body = {k: v for k, v in rendered.items() if k not in ("apiVersion", "kind", "status")}
    return [
        f"{_ref(rendered)}: {path}: rendered {_show(r)}, live {_show(lv)}"
        for path, r, lv in drift(body, live)
    ]


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
            ref = _ref(obj)
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
    return result(NAME, name, True, f"{len(objs)} {kind} objects Ready", [_ref(o) for o in objs])


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
