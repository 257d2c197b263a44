"""The whole pack loads in the real CrossGuard runtime and answers the engine's gRPC calls.

For a Python pack the Python language host runs ``python -u -m pulumi.policy <engine> <pack dir>``
with the pack directory as working directory (pulumi/pulumi@1b5949891b3c,
sdk/python/cmd/pulumi-language-python/main.go lines 1611-1617 and 1636-1642); ``pulumi.policy``
runs ``policies/__main__.py`` (``runpy.run_path``), whose ``PolicyPack`` prints its port and
serves forever. The same here: the repository root is not on ``sys.path``, so the pack finds
``eks_gpu_platform.policies`` in the virtualenv, as it does under the engine.
"""

import subprocess
import sys
import threading

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from policy_baselines import DOMAIN, NODEPOOL, compliant_stack, gpu_nodepool
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from eks_gpu_platform.policies.rules import MANDATORY, RULES, RULES_BY_NAME

START_TIMEOUT = 60
CALL_TIMEOUT = 20
LEVEL = {"mandatory": analyzer_pb2.MANDATORY, "advisory": analyzer_pb2.ADVISORY}
LABEL_RULE = "gpu-nodepool-taint-and-pool-label"
URN = f"urn:pulumi:test::eks-gpu-platform::{NODEPOOL}::platform-pool-inference"


def _read_port(process: subprocess.Popen) -> int:
    line: list[bytes] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    if not line or not line[0].strip().isdigit():
        process.kill()
        _, err = process.communicate(timeout=10)
        pytest.fail(f"policy pack did not print its port: {line!r}\n{err.decode()[-3000:]}")
    return int(line[0])


@pytest.fixture(scope="module")
def analyzer(policy_repo_root):
    pack_dir = policy_repo_root / "policies"
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(pack_dir)],
        cwd=pack_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        port = _read_port(process)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=CALL_TIMEOUT)
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.kill()
        process.wait(timeout=10)


def struct(props) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(props)
    return message


def analyze(stub, props):
    request = analyzer_pb2.AnalyzeRequest(
        type=NODEPOOL, name="platform-pool-inference", urn=URN, properties=struct(props)
    )
    return stub.Analyze(request, timeout=CALL_TIMEOUT)


def unlabelled_gpu_pool():
    props = gpu_nodepool()
    del props["spec"]["template"]["metadata"]["labels"][f"{DOMAIN}/pool"]
    return props


def test_every_policy_is_listed_with_its_enforcement_level(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=CALL_TIMEOUT)
    assert info.name == "eks-gpu-platform"
    assert {p.name: p.enforcementLevel for p in info.policies} == {
        r.name: LEVEL[r.enforcement_level] for r in RULES
    }
    kinds = {p.name: p.policy_type for p in info.policies}
    for rule in RULES:
        expected = (
            analyzer_pb2.PolicyType.POLICY_TYPE_STACK
            if rule.is_stack
            else analyzer_pb2.PolicyType.POLICY_TYPE_RESOURCE
        )
        assert kinds[rule.name] == expected, rule.name
    schema = next(p.configSchema for p in info.policies if p.name == LABEL_RULE)
    assert schema.properties["labelDomain"]["default"] == DOMAIN


def test_compliant_resource_has_no_diagnostics(analyzer):
    assert list(analyze(analyzer, gpu_nodepool()).diagnostics) == []


def test_analyze_reports_a_violation(analyzer):
    rule = RULES_BY_NAME[LABEL_RULE]
    (diagnostic,) = analyze(analyzer, unlabelled_gpu_pool()).diagnostics
    assert diagnostic.policyName == rule.name
    assert diagnostic.policyPackName == "eks-gpu-platform"
    assert diagnostic.enforcementLevel == analyzer_pb2.MANDATORY
    assert diagnostic.message == (
        f"{rule.description}\n"
        f'NodePool "inference" has no "{DOMAIN}/pool" label in spec.template.metadata.labels; '
        "workloads and queues cannot target the pool before it has nodes"
    )


def test_analyze_stack_reports_against_the_resource(analyzer):
    stack = compliant_stack()
    resources = [
        analyzer_pb2.AnalyzerResource(
            type=r.type, name=r.name, urn=r.urn, properties=struct(r.props)
        )
        for r in stack
        if r.name != "platform-pool-train-spot-class"
    ]
    response = analyzer.AnalyzeStack(
        analyzer_pb2.AnalyzeStackRequest(resources=resources), timeout=CALL_TIMEOUT
    )
    (diagnostic,) = response.diagnostics
    rule = RULES_BY_NAME["nodepool-nodeclass-exists"]
    assert diagnostic.policyName == rule.name
    assert diagnostic.enforcementLevel == analyzer_pb2.MANDATORY
    assert diagnostic.urn == next(r.urn for r in stack if r.name == "platform-pool-train-spot")
    assert diagnostic.message == (
        f"{rule.description}\n"
        'NodePool "train-spot" references EC2NodeClass "train-spot", which this stack does not '
        "define; Karpenter never launches nodes for it"
    )


def test_configured_level_and_properties_apply(analyzer):
    """What `--policy-pack-config` sends: a level and a property for one policy."""
    config = analyzer_pb2.PolicyConfig(
        enforcementLevel=analyzer_pb2.ADVISORY, properties=struct({"labelDomain": "example.com"})
    )
    analyzer.Configure(
        analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={LABEL_RULE: config}),
        timeout=CALL_TIMEOUT,
    )
    try:
        (diagnostic,) = analyze(analyzer, gpu_nodepool()).diagnostics
        assert diagnostic.enforcementLevel == analyzer_pb2.ADVISORY
        assert diagnostic.message.endswith(
            'NodePool "inference" has no "example.com/pool" label in '
            "spec.template.metadata.labels; workloads and queues cannot target the pool before "
            "it has nodes"
        )
    finally:
        analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(), timeout=CALL_TIMEOUT)
    assert RULES_BY_NAME[LABEL_RULE].enforcement_level == MANDATORY
    assert list(analyze(analyzer, gpu_nodepool()).diagnostics) == []


def test_a_custom_label_domain_needs_no_pack_config(analyzer):
    """`pulumi preview --policy-pack policies` on a stack with its own cluster.labelDomain: the
    NodePool's annotation tells the pack the domain (issue 13, item 6)."""
    props = gpu_nodepool()
    labels = props["spec"]["template"]["metadata"]["labels"]
    props["spec"]["template"]["metadata"]["labels"] = {
        key.replace(DOMAIN, "ml.example.com"): value for key, value in labels.items()
    }
    props["metadata"]["annotations"] = {f"{DOMAIN}/label-domain": "ml.example.com"}
    assert list(analyze(analyzer, props).diagnostics) == []
    del props["spec"]["template"]["metadata"]["labels"]["ml.example.com/pool"]
    (diagnostic,) = analyze(analyzer, props).diagnostics
    assert diagnostic.message.endswith(
        'NodePool "inference" has no "ml.example.com/pool" label in '
        "spec.template.metadata.labels; workloads and queues cannot target the pool before it "
        "has nodes"
    )
