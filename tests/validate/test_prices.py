"""The dated price table (components/prices.py) and the cost estimate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from eks_gpu_platform import catalog
from eks_gpu_platform.validate import prices
from eks_gpu_platform.validate.core import Planned

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import gen_prices  # noqa: E402
import upstream_modules  # noqa: E402

# the shipped stacks as the fixture stacks freeze them: never the user's root files
FIXTURE_STACKS = TESTS / "fixtures" / "stacks"


def test_the_table_covers_the_shipped_stacks_regions_and_us_east_1():
    # dev is us-west-2, prod us-east-1 (tests/fixtures/stacks/Pulumi.{dev,prod}.yaml).
    assert prices.REGIONS == ("us-east-1", "us-west-2")
    assert gen_prices.stack_regions(FIXTURE_STACKS) == prices.REGIONS


@pytest.mark.parametrize("region", ["us-east-1", "us-west-2"])
def test_every_catalog_type_is_priced_or_unpriced_on_purpose(region):
    for name in catalog.INSTANCE_TYPES:
        price = prices.hourly_usd(region, name)
        reason = prices.unpriced_reason(region, name)
        assert (price is None) != (reason is None), (region, name, price, reason)


def test_the_unpriced_entries_and_their_reasons():
    assert prices.UNPRICED == {
        ("us-east-1", "p5e.48xlarge"): prices.NOT_IN_SOURCE_TYPE,
        ("us-west-2", "*"): prices.NOT_IN_SOURCE_REGION,
    }
    assert prices.unpriced_reason("us-west-2", "g6.xlarge") == (
        "the source holds us-east-1 prices only and the AWS price list could not be fetched"
    )
    assert prices.hourly_usd("us-west-2", "g6.xlarge") is None
    assert prices.hourly_usd("eu-west-1", "g6.xlarge") is None


def test_spot_checked_prices_and_date():
    # Karpenter v1.15.0 zz_generated.pricing_aws.go, us-east-1, "generated at 2026-07-20T13:44:30Z"
    # (v1.14.1's, "generated at 2026-07-06T14:20:29Z", had the same prices for these types).
    assert prices.RETRIEVED == "2026-07-20"
    assert prices.hourly_usd("us-east-1", "g6.xlarge") == 0.8048
    assert prices.hourly_usd("us-east-1", "p5.48xlarge") == 55.04
    assert prices.hourly_usd("us-east-1", "p4d.24xlarge") == 21.957642
    assert prices.hourly_usd("us-east-1", "p6-b200.48xlarge") == 113.9328
    assert prices.SOURCE == (
        "https://github.com/aws/karpenter-provider-aws/blob/v1.15.0/"
        "pkg/providers/pricing/zz_generated.pricing_aws.go"
    )


def test_the_table_is_what_the_generator_writes_from_karpenters_file():
    # Never skipped: the file comes from the Karpenter module tests/conformance/go.mod pins
    # (go mod download, checked by go.sum); if it cannot be fetched, the test fails in one line.
    block = gen_prices.render(
        gen_prices.pricing_file().read_text(),
        gen_prices.stack_regions(FIXTURE_STACKS),
        gen_prices.table_types(FIXTURE_STACKS),
    )
    assert block in gen_prices.OUT.read_text()


def test_the_source_is_the_file_of_the_pinned_module():
    # bumping tests/conformance/go.mod's pin makes this fail until the table is regenerated
    version = upstream_modules.required_version(upstream_modules.KARPENTER_AWS)
    pinned = f"https://github.com/aws/karpenter-provider-aws/blob/{version}/{gen_prices.PRICING}"
    assert pinned == prices.SOURCE


GO_EXCERPT = """\
// generated at 2026-07-20T13:44:30Z for us-east-1

