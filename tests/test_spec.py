"""The spec machinery (``eks_gpu_platform.spec``): names, type loading, exact error lines.

The specs below are test-only: they exercise every branch of the loader (nested objects, lists
of objects, maps, literals, optionals, floats) without depending on the platform's own specs.
"""

import dataclasses
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import pulumi
import pytest

from eks_gpu_platform.config import (
    ClusterSpec,
    KarpenterSpec,
    PlatformConfig,
    SystemNodeGroupSpec,
    VpcSpec,
)
from eks_gpu_platform.gpu_operator import GpuOperatorSpec
from eks_gpu_platform.nodepool import (
    CapacityReservationSpec,
    LimitsSpec,
    NodePoolSpec,
    RootVolumeSpec,
    TaintSpec,
)
from eks_gpu_platform.scheduler import QueueResourceSpec
from eks_gpu_platform.spec import (
    Problem,
    Spec,
    SpecError,
    camel,
    check_cidr,
    check_one_of,
    check_pattern,
    check_range,
    config_from_python,
    did_you_mean,
    doc,
    format_path,
    load_spec,
    load_value,
    show,
    type_name,
)


@dataclass(frozen=True, kw_only=True)
class PortSpec(Spec):
    name: str = doc(text="Port name.")
    port_number: int = doc(80, "Port.")

    def _problems(self) -> list[Problem]:
        if msg := check_range(self.port_number, 1, 65535):
            return [(("port_number",), msg)]
        return []


@dataclass(frozen=True, kw_only=True)
class ServiceSpec(Spec):
    service_name: str = doc(text="Required.")
    weight: float = doc(1.0, "A float.")
    enabled: bool = doc(True, "A boolean.")
    mode: Literal["fast", "safe"] = doc("safe", "A literal.")
    owner: str | None = doc(None, "An optional string.")
    ports: tuple[PortSpec, ...] = doc((), "A list of objects.")
    aliases: tuple[str, ...] = doc((), "A list of strings.")
    labels: Mapping[str, str] = doc(text="A map.", default_factory=dict)
    primary: PortSpec | None = doc(None, "An optional nested object.")


SERVICE_KEYS = "aliases, enabled, labels, mode, owner, ports, primary, serviceName, weight"


# --- names and values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("name", "name"),
        ("kubernetes_version", "kubernetesVersion"),
        ("public_access_cidrs", "publicAccessCidrs"),
        ("disk_size_gib", "diskSizeGib"),
        ("az_count", "azCount"),
        ("already_camelCase", "alreadyCamelCase"),
        ("replicas", "replicas"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_camel(name, expected):
    assert camel(name) == expected


@pytest.mark.parametrize(
    ("root", "path", "config", "expected"),
    [
        ("cluster", ("name",), True, "cluster.name"),
        ("ClusterSpec", ("name",), False, "ClusterSpec.name"),
        ("cluster", ("public_access_cidrs", 0), True, "cluster.publicAccessCidrs[0]"),
        ("ClusterSpec", ("public_access_cidrs", 0), False, "ClusterSpec.public_access_cidrs[0]"),
        ("", ("karpenter", "chart_version"), True, "karpenter.chartVersion"),
        ("items", (2, "port_number"), True, "items[2].portNumber"),
        ("tags", (), True, "tags"),
    ],
    ids=["config", "python", "config-index", "python-index", "no-root", "list-root", "root-only"],
)
def test_format_path(root, path, config, expected):
    assert format_path(root, path, config=config) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("abc", "'abc'"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        (3, "3"),
        (1.5, "1.5"),
        (["a", 1, None], "['a', 1, null]"),
        (("x",), "['x']"),
        ({"a": 1}, "{'a': 1}"),
    ],
    ids=["str", "true", "false", "none", "int", "float", "list", "tuple", "dict"],
)
def test_show(value, expected):
    assert show(value) == expected


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (str, "a string"),
        (int, "an integer"),
        (bool, "a boolean"),
        (float, "a number"),
        (Literal["fast", "safe"], "one of 'fast', 'safe'"),
        (str | None, "a string"),
        (tuple[str, ...], "a list of strings"),
        (tuple[int, ...], "a list of integers"),
        (tuple[PortSpec, ...], "a list of objects"),
        (Mapping[str, str], "a map of strings to strings"),
        (Mapping[str, bool], "a map of strings to booleans"),
        (PortSpec, "an object"),
    ],
    ids=lambda v: None,
)
def test_type_name(tp, expected):
    assert type_name(tp) == expected


