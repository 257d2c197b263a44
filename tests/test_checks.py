"""Issue 13, class 3 (checked by pattern only): durations with floors, cron fields within their
ranges, label and taint keys with the real Kubernetes syntax and reserved domains, KAI's shard
label, and quantities greater than zero. Through the stack configuration, so every message
carries its key path."""

import re
from typing import Any

import pytest
from upstream_modules import karpenter_file

from eks_gpu_platform.checks import check_cron, check_qualified_key, duration_seconds
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.spec import SpecError

GPU = {"name": "gpu", "gpus": ["l4"], "limits": {"gpus": 8}}
KEY_NAME = (
    "must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
)
RESERVED = "(karpenter.sh, karpenter.k8s.aws, kubernetes.io, k8s.io); use your own domain"


def pool_errors(**changes: Any) -> list[str]:
    values = {"cluster": {"name": "gpu-dev"}, "nodePools": [{**GPU, **changes}]}
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-west-2")
    return err.value.lines


def budget(schedule: str) -> dict[str, Any]:
    return {"budgets": [{"nodes": "1", "schedule": schedule, "duration": "1h"}]}


DURATIONS = [
    pytest.param(
        {"expireAfter": "0s"},
        "nodePools[0](gpu).expireAfter: '0s' is shorter than 1h; nodes would expire while (or "
        "soon after) they start",
        id="expire-at-launch",
    ),
    pytest.param(
        {"expireAfter": "59m"},
        "nodePools[0](gpu).expireAfter: '59m' is shorter than 1h; nodes would expire while (or "
        "soon after) they start",
        id="expire-in-59-minutes",
    ),
    pytest.param(
        {"terminationGracePeriod": "30s"},
        "nodePools[0](gpu).terminationGracePeriod: '30s' is shorter than 1m; pods would be "
        "killed without a chance to drain",
        id="grace-30s",
    ),
    pytest.param(
        {"terminationGracePeriod": "0h0m"},
        "nodePools[0](gpu).terminationGracePeriod: '0h0m' is shorter than 1m; pods would be "
        "killed without a chance to drain",
        id="grace-zero-spelled-out",
    ),
]


DURATIONS.append(
    pytest.param(
        {"disruption": {"budgets": [{"nodes": "1", "schedule": "@daily", "duration": "0h"}]}},
        "nodePools[0](gpu).disruption.budgets[0].duration: '0h' is zero: the budget would never "
        "be active; give it a length such as '8h'",
        id="budget-duration-zero",
    )
)


@pytest.mark.parametrize(("changes", "line"), DURATIONS)
def test_durations_have_floors(changes, line):
    assert pool_errors(**changes) == [line]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [({"expireAfter": "1h"}, "1h"), ({"expireAfter": "Never"}, "Never"), ({}, "720h")],
)
def test_durations_at_or_above_their_floor_pass(changes, expected):
    values = {"cluster": {"name": "gpu-dev"}, "nodePools": [{**GPU, **changes}]}
    assert PlatformConfig.load(values, "us-west-2").node_pools[0].expiry == expected


def test_duration_seconds():
    assert [duration_seconds(v) for v in ("1h30m", "90s", "2h0m5s", "1d", "")] == [
        5400,
        90,
        7205,
        None,
        None,
    ]


CRON = [
    pytest.param("60 8 * * *", "the minute field '60' is outside 0-59", id="minute-60"),
    pytest.param("0 24 * * *", "the hour field '24' is outside 0-23", id="hour-24"),
    pytest.param("0 8 0 * *", "the day of month field '0' is outside 1-31", id="day-0"),
    pytest.param("0 8 * 13 *", "the month field '13' is outside 1-12 or JAN-DEC", id="month-13"),
    pytest.param("0 8 * * 7-9", "the day of week field '7-9' is outside 0-6 or SUN-SAT", id="dow"),
    pytest.param("0 8 * * FRI-MON", "the day of week range 'FRI-MON' runs backwards", id="back"),
    pytest.param("*/0 * * * *", "the minute step '0' is not a positive number", id="step-0"),
    pytest.param(
        "0 8 * * MOON", "the day of week field 'MOON' is outside 0-6 or SUN-SAT", id="name"
    ),
]


