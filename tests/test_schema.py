"""The package schema other languages get: descriptions, enums, outputs and secrets.

The schema is built offline the way the component provider builds it (pulumi 3.272.0,
pulumi/provider/experimental/component.py 61-78: ``Analyzer(name).analyze(components)``, then
``generate_schema``), and once more through this project's provider (provider/__main__.py),
which adds what the stock generator cannot say (``secret``).
"""

import copy
import dataclasses
import importlib.util
import json
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import grpc
import pytest
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from stock_schema import PKG

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.platform import GpuPlatform, platform_config_from_args
from eks_gpu_platform.scheduler import QueueResourceSpec
from eks_gpu_platform.schema import field_description, plain_text
from eks_gpu_platform.spec import camel

REPO = Path(__file__).resolve().parents[1]
TOKEN = f"{PKG}:index:"
COMPONENT = f"{TOKEN}GpuPlatform"
STACK_EXPORTS = [
    "addonVersions",
    "clusterEndpoint",
    "clusterName",
    "clusterSecurityGroupId",
    "interruptionQueueName",
    "karpenterControllerRoleArn",
    "karpenterNodeRoleArn",
    "kubeconfig",
    "nodeSecurityGroupId",
    "oidcProviderArn",
    "privateSubnetIds",
    "vpcId",
]
# reST that must not reach a description: ``literal``, :role:`target`, .. directive::
REST = re.compile(r"``|:[a-z]+(:[a-z]+)?:`|^\s*\.\. [a-z-]+::", re.M)