# --- reusable checks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (check_range(0, 1, 10), "0 is out of range; expected a number from 1 to 10"),
        (check_range(11, 1, 10), "11 is out of range; expected a number from 1 to 10"),
        (check_range(1, 1, 10), None),
        (check_range(10, 1, 10), None),
        (check_pattern("Abc", r"^[a-z]+$", "lowercase"), "'Abc' is not lowercase"),
        (check_pattern("abc", r"^[a-z]+$", "lowercase"), None),
        (
            check_cidr("10.0.0.1/16"),
            "'10.0.0.1/16' is not a CIDR block; expected a network such as '10.0.0.0/16'",
        ),
        (
            check_cidr("10.0.0.0/33"),
            "'10.0.0.0/33' is not a CIDR block; expected a network such as '10.0.0.0/16'",
        ),
        (check_cidr("10.0.0.0/16"), None),
        (check_one_of("x", ["a", "b"]), "'x' is not allowed; expected one of a, b"),
        (check_one_of("a", ["a", "b"]), None),
    ],
    ids=[
        "range-low",
        "range-high",
        "range-min-ok",
        "range-max-ok",
        "pattern-bad",
        "pattern-ok",
        "cidr-host-bits",
        "cidr-prefix",
        "cidr-ok",
        "one-of-bad",
        "one-of-ok",
    ],
)
def test_checks(result, expected):
    assert result == expected


@pytest.mark.parametrize(
    ("word", "choices", "expected"),
    [
        ("replica", ["replicas", "cpu"], "; did you mean 'replicas'?"),
        ("karpentr", ["cluster", "karpenter", "vpc"], "; did you mean 'karpenter'?"),
        ("zzz", ["replicas", "cpu"], ""),
        ("L4", ["a100", "l4", "l40s"], "; did you mean 'l4'?"),
        ("NodePools", ["nodePools", "vpc"], "; did you mean 'nodePools'?"),
        ("L40", ["a100", "l4", "l40s"], "; did you mean 'l40s'?"),
    ],
    ids=["close", "typo", "none", "case", "case-key", "case-and-typo"],
)
def test_did_you_mean(word, choices, expected):
    assert did_you_mean(word, choices) == expected


def test_doc_rejects_mutable_defaults():
    with pytest.raises(TypeError, match=re.escape("use a tuple or a MappingProxy-free default")):
        doc([], "a list")


def test_doc_keeps_the_text_in_field_metadata():
    field = {f.name: f for f in dataclasses.fields(ClusterSpec)}["protect"]
    assert field.metadata["doc"] == (
        "Protect from deletion the cluster, its KMS key, the VPC with its subnets and NAT "
        "addresses, and every node pool's Karpenter objects and placement group."
    )
    assert field.default is False


# --- loading --------------------------------------------------------------------------------


def test_load_applies_defaults_and_converts_lists_to_tuples():
    loaded = load_spec(
        ServiceSpec,
        {
            "serviceName": "api",
            "weight": 2,
            "ports": [{"name": "http"}, {"name": "https", "portNumber": 443}],
            "aliases": ["a", "b"],
            "labels": {"team": "ml"},
            "primary": {"name": "http"},
        },
        "service",
    )
    assert loaded == ServiceSpec(
        service_name="api",
        weight=2.0,
        enabled=True,
        mode="safe",
        owner=None,
        ports=(PortSpec(name="http", port_number=80), PortSpec(name="https", port_number=443)),
        aliases=("a", "b"),
        labels={"team": "ml"},
        primary=PortSpec(name="http"),
    )
    assert isinstance(loaded.weight, float)