var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{
\t// us-east-1
\t"us-east-1": {
\t\t// g6 family
\t\t"g6.12xlarge": 4.601600, "g6.xlarge": 0.804800,
\t},
}
"""


def test_the_generator_parses_karpenters_go_map():
    assert gen_prices.prices(GO_EXCERPT) == {"g6.12xlarge": 4.6016, "g6.xlarge": 0.8048}
    assert gen_prices.generated_at(GO_EXCERPT) == "2026-07-20"
    block = gen_prices.render(
        GO_EXCERPT, ("us-east-1", "us-west-2"), ("g6.xlarge", "g6.12xlarge", "p5.48xlarge")
    )
    assert block == "\n".join(
        [
            gen_prices.BEGIN,
            'RETRIEVED = "2026-07-20"',
            'REGIONS = ("us-east-1", "us-west-2")',
            "HOURLY_USD: dict[str, dict[str, float]] = {",
            '    "us-east-1": {',
            '        "g6.xlarge": 0.8048,',
            '        "g6.12xlarge": 4.6016,',
            "    },",
            "}",
            "UNPRICED: dict[tuple[str, str], str] = {",
            '    ("us-east-1", "p5.48xlarge"): NOT_IN_SOURCE_TYPE,',
            '    ("us-west-2", "*"): NOT_IN_SOURCE_REGION,',
            "}",
            gen_prices.END,
        ]
    )


def planned(types, nodes=1, minutes=30.0):
    return Planned("capacity", "gpu", (), "gpu", tuple(types), nodes, minutes)


def test_estimate_is_nodes_times_the_highest_price_times_the_hours():
    # 2 x p5.48xlarge's $55.04/h (higher than p4d's $21.957642) x 0.5 h = $55.04
    assert prices.estimate_usd(planned(["p4d.24xlarge", "p5.48xlarge"], 2), "us-east-1") == 55.04
    assert prices.estimate_usd(planned(["g6.xlarge"], 1, 15.0), "us-east-1") == 0.2012


def test_estimate_is_none_when_any_type_has_no_price():
    assert prices.estimate_usd(planned(["g6.xlarge", "p5e.48xlarge"]), "us-east-1") is None
    assert prices.estimate_usd(planned(["g6.xlarge"]), "us-west-2") is None


def test_estimate_of_a_check_that_launches_nothing_is_zero():
    assert prices.estimate_usd(planned([], 0), "us-west-2") == 0.0


def test_describe():
    assert prices.describe(planned(["g6.xlarge"], 1, 15.0), "us-east-1") == (
        "$0.20 = 1 node(s) x $0.8048/h (g6.xlarge, us-east-1, on-demand, 2026-07-20) x 15 min"
    )
    assert prices.describe(planned(["g6.xlarge"]), "us-west-2") == (
        f"no price for g6.xlarge in us-west-2 (table of 2026-07-20, {prices.SOURCE}; "
        "--price INSTANCE_TYPE=USD_PER_HOUR supplies one)"
    )


def test_a_price_option_fills_only_what_the_table_lacks():
    user = {"g6.xlarge": 0.81, "p5e.48xlarge": 60.0}
    assert prices.hourly_usd("us-west-2", "g6.xlarge", user) == 0.81  # no us-west-2 table
    assert prices.hourly_usd("us-east-1", "g6.xlarge", user) == 0.8048  # the table wins
    assert prices.hourly_usd("us-east-1", "p5e.48xlarge", user) == 60.0  # unpriced there
    assert prices.hourly_usd("us-west-2", "g6.2xlarge", user) is None
    assert prices.user_supplied("us-west-2", "g6.xlarge", user) is True
    assert prices.user_supplied("us-east-1", "g6.xlarge", user) is False
    assert prices.estimate_usd(planned(["g6.xlarge"], 2), "us-west-2", user) == 0.81
    assert prices.estimate_usd(planned(["g6.xlarge", "g6.2xlarge"]), "us-west-2", user) is None


def test_describe_names_a_user_supplied_price():
    user = {"g6.xlarge": 0.81}
    assert prices.describe(planned(["g6.xlarge"], 1, 15.0), "us-west-2", user) == (
        "$0.20 = 1 node(s) x $0.8100/h (g6.xlarge, us-west-2, user-supplied (--price)) x 15 min"
    )
    assert prices.describe(planned(["g6.xlarge"], 1, 15.0), "us-east-1", user) == (
        "$0.20 = 1 node(s) x $0.8048/h (g6.xlarge, us-east-1, on-demand, 2026-07-20) x 15 min"
    )
