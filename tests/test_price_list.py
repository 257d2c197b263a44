"""Issue 28, point 12: the hourly cost at full budget from the AWS Price List API at preview and
`pulumi up`, logged by the pre-flight; the table's figure, with a warning naming
``pricing:GetProducts``, where the lookup fails; never a refusal.

Expected figures are computed by hand from the prices the fake Price List answers here, and
from the table's us-east-1 prices that tests/budget/test_cost.py reads by hand (g6.xlarge
$0.8048, g6.12xlarge $4.6016, p5.48xlarge $55.04, m7i.large $0.1008)."""

from __future__ import annotations

import datetime
import json
import logging

import pytest
from test_preflight import dev_config

from eks_gpu_platform import GpuPlatform, read_stack_config
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.price_list import cost_log, hourly_usd, product_args

TABLE = (
    "the table: on-demand Linux prices of 2026-07-20, https://github.com/aws/"
    "karpenter-provider-aws/blob/v1.15.0/pkg/providers/pricing/zz_generated.pricing_aws.go"
)
NOT_COUNTED = "CPU pools, the EKS control plane, NAT gateways, EBS volumes and data transfer"
SPOT = " (spot and reserved capacity priced at on-demand, their upper bound)"
# A day that is never the day of a run: a line dated by the clock, not by ``_today``, fails.
DAY = datetime.date(2024, 2, 29)


def product(usd: str, reserved: str = "0.5") -> str:
    """A price list product document as GetProducts answers it (hand-written: an On-Demand
    term of one hourly rate, and a Reserved term that is not the on-demand price)."""
    return json.dumps(
        {
            "product": {"sku": "ABC", "attributes": {"instanceType": "g6.xlarge"}},
            "serviceCode": "AmazonEC2",
            "terms": {
                "OnDemand": {
                    "ABC.JRTCKXETXF": {
                        "priceDimensions": {
                            "ABC.JRTCKXETXF.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "pricePerUnit": {"USD": usd},
                            }
                        }
                    }
                },
                "Reserved": {
                    "ABC.4NA7Y494T4": {
                        "priceDimensions": {
                            "ABC.4NA7Y494T4.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "pricePerUnit": {"USD": reserved},
                            }
                        }
                    }
                },
            },
        }
    )


def test_the_on_demand_hourly_price_is_read_from_the_product_document():
    assert hourly_usd(product("0.8048000000")) == 0.8048
    two = json.loads(product("1.0"))
    offer = two["terms"]["OnDemand"]["ABC.JRTCKXETXF"]["priceDimensions"]
    offer["ABC.JRTCKXETXF.OTHER"] = {"unit": "Hrs", "pricePerUnit": {"USD": "2.0"}}
    with pytest.raises(ValueError, match="2 on-demand hourly USD prices"):
        hourly_usd(json.dumps(two))


def config(region: str) -> PlatformConfig:
    """tests/budget/test_cost.py's stack: mixed (g6.xlarge, g6.12xlarge; 6 GPUs), big
    (p5.48xlarge, spot; 16 GPUs), system m7i.large x 3, a CPU pool."""
    values = {
        "cluster": {"name": "gpu-test"},
        "systemNodeGroup": {"instanceTypes": ["m7i.large"], "minSize": 2, "maxSize": 3},
        "nodePools": [
            {
                "name": "mixed",
                "kind": "gpu",
                "instanceTypes": ["g6.xlarge", "g6.12xlarge"],
                "capacityTypes": ["on-demand"],
                "limits": {"gpus": 6},
            },
            {
                "name": "big",
                "kind": "gpu",
                "instanceTypes": ["p5.48xlarge"],
                "capacityTypes": ["spot"],
                "preemptible": True,
                "limits": {"gpus": 16},
            },
            {"name": "general", "kind": "cpu", "limits": {"cpu": "64", "memory": "256Gi"}},
        ],
    }
    return PlatformConfig.load(values, region)


LIVE = {"g6.xlarge": "1.0000000000", "g6.12xlarge": "5.0000000000", "p5.48xlarge": "60.0"}
LIVE["m7i.large"] = "0.1000000000"