def test_load_treats_null_as_an_empty_object():
    assert load_spec(PortSpec, {"name": "x"}, "port") == PortSpec(name="x")
    with pytest.raises(SpecError) as err:
        load_spec(PortSpec, None, "port")
    assert err.value.lines == ["port.name: is required"]


# One row per loader branch: the raw configuration and the exact lines it produces.
LOAD_ERRORS = [
    pytest.param(
        {"serviceName": "api", "servce": 1},
        [
            "service.servce: unknown key; did you mean 'serviceName'?; allowed keys are "
            + SERVICE_KEYS
        ],
        id="unknown-key-did-you-mean",
    ),
    pytest.param(
        {"serviceName": "api", "xyz": 1},
        ["service.xyz: unknown key; allowed keys are " + SERVICE_KEYS],
        id="unknown-key-no-suggestion",
    ),
    pytest.param({}, ["service.serviceName: is required"], id="missing-required"),
    pytest.param(
        {"serviceName": 1.30},
        ["service.serviceName: 1.3 is not a string (quote it in YAML)"],
        id="yaml-number-for-string",
    ),
    pytest.param(
        {"serviceName": 7},
        ["service.serviceName: 7 is not a string (quote it in YAML)"],
        id="yaml-int-for-string",
    ),
    pytest.param(
        {"serviceName": True},
        ["service.serviceName: true is not a string"],
        id="bool-for-string-no-hint",
    ),
    pytest.param(
        {"serviceName": "api", "enabled": "yes"},
        [
            "service.enabled: 'yes' is not a boolean (the Pulumi CLI reads YAML 1.1's yes, no, "
            "on and off as strings); use true or false"
        ],
        id="string-for-bool",
    ),
    pytest.param(
        {"serviceName": "api", "enabled": 1},
        ["service.enabled: 1 is not a boolean; use true or false"],
        id="int-for-bool",
    ),
    pytest.param(
        {"serviceName": "api", "weight": "heavy"},
        ["service.weight: 'heavy' is not a number"],
        id="string-for-float",
    ),
    pytest.param(
        {"serviceName": "api", "weight": False},
        ["service.weight: false is not a number"],
        id="bool-for-float",
    ),
    pytest.param(
        {"serviceName": "api", "mode": "fats"},
        ["service.mode: 'fats' is not allowed; expected one of fast, safe; did you mean 'fast'?"],
        id="literal-did-you-mean",
    ),
    pytest.param(
        {"serviceName": "api", "mode": 3},
        ["service.mode: 3 is not allowed; expected one of fast, safe"],
        id="literal-wrong-type",
    ),
    pytest.param(
        {"serviceName": "api", "owner": 5},
        ["service.owner: 5 is not a string (quote it in YAML)"],
        id="optional-wrong-type",
    ),
    pytest.param(
        {"serviceName": "api", "aliases": "a"},
        ["service.aliases: 'a' is not a list; expected a list of strings"],
        id="string-for-list",
    ),
    pytest.param(
        {"serviceName": "api", "aliases": ["a", 2, "c", False]},
        [
            "service.aliases[1]: 2 is not a string (quote it in YAML)",
            "service.aliases[3]: false is not a string",
        ],
        id="list-items",
    ),
    pytest.param(
        {"serviceName": "api", "labels": ["a"]},
        ["service.labels: ['a'] is not a map; expected a map of strings to strings"],
        id="list-for-map",
    ),
    pytest.param(
        {"serviceName": "api", "labels": {"team": 1, 2: "x"}},
        [
            "service.labels.team: 1 is not a string (quote it in YAML)",
            "service.labels: key 2 is not a string",
        ],
        id="map-values-and-keys",
    ),
    pytest.param(
        {"serviceName": "api", "ports": [{"name": "a"}, {"portNumber": 0}]},
        ["service.ports[1].name: is required"],
        id="nested-missing-required",
    ),
    pytest.param(
        {"serviceName": "api", "ports": [{"name": "a", "portNumbr": 1}]},
        [
            "service.ports[0](a).portNumbr: unknown key; did you mean 'portNumber'?; allowed "
            "keys are name, portNumber"
        ],
        id="nested-unknown-key",
    ),
    pytest.param(
        {"serviceName": "api", "ports": [{"name": "a"}, {"name": "b", "portNumber": 70000}]},
        [
            "service.ports[1](b).portNumber: 70000 is out of range; expected a number from 1 "
            "to 65535"
        ],
        id="nested-validation",
    ),
    pytest.param(
        {"serviceName": "api", "primary": "http"},
        ["service.primary: 'http' is not an object"],
        id="string-for-object",
    ),
    pytest.param(
        {"serviceName": "api", "primary": {"name": "p", "portNumber": -1}},
        ["service.primary.portNumber: -1 is out of range; expected a number from 1 to 65535"],
        id="optional-nested-validation",
    ),
    pytest.param(
        {"serviceName": 1, "enabled": "no", "zzz": 0},
        [
            "service.zzz: unknown key; allowed keys are " + SERVICE_KEYS,
            "service.serviceName: 1 is not a string (quote it in YAML)",
            "service.enabled: 'no' is not a boolean (the Pulumi CLI reads YAML 1.1's yes, no, "
            "on and off as strings); use true or false",
        ],
        id="every-problem-at-once",
    ),
]


