"""The performance phase: for each EFA pool opted in with ``--pool``, a two-node NCCL all-reduce
over EFA (the platform's reference MPIJob, ``efa.nccl_test_manifest``). It fails when NCCL did not
pick aws-ofi-nccl's ``efa`` provider, when the nccl-tests table or its summary is missing, or when
nccl-tests counted wrong values; it reports the bus bandwidth per message size and compares it
with NVIDIA AICR's published floor where AICR gives one for the instance type (``nccl_floor``:
at least 300 GB/s out-of-place at 16 GiB on p5.48xlarge, p5e.48xlarge and p5en.48xlarge), and
reports the other types without a floor. Runs only on a real cluster with two EFA nodes; costs
money, bounded before anything is created by ``--cost-cap-usd`` and ``--time-cap-s``.

Launcher: the Kubeflow MPI Operator, which the platform does not deploy. The phase needs it and
skips, saying so, when the API server does not serve ``kubeflow.org/v2beta1`` MPIJob. Why not a
launcher of its own: ``mpirun`` starts the ranks over SSH, and the MPI Operator is what creates
the hostfile ConfigMap, the workers' Service and the SSH keys Secret and, with
``launcherCreationPolicy: WaitForWorkersReady`` (set by ``nccl.mpijob``; the default starts it at
once), starts the launcher once the workers are ready (kubeflow/mpi-operator v0.6.0
``pkg/controller/mpi_job_controller.go`` ``newConfigMap`` L1272, ``newJobService`` L1339,
``newSSHAuthSecret`` L1368, L661-662);
doing that here would re-implement the operator in a validation tool, and an ``mpirun``-free
launcher (one PyTorch process per GPU with a rendezvous) would test a different stack than the
nccl-tests binary the aws-samples/aws-do-eks approach and the platform's example use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ..efa import MPI_OPERATOR_VERSION
from ..efa.manifests import NCCL_POD_SECURITY
from ..scheduler.podsecurity import pod_security_labels
from . import gpu_specs, nccl, nccl_floor, prices
from .core import FAIL, Context, KubeError, Planned, Result, result, skip

NAME = "performance"
NO_EFA_CHECK = "efa"
POLL_S = 10.0
# kubeflow/mpi-operator v0.6.0 pkg/apis/kubeflow/v2beta1/constants.go:42-45, set on the pods by
# pkg/controller/mpi_job_controller.go:1664-1665.
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
LAUNCHER = "launcher"
MPI_OPERATOR_INSTALL = (
    'kubectl apply --server-side -k "github.com/kubeflow/mpi-operator/manifests/overlays/'
    f'standalone?ref={MPI_OPERATOR_VERSION}"'
)


def job_name(pool: str) -> str:
    return f"validate-nccl-{pool}"[:63].rstrip("-")


def _efa_pools(ctx: Context) -> list[gpu_specs.Pool]:
    pools = gpu_specs.pools(ctx.render.capacity, ctx.render.manifests).values()
    return [p for p in pools if p.efa]


def _max_minutes(ctx: Context, pool: gpu_specs.Pool) -> float:
    # the run, then the nodes' life after it: the phase does not wait for their consolidation
    after = [gpu_specs.duration_s(v) for v in pool.consolidate_after.values()]
    linger = max((a for a in after if a is not None), default=0.0)
    return (ctx.options.time_cap_s + linger) / 60.0


def _plan(ctx: Context, pool: gpu_specs.Pool, region: str | None) -> Planned:
    itype, unpriced = gpu_specs.cheapest_type(pool, region or "", ctx.options.prices)
    ns = ctx.run_object_name("nccl")
    return Planned(
        phase=NAME,
        check=pool.name,
        objects=(f"Namespace {ns}", f"MPIJob {ns}/{job_name(pool.name)}"),
        pool=pool.name,
        instance_types=(itype,) if itype else tuple(unpriced or pool.instance_types),
        nodes=nccl.NODES,
        max_minutes=_max_minutes(ctx, pool),
    )


def checks(ctx: Context) -> list[str]:
    """The names of the checks ``run`` would report on this render: one per EFA pool."""
    return [p.name for p in _efa_pools(ctx)] or [NO_EFA_CHECK]


def planned(ctx: Context) -> list[Planned]:
    """Two nodes of the pool's cheapest priced EFA type, per opted-in EFA pool."""
    region = ctx.render.region
    return [_plan(ctx, p, region) for p in _efa_pools(ctx) if p.name in ctx.options.pools]


def run(ctx: Context) -> list[Result]:
    pools = _efa_pools(ctx)
    if not pools:
        return [skip(NAME, NO_EFA_CHECK, "the render has no EFA pool")]
    region = ctx.render.region
    results: list[Result] = []
    for pool in pools:
        if pool.name not in ctx.options.pools:
            results.append(skip(NAME, pool.name, f"not opted in (--pool {pool.name})"))
            continue
        if not ctx.wants(pool.name):
            continue  # left out by --checks: nothing created, no result
        if not ctx.kube.served(nccl.MPIJOB_API, nccl.MPIJOB_KIND):
            results.append(
                skip(
                    NAME,
                    pool.name,
                    f"the API server does not serve {nccl.MPIJOB_KIND} ({nccl.MPIJOB_API}): "
                    f"install the MPI Operator {MPI_OPERATOR_VERSION} ({MPI_OPERATOR_INSTALL})",
                )
            )
            continue
        start = ctx.clock()
        try:
            outcome, cost = _check(ctx, pool, region, ctx.committed_usd)
        except Exception as exc:  # a check never raises to the runner
            outcome, cost = result(NAME, pool.name, False, f"unexpected error: {exc!r}"), 0.0
        ctx.committed_usd += cost
        results.append(dataclasses.replace(outcome, seconds=ctx.clock() - start))
    return results


