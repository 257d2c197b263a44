"""The hourly cost at full budget from the AWS Price List API, at preview and `pulumi up` (issue
28, point 12): each GPU pool's, the system node group's and the stack's, logged by the
pre-flight (``preflight.run_preflight``); never a refusal. The same model as the offline
figures (``budget.cost``), fed the Price List's prices instead of the dated table's.

The lookup: ``aws:pricing/getProduct:getProduct`` (pulumi-aws 7.51.1
``pulumi_aws/pricing/get_product.py``), service code ``AmazonEC2``, one product per instance
type with the filters Karpenter v1.15.0 uses for its on-demand prices (operatingSystem Linux,
preInstalledSw NA, capacitystatus Used, marketoption OnDemand, tenancy Shared:
aws/karpenter-provider-aws ``pkg/providers/pricing/pricing.go`` L210-222) and the stack's
``regionCode``. The data source answers ``result``, the one product's price list document (JSON)
and fails when the filters match none or several (hashicorp/terraform-provider-aws
``internal/service/pricing/product_data_source.go``, ``dataSourceProductRead``).

Where it is called from: the data source "is only available in a us-east-1 or ap-south-1
provider" (get_product.py's docstring) and has no per-invoke ``region`` argument (the SDK
function takes ``filters`` and ``service_code`` only; terraform-provider-aws
``internal/service/pricing/service_package_gen.go`` declares it
``Region: inttypes.ResourceRegionDisabled()``, and ``NewClient`` builds the client for the
provider's region). So it is called through the stack's own AWS provider when that provider is
in one of those regions; any other region would need a second AWS provider in us-east-1, a
registered resource, and nothing is registered before the pre-flight's refusals: there the
figures are the table's, and the log says why.

A lookup that fails (no ``pricing:GetProducts``, no such product): a warning naming the
permission; one that answers unknown (the provider's configuration not yet known): a warning
saying so. Either way the type's figure is the table's, with its source. The first failure
ends the lookups (a denied identity is denied for every type).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from . import prices
from .budget.cost import cost_document, part_figure

if TYPE_CHECKING:
    from .config import PlatformConfig

GET_PRODUCT = "aws:pricing/getProduct:getProduct"
SERVICE_CODE = "AmazonEC2"
# The regions whose provider serves the data source (get_product.py's docstring).
SERVED_FROM = ("us-east-1", "ap-south-1")
PERMISSION = "pricing:GetProducts"
FILTERS = (
    ("operatingSystem", "Linux"),
    ("preInstalledSw", "NA"),
    ("capacitystatus", "Used"),
    ("marketoption", "OnDemand"),
    ("tenancy", "Shared"),
)


def product_args(region: str, instance_type: str) -> dict[str, Any]:
    """The invoke's arguments for one type's on-demand Linux product in ``region``."""
    filters = [("instanceType", instance_type), ("regionCode", region), *FILTERS]
    return {
        "filters": [{"field": f, "value": v} for f, v in filters],
        "serviceCode": SERVICE_CODE,
    }


def hourly_usd(result: str) -> float:
    """The on-demand hourly USD price in a price list product document (``terms.OnDemand.
    <offer>.priceDimensions.<rate>.pricePerUnit.USD``, per ``Hrs``): exactly one is expected."""
    document = json.loads(result)
    figures = [
        float(dimension["pricePerUnit"]["USD"])
        for offer in document.get("terms", {}).get("OnDemand", {}).values()
        for dimension in offer.get("priceDimensions", {}).values()
        if dimension.get("unit") == "Hrs" and "USD" in dimension.get("pricePerUnit", {})
    ]
    if len(figures) != 1:
        raise ValueError(f"{len(figures)} on-demand hourly USD prices in the product document")
    return figures[0]


def _today() -> datetime.date:
    """The date of the call (UTC)."""
    return datetime.datetime.now(datetime.UTC).date()


def _types(config: PlatformConfig) -> list[str]:
    from .budget.stack import pool_nodepools

    nodepools = pool_nodepools(config.pools, config.gpu_operator, config.scheduler)
    names = {t.name for groups in nodepools.values() for g in groups for t in g.types}
    return sorted(names | set(config.system_node_group.instance_types))


def _table_source() -> str:
    return f"the table: on-demand Linux prices of {prices.RETRIEVED}, {prices.SOURCE}"


def lookup(
    region: str, types: Iterable[str], invoke: Callable[[str, dict], dict]
) -> tuple[dict[str, float], list[str]]:
    """Each type's price from the Price List (``invoke``: a synchronous invoke, ``{}`` when
    unknown, raising the provider's error); ``(found, warnings)``: the first failure ends it."""
    found: dict[str, float] = {}
    for name in types:
        try:
            answer = invoke(GET_PRODUCT, product_args(region, name))
            if not answer.get("result"):  # the provider's configuration is not known yet
                return found, [
                    f"AWS Price List API, {region}: the lookup of {name} answered unknown; the "
                    f"hourly costs use {_table_source()}"
                ]
            found[name] = hourly_usd(answer["result"])
        except Exception as error:  # any failure: the table's figures, never a refusal
            reason = str(error).strip().splitlines()[-1].strip(" *\t")
            return found, [
                f"AWS Price List API, {region}: looking up the on-demand price of {name} "
                f"failed ({reason}); the hourly costs use {_table_source()} (the deploying "
                f"identity needs {PERMISSION}, optional)"
            ]
    return found, []