@pytest.mark.parametrize(("raw", "lines"), LOAD_ERRORS)
def test_load_errors(raw, lines):
    with pytest.raises(SpecError) as err:
        load_spec(ServiceSpec, raw, "service")
    assert err.value.lines == lines
    assert str(err.value) == "\n".join(lines)
    assert err.value.config is True
    assert err.value.root == "service"


def test_load_rejects_a_non_object_root():
    with pytest.raises(SpecError) as err:
        load_spec(ServiceSpec, ["api"], "service")
    assert err.value.lines == ["service: ['api'] is not an object"]


def test_unknown_snake_case_key_is_reported_as_typed():
    with pytest.raises(SpecError) as err:
        load_spec(ServiceSpec, {"service_name": "api"}, "service")
    assert err.value.lines == [
        "service.service_name: unknown key; did you mean 'serviceName'?; allowed keys are "
        + SERVICE_KEYS,
        "service.serviceName: is required",
    ]


def test_load_value_for_a_list_of_specs():
    ports = tuple[PortSpec, ...]
    assert load_value(ports, [{"name": "a"}, {"name": "b", "portNumber": 8080}], "ports") == (
        PortSpec(name="a"),
        PortSpec(name="b", port_number=8080),
    )
    with pytest.raises(SpecError) as err:
        load_value(ports, [{"name": "a"}, {"nam": "b"}, 3], "ports")
    assert err.value.lines == [
        "ports[1].nam: unknown key; did you mean 'name'?; allowed keys are name, portNumber",
        "ports[1].name: is required",
        "ports[2]: 3 is not an object",
    ]
    with pytest.raises(SpecError) as err:
        load_value(ports, {"name": "a"}, "ports")
    assert err.value.lines == ["ports: {'name': 'a'} is not a list; expected a list of objects"]


def test_load_value_for_a_map():
    labels = Mapping[str, str]
    assert load_value(labels, {"team": "ml"}, "labels") == {"team": "ml"}
    with pytest.raises(SpecError) as err:
        load_value(labels, None, "labels")
    assert err.value.lines == ["labels: null is not a map; expected a map of strings to strings"]


