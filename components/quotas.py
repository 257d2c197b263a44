"""Each GPU pool against the account's EC2 vCPU service quotas, at preview and `pulumi up`
(issue 28, point 12). A new account's GPU quotas are often 0, and Karpenter then launches
nothing (``VcpuLimitExceeded``, ``MaxSpotInstanceCountExceeded``) long after `up` succeeded.

EC2 limits running On-Demand and Spot instances per Region in vCPUs, one quota per instance
class ("Spot Instance quotas are managed in terms of the number of virtual central processing
units (vCPUs)", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-spot-limits.html;
On-Demand the same: https://docs.aws.amazon.com/ec2/latest/instancetypes/ec2-instance-quotas.html).
The quotas and their Service Quotas codes (service code ``ec2``):

============================================  ============  ==========================
quota                                         code          instance families here
============================================  ============  ==========================
Running On-Demand G and VT instances          L-DB2E81BA    g4dn g5 g5g g6 g6e g6f gr6 g7e
Running On-Demand P instances                 L-417A185B    p4d p4de p5 p5e p5en p6-*
All G and VT Spot Instance Requests           L-3819A6DF    as On-Demand G
All P Spot Instance Requests                  L-7212CCBC    as On-Demand P
============================================  ============  ==========================

The names are AWS's (the pages above). The codes are not on those pages; they are the codes the
Service Quotas API answers for those names as public tools read them (e.g. github.com/CloudSnorkel
/cloud-z ``collect-aws`` spotQuotas table: "All G and VT Spot Instance Requests" L-3819A6DF, "All
P Spot Instance Requests" L-7212CCBC; many deploy guides quote ``aws service-quotas
get-service-quota --service-code ec2 --quota-code L-DB2E81BA`` / ``L-417A185B`` for the two
On-Demand quotas). One revision of AWS's Spot page lists "All P4, P3 and P2 Spot Instance
Requests" and "All P5 Spot Instance Requests" separately: L-7212CCBC may not cover p5/p6 spot in
every account, so a P spot shortfall is a warning, never a refusal (``Quota.refuses``).

What is checked, per GPU pool and instance class, for its On-Demand and Spot capacity types
(``reserved`` capacity is the reservation's business):

- the largest node it may launch (the most vCPUs among its types that fit its GPU limit): when
  no capacity type's quota holds it, the pool can never launch that node: refused (preview and
  up), naming the quota and the command that raises it; when only one of two types falls
  short, a warning;
- the pool at its full budget (its GPU limit filled with the type of most vCPUs per GPU): above
  a quota, a warning; and pools that share a quota, each within it but together above it.

A lookup that fails (no ``servicequotas:GetServiceQuota``) or answers unknown is a warning: the
pools are then not checked against that quota. The data source answers the applied value, else
the default (hashicorp/terraform-provider-aws internal/service/servicequotas/
service_quota_data_source.go: the default quota first, then ``GetServiceQuota``, a not-found
applied value keeping the default).

vCPUs per type: Karpenter's ``karpenter.k8s.aws/instance-cpu`` label (aws/karpenter-provider-aws
v1.14.1 website/content/en/docs/reference/instance-types.md, the catalog's source), checked
against EC2's ``VCpuInfo.DefaultVCpus`` in tests/test_quotas.py. Pure but ``check_quotas``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import catalog

GET_SERVICE_QUOTA = "aws:servicequotas/getServiceQuota:getServiceQuota"
SERVICE_CODE = "ec2"

_SIZES = {
    "xlarge": 4,
    "2xlarge": 8,
    "4xlarge": 16,
    "8xlarge": 32,
    "12xlarge": 48,
    "16xlarge": 64,
    "24xlarge": 96,
    "48xlarge": 192,
}
# vCPUs of every catalogued type: the size's standard count, and the exceptions.
VCPU_EXCEPTIONS = {
    "g4dn.metal": 96,
    "g5g.metal": 64,
    "g6f.large": 2,
    "p5.4xlarge": 16,
}


def vcpus(instance_type: str) -> int:
    """vCPUs of a catalogued GPU type (``KeyError`` for any other)."""
    if instance_type in VCPU_EXCEPTIONS:
        return VCPU_EXCEPTIONS[instance_type]
    if instance_type not in catalog.INSTANCE_TYPES:
        raise KeyError(instance_type)
    return _SIZES[instance_type.split(".", 1)[1]]


@dataclass(frozen=True)
class Quota:
    code: str
    name: str
    refuses: bool = True  # a shortfall refuses (the code's families are certain)

    def raise_command(self, vcpu: int, region: str) -> str:
        return (
            f"aws service-quotas request-service-quota-increase --service-code {SERVICE_CODE} "
            f"--quota-code {self.code} --desired-value {vcpu} --region {region}"
        )


QUOTAS: dict[tuple[str, str], Quota] = {
    ("on-demand", "g"): Quota("L-DB2E81BA", "Running On-Demand G and VT instances"),
    ("on-demand", "p"): Quota("L-417A185B", "Running On-Demand P instances"),
    ("spot", "g"): Quota("L-3819A6DF", "All G and VT Spot Instance Requests"),
    ("spot", "p"): Quota("L-7212CCBC", "All P Spot Instance Requests", refuses=False),
}


def instance_class(family: str) -> str:
    """``g`` (G and VT quotas) or ``p``: the family's first letter."""
    return family[:1]


