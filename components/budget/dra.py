"""The GPU budget of a DRA pool (``nodePools[].dra``), in a resource Karpenter counts.

Pure: a pool spec (read by attribute) and its GPU budget in, plain data out; no Pulumi.

A DRA pool's nodes run no device plugin (``nodepool.dra``), so they advertise no
``nvidia.com/gpu``: once initialized, Karpenter charges a node with ``Node.Status.Capacity``
(kubernetes-sigs/karpenter v1.15.0 ``pkg/controllers/state/statenode.go`` L458-474), which then
holds no GPU, and a NodePool limit in ``nvidia.com/gpu`` would stop counting the pool's running
nodes. So the pool's GPU budget is written as a ``cpu`` limit: Karpenter filters the instance
types a new NodeClaim may use by their ``cpu`` capacity against the remaining limit
(``scheduler.go`` L736-749 ``filterByRemainingResources`` L1097-1114, ``subtractMax``
L1078-1095) and charges running nodes their real ``cpu`` capacity (statenode.go L473), the
same vCPUs EC2 gives the type. That is exact only when every type of the pool has the same
vCPUs per GPU (p5/p5e/p5en/p6 48xlarge: 24): a pool that mixes ratios is refused.

KAI charges a queue one GPU per device a claim requests from a device class whose name contains
``gpu`` (kai-scheduler v0.17.0 ``pkg/common/resources/dra.go`` L124-144, L155-157, L176-200;
``pkg/scheduler/api/pod_info/pod_info.go`` L545-547, ``node_info/node_info.go`` L747; the same
code in v0.16.8), so the queues routed to a DRA pool keep their GPU quotas and limits in GPUs.
"""

from collections.abc import Mapping
from typing import Any

DRA_LIMIT_RESOURCE = "cpu"

# vCPUs of each catalogued GPU type Karpenter 1.15 models DRA devices for (EC2
# DescribeInstanceTypes ``VCpuInfo.DefaultVCpus``, as the moto 5.2.5 wheel ships it in
# ``moto/ec2/resources/instance_types.json.gz``). The types are those of
# karpenter-provider-aws v1.15.1 ``pkg/providers/drametadata/zz_generated_gpu_metadata.go``
# (``GPUMetadataByInstanceType``) that ``catalog.INSTANCE_TYPES`` has with whole GPUs; the g7e
# types are not in it, and g6f/gr6f have no whole GPU.
DRA_TYPE_VCPUS: Mapping[str, int] = {
    "g4dn.xlarge": 4,
    "g4dn.2xlarge": 8,
    "g4dn.4xlarge": 16,
    "g4dn.8xlarge": 32,
    "g4dn.12xlarge": 48,
    "g4dn.16xlarge": 64,
    "g4dn.metal": 96,
    "g5.xlarge": 4,
    "g5.2xlarge": 8,
    "g5.4xlarge": 16,
    "g5.8xlarge": 32,
    "g5.12xlarge": 48,
    "g5.16xlarge": 64,
    "g5.24xlarge": 96,
    "g5.48xlarge": 192,
    "g5g.xlarge": 4,
    "g5g.2xlarge": 8,
    "g5g.4xlarge": 16,
    "g5g.8xlarge": 32,
    "g5g.16xlarge": 64,
    "g5g.metal": 64,
    "g6.xlarge": 4,
    "g6.2xlarge": 8,
    "g6.4xlarge": 16,
    "g6.8xlarge": 32,
    "g6.12xlarge": 48,
    "g6.16xlarge": 64,
    "g6.24xlarge": 96,
    "g6.48xlarge": 192,
    "g6e.xlarge": 4,
    "g6e.2xlarge": 8,
    "g6e.4xlarge": 16,
    "g6e.8xlarge": 32,
    "g6e.12xlarge": 48,
    "g6e.16xlarge": 64,
    "g6e.24xlarge": 96,
    "g6e.48xlarge": 192,
    "gr6.4xlarge": 16,
    "gr6.8xlarge": 32,
    "p4d.24xlarge": 96,
    "p4de.24xlarge": 96,
    "p5.4xlarge": 16,
    "p5.48xlarge": 192,
    "p5e.48xlarge": 192,
    "p5en.48xlarge": 192,
    "p6-b200.48xlarge": 192,
    "p6-b300.48xlarge": 192,
}


def _gpu_types(pool: Any) -> list[Any]:
    """The pool's catalogued GPU types; none while its selection is invalid (an unknown GPU,
    family or type, which ``NodePoolSpec``'s selection check reports)."""
    try:
        return [t for t in pool.catalog_types if t.gpu_count > 0]
    except ValueError:
        return []


def vcpus_per_gpu(pool: Any) -> dict[str, int]:
    """vCPUs per GPU of each of the pool's types Karpenter models DRA devices for."""
    return {
        t.name: DRA_TYPE_VCPUS[t.name] // t.gpu_count
        for t in _gpu_types(pool)
        if t.name in DRA_TYPE_VCPUS
    }