def test_map_keys_are_reported_as_typed():
    with pytest.raises(SpecError) as err:
        load_value(Mapping[str, str], {"cost_center": 5}, "tags")
    assert err.value.lines == ["tags.cost_center: 5 is not a string (quote it in YAML)"]


# --- Python construction vs configuration --------------------------------------------------

# The same problem, named as the Python field (construction) or as the configuration key (load).
SAME_PROBLEM = [
    pytest.param(
        ClusterSpec,
        "cluster",
        {"name": "-bad"},
        "name",
        "'-bad' is not a valid EKS cluster name; expected 1-100 letters, digits, '-' or '_', "
        "starting with a letter or digit",
        id="cluster-name",
    ),
    pytest.param(
        ClusterSpec,
        "cluster",
        {"name": "c", "endpoint_public_access": True, "public_access_cidrs": ("0.0.0.0/0",)},
        ("public_access_cidrs[0]", "publicAccessCidrs[0]"),
        "'0.0.0.0/0' opens the API server to the internet; list specific CIDRs",
        id="cluster-cidr-index",
    ),
    pytest.param(
        KarpenterSpec,
        "karpenter",
        {"chart_version": "v1.14.1"},
        ("chart_version", "chartVersion"),
        "'v1.14.1' is not a chart version; expected X.Y.Z without a 'v', e.g. '1.15.1'",
        id="karpenter-chart-version",
    ),
    pytest.param(
        SystemNodeGroupSpec,
        "systemNodeGroup",
        {"disk_size_gib": 10},
        ("disk_size_gib", "diskSizeGib"),
        "10 is out of range; expected a number from 20 to 1000",
        id="system-disk",
    ),
]


@pytest.mark.parametrize(("cls", "key", "kwargs", "field", "message"), SAME_PROBLEM)
def test_python_and_config_name_the_same_problem_differently(cls, key, kwargs, field, message):
    python_field, config_field = field if isinstance(field, tuple) else (field, field)
    with pytest.raises(SpecError) as err:
        cls(**kwargs)
    assert err.value.lines == [f"{cls.__name__}.{python_field}: {message}"]
    assert err.value.config is False

    raw = {camel(k): list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()}
    with pytest.raises(SpecError) as err:
        load_spec(cls, raw, key)
    assert err.value.lines == [f"{key}.{config_field}: {message}"]


def test_python_construction_raises_with_the_class_name():
    with pytest.raises(SpecError, match=re.escape("ClusterSpec.name: '' is not a valid EKS")):
        ClusterSpec(name="")


def test_spec_error_from_lines():
    err = SpecError.from_lines(["a: one", "b.c: two"])
    assert err.lines == ["a: one", "b.c: two"]
    assert str(err) == "a: one\nb.c: two"
    assert isinstance(err, ValueError)


# --- Python construction: every field's type, one exact line each ---------------------------