@pytest.mark.parametrize(("schedule", "problem"), CRON)
def test_cron_fields_within_their_ranges(schedule, problem):
    assert pool_errors(disruption=budget(schedule)) == [
        f"nodePools[0](gpu).disruption.budgets[0].schedule: '{schedule}': {problem}"
    ]


@pytest.mark.parametrize(
    "schedule",
    ["0 8 * * MON-FRI", "*/15 8-18 * JAN,jul ?", "0 0 1 1 0", "@daily", "@hourly", "5,10 * * * *"],
)
def test_valid_cron_schedules(schedule):
    assert check_cron(schedule) is None


def test_cron_macro_and_field_count():
    assert check_cron("@sometimes") == (
        "'@sometimes' is not a cron macro; expected one of @yearly, @annually, @monthly, "
        "@weekly, @daily, @midnight, @hourly or a 5-field cron schedule"
    )
    assert check_cron("0 8 * *") == (
        "'0 8 * *' is not a 5-field cron schedule (minute hour day-of-month month day-of-week) "
        "or an @daily macro"
    )


# The NodePool CRD pattern on spec.disruption.budgets[].schedule (kubernetes-sigs/karpenter
# v1.15.0 pkg/apis/v1/nodepool.go L144; aws/karpenter-provider-aws v1.15.0
# pkg/apis/crds/karpenter.sh_nodepools.yaml L135, read from the Go module) admits only the listed
# macros or five whitespace-separated fields: '@every' never.
EVERY = (
    "'@every <duration>' is refused by the NodePool CRD's schedule pattern (Karpenter v1.15.0); "
    "use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or a 5-field "
    "cron schedule such as '0 */6 * * *'"
)


@pytest.mark.parametrize("schedule", ["@every 6h", "@every 0s", "@every 1h 2h 3h 4h"])
def test_cron_every_is_refused(schedule):
    assert check_cron(schedule) == f"'{schedule}': {EVERY}"
    assert pool_errors(disruption=budget(schedule)) == [
        f"nodePools[0](gpu).disruption.budgets[0].schedule: '{schedule}': {EVERY}"
    ]


def test_cron_every_is_outside_the_crd_pattern():
    crd = karpenter_file("pkg/apis/crds/karpenter.sh_nodepools.yaml").read_text()
    pattern = re.search(r"^ +pattern: (\^\(@\(annually.*)$", crd, re.M).group(1)
    assert pattern == (
        r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"
    )
    assert [bool(re.search(pattern, s)) for s in ("@every 6h", "@daily", "0 */6 * * *")] == [
        False,
        True,
        True,
    ]


LABEL_KEYS = [
    pytest.param(
        "example.com/" + "n" * 64,
        f"'example.com/{'n' * 64}' is not a valid label key: the name '{'n' * 64}' {KEY_NAME}",
        id="name-64",
    ),
    pytest.param(
        ("a" * 63 + ".") * 4 + "io/x",
        "is not a valid label key: its prefix",
        id="prefix-over-253",
    ),
    pytest.param(
        "Example.com/team",
        "'Example.com/team' is not a valid label key: its prefix 'Example.com' must be a DNS "
        "subdomain of at most 253 lowercase letters, digits, '-' and '.'",
        id="prefix-upper-case",
    ),
    pytest.param(
        "example.com/",
        f"'example.com/' is not a valid label key: the name {KEY_NAME}",
        id="empty-name",
    ),
    pytest.param(
        "kai.scheduler/node-pool",
        "'kai.scheduler/node-pool' is KAI Scheduler's shard label; setting it on a pool moves "
        "its nodes into another scheduling shard",
        id="kai-shard-label",
    ),
    pytest.param(
        "topology.k8s.io/zone",
        f"'topology.k8s.io/zone' is in a domain Kubernetes or Karpenter reserves {RESERVED}",
        id="k8s-io-subdomain",
    ),
]