def test_the_pools_and_the_stack_from_the_price_list():
    calls = []

    def invoke(token, args):
        calls.append((token, args))
        name = args["filters"][0]["value"]
        return {"result": product(LIVE[name])}

    lines, warnings = cost_log(config("ap-south-1"), invoke, DAY)
    live = "AWS Price List API, ap-south-1, 2024-02-29"
    # mixed: 6 GPUs: 5.0 (4-GPU) + 2 x 1.0 = 7.0 (six 1-GPU nodes: 6.0); big: 2 x 60.0 = 120.0;
    # system: 3 x 0.1 = 0.3; the stack: 127.3.
    assert lines == [
        f"Hourly cost of GPU pool mixed at full budget: at most $7.0000/h ({live})",
        f"Hourly cost of GPU pool big at full budget: at most $120.0000/h{SPOT} ({live})",
        f"Hourly cost of the system node group at its largest: at most $0.3000/h ({live})",
        f"Hourly cost of the stack at full budget: at most $127.3000/h ({live}); "
        f"not counted: {NOT_COUNTED}",
    ]
    assert warnings == []
    assert calls[0] == (
        "aws:pricing/getProduct:getProduct",
        {
            "filters": [
                {"field": "instanceType", "value": "g6.12xlarge"},
                {"field": "regionCode", "value": "ap-south-1"},
                {"field": "operatingSystem", "value": "Linux"},
                {"field": "preInstalledSw", "value": "NA"},
                {"field": "capacitystatus", "value": "Used"},
                {"field": "marketoption", "value": "OnDemand"},
                {"field": "tenancy", "value": "Shared"},
            ],
            "serviceCode": "AmazonEC2",
        },
    )
    assert [c[1]["filters"][0]["value"] for c in calls] == sorted(LIVE)


DENIED = (
    "invoking aws:pricing/getProduct:getProduct: 1 error occurred:\n\t* reading Pricing "
    "Products: operation error Pricing: GetProducts, https response error StatusCode: 400, "
    "RequestID: 0, api error AccessDeniedException: not authorized to perform: "
    "pricing:GetProducts\n\n"
)


def test_a_denied_lookup_warns_and_the_tables_figures_stand():
    calls = []

    def invoke(token, args):
        calls.append(token)
        raise RuntimeError(DENIED)

    lines, warnings = cost_log(config("ap-south-1"), invoke, DAY)
    assert len(calls) == 1  # the first failure ends the lookups
    assert warnings == [
        "AWS Price List API, ap-south-1: looking up the on-demand price of g6.12xlarge failed "
        "(reading Pricing Products: operation error Pricing: GetProducts, https response error "
        "StatusCode: 400, RequestID: 0, api error AccessDeniedException: not authorized to "
        f"perform: pricing:GetProducts); the hourly costs use {TABLE} (the deploying identity "
        "needs pricing:GetProducts, optional)"
    ]
    table = f"{TABLE}; us-east-1's prices stand in for ap-south-1"
    # The table's: mixed 4.6016 + 2 x 0.8048 = 6.2112; big 2 x 55.04 = 110.08;
    # system 3 x 0.1008 = 0.3024; the stack 116.5936.
    assert lines == [
        f"Hourly cost of GPU pool mixed at full budget: at most $6.2112/h ({table})",
        f"Hourly cost of GPU pool big at full budget: at most $110.0800/h{SPOT} ({table})",
        f"Hourly cost of the system node group at its largest: at most $0.3024/h ({table})",
        f"Hourly cost of the stack at full budget: at most $116.5936/h ({table}); "
        f"not counted: {NOT_COUNTED}",
    ]


def test_an_unknown_answer_warns_without_blaming_the_permission():
    lines, warnings = cost_log(config("us-east-1"), lambda token, args: {}, DAY)
    assert warnings == [
        "AWS Price List API, us-east-1: the lookup of g6.12xlarge answered unknown; the hourly "
        f"costs use {TABLE}"
    ]
    assert lines[-1] == (
        f"Hourly cost of the stack at full budget: at most $116.5936/h ({TABLE}); "
        f"not counted: {NOT_COUNTED}"
    )


def test_a_region_whose_provider_cannot_ask_the_price_list_logs_the_table():
    def invoke(token, args):
        raise AssertionError("no lookup from us-west-2")

    lines, warnings = cost_log(config("us-west-2"), invoke, DAY)
    assert warnings == []
    assert lines[-1] == (
        f"Hourly cost of the stack at full budget: at most $116.5936/h ({TABLE}; us-east-1's "
        "prices stand in for us-west-2; the AWS Price List API is not asked from us-west-2: "
        "its data source is only served by a provider in us-east-1 or ap-south-1); "
        f"not counted: {NOT_COUNTED}"
    )


def test_product_args_name_the_region_and_type():
    assert product_args("us-east-1", "p5.48xlarge")["filters"][:2] == [
        {"field": "instanceType", "value": "p5.48xlarge"},
        {"field": "regionCode", "value": "us-east-1"},
    ]