PYTHON_TYPES = [
    pytest.param(
        lambda: ClusterSpec(name=123), ["ClusterSpec.name: 123 is not a string"], id="int-name"
    ),
    pytest.param(
        lambda: ClusterSpec(name="gpu", admins="role/Admin"),
        ["ClusterSpec.admins: 'role/Admin' is a string; expected a list of strings"],
        id="string-for-list-is-one-problem",
    ),
    pytest.param(
        lambda: ClusterSpec(name="gpu", kubernetes_version=1.35),
        ["ClusterSpec.kubernetes_version: 1.35 is not a string; expected a string such as '1.36'"],
        id="float-version",
    ),
    pytest.param(
        lambda: ClusterSpec(name="gpu", kubernetes_version=1.30),
        ["ClusterSpec.kubernetes_version: 1.3 is not a string; expected a string such as '1.36'"],
        id="float-version-loses-its-zero",
    ),
    pytest.param(
        lambda: ClusterSpec(name="gpu", endpoint_public_access="yes"),
        ["ClusterSpec.endpoint_public_access: 'yes' is not a boolean"],
        id="string-for-bool",
    ),
    pytest.param(
        lambda: ClusterSpec(name="gpu", log_types=("api", 3)),
        ["ClusterSpec.log_types[1]: 3 is not a string"],
        id="list-item",
    ),
    pytest.param(
        lambda: ClusterSpec(name="gpu", admins={"role/Admin"}),
        ["ClusterSpec.admins: {'role/Admin'} is not a list; expected a list of strings"],
        id="set-for-list",
    ),
    pytest.param(
        lambda: ClusterSpec(name=None, protect="no", admins="role/A"),
        [
            "ClusterSpec.name: null is not a string",
            "ClusterSpec.admins: 'role/A' is a string; expected a list of strings",
            "ClusterSpec.protect: 'no' is not a boolean",
        ],
        id="every-problem-at-once",
    ),
    pytest.param(
        lambda: SystemNodeGroupSpec(min_size="2"),
        ["SystemNodeGroupSpec.min_size: '2' is not an integer"],
        id="string-for-int",
    ),
    pytest.param(
        lambda: SystemNodeGroupSpec(disk_size_gib=True),
        ["SystemNodeGroupSpec.disk_size_gib: true is not an integer"],
        id="bool-for-int",
    ),
    pytest.param(
        lambda: SystemNodeGroupSpec(desired_size=2.5),
        ["SystemNodeGroupSpec.desired_size: 2.5 is not an integer"],
        id="float-for-optional-int",
    ),
    pytest.param(
        lambda: KarpenterSpec(auth="oidc"),
        ["KarpenterSpec.auth: 'oidc' is not allowed; expected one of podIdentity, irsa"],
        id="literal",
    ),
    pytest.param(
        lambda: KarpenterSpec(log_level="inf"),
        [
            "KarpenterSpec.log_level: 'inf' is not allowed; expected one of debug, info, error; "
            "did you mean 'info'?"
        ],
        id="literal-did-you-mean",
    ),
    pytest.param(
        lambda: KarpenterSpec(chart_version=1.14),
        ["KarpenterSpec.chart_version: 1.14 is not a string; expected a string such as '1.15.1'"],
        id="float-chart-version",
    ),
    pytest.param(
        lambda: NodePoolSpec(name="l4", limits={"gpus": 8}),
        ["NodePoolSpec.limits: {'gpus': 8} is not a LimitsSpec"],
        id="dict-for-spec",
    ),
    pytest.param(
        lambda: NodePoolSpec(name="l4", labels=["team"]),
        ["NodePoolSpec.labels: ['team'] is not a map; expected a map of strings to strings"],
        id="list-for-map",
    ),
    pytest.param(
        lambda: NodePoolSpec(name="l4", labels={"team": 1, 2: "x"}),
        [
            "NodePoolSpec.labels.team: 1 is not a string",
            "NodePoolSpec.labels: key 2 is not a string",
        ],
        id="map-values-and-keys",
    ),
    pytest.param(
        lambda: NodePoolSpec(name="l4", capacity_types=("spot", "ondemand")),
        [
            "NodePoolSpec.capacity_types[1]: 'ondemand' is not allowed; expected one of "
            "reserved, spot, on-demand; did you mean 'on-demand'?"
        ],
        id="literal-list-item",
    ),
    pytest.param(
        lambda: NodePoolSpec(name="l4", taints=({"key": "a"},)),
        ["NodePoolSpec.taints[0]: {'key': 'a'} is not a TaintSpec"],
        id="dict-in-list-of-specs",
    ),
    pytest.param(
        lambda: LimitsSpec(gpus="8"),
        ["LimitsSpec.gpus: '8' is not an integer"],
        id="string-gpus",
    ),
    pytest.param(
        lambda: QueueResourceSpec(quota="1", limit=2, over_quota_weight=False),
        [
            "QueueResourceSpec.quota: '1' is not a number",
            "QueueResourceSpec.over_quota_weight: false is not a number",
        ],
        id="numbers",
    ),
    pytest.param(
        lambda: GpuOperatorSpec(time_slicing={"shared-4": 4.0}),
        ["GpuOperatorSpec.time_slicing.shared-4: 4.0 is not an integer"],
        id="map-of-int",
    ),
    pytest.param(
        lambda: VpcSpec(vpc_id=7),
        ["VpcSpec.vpc_id: 7 is not a string"],
        id="output-field-still-typed",
    ),
]


