"""Issue 28, point 12: each pool's hourly cost at full budget and the stack's, from the dated
price table, instead of nothing ("unknown").

Every expected figure is computed by hand below from prices read in aws/karpenter-provider-aws
v1.15.0 ``pkg/providers/pricing/zz_generated.pricing_aws.go`` (us-east-1, generated
2026-07-20): g6.xlarge $0.8048 (1 L4), g6.12xlarge $4.6016 (4 L4), p5.48xlarge $55.04
(8 H100), m7i.large $0.1008, m7i.xlarge $0.2016.
"""

from typing import Any

import pytest
from capacity_cases import cost_args, stack_specs

from eks_gpu_platform import prices
from eks_gpu_platform.budget import cost_document, cost_lines, most_per_hour
from eks_gpu_platform.config import PlatformConfig

SOURCE = (
    "https://github.com/aws/karpenter-provider-aws/blob/v1.15.0/"
    "pkg/providers/pricing/zz_generated.pricing_aws.go"
)


def test_the_budget_buys_whole_nodes_at_the_highest_total():
    # 6 GPUs of (1, 0.8048) and (4, 4.6016): one 4-GPU node and two 1-GPU nodes,
    # 4.6016 + 2 x 0.8048 = 6.2112 (six 1-GPU nodes: 4.8288).
    assert most_per_hour(6, [(1, 0.8048), (4, 4.6016)]) == pytest.approx(6.2112)
    # 12 GPUs of 8-GPU nodes: one node (a second would pass the limit).
    assert most_per_hour(12, [(8, 55.04)]) == 55.04
    assert most_per_hour(7, [(8, 55.04)]) == 0.0
    assert most_per_hour(0, [(1, 1.0)]) == 0.0


def test_another_regions_price_stands_in_and_says_so():
    assert prices.stand_in("us-east-1", "g6.xlarge") == (0.8048, "us-east-1")
    assert prices.stand_in("us-west-2", "g6.xlarge") == (0.8048, "us-east-1")
    assert prices.stand_in("eu-west-1", "p5.48xlarge") == (55.04, "us-east-1")
    # Not for other partitions (other prices, or another currency), nor a type without one.
    assert prices.stand_in("us-gov-west-1", "g6.xlarge") is None
    assert prices.stand_in("cn-north-1", "g6.xlarge") is None
    assert prices.stand_in("us-west-2", "p5e.48xlarge") is None


def config(region: str, **extra) -> PlatformConfig:
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
        **extra,
    }
    return PlatformConfig.load(values, region)


def cost_of(config: PlatformConfig) -> dict[str, Any]:
    return cost_document(*stack_specs(config), **cost_args(config))


def test_the_pools_system_nodes_and_stack_at_full_budget_in_a_region_without_prices():
    cost = cost_of(config("us-west-2"))
    # mixed: 6.2112 (above); big: 16 GPUs = two p5.48xlarge = 110.08, spot at on-demand;
    # system: 3 x 0.1008 = 0.3024; total 6.2112 + 110.08 + 0.3024 = 116.5936.
    assert cost == {
        "region": "us-west-2",
        "source": SOURCE,
        "retrieved": "2026-07-20",
        "pools": {
            "mixed": {
                "hourlyUsd": 6.2112,
                "unpriced": [],
                "unbounded": False,
                "priceRegions": ["us-east-1"],
                "spotAsOnDemand": False,
            },
            "big": {
                "hourlyUsd": 110.08,
                "unpriced": [],
                "unbounded": False,
                "priceRegions": ["us-east-1"],
                "spotAsOnDemand": True,
            },
        },
        "systemNodeGroup": {
            "hourlyUsd": 0.3024,
            "nodes": 3,
            "instanceType": "m7i.large",
            "priceRegions": ["us-east-1"],
            "unpriced": [],
        },
        "totalHourlyUsd": 116.5936,
        "complete": True,
        "priceRegions": ["us-east-1"],
        "cpuPools": ["general"],
        "notCounted": (
            "CPU pools, the EKS control plane, NAT gateways, EBS volumes and data transfer"
        ),
    }
    assert cost_lines(cost) == [
        "Hourly cost at full budget (on-demand Linux prices of 2026-07-20, "
        f"{SOURCE}; us-west-2 has no price in the table: us-east-1's prices stand in):",
        "- pool mixed: at most $6.2112/h",
        "- pool big: at most $110.0800/h (spot and reserved capacity priced at on-demand, "
        "their upper bound)",
        "- system node group: 3 x m7i.large: at most $0.3024/h",
        "- stack: at most $116.5936/h; not counted: CPU pools, the EKS control plane, NAT "
        "gateways, EBS volumes and data transfer (CPU pools here: general)",
    ]