# -- the pre-flight at preview, under the mocks --------------------------------------------


def preview_us_east_1(monkeypatch, caplog, **mock):
    """dev in us-east-1, every GPU pool of g6.xlarge (1 L4) only, as a preview."""
    config = dev_config()
    config["aws:region"] = "us-east-1"
    pools = [dict(p) for p in config["eks-gpu-platform:nodePools"]]
    for pool in pools:
        if pool["kind"] == "gpu":
            pool.pop("gpus")
            pool["instanceTypes"] = ["g6.xlarge"]
    config["eks-gpu-platform:nodePools"] = pools
    monkeypatch.setattr(mocks.RecordingMocks, "caller", "assumed-role/PlatformAdmin/gha")
    for key, value in mock.items():
        monkeypatch.setattr(mocks.RecordingMocks, key, value)
    monkeypatch.setattr("eks_gpu_platform.price_list._today", lambda: DAY, raising=True)
    caplog.set_level(logging.INFO, logger="eks_gpu_platform.offline.mocks.program")
    rec = mocks.run(
        lambda: GpuPlatform("platform", read_stack_config()),
        project="eks-gpu-platform",
        stack="dev",
        config=config,
        region="us-east-1",
        preview=True,
    )
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    return rec, [m for m in infos if m.startswith("Hourly cost")]


def test_the_preview_logs_each_pool_and_the_stack_from_the_price_list(monkeypatch, caplog):
    """Fails on the old code: no lookup, no line. Budgets (tests/budget/test_ancestors.py):
    gpu-spot 6, inference 4, notebooks 1 physical GPU; g6.xlarge at $1.5: 9.0, 6.0, 1.5;
    system 3 x 0.25 = 0.75; the stack 17.25."""
    prices = {("us-east-1", "g6.xlarge"): 1.5, ("us-east-1", "m7i.large"): 0.25}
    rec, lines = preview_us_east_1(monkeypatch, caplog, price_list=prices)
    live = "AWS Price List API, us-east-1, 2024-02-29"
    assert lines == [
        f"Hourly cost of GPU pool gpu-spot at full budget: at most $9.0000/h{SPOT} ({live})",
        f"Hourly cost of GPU pool inference at full budget: at most $6.0000/h ({live})",
        f"Hourly cost of GPU pool notebooks at full budget: at most $1.5000/h ({live})",
        f"Hourly cost of the system node group at its largest: at most $0.7500/h ({live})",
        f"Hourly cost of the stack at full budget: at most $17.2500/h ({live}); "
        f"not counted: {NOT_COUNTED}",
    ]
    fixed = [
        {"field": "operatingSystem", "value": "Linux"},
        {"field": "preInstalledSw", "value": "NA"},
        {"field": "capacitystatus", "value": "Used"},
        {"field": "marketoption", "value": "OnDemand"},
        {"field": "tenancy", "value": "Shared"},
    ]
    assert [a for t, a in rec.calls if t == "aws:pricing/getProduct:getProduct"] == [
        {
            "serviceCode": "AmazonEC2",
            "filters": [
                {"field": "instanceType", "value": name},
                {"field": "regionCode", "value": "us-east-1"},
                *fixed,
            ],
        }
        for name in ("g6.xlarge", "m7i.large")
    ]
    assert not any("Price List" in w for w in rec.warnings)


def test_a_denied_price_list_is_a_warning_at_preview(monkeypatch, caplog):
    rec, lines = preview_us_east_1(monkeypatch, caplog, denied_price_list=True)
    assert [w for w in rec.warnings if "Price List" in w] == [
        "AWS Price List API, us-east-1: looking up the on-demand price of g6.xlarge failed "
        "(reading Pricing Products: operation error Pricing: GetProducts, https response error "
        "StatusCode: 400, RequestID: 0, api error AccessDeniedException: not authorized to "
        f"perform: pricing:GetProducts); the hourly costs use {TABLE} (the deploying identity "
        "needs pricing:GetProducts, optional)"
    ]
    # The table's g6.xlarge (0.8048) and m7i.large (0.1008): 6 x 0.8048 = 4.8288, ...
    assert lines[0] == (
        f"Hourly cost of GPU pool gpu-spot at full budget: at most $4.8288/h{SPOT} ({TABLE})"
    )
    # 4.8288 + 3.2192 + 0.8048 + 0.3024 = 9.1552
    assert lines[-1] == (
        f"Hourly cost of the stack at full budget: at most $9.1552/h ({TABLE}); "
        f"not counted: {NOT_COUNTED}"
    )