@pytest.mark.parametrize(("build", "lines"), PYTHON_TYPES)
def test_python_construction_checks_every_type(build, lines):
    with pytest.raises(SpecError) as err:
        build()
    assert err.value.lines == lines
    assert err.value.config is False


def test_python_lists_become_tuples():
    spec = ClusterSpec(name="gpu", admins=["role/A", "role/B"])
    assert spec.admins == ("role/A", "role/B")
    assert spec == ClusterSpec(name="gpu", admins=("role/A", "role/B"))
    pool = NodePoolSpec(name="l4", gpus=["l4"], taints=[TaintSpec(key="a.io/b")])
    assert pool.gpus == ("l4",)
    assert pool.taints == (TaintSpec(key="a.io/b"),)
    hash(pool.gpus)


def test_python_and_config_accept_the_same_values():
    raw = {"name": "gpu", "admins": ["role/A"], "kubernetesVersion": "1.35"}
    assert load_spec(ClusterSpec, raw, "cluster") == ClusterSpec(
        name="gpu", admins=["role/A"], kubernetes_version="1.35"
    )


# --- pulumi.Output: accepted where the value comes from another resource --------------------

OUTPUT_FIELDS = {
    ("CapacityReservationSpec", "id"),
    ("CapacityReservationSpec", "owner_id"),
    ("ClusterSpec", "admins"),
    ("ClusterSpec", "kms_key_arn"),
    ("ClusterSpec", "viewers"),
    ("RootVolumeSpec", "kms_key_id"),
    ("VpcSpec", "private_subnet_ids"),
    ("VpcSpec", "public_subnet_ids"),
    ("VpcSpec", "vpc_id"),
}


def all_specs() -> list[type]:
    seen: list[type] = []

    def visit(cls: type) -> None:
        if cls in seen:
            return
        seen.append(cls)
        for tp in typing.get_type_hints(cls).values():
            for inner in (tp, *typing.get_args(tp)):
                if dataclasses.is_dataclass(inner):
                    visit(inner)
                for nested in typing.get_args(inner):
                    if dataclasses.is_dataclass(nested):
                        visit(nested)

    visit(PlatformConfig)
    return seen


def test_exactly_the_fields_of_other_resources_accept_outputs():
    found = {
        (cls.__name__, f.name)
        for cls in all_specs()
        for f in dataclasses.fields(cls)
        if f.metadata.get("output")
    }
    assert found == OUTPUT_FIELDS
    assert sorted(cls.__name__ for cls in all_specs()) == [
        "AmiSpec",
        "BudgetSpec",
        "CapacityReservationSpec",
        "ClusterSpec",
        "DisruptionSpec",
        "GpuOperatorSpec",
        "KarpenterSpec",
        "KubeletSpec",
        "LimitsSpec",
        "NodePoolSpec",
        "PlatformConfig",
        "QueueResourceSpec",
        "QueueSpec",
        "RootVolumeSpec",
        "SchedulerSpec",
        "SystemNodeGroupSpec",
        "TaintSpec",
        "ValidationSpec",
        "VpcSpec",
    ]


def output(value: str) -> pulumi.Output:
    return pulumi.Output.from_input(value)