@dataclass(frozen=True)
class ClassNeed:
    """What one pool needs of one instance class."""

    pool: str
    key: str  # nodePools[i](name)
    klass: str
    largest: str  # the type of the largest node
    largest_vcpus: int
    budget_gpus: int | None
    budget_vcpus: int | None  # None: no GPU limit
    capacity_types: tuple[str, ...]


def pool_needs(key: str, pool, gpu_limit: int | None) -> list[ClassNeed]:
    """Per instance class of a GPU pool: its largest launchable node and its full budget."""
    types = [t for t in pool.catalog_types if gpu_limit is None or t.gpu_count <= gpu_limit]
    capacity = tuple(c for c in ("on-demand", "spot") if c in pool.capacity_types)
    out = []
    for klass in sorted({instance_class(t.family) for t in types}):
        mine = [t for t in types if instance_class(t.family) == klass]
        largest = max(mine, key=lambda t: (vcpus(t.name), t.name))
        budget = None
        if gpu_limit is not None:
            budget = max((gpu_limit // t.gpu_count) * vcpus(t.name) for t in mine if t.gpu_count)
        out.append(
            ClassNeed(
                pool.name,
                key,
                klass,
                largest.name,
                vcpus(largest.name),
                gpu_limit,
                budget,
                capacity,
            )
        )
    return out


def stack_needs(pools: Sequence, gpu_limits: Mapping[str, int | None]) -> list[ClassNeed]:
    """Every GPU pool's needs, in config order (``pools``: the configured ``nodePools``)."""
    out = []
    for i, pool in enumerate(pools):
        if pool.is_gpu:
            out += pool_needs(f"nodePools[{i}]({pool.name})", pool, gpu_limits.get(pool.name))
    return out


def _label(q: Quota, value: float) -> str:
    return f"{q.name} ({q.code}) is {value:g} vCPUs"


def judge(
    needs: Sequence[ClassNeed], values: Mapping[str, float], region: str
) -> tuple[list[str], list[str]]:
    """``(refusals, warnings)`` for the needs against known quota values (code -> vCPUs); a
    quota missing from ``values`` was not read and is skipped (``check_quotas`` warns)."""
    refusals, warnings = [], []
    for need in needs:
        known = [
            (QUOTAS[(c, need.klass)], values[QUOTAS[(c, need.klass)].code])
            for c in need.capacity_types
            if QUOTAS[(c, need.klass)].code in values
        ]
        short = [(q, v) for q, v in known if v < need.largest_vcpus]
        node = f"its largest node ({need.largest}, {need.largest_vcpus} vCPUs)"
        raise_it = "; raise it: " if len(short) == 1 else "; raise one: "
        commands = " or ".join(f"`{q.raise_command(need.largest_vcpus, region)}`" for q, _ in short)
        if short and len(short) == len(need.capacity_types) and all(q.refuses for q, _ in short):
            quotas = " and ".join(_label(q, v) for q, v in short)
            refusals.append(
                f"{need.key}: {node} can never launch: the EC2 quota {quotas} in {region}"
                f"{raise_it}{commands}"
            )
        elif short:
            quotas = " and ".join(_label(q, v) for q, v in short)
            warnings.append(
                f"{need.key}: {node} cannot launch under the EC2 quota {quotas} in {region}"
                f"{raise_it}{commands}"
            )
        if need.budget_vcpus is None:
            continue
        for q, v in known:
            if v >= need.budget_vcpus or (q, v) in short:
                continue
            warnings.append(
                f"{need.key}: at its full budget ({need.budget_gpus} GPUs) the pool may run "
                f"up to {need.budget_vcpus} vCPUs, above the EC2 quota {_label(q, v)} in "
                f"{region}; launches beyond it fail; raise it: "
                f"`{q.raise_command(need.budget_vcpus, region)}`"
            )
    return refusals, warnings + shared_warnings(needs, values, region)


def shared_warnings(
    needs: Sequence[ClassNeed], values: Mapping[str, float], region: str
) -> list[str]:
    """Pools that draw on one quota (each with that single capacity type for the class), each
    within it at its full budget but together above it: a warning naming them."""
    by_code: dict[str, list[ClassNeed]] = {}
    for need in needs:
        if len(need.capacity_types) == 1 and need.budget_vcpus is not None:
            q = QUOTAS[(need.capacity_types[0], need.klass)]
            if q.code in values:
                by_code.setdefault(q.code, []).append(need)
    out = []
    for code, group in by_code.items():
        q = QUOTAS[(group[0].capacity_types[0], group[0].klass)]
        value = values[code]
        total = sum(n.budget_vcpus or 0 for n in group)
        if len(group) < 2 or total <= value or any((n.budget_vcpus or 0) > value for n in group):
            continue
        out.append(
            f"{', '.join(n.key for n in group)}: at their full budgets together these pools may "
            f"run up to {total} vCPUs, above the EC2 quota {_label(q, value)} in {region}; "
            f"launches beyond it fail; raise it: `{q.raise_command(total, region)}`"
        )
    return out


def check_quotas(
    needs: Sequence[ClassNeed], region: str, lookup: Callable[[str, dict[str, str]], dict]
) -> tuple[list[str], list[str]]:
    """Look each quota the needs use up (``lookup(token, args)``: a synchronous invoke, ``{}``
    when unknown, raising the provider's error) and judge the needs. ``(refusals, warnings)``:
    a failed or unknown lookup is a warning naming the quota."""
    codes: dict[str, Quota] = {}
    for need in needs:
        for c in need.capacity_types:
            q = QUOTAS[(c, need.klass)]
            codes.setdefault(q.code, q)
    values: dict[str, float] = {}
    warnings: list[str] = []
    for code, q in codes.items():
        try:
            found = lookup(GET_SERVICE_QUOTA, {"serviceCode": SERVICE_CODE, "quotaCode": code})
        except Exception as error:  # any failure: the pools are not checked against it
            warnings.append(
                f"EC2 quota {q.name} ({code}): looking it up failed ({str(error).strip()}); "
                "the GPU pools were not checked against it (the deploying identity needs "
                "servicequotas:GetServiceQuota and servicequotas:GetAWSDefaultServiceQuota)"
            )
            continue
        if not found or found.get("value") is None:
            warnings.append(
                f"EC2 quota {q.name} ({code}): unknown in this preview; the GPU pools were not "
                "checked against it"
            )
            continue
        values[code] = float(found["value"])
    refusals, judged = judge(needs, values, region)
    return refusals, warnings + judged