@pytest.mark.parametrize(("key", "message"), LABEL_KEYS)
def test_label_keys(key, message):
    (line,) = pool_errors(labels={key: "x"})
    assert line.startswith("nodePools[0](gpu).labels: ")
    assert message in line


def test_label_key_of_253_and_63_passes():
    prefix = ".".join(["a" * 63] * 3 + ["b" * 61])
    assert len(prefix) == 253
    assert check_qualified_key(f"{prefix}/{'n' * 63}", "label key") is None


TAINTS = [
    pytest.param(
        {"key": "node.kubernetes.io/unschedulable"},
        "nodePools[0](gpu).taints[0].key: 'node.kubernetes.io/unschedulable' is in a domain "
        f"Kubernetes or Karpenter reserves {RESERVED}",
        id="kubernetes-io",
    ),
    pytest.param(
        {"key": "karpenter.sh/disrupted"},
        f"nodePools[0](gpu).taints[0].key: 'karpenter.sh/disrupted' is in a domain Kubernetes or "
        f"Karpenter reserves {RESERVED}",
        id="karpenter-sh",
    ),
    pytest.param(
        {"key": "example.com/" + "t" * 64},
        f"nodePools[0](gpu).taints[0].key: 'example.com/{'t' * 64}' is not a valid taint key: "
        f"the name '{'t' * 64}' {KEY_NAME}",
        id="name-64",
    ),
    pytest.param(
        {"key": "example.com/x", "value": "v" * 64},
        f"nodePools[0](gpu).taints[0].value: '{'v' * 64}' is not a label value; expected at "
        "most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
        id="value-64",
    ),
]


@pytest.mark.parametrize(("taint", "line"), TAINTS)
def test_taints(taint, line):
    assert pool_errors(taints=[taint]) == [line]


QUANTITIES = [
    pytest.param(
        {"karpenter": {"memory": "0"}},
        "karpenter.memory: '0' is zero; expected a quantity greater than zero such as '1Gi'",
        id="karpenter-memory-0",
    ),
    pytest.param(
        {"karpenter": {"cpu": "0m"}},
        "karpenter.cpu: '0m' is zero; expected a quantity greater than zero such as '500m'",
        id="karpenter-cpu-0m",
    ),
    pytest.param(
        {"nodePools": [{**GPU, "limits": {"gpus": 8, "memory": "0Gi"}}]},
        "nodePools[0](gpu).limits.memory: '0Gi' is zero; expected a quantity greater than zero "
        "such as '4000Gi'",
        id="pool-memory-0",
    ),
    pytest.param(
        {"nodePools": [{**GPU, "limits": {"gpus": 8, "cpu": "0.0"}}]},
        "nodePools[0](gpu).limits.cpu: '0.0' is zero; expected a quantity greater than zero such "
        "as '1000'",
        id="pool-cpu-0.0",
    ),
]


@pytest.mark.parametrize(("sections", "line"), QUANTITIES)
def test_quantities_greater_than_zero(sections, line):
    values = {"cluster": {"name": "gpu-dev"}, "nodePools": [GPU], **sections}
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-west-2")
    assert err.value.lines == [line]


def config_errors(**sections: Any) -> list[str]:
    values = {"cluster": {"name": "gpu-dev"}, "nodePools": [GPU], **sections}
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-west-2")
    return err.value.lines