def load_provider_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "eks_gpu_platform_provider", REPO / "provider" / "__main__.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# As the render's command line runs (offline/__main__.py, render.cli): the collector off before
# the SDKs' imports and no interpreter teardown after the schema is written (1.7 -> 1.2 s of CPU;
# the teardown frees every module one by one). An exception still exits 1 with its traceback.
_FRESH = """
import gc
gc.disable()
import json, os, sys
sys.path.insert(0, sys.argv[1])
from stock_schema import stock_schema
print(json.dumps(stock_schema()))
sys.stdout.flush()
os._exit(0)
"""


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    """The schema the provider plugin serves over gRPC, started as Pulumi starts it: the
    language host runs a bare plugin directory as ``python <dir> <engine address>``
    (pulumi-language-python RunPlugin) and reads the port from its first line of output."""
    plugin = subprocess.Popen(
        [sys.executable, str(REPO / "provider"), "127.0.0.1:1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert plugin.stdout is not None
        port = int(plugin.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            text = stub.GetSchema(provider_pb2.GetSchemaRequest(), timeout=60).schema
    finally:
        plugin.terminate()
        plugin.wait(timeout=30)
    return json.loads(text)


@pytest.fixture(scope="module")
def schemas(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The stock and the served schema, each built in a fresh interpreter, as
    ``pulumi package get-schema`` builds it (it starts the plugin): the analyzer reads the
    property descriptions through ``inspect.getsource``, and a long-lived test worker's state
    has been seen to hide one of them now and then. The served one is the plugin's
    (``served``); the stock one, a fresh interpreter's, which runs while the plugin starts and
    answers (two processes that each import the SDKs: side by side, not one after the other)."""
    fresh = subprocess.Popen(
        [sys.executable, "-c", _FRESH, str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        served = request.getfixturevalue("served")
        out, err = fresh.communicate(timeout=300)
    finally:
        if fresh.poll() is None:
            fresh.kill()
            fresh.wait()
    assert fresh.returncode == 0, f"the stock schema's interpreter failed:\n{err}"
    return {"stock": json.loads(out), "served": served}


@pytest.fixture(scope="module")
def schema(schemas) -> dict[str, Any]:
    return schemas["stock"]


@pytest.fixture(scope="module")
def provider() -> Any:
    return load_provider_module().provider("0.1.0")


def spec_types() -> dict[str, type]:
    """Schema type name -> the spec class it mirrors, for every spec under PlatformConfig."""
    found: dict[str, type] = {}

    def walk(cls: type) -> None:
        for tp in typing.get_type_hints(cls).values():
            for inner in (tp, *get_args(tp), *(a for t in get_args(tp) for a in get_args(t))):
                if dataclasses.is_dataclass(inner) and isinstance(inner, type):
                    name = inner.__name__.removesuffix("Spec") + "Inputs"
                    if name not in found:
                        found[name] = inner
                        walk(inner)

    walk(PlatformConfig)
    return found


def literal_fields() -> Iterator[tuple[str, str, tuple[Any, ...], bool]]:
    """(schema type, camelCase property, Literal values, is a list) for every Literal field."""
    for type_name, cls in spec_types().items():
        for name, tp in typing.get_type_hints(cls).items():
            options = [a for a in get_args(tp) if a is not type(None)] or [tp]
            for option in (tp, *options):
                if get_origin(option) is Literal:
                    yield type_name, camel(name), get_args(option), False
                    break
                if get_origin(option) is tuple and get_origin(get_args(option)[0]) is Literal:
                    yield type_name, camel(name), get_args(get_args(option)[0]), True
                    break


def described(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property in the schema, with its path: component inputs and outputs, every
    property of every type, and the items and values of lists and maps."""

    def props(path: str, properties: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        for name, prop in properties.items():
            yield f"{path}.{name}", prop
            if "items" in prop:
                yield f"{path}.{name}[]", prop["items"]
            if "additionalProperties" in prop:
                yield f"{path}.{name}{{}}", prop["additionalProperties"]

    resource = schema["resources"][COMPONENT]
    yield from props("inputs", resource["inputProperties"])
    yield from props("outputs", resource["properties"])
    for token, typ in schema["types"].items():
        yield from props(token.removeprefix(TOKEN), typ.get("properties", {}))


def test_every_property_and_type_has_a_description(schema) -> None:
    everything = list(described(schema))
    fields = sum(len(dataclasses.fields(c)) for c in (PlatformConfig, *spec_types().values()))
    assert len([p for p, _ in everything if not p.endswith(("[]", "{}"))]) == fields + 12
    missing = [path for path, prop in everything if not prop.get("description", "").strip()]
    assert missing == []
    resource = schema["resources"][COMPONENT]
    assert resource["description"] == (
        "A production GPU cluster on EKS: network, cluster, Karpenter and GPU capacity."
    )
    untyped = [t for t, typ in schema["types"].items() if not typ.get("description", "").strip()]
    assert untyped == []


def test_no_description_carries_rest_markup(schema) -> None:
    texts = [(path, prop["description"]) for path, prop in described(schema)]
    texts += [(token, typ["description"]) for token, typ in schema["types"].items()]
    texts.append(("GpuPlatform", schema["resources"][COMPONENT]["description"]))
    assert [(path, text) for path, text in texts if REST.search(text)] == []
    # The type docstrings that do use reST arrive as Markdown code spans, one paragraph a line.
    types = schema["types"]
    assert types[f"{TOKEN}VpcInputs"]["description"] == (
        "A new VPC (`cidr`, `azCount`) or an existing one (`vpcId`, `privateSubnetIds`)."
    )
    assert types[f"{TOKEN}DisruptionInputs"]["description"] == (
        "How Karpenter may disrupt the pool's nodes; defaults depend on `preemptible`."
    )
    queue_resource = types[f"{TOKEN}QueueResourceInputs"]["description"]
    assert queue_resource == plain_text(QueueResourceSpec.__doc__)
    first, second = queue_resource.split("\n\n")
    assert first == (
        "Quota, limit and over-quota weight of one resource of a queue (all three required)."
    )
    assert second.startswith("`quota`: guaranteed amount; -1 unlimited, 0 no guarantee. `limit`:")


def test_plain_text_turns_rest_into_markdown() -> None:
    assert plain_text(":class:`~eks_gpu_platform.spec.SpecError` or :py:meth:`load`") == (
        "`SpecError` or `load`"
    )
    assert plain_text("A ``literal``\n    over two\n    lines.\n\n    Second.") == (
        "A `literal` over two lines.\n\nSecond."
    )
    assert plain_text(None) == ""


def test_input_descriptions_are_the_field_docs_of_the_configuration_reference(schema) -> None:
    """Same source as README's configuration reference: each field's ``doc`` metadata."""
    types = schema["types"]
    checked = 0
    for type_name, cls in spec_types().items():
        properties = types[f"{TOKEN}{type_name}"]["properties"]
        assert sorted(properties) == sorted(camel(f.name) for f in dataclasses.fields(cls))
        for f in dataclasses.fields(cls):
            doc = f.metadata["doc"]
            assert doc, f"{cls.__name__}.{f.name} has no doc"
            assert properties[camel(f.name)]["description"] == field_description(f)
            assert properties[camel(f.name)]["description"].startswith(doc)
            checked += 1
    for f in dataclasses.fields(PlatformConfig):
        inputs = schema["resources"][COMPONENT]["inputProperties"]
        if f.name == "region":  # optional as a hosted input: see test_region_is_an_optional_input
            continue
        assert inputs[camel(f.name)]["description"] == field_description(f)
        checked += 1
    assert checked > 90
    # Plain defaults are appended as JSON; None, empty and object defaults are not.
    assert types[f"{TOKEN}SystemNodeGroupInputs"]["properties"]["minSize"]["description"] == (
        "Minimum nodes (at least 2, spread over AZs). Default: `2`."
    )
    assert types[f"{TOKEN}NodePoolInputs"]["properties"]["capacityTypes"]["description"] == (
        "In fallback order; Karpenter tries reserved, then spot, then on-demand. "
        'Default: `["on-demand"]`.'
    )
    assert types[f"{TOKEN}VpcInputs"]["properties"]["cidr"]["description"] == (
        "CIDR of a new VPC (/16 to /20); default 10.0.0.0/16."
    )


def test_every_literal_field_is_an_enum_of_exactly_its_values(schema) -> None:
    types = schema["types"]
    fields = list(literal_fields())
    assert len(fields) == 11  # + VpcSpec.subnet_tagging (issue 11), QueueSpec.workload_kind,
    # ValidationSpec.after_deploy
    for type_name, prop_name, values, is_list in fields:
        prop = types[f"{TOKEN}{type_name}"]["properties"][prop_name]
        if is_list:
            assert prop["type"] == "array", (type_name, prop_name)
            prop = prop["items"]
        assert "type" not in prop, (type_name, prop_name)
        enum = types[prop["$ref"].removeprefix("#/types/")]
        assert enum["type"] == "string"
        assert [v["value"] for v in enum["enum"]] == list(values), (type_name, prop_name)
    enums = {
        token.removeprefix(TOKEN): [(v["name"], v["value"]) for v in typ["enum"]]
        for token, typ in types.items()
        if "enum" in typ
    }
    assert enums == {
        "KarpenterAuth": [("PodIdentity", "podIdentity"), ("Irsa", "irsa")],
        "VpcSubnetTagging": [("Owned", "owned"), ("Shared", "shared"), ("None", "none")],
        "KarpenterLogLevel": [("Debug", "debug"), ("Info", "info"), ("Error", "error")],
        "NodePoolKind": [("Gpu", "gpu"), ("Efa", "efa"), ("Cpu", "cpu")],
        "NodePoolCapacityType": [
            ("Reserved", "reserved"),
            ("Spot", "spot"),
            ("OnDemand", "on-demand"),
        ],
        "DisruptionConsolidationPolicy": [
            ("WhenEmpty", "WhenEmpty"),
            ("WhenEmptyOrUnderutilized", "WhenEmptyOrUnderutilized"),
            ("Balanced", "Balanced"),
        ],
        "TaintEffect": [
            ("NoSchedule", "NoSchedule"),
            ("PreferNoSchedule", "PreferNoSchedule"),
            ("NoExecute", "NoExecute"),
        ],
        "AmiFamily": [("Al2023", "al2023"), ("Bottlerocket", "bottlerocket")],
        "GpuOperatorMigStrategy": [("None", "none"), ("Single", "single"), ("Mixed", "mixed")],
        "QueueWorkloadKind": [
            ("Training", "training"),
            ("Inference", "inference"),
            ("Notebook", "notebook"),
        ],
        "ValidationAfterDeploy": [
            ("Deployment", "deployment"),
            ("Capacity", "capacity"),
            ("Scheduling", "scheduling"),
            ("Performance", "performance"),
            ("Security", "security"),
        ],
    }
    pool = types[f"{TOKEN}NodePoolInputs"]["properties"]
    assert pool["kind"] == {
        "description": 'gpu, efa (multi-node training) or cpu. Default: `"gpu"`.',
        "$ref": f"#/types/{TOKEN}NodePoolKind",
    }
    assert pool["capacityTypes"]["items"]["$ref"] == f"#/types/{TOKEN}NodePoolCapacityType"
    assert types[f"{TOKEN}NodePoolKind"]["description"] == "The values of kind: gpu, efa, cpu."


def test_outputs_are_exactly_the_stack_exports(schema, render_stack) -> None:
    resource = schema["resources"][COMPONENT]
    assert sorted(resource["properties"]) == STACK_EXPORTS
    assert resource["required"] == STACK_EXPORTS
    assert sorted(render_stack("dev").outputs) == STACK_EXPORTS
    assert resource["properties"]["privateSubnetIds"]["type"] == "array"
    assert resource["properties"]["privateSubnetIds"]["items"]["type"] == "string"
    # A map of add-on name to version (issue 28, point 1).
    assert resource["properties"]["addonVersions"]["type"] == "object"
    assert resource["properties"]["addonVersions"]["additionalProperties"]["type"] == "string"
    maps = ("privateSubnetIds", "addonVersions")
    others = {k: p["type"] for k, p in resource["properties"].items() if k not in maps}
    assert set(others.values()) == {"string"}


def test_kubeconfig_is_secret_in_the_provider_schema_only_there(schema, schemas) -> None:
    # The stock generator has no `secret` field (experimental/schema.py 66-91) ...
    assert "secret" not in schema["resources"][COMPONENT]["properties"]["kubeconfig"]
    # ... the provider adds it, and only there.
    served = copy.deepcopy(schemas["served"])  # the module's: edited below
    outputs = served["resources"][COMPONENT]["properties"]
    assert {k for k, p in outputs.items() if p.get("secret")} == {"kubeconfig"}
    assert outputs["kubeconfig"]["secret"] is True
    # Apart from that (and the nulls the generator leaves in lists), the schemas are the same.
    del outputs["kubeconfig"]["secret"]
    stock = json.loads(json.dumps(schema).replace(', "description": null', ""))
    stock["version"] = served["version"]
    assert served == stock


def test_kubeconfig_is_a_secret_output_of_the_component_and_the_stack(render_stack) -> None:
    recording = render_stack("dev")
    assert recording.secret_outputs == {"kubeconfig"}
    (platform,) = [r for r in recording.resources if r.type == COMPONENT]
    registered = platform.registered_outputs
    assert sorted(camel(k) for k in registered) == STACK_EXPORTS
    assert [k for k, v in registered.items() if rpc.is_rpc_secret(v)] == ["kubeconfig"]


HOSTED_INPUTS = {
    "region": "us-west-2",
    "cluster": {"name": "hosted"},
    "vpc": {"azCount": 3.0},
    "nodePools": [
        {
            "name": "l4",
            "kind": "gpu",
            "gpus": ["l4"],
            "capacityTypes": ["spot", "on-demand"],
            "preemptible": True,
            "limits": {"gpus": 4.0},
        }
    ],
    "gpuOperator": {"timeSlicing": {"shared": 4.0}},
}


def test_hosted_inputs_parse_into_the_config_the_stack_would_build(provider) -> None:
    """Numbers arrive as doubles (protobuf Struct); lists of enum values as strings."""
    component = provider._component_defs["GpuPlatform"]
    mapped = provider.map_inputs(HOSTED_INPUTS, component)
    assert mapped["node_pools"][0]["capacity_types"] == ["spot", "on-demand"]
    assert mapped["vpc"] == {"az_count": 3}
    assert type(mapped["vpc"]["az_count"]) is int
    config = platform_config_from_args(mapped)
    expected = PlatformConfig.load(
        {
            "cluster": {"name": "hosted"},
            "vpc": {"azCount": 3},
            "nodePools": [
                {
                    "name": "l4",
                    "kind": "gpu",
                    "gpus": ["l4"],
                    "capacityTypes": ["spot", "on-demand"],
                    "preemptible": True,
                    "limits": {"gpus": 4},
                }
            ],
            "gpuOperator": {"timeSlicing": {"shared": 4}},
        },
        "us-west-2",
    )
    assert config == expected


def test_stock_provider_still_loses_enum_lists_and_integers() -> None:
    """Pins the pulumi 3.272.0 behaviour provider/__main__.py works around: if this fails,
    upstream changed and the workaround may go."""
    stock = ComponentProvider([GpuPlatform], PKG, None, "0.1.0")
    mapped = stock.map_inputs(HOSTED_INPUTS, stock._component_defs["GpuPlatform"])
    assert mapped["node_pools"][0]["capacity_types"] == [{}, {}]
    assert mapped["vpc"] == {"az_count": 3.0}
    assert type(mapped["vpc"]["az_count"]) is float


def test_hosted_bad_enum_list_value_is_a_spec_error(provider) -> None:
    inputs = {**HOSTED_INPUTS, "nodePools": [{**HOSTED_INPUTS["nodePools"][0]}]}
    inputs["nodePools"][0]["capacityTypes"] = ["spot", "ondemand"]
    mapped = provider.map_inputs(inputs, provider._component_defs["GpuPlatform"])
    with pytest.raises(Exception) as err:
        platform_config_from_args(mapped)
    assert str(err.value) == (
        "nodePools[0](l4).capacityTypes[1]: 'ondemand' is not allowed; expected one of reserved, "
        "spot, on-demand; did you mean 'on-demand'?"
    )


def test_plugin_serves_the_schema_over_grpc_as_pulumi_runs_it(served) -> None:
    """The plugin started as the language host starts it (``served``) answers ``GetSchema``."""
    outputs = served["resources"][COMPONENT]["properties"]
    assert sorted(outputs) == STACK_EXPORTS
    assert outputs["kubeconfig"]["secret"] is True
    assert served["types"][f"{TOKEN}NodePoolCapacityType"]["enum"][2] == {
        "name": "OnDemand",
        "value": "on-demand",
    }


def test_region_is_an_optional_input(schema) -> None:
    """Hosted, a missing ``region`` falls back to the stack's ``aws:region``
    (``platform_config_from_args``), so the SDKs must let callers leave it out."""
    resource = schema["resources"][COMPONENT]
    assert "region" not in resource.get("requiredInputs", [])
    assert sorted(resource.get("requiredInputs", [])) == ["cluster"]
    assert resource["inputProperties"]["region"]["description"] == (
        "AWS region (`aws:region`). Optional here: without it, the stack's `aws:region`."
    )