def _fail(pool: gpu_specs.Pool, reason: str, details: list[str]) -> Result:
    return Result(NAME, pool.name, FAIL, reason, tuple(details))


def _namespace_labels(ctx: Context) -> dict[str, str]:
    """Pod Security "baseline" (mpi-operator's sshd runs as root: ``efa.manifests``), audit and
    warn "restricted", at the Kubernetes version the render's namespaces pin."""
    for manifest in ctx.render.manifests:
        version = (
            manifest.get("metadata", {})
            .get("labels", {})
            .get("pod-security.kubernetes.io/enforce-version", "")
        )
        if manifest.get("kind") == "Namespace" and version.startswith("v"):
            return pod_security_labels(NCCL_POD_SECURITY, version[1:])
    return {"pod-security.kubernetes.io/enforce": NCCL_POD_SECURITY}


def _launcher(ctx: Context, namespace: str, name: str) -> dict | None:
    pods = ctx.kube.list(
        "v1",
        "Pod",
        namespace=namespace,
        label_selector=f"{JOB_NAME_LABEL}={name},{JOB_ROLE_LABEL}={LAUNCHER}",
    )
    return next(
        (p for p in pods if p.get("status", {}).get("phase") in ("Succeeded", "Failed")), None
    )


def _check(
    ctx: Context, pool: gpu_specs.Pool, region: str | None, spent: float
) -> tuple[Result, float]:
    details: list[str] = []
    if region is None:
        return _fail(pool, "the render names no AWS region (outputs.json clusterEndpoint)", []), 0
    plan = _plan(ctx, pool, region)
    estimate = prices.estimate_usd(plan, region, ctx.options.prices)
    described = prices.describe(plan, region, ctx.options.prices)
    details.append(f"cost estimate: {described}")
    if estimate is None:
        return _fail(
            pool,
            f"{described}: the cost cap cannot be checked; nothing created",
            details,
        ), 0.0
    if spent + estimate > ctx.options.cost_cap_usd:
        return _fail(
            pool,
            f"estimated ${estimate:.2f} ({nccl.NODES} x {plan.instance_types[0]} for up to "
            f"{plan.max_minutes:g} min; ${spent + estimate:.2f} for the run so far) is above the "
            f"cost cap ${ctx.options.cost_cap_usd:.2f}; nothing created",
            details,
        ), 0.0
    itype = plan.instance_types[0]
    namespace = ctx.run_object_name("nccl")
    name = job_name(pool.name)
    try:
        if not any(k == "Namespace" and n == namespace for _, k, n, _ in ctx.created):
            ctx.create(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": namespace, "labels": _namespace_labels(ctx)},
                }
            )
        job = nccl.mpijob(pool, instance_type=itype, name=name, namespace=namespace, labels={})
        ctx.create(job)
    except KubeError as exc:
        return _fail(pool, f"create MPIJob {namespace}/{name}: {exc}", details), estimate
    details.append(f"MPIJob {namespace}/{name}: {nccl.NODES} x {itype}, all_reduce_perf")
    launcher, waited = ctx.wait(
        lambda: _launcher(ctx, namespace, name), ctx.options.time_cap_s, POLL_S
    )
    if not launcher:
        return _fail(
            pool,
            f"the launcher did not finish within the time cap ({ctx.options.time_cap_s:g} s)",
            details,
        ), estimate
    launcher_name = launcher["metadata"]["name"]
    log = ctx.kube.logs(launcher_name, namespace)
    details.append(f"launcher {launcher_name} {launcher['status']['phase']} after {waited:g} s")
    phase = launcher["status"]["phase"]
    return _judge(pool, itype, log, phase, details, ctx.options.nccl_floors), estimate


def _judge(
    pool: gpu_specs.Pool,
    itype: str,
    log: str,
    phase: str,
    details: list[str],
    floors: Mapping[str, float],
) -> Result:
    providers = nccl.ofi_providers(log)
    details.append(f"aws-ofi-nccl providers: {', '.join(sorted(set(providers))) or 'none'}")
    if not providers:
        socket = "NCCL INFO Using network Socket" in log
        return _fail(
            pool,
            "no 'NET/OFI Selected provider' line: NCCL did not load the aws-ofi-nccl plugin"
            + (" (it used its Socket transport)" if socket else ""),
            details,
        )
    if set(providers) != {nccl.EFA_PROVIDER}:
        return _fail(
            pool,
            f"aws-ofi-nccl selected {', '.join(sorted(set(providers)))}, not efa",
            details,
        )
    table = nccl.parse_all_reduce(log)
    for row in table.rows:
        details.append(
            f"{row.size_bytes} B: busbw {row.oop_busbw:g} GB/s out-of-place, "
            f"{row.ip_busbw:g} GB/s in-place"
        )
    if phase != "Succeeded":
        return _fail(pool, f"the launcher {phase}; its log's figures are in the details", details)
    if not table.rows or table.avg_busbw is None:
        return _fail(pool, "the log has no nccl-tests result table and summary", details)
    if table.out_of_bounds:
        return _fail(pool, f"nccl-tests counted {table.out_of_bounds} wrong values", details)
    reference = nccl.REFERENCES.get(itype)
    if reference:
        size, gbps, where = reference
        details.append(f"reference (not a floor): {gbps:g} GB/s at {size} B, {where}")
    if itype in nccl_floor.FLOORS:
        details.append(f"average busbw {table.avg_busbw:g} GB/s over every message size")
    verdict = nccl_floor.judge(table, itype, nccl.NODES, floors)
    return result(NAME, pool.name, verdict.passed, verdict.reason, details)