TAGS = [
    pytest.param(
        {f"t{i}": "x" for i in range(43)},
        [
            "tags: has 43 tags; at most 42: EC2 allows 50 per resource, and Karpenter's nodes "
            "also carry 6 tags Karpenter adds and 2 the platform adds"
        ],
        id="43-tags",
    ),
    pytest.param(
        {"team": "ml;prod"},
        [
            "tags: the value 'ml;prod' of 'team' has characters EC2 refuses; expected letters, "
            "digits, spaces or _.:/=+-@"
        ],
        id="value-characters",
    ),
    pytest.param(
        {"cost#center": "1"},
        [
            "tags: 'cost#center' is not a valid tag key; expected 1-128 letters, digits, spaces "
            "or _.:/=+-@, not starting with 'aws:'"
        ],
        id="key-characters",
    ),
    pytest.param(
        {"karpenter.k8s.aws/ec2nodeclass": "x", "AWS:owner": "me"},
        [
            "tags: 'karpenter.k8s.aws/ec2nodeclass' is a tag Karpenter sets on its nodes itself; "
            "EC2NodeClass tags may not include it",
            "tags: 'AWS:owner' is not a valid tag key; expected 1-128 letters, digits, spaces or "
            "_.:/=+-@, not starting with 'aws:'",
        ],
        id="reserved-keys",
    ),
]


@pytest.mark.parametrize(("tags", "lines"), TAGS)
def test_tags_within_ec2_limits(tags, lines):
    assert config_errors(tags=tags) == lines


def test_42_tags_and_unicode_values_pass():
    tags = {f"t{i}": "Zürich team=ml+ops@x" for i in range(42)}
    values = {"cluster": {"name": "gpu-dev"}, "tags": tags}
    assert len(PlatformConfig.load(values, "us-west-2").tags) == 42


DEVICE_PLUGIN = [
    pytest.param(
        {"gpuOperator": {"enabled": False}},
        [
            "gpuOperator.enabled: is false but GPU pools gpu need an NVIDIA device plugin "
            "(without one their nodes advertise no nvidia.com/gpu and GPU pods never schedule); "
            "keep the GPU Operator, or set gpuOperator.externalDevicePlugin: true if the cluster "
            "brings its own"
        ],
        id="operator-off-with-a-gpu-pool",
    ),
    pytest.param(
        {
            "gpuOperator": {"enabled": False},
            "nodePools": [GPU, {**GPU, "name": "train", "gpus": ["h100"], "limits": {"gpus": 16}}],
        },
        [
            "gpuOperator.enabled: is false but GPU pools gpu, train need an NVIDIA device plugin "
            "(without one their nodes advertise no nvidia.com/gpu and GPU pods never schedule); "
            "keep the GPU Operator, or set gpuOperator.externalDevicePlugin: true if the cluster "
            "brings its own"
        ],
        id="two-gpu-pools",
    ),
]


@pytest.mark.parametrize(("sections", "lines"), DEVICE_PLUGIN)
def test_gpu_pools_need_a_device_plugin(sections, lines):
    assert config_errors(**sections) == lines


@pytest.mark.parametrize(
    "sections",
    [
        {"gpuOperator": {"enabled": False, "externalDevicePlugin": True}},
        {"gpuOperator": {"enabled": False}, "nodePools": [{"name": "c", "kind": "cpu"}]},
        {"gpuOperator": {"enabled": True}},
    ],
    ids=["brings-its-own", "no-gpu-pool", "operator-on"],
)
def test_device_plugin_controls(sections):
    values = {"cluster": {"name": "gpu-dev"}, "nodePools": [GPU], **sections}
    assert (
        PlatformConfig.load(values, "us-west-2").gpu_operator.enabled
        == (sections["gpuOperator"]["enabled"])
    )