def test_a_type_without_a_price_is_named_and_the_total_says_it_is_partial():
    values = config("us-east-1")
    cost = cost_of(values)
    assert cost["priceRegions"] == ["us-east-1"]
    assert cost_lines(cost)[0] == (
        f"Hourly cost at full budget (on-demand Linux prices of 2026-07-20, {SOURCE}):"
    )
    # p5e.48xlarge has no price in the table: the pool is priced with p5.48xlarge only.
    raw = {
        "cluster": {"name": "gpu-test"},
        "nodePools": [
            {
                "name": "h200",
                "kind": "gpu",
                "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"],
                "capacityTypes": ["on-demand"],
                "limits": {"gpus": 8},
            }
        ],
    }
    cost = cost_of(PlatformConfig.load(raw, "us-east-1"))
    assert cost["pools"]["h200"]["hourlyUsd"] == 55.04
    assert cost["pools"]["h200"]["unpriced"] == ["p5e.48xlarge"]
    # The default system node group: 4 x m7i.xlarge (DEFAULT_SYSTEM_MAX_SIZE) = 0.8064.
    assert cost["systemNodeGroup"]["hourlyUsd"] == 0.8064
    assert cost["totalHourlyUsd"] == 55.8464
    assert cost["complete"] is False
    lines = cost_lines(cost)
    assert lines[1] == ("- pool h200: at most $55.0400/h plus p5e.48xlarge (no price in the table)")
    assert lines[-1] == (
        "- stack: at most $55.8464/h plus the types without a price; not counted: CPU pools, "
        "the EKS control plane, NAT gateways, EBS volumes and data transfer"
    )


def test_a_gov_region_has_no_figure():
    cost = cost_of(config("us-gov-west-1"))
    assert cost["pools"]["mixed"]["hourlyUsd"] is None
    assert cost["totalHourlyUsd"] is None
    assert cost_lines(cost)[1] == "- pool mixed: no price (g6.12xlarge, g6.xlarge not in the table)"
    assert cost_lines(cost)[-1].startswith("- stack: unknown; not counted: ")


def test_summary_md_and_plan_md_show_the_cost(tmp_path):
    from eks_gpu_platform.offline.capacity import capacity_markdown, write_capacity
    from eks_gpu_platform.offline.plan_report import cost_section

    text = capacity_markdown(config("us-west-2"))
    block = "\n".join(cost_lines(cost_of(config("us-west-2"))))
    assert f"\n\n{block}\n" in text
    assert "- stack: at most $116.5936/h;" in text
    base, new = tmp_path / "base", tmp_path / "new"
    base.mkdir(), new.mkdir()
    # Before: the same stack with the big pool at 8 GPUs: 6.2112 + 55.04 + 0.3024 = 61.5536.
    smaller = config("us-west-2").__class__.load(
        {
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
                    "limits": {"gpus": 8},
                },
            ],
        },
        "us-west-2",
    )
    write_capacity(smaller, base)
    write_capacity(config("us-west-2"), new)
    assert cost_section(base, new) == "\n".join(
        [
            "",
            "## Hourly cost at full budget",
            "",
            block,
            "- stack before this change: at most $61.5536/h",
            "",
        ]
    )
    assert cost_section(tmp_path / "nothing", new).splitlines()[-1] == (
        "- before this change: no capacity plan (nothing deployed or no pools)"
    )
    older = tmp_path / "older"  # rendered by a version without `cost`
    older.mkdir()
    (older / "capacity.json").write_text('{"pools": [], "queues": [], "warnings": []}')
    assert cost_section(older, new).splitlines()[-1] == (
        "- stack before this change: not priced by the version it was rendered with"
    )