def test_outputs_skip_the_syntax_checks():
    vpc = VpcSpec(
        vpc_id=output("not-checked"), private_subnet_ids=[output("a"), "subnet-0123456789abcdef0"]
    )
    assert isinstance(vpc.vpc_id, pulumi.Output)
    assert vpc.private_subnet_ids[1] == "subnet-0123456789abcdef0"
    cluster = ClusterSpec(name="gpu", admins=[output("arn"), "role/A"], kms_key_arn=output("k"))
    assert isinstance(cluster.kms_key_arn, pulumi.Output)
    CapacityReservationSpec(id=output("cr"))
    CapacityReservationSpec(tags={"team": "ml"}, owner_id=output("123"))
    RootVolumeSpec(kms_key_id=output("key"))
    # The plain items beside Outputs are still checked.
    with pytest.raises(SpecError) as err:
        VpcSpec(vpc_id=output("vpc"), private_subnet_ids=[output("a"), "sub-1"])
    assert err.value.lines == [
        "VpcSpec.private_subnet_ids[1]: 'sub-1' is not a subnet id; expected 'subnet-' and hex"
    ]


OUTPUT_REFUSED = [
    pytest.param(
        lambda: ClusterSpec(name=output("gpu")),
        [
            "ClusterSpec.name: is a pulumi.Output; expected a string known when the program runs "
            "(only ids and ARNs of other resources may be Outputs)"
        ],
        id="name",
    ),
    pytest.param(
        lambda: VpcSpec(vpc_id="vpc-0123456789abcdef0", private_subnet_ids=output("ids")),
        [
            "VpcSpec.private_subnet_ids: is a pulumi.Output of the whole list; pass a list whose "
            "items may be Outputs (the number of items decides how many resources the program "
            "registers)"
        ],
        id="whole-list",
    ),
    pytest.param(
        lambda: NodePoolSpec(name="l4", gpus=[output("l4")]),
        [
            "NodePoolSpec.gpus[0]: is a pulumi.Output; expected a string known when the program "
            "runs (only ids and ARNs of other resources may be Outputs)"
        ],
        id="list-item",
    ),
    pytest.param(
        lambda: NodePoolSpec(name="l4", limits=output("x")),
        [
            "NodePoolSpec.limits: is a pulumi.Output; expected an object known when the program "
            "runs (only ids and ARNs of other resources may be Outputs)"
        ],
        id="spec",
    ),
]


@pytest.mark.parametrize(("build", "lines"), OUTPUT_REFUSED)
def test_outputs_are_refused_elsewhere(build, lines):
    with pytest.raises(SpecError) as err:
        build()
    assert err.value.lines == lines


def test_configuration_data_may_carry_outputs_in_the_same_fields():
    vpc_id, subnet = output("vpc"), output("subnet")
    spec = load_spec(
        VpcSpec, {"vpcId": vpc_id, "privateSubnetIds": [subnet, "subnet-0123456789abcdef0"]}, "vpc"
    )
    assert spec.vpc_id is vpc_id
    assert spec.private_subnet_ids[0] is subnet
    with pytest.raises(SpecError) as err:
        load_spec(VpcSpec, {"cidr": output("10.0.0.0/16"), "privateSubnetIds": output("x")}, "vpc")
    assert err.value.lines == [
        "vpc.cidr: is a pulumi.Output; expected a string known when the program runs (only ids "
        "and ARNs of other resources may be Outputs)",
        "vpc.privateSubnetIds: is a pulumi.Output of the whole list; pass a list whose items may "
        "be Outputs (the number of items decides how many resources the program registers)",
    ]


def test_hosted_args_keep_outputs_as_they_are():
    vpc_id = output("vpc")
    data = config_from_python(VpcSpec, {"vpc_id": vpc_id, "private_subnet_ids": [vpc_id]})
    assert data == {"vpcId": vpc_id, "privateSubnetIds": [vpc_id]}
    assert show(vpc_id) == "a pulumi.Output"