def cost_log(
    config: PlatformConfig,
    invoke: Callable[[str, dict], dict],
    today: datetime.date | None = None,
) -> tuple[list[str], list[str]]:
    """The info lines (each GPU pool, the system node group, the stack) and the warnings."""
    region = config.region
    day = (today or _today()).isoformat()
    types = _types(config)
    found: dict[str, float] = {}
    warnings: list[str] = []
    if region in SERVED_FROM:
        found, warnings = lookup(region, types, invoke)
        live = f"AWS Price List API, {region}, {day}"
    else:
        live = ""
        warnings = []
    from_table: set[str] = set()

    def price(where: str, name: str) -> tuple[float, str] | None:
        if name in found:
            return found[name], where
        from_table.add(name)
        return prices.stand_in(where, name)

    cost = cost_document(
        config.pools,
        config.gpu_operator,
        config.scheduler,
        region=config.region,
        system_node_group=config.system_node_group,
        cpu_pools=[p.name for p in config.node_pools if p.kind == "cpu"],
        price=price,
    )
    stand_in = [r for r in cost["priceRegions"] if r != region]

    def source(names: set[str]) -> str:
        table = sorted(names & from_table)
        parts = [live] if live and len(table) < len(names) else []
        if table:
            where = f"; {', '.join(stand_in)}'s prices stand in for {region}" if stand_in else ""
            what = "" if not parts else f"{', '.join(table)} from "
            parts.append(f"{what}{_table_source()}{where}")
        if not live:
            parts.append(
                f"the AWS Price List API is not asked from {region}: its data source is only "
                f"served by a provider in {' or '.join(SERVED_FROM)}"
            )
        return "; ".join(parts)

    from .budget.stack import pool_nodepools

    groups = pool_nodepools(config.pools, config.gpu_operator, config.scheduler)
    lines = []
    for name, pool in cost["pools"].items():
        names = {t.name for g in groups[name] for t in g.types}
        lines.append(
            f"Hourly cost of GPU pool {name} at full budget: {part_figure(pool)} ({source(names)})"
        )
    system = cost["systemNodeGroup"]
    names = set(config.system_node_group.instance_types)
    lines.append(
        f"Hourly cost of the system node group at its largest: {part_figure(system)} "
        f"({source(names)})"
    )
    total = cost["totalHourlyUsd"]
    total_text = "unknown" if total is None else f"at most ${total:,.4f}/h"
    lines.append(
        f"Hourly cost of the stack at full budget: {total_text} ({source(set(types))}); "
        f"not counted: {cost['notCounted']}"
    )
    return lines, warnings