def dra_limit_per_gpu(pool: Any) -> dict[str, int]:
    """The DRA pool's NodePool limit per GPU of its budget: ``{"cpu": vCPUs per GPU}``."""
    ratios = set(vcpus_per_gpu(pool).values())
    return {DRA_LIMIT_RESOURCE: min(ratios)} if ratios else {}


def dra_limits(pool: Any, gpus: int) -> dict[str, str]:
    """The NodePool's ``spec.limits`` for a DRA pool's budget of ``gpus`` physical GPUs."""
    return {r: str(gpus * n) for r, n in sorted(dra_limit_per_gpu(pool).items())}


def dra_budget_problems(pool: Any) -> list[tuple[tuple, str]]:
    """A DRA pool's budget against Karpenter's limits: no GPU type Karpenter 1.15 cannot model,
    one vCPU-per-GPU ratio, and no ``limits.cpu`` (the budget is written there)."""
    out: list[tuple[tuple, str]] = []
    types = _gpu_types(pool)
    if not types:
        return [
            (
                ("dra",),
                f"pool {pool.name!r} selects no instance type with whole GPUs; a DRA pool's "
                "budget is counted in whole GPUs (g6f and gr6f carry GPU partitions)",
            )
        ]
    unknown = [t.name for t in types if t.name not in DRA_TYPE_VCPUS]
    if unknown:
        out.append(
            (
                ("dra",),
                f"pool {pool.name!r} selects {', '.join(unknown)}, for which Karpenter 1.15 "
                "models no DRA GPU devices (karpenter-provider-aws v1.15.1 drametadata): it "
                "could not size a node for a GPU claim; select other types",
            )
        )
        return out
    ratios = vcpus_per_gpu(pool)
    if len(set(ratios.values())) > 1:
        detail = ", ".join(f"{name}: {n}" for name, n in ratios.items())
        out.append(
            (
                ("dra",),
                f"pool {pool.name!r} mixes vCPUs per GPU ({detail}): a DRA pool's GPU budget is "
                "a NodePool cpu limit (its nodes advertise no nvidia.com/gpu for Karpenter to "
                "count), exact only for one ratio; select types with the same ratio (one pool "
                "per ratio)",
            )
        )
    if pool.limits.cpu is not None:
        out.append(
            (
                ("limits", "cpu"),
                f"cannot be set on DRA pool {pool.name!r}: its GPU budget is written as the "
                "NodePool's cpu limit (GPUs x vCPUs per GPU); remove limits.cpu",
            )
        )
    return out


def dra_pool_entry(pool: Any, groups: Any) -> dict[str, Any]:
    """A DRA pool's entry in ``capacity.json`` (``report.pool_entries``' shape): its NodePool's
    ``cpu`` limit; ``advertisedPerNode`` empty per type (no device plugin on its nodes) and
    ``draDevicesPerNode`` the ``gpu.nvidia.com`` devices the DRA driver publishes (one per GPU,
    karpenter-provider-aws v1.15.1 ``pkg/providers/nvidiadra/nvidiadra.go`` L76-82);
    ``maxNodes``: the most nodes the cpu limit admits, every one of the type with the fewest
    vCPUs."""
    types = _gpu_types(pool)
    limit, nodepools, max_gpus = nodepool_entries(groups, lambda budget: dra_limits(pool, budget))
    max_nodes = 0
    for group in groups:
        cpu = limit[group.name].get(DRA_LIMIT_RESOURCE, 0)
        max_nodes += max(
            (cpu // DRA_TYPE_VCPUS[t.name] for t in types if t.name in group.instance_types),
            default=0,
        )
    return {
        "name": pool.name,
        "instanceTypes": [t.name for t in types],
        "gpusPerNode": {t.name: t.gpu_count for t in types},
        "advertisedPerNode": {t.name: {} for t in types},
        "draDevicesPerNode": {t.name: {"gpu.nvidia.com": t.gpu_count} for t in types},
        "limit": limit,
        "nodePools": nodepools,
        "maxNodes": max_nodes,
        "maxGpus": max_gpus,
    }


def nodepool_entries(
    groups: Any, limits_of: Any
) -> tuple[dict[str, dict[str, int]], list[dict[str, Any]], int]:
    """A pool's NodePools in ``capacity.json``: each NodePool's whole-number ``limits_of(its GPU
    budget)``, its entry (name, instance types, GPUs, largest gang) and the pool's GPUs in all."""
    limit: dict[str, dict[str, int]] = {}
    nodepools = []
    max_gpus = 0
    for group in groups:
        budget = group.gpus or 0
        limit[group.name] = {r: int(v) for r, v in limits_of(budget).items()}
        max_gpus += budget
        nodepools.append(
            {
                "name": group.name,
                "instanceTypes": list(group.instance_types),
                "gpus": budget,
                "largestGang": group.largest_gang,
            }
        )
    return limit, nodepools, max_gpus