KEY = "1234abcd-12ab-34cd-56ef-1234567890ab"
KMS = [
    pytest.param(
        {
            "cluster": {
                "name": "gpu-dev",
                "kmsKeyArn": f"arn:aws:kms:us-east-1:111122223333:key/{KEY}",
            }
        },
        [
            f"cluster.kmsKeyArn: 'arn:aws:kms:us-east-1:111122223333:key/{KEY}' is a key in "
            "us-east-1; the stack's resources are in us-west-2"
        ],
        id="cluster-key-in-another-region",
    ),
    pytest.param(
        {
            "cluster": {
                "name": "gpu-dev",
                "kmsKeyArn": f"arn:aws-cn:kms:us-west-2:111122223333:key/{KEY}",
            }
        },
        [
            f"cluster.kmsKeyArn: 'arn:aws-cn:kms:us-west-2:111122223333:key/{KEY}' is in "
            "partition 'aws-cn', but region us-west-2 is in 'aws'"
        ],
        id="cluster-key-in-another-partition",
    ),
    pytest.param(
        {
            "nodePools": [
                {
                    **GPU,
                    "rootVolume": {"kmsKeyId": "arn:aws:kms:eu-west-1:111122223333:alias/ebs"},
                }
            ]
        },
        [
            "nodePools[0](gpu).rootVolume.kmsKeyId: 'arn:aws:kms:eu-west-1:111122223333:alias/ebs' "
            "is a key in eu-west-1; the stack's resources are in us-west-2"
        ],
        id="volume-alias-arn-in-another-region",
    ),
    pytest.param(
        {"nodePools": [{**GPU, "rootVolume": {"kmsKeyId": "my-key"}}]},
        [
            "nodePools[0](gpu).rootVolume.kmsKeyId: 'my-key' is not a KMS key id, key ARN, alias "
            "('alias/NAME') or alias ARN"
        ],
        id="volume-key-malformed",
    ),
    pytest.param(
        {"nodePools": [{**GPU, "rootVolume": {"kmsKeyId": "arn:aws:kms:us-west-2:1:key/x"}}]},
        [
            "nodePools[0](gpu).rootVolume.kmsKeyId: 'arn:aws:kms:us-west-2:1:key/x' is not a KMS "
            "key id, key ARN, alias ('alias/NAME') or alias ARN"
        ],
        id="volume-arn-malformed",
    ),
]


@pytest.mark.parametrize(("sections", "lines"), KMS)
def test_kms_keys_well_formed_in_the_stacks_region(sections, lines):
    assert config_errors(**sections) == lines


@pytest.mark.parametrize(
    "key",
    [
        KEY,
        "alias/aws/ebs",
        "alias/team/ebs",
        "mrk-" + "0" * 32,
        f"arn:aws:kms:us-west-2:111122223333:key/{KEY}",
    ],
)
def test_kms_volume_keys_accepted(key):
    values = {
        "cluster": {"name": "gpu-dev"},
        "nodePools": [{**GPU, "rootVolume": {"kmsKeyId": key}}],
    }
    assert PlatformConfig.load(values, "us-west-2").node_pools[0].root_volume.kms_key_id == key


@pytest.mark.parametrize(
    ("cidrs", "line"),
    [
        (
            ["0.0.0.0/1", "128.0.0.0/1"],
            "cluster.publicAccessCidrs: ['0.0.0.0/1', '128.0.0.0/1'] together cover 0.0.0.0/0, "
            "which opens the API server to the internet; list specific CIDRs",
        ),
        (
            ["203.0.113.0/24", "::/1", "8000::/1"],
            "cluster.publicAccessCidrs: ['::/1', '8000::/1'] together cover ::/0, which opens the "
            "API server to the internet; list specific CIDRs",
        ),
    ],
    ids=["two-ipv4-halves", "two-ipv6-halves"],
)
def test_public_cidrs_that_cover_the_internet(cidrs, line):
    cluster = {"name": "gpu-dev", "endpointPublicAccess": True, "publicAccessCidrs": cidrs}
    assert config_errors(cluster=cluster) == [line]


def test_half_the_internet_needs_the_broad_access_override():
    # Issue 22, point 8: half of IPv4 was accepted; it now needs allowBroadPublicAccess.
    cluster = {"name": "gpu-dev", "endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/1"]}
    assert config_errors(cluster=cluster) == [
        "cluster.publicAccessCidrs: ['0.0.0.0/1'] allow 2,147,483,648 IPv4 addresses, more than "
        "a /16 (65,536); list your egress ranges, keep the endpoint private (runners inside the "
        "VPC), or set allowBroadPublicAccess: true"
    ]
    values = {"cluster": {**cluster, "allowBroadPublicAccess": True}}
    assert PlatformConfig.load(values, "us-west-2").cluster.public_access_cidrs == ("0.0.0.0/1",)
