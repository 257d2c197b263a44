"""The spec machinery (``eks_gpu_platform.spec``): names, type loading, exact error lines.

The specs below are test-only: they exercise every branch of the loader (nested objects, lists
of objects, maps, literals, optionals, floats) without depending on the platform's own specs.
"""

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import pytest

from eks_gpu_platform.config import ClusterSpec, KarpenterSpec, SystemNodeGroupSpec
from eks_gpu_platform.spec import (
    Problem,
    Spec,
    SpecError,
    camel,
    check_cidr,
    check_one_of,
    check_pattern,
    check_range,
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
    ],
    ids=["close", "typo", "none"],
)
def test_did_you_mean(word, choices, expected):
    assert did_you_mean(word, choices) == expected


def test_doc_rejects_mutable_defaults():
    with pytest.raises(TypeError, match=re.escape("use a tuple or a MappingProxy-free default")):
        doc([], "a list")


def test_doc_keeps_the_text_in_field_metadata():
    field = {f.name: f for f in dataclasses.fields(ClusterSpec)}["protect"]
    assert field.metadata["doc"] == "Protect the cluster, its KMS key and the VPC from deletion."
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
        ["service.enabled: 'yes' is not a boolean"],
        id="string-for-bool",
    ),
    pytest.param(
        {"serviceName": "api", "enabled": 1},
        ["service.enabled: 1 is not a boolean"],
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
            "service.ports[0].portNumbr: unknown key; did you mean 'portNumber'?; allowed keys are "
            "name, portNumber"
        ],
        id="nested-unknown-key",
    ),
    pytest.param(
        {"serviceName": "api", "ports": [{"name": "a"}, {"name": "b", "portNumber": 70000}]},
        ["service.ports[1].portNumber: 70000 is out of range; expected a number from 1 to 65535"],
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
            "service.enabled: 'no' is not a boolean",
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
        "'v1.14.1' is not a chart version; expected X.Y.Z without a 'v', e.g. '1.14.1'",
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
