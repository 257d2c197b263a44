"""The offline render end to end: the CLI on the dev stack, bad configurations, the module entry
point, and the strictness of the recording mocks (other projects' programs and the generic mocks:
test_render_consumer.py)."""

import contextlib
import io
import json
import re
import subprocess
from pathlib import Path

import pulumi
import pytest
import yaml
from karpenter.upstream import UPSTREAM_POLICIES, upstream_actions
from render_cache import cli_renders
from stack_files import USER_STACKS, fixture_stack_path, user_id

from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.render import default_out, iam_documents, main

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv" / "bin" / "python"
WALL_TIME = re.compile(r"^Wall time: \d+\.\d\d s$")

# The foundation's IAM documents (node pools and later components may add more).
FOUNDATION_IAM_FILES = {
    "platform-cluster-system-node-trust.json",
    "platform-karpenter-controller-trust.json",
    "platform-karpenter-node-trust.json",
    "platform-karpenter-nodelifecycle.json",
    "platform-karpenter-iamintegration.json",
    "platform-karpenter-eksintegration.json",
    "platform-karpenter-interruption.json",
    "platform-karpenter-resourcediscovery.json",
    "platform-karpenter-zonalshift.json",
}
CONTROLLER_POLICY_FILES = {
    group: f"platform-karpenter-{group.lower()}.json" for group in UPSTREAM_POLICIES
}


def run_main(*argv: str) -> tuple[int, str, str]:
    """``main(argv)`` in this process, with its stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def dev(tmp_path_factory):
    """The fixture dev stack (tests/fixtures/stacks) rendered once through the CLI entry point:
    (exit code, stdout, stderr, out)."""
    out = tmp_path_factory.mktemp("render") / "dev"
    fixture = str(fixture_stack_path("dev"))
    args = ("--stack", "dev", "--config-file", fixture, "--project-dir", str(REPO))
    with cli_renders():
        code, stdout, stderr = run_main(*args, "--out", str(out))
    return code, stdout, stderr, out


def resources(out: Path) -> list[dict]:
    return json.loads((out / "resources.json").read_text())


def resource(out: Path, typ: str, name: str) -> dict:
    matches = [r for r in resources(out) if r["type"] == typ and r["name"] == name]
    assert len(matches) == 1, (typ, name)
    return matches[0]


# --- the dev stack ---------------------------------------------------------------------------


def test_dev_render_succeeds_and_writes_the_files(dev):
    code, _, stderr, out = dev
    assert code == 0, stderr
    assert stderr == ""
    for name in (
        "resources.json",
        "outputs.json",
        "helm/karpenter.yaml",
        "helm/karpenter-crd.yaml",
    ):
        assert (out / name).is_file(), name
    iam = {p.name for p in (out / "iam").iterdir()}
    assert iam >= FOUNDATION_IAM_FILES
    helm = {p.name for p in (out / "helm").iterdir()}
    assert helm >= {"karpenter-crd.yaml", "karpenter.yaml"}
    # No staging directory is left next to the output.
    assert [p.name for p in out.parent.iterdir()] == ["dev"]


def test_karpenter_release_files(dev):
    out = dev[3]
    queue = resource(out, "aws:sqs/queue:Queue", "platform-karpenter-interruption")
    crd = yaml.safe_load((out / "helm" / "karpenter-crd.yaml").read_text())
    assert crd == {
        "name": "karpenter-crd",
        "resource": "platform-karpenter-crd",
        "repository": "oci://public.ecr.aws/karpenter",
        "chart": "karpenter-crd",
        "version": "1.15.1",
        "namespace": "kube-system",
        "createNamespace": False,
        "skipCrds": False,
        "values": {},
    }
    release = yaml.safe_load((out / "helm" / "karpenter.yaml").read_text())
    values = release.pop("values")
    assert release == {
        "name": "karpenter",
        "resource": "platform-karpenter-chart",
        "repository": "oci://public.ecr.aws/karpenter",
        "chart": "karpenter",
        "version": "1.15.1",
        "namespace": "kube-system",
        "createNamespace": False,
        "skipCrds": True,
    }
    assert queue["inputs"]["name"] == "Karpenter-gpu-dev"
    assert values["settings"]["interruptionQueue"] == queue["inputs"]["name"]
    assert values["settings"]["clusterName"] == "gpu-dev"
    assert values["replicas"] == 2
    assert values["nodeSelector"] == {
        "eks-gpu-platform.io/system": "true",
        "kubernetes.io/os": "linux",
    }
    outputs = json.loads((out / "outputs.json").read_text())
    assert outputs["interruptionQueueName"] == queue["inputs"]["name"]
    assert outputs["clusterName"] == "gpu-dev"


def test_controller_policy_files_grant_every_upstream_action(dev):
    out = dev[3]
    granted: set[str] = set()
    sids: list[str] = []
    for group, name in CONTROLLER_POLICY_FILES.items():
        document = json.loads((out / "iam" / name).read_text())
        assert document["Version"] == "2012-10-17", group
        for statement in document["Statement"]:
            sids.append(statement["Sid"])
            action = statement["Action"]
            granted.update([action] if isinstance(action, str) else action)
    assert granted == upstream_actions()
    assert len(sids) == 18
    queue = resource(out, "aws:sqs/queue:Queue", "platform-karpenter-interruption")
    interruption = json.loads((out / "iam" / "platform-karpenter-interruption.json").read_text())
    assert (
        interruption["Statement"][0]["Resource"]
        == f"arn:aws:sqs:us-west-2:{mocks.PLACEHOLDER_ACCOUNT_ID}:{queue['inputs']['name']}"
    )


def test_every_iam_document_gets_its_own_file(dev, render_stack):
    out = dev[3]
    documents = iam_documents(render_stack("dev"))
    files = [json.loads(p.read_text()) for p in (out / "iam").iterdir()]
    assert len(files) == len(documents)
    assert any(d.get("Id") == "EC2InterruptionPolicy" for d in files)


def test_secret_outputs_are_masked(dev):
    outputs = json.loads((dev[3] / "outputs.json").read_text())
    assert outputs["kubeconfig"] == "[secret]"


def test_resources_json_is_stable(dev):
    for r in resources(dev[3]):
        assert r["dependencies"] == sorted(r["dependencies"]), r["name"]


def test_resources_json_matches_the_recording(dev, render_stack):
    recording = render_stack("dev")
    written = resources(dev[3])
    assert sorted((r["type"], r["name"]) for r in written) == sorted(
        (r.type, r.name) for r in recording.resources
    )
    # Numbers are written as the engine hands them to providers: integers, not 2.0.
    group = next(r for r in written if r["type"] == "aws:eks/nodeGroup:NodeGroup")
    assert group["inputs"]["scalingConfig"] == {"desiredSize": 2, "maxSize": 3, "minSize": 2}
    assert isinstance(group["inputs"]["scalingConfig"]["minSize"], int)


def test_summary(dev):
    _, stdout, _, out = dev
    lines = stdout.splitlines()
    assert lines[0] == f"Rendered {len(resources(out))} resources to {out}"
    manifests = len(list((out / "manifests").iterdir()))
    helm = len(list((out / "helm").iterdir()))
    assert re.fullmatch(
        rf"  {manifests} Kubernetes manifests, {helm} Helm releases, \d+ IAM documents", lines[1]
    ), lines[1]
    assert lines[2] == "Resources per component:"
    for line in (
        # Each resource once, under its nearest component (issue 23, point 5): the cluster's
        # 17 custom resources and its eks:index:Cluster component (the dev viewer is commented
        # out until CI creates its role: issue 28, point 2); Karpenter: 34 - the node role's
        # CNI and SSM policies + the EC2 Spot service-linked role (issue 28, point 7).
        f"  {'EksCluster platform-cluster':<48} {18:>4}",
        f"  {'Karpenter platform-karpenter':<48} {33:>4}",
        f"  {'Network platform-network':<48} {18:>4}",
    ):
        assert line in lines
    # The rows add up to the resources (they were nested totals: 207 for 114 resources).
    counts = lines[lines.index("Resources per component:") + 1 : lines.index("Helm releases:")]
    assert counts[-1] == f"  {'Total':<48} {len(resources(out)):>4}"
    assert sum(int(line.rsplit(" ", 1)[1]) for line in counts[:-1]) == len(resources(out))
    assert "Helm releases:" in lines
    assert f"  {'karpenter-crd':<28} karpenter-crd 1.15.1 -> kube-system" in lines
    assert f"  {'karpenter':<28} karpenter 1.15.1 -> kube-system" in lines
    assert_ends_with_wall_time_and_refusals(lines)


def assert_ends_with_wall_time_and_refusals(lines: list[str]) -> None:
    """The console ends with the wall time, then what `pulumi up` refuses, if anything (the
    fixture dev stack's placeholder CIDR at least; issue 28, point 11)."""
    (wall,) = [i for i, line in enumerate(lines) if WALL_TIME.match(line)]
    after = lines[wall + 1 :]
    assert after[0] == "", after
    assert after[1].startswith("`pulumi up` refuses this stack: "), after
    assert after[2:] and all(line.startswith("  - ") for line in after[2:]), after


# --- bad input -------------------------------------------------------------------------------

BAD_STACK = """\
config:
  aws:region: us-west-2
  eks-gpu-platform:cluster:
    name: gpu-dev
    kubernetesVersion: 1.30
    endpointPublicAccess: true
  eks-gpu-platform:karpenter:
    replica: 2
  eks-gpu-platform:vpc:
    azCount: 9
"""


def test_bad_configuration_exits_2_with_one_line_per_problem(tmp_path):
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(BAD_STACK)
    out = tmp_path / "out"
    code, stdout, stderr = run_main(
        "--stack", "bad", "--config-file", str(stack), "--project-dir", str(REPO), "--out", str(out)
    )
    assert code == 2
    assert stdout == ""
    assert "Traceback" not in stderr
    assert stderr.splitlines() == [
        "invalid stack configuration:",
        "  cluster.kubernetesVersion: 1.3 is not a string (quote it in YAML)",
        # Reported with the type error, not after it is fixed (issue 13, item 2).
        "  cluster.publicAccessCidrs: is empty but endpointPublicAccess is true; list the CIDR "
        "blocks allowed to reach the public endpoint",
        "  vpc.azCount: 9 is out of range; expected a number from 2 to 6",
        "  karpenter.replica: unknown key; did you mean 'replicas'?; allowed keys are auth, "
        "chartVersion, cpu, interruptionHandling, logLevel, memory, replicas, "
        "spotServiceLinkedRole",
    ]
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["Pulumi.bad.yaml"]


def test_cross_field_problem_exits_2(tmp_path):
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(
        "config:\n"
        "  aws:region: us-west-2\n"
        "  eks-gpu-platform:cluster:\n"
        "    name: gpu-dev\n"
        "    endpointPublicAccess: true\n"
        "    publicAccessCidrs: [203.0.113.0/24]\n"
        "  eks-gpu-platform:karpenter:\n"
        "    replicas: 3\n"
    )
    code, stdout, stderr = run_main(
        "--config-file", str(stack), "--project-dir", str(REPO), "--out", str(tmp_path / "o")
    )
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [
        "invalid stack configuration:",
        "  karpenter.replicas: 3 replicas need 3 system nodes (one per node), but "
        "systemNodeGroup.minSize is 2",
    ]
    assert not (tmp_path / "o").exists()


def test_missing_stack_file_exits_2(tmp_path):
    code, stdout, stderr = run_main(
        "--stack", "nope", "--project-dir", str(REPO), "--out", str(tmp_path / "o")
    )
    assert (code, stdout) == (2, "")
    assert stderr == f"error: stack file {REPO / 'Pulumi.nope.yaml'} does not exist\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config: [unclosed\n", "is not valid YAML"),
        ("- a\n- b\n", "expected a mapping with a 'config' mapping"),
        ("config: [a, b]\n", "expected a mapping with a 'config' mapping"),
    ],
    ids=["not-yaml", "not-a-mapping", "config-not-a-mapping"],
)
def test_unusable_stack_file_exits_2(tmp_path, text, message):
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(text)
    code, stdout, stderr = run_main(
        "--config-file", str(stack), "--project-dir", str(REPO), "--out", str(tmp_path / "o")
    )
    assert (code, stdout) == (2, "")
    assert stderr.startswith(f"error: {stack}")
    assert message in stderr
    assert "Traceback" not in stderr
    assert len(stderr.splitlines()) >= 1
    assert not (tmp_path / "o").exists()


GOOD_STACK = """\
config:
  aws:region: eu-west-1
  eks-gpu-platform:cluster:
    name: gpu-alt
  eks-gpu-platform:vpc:
    cidr: 10.50.0.0/20
    azCount: 3
  eks-gpu-platform:karpenter:
    interruptionHandling: false
"""


def test_config_file_and_out(tmp_path):
    stack = tmp_path / "alt.yaml"
    stack.write_text(GOOD_STACK)
    out = tmp_path / "nested" / "alt-out"
    code, stdout, stderr = run_main(
        "--stack", "alt", "--config-file", str(stack), "--project-dir", str(REPO), "--out", str(out)
    )
    assert code == 0, stderr
    assert stdout.splitlines()[0] == f"Rendered {len(resources(out))} resources to {out}"
    written = resources(out)
    assert not [r for r in written if r["type"].startswith("aws:sqs/")]
    assert not [r for r in written if r["type"] == "aws:cloudwatch/eventRule:EventRule"]
    subnets = sorted(
        r["inputs"]["cidrBlock"] for r in written if r["type"] == "aws:ec2/subnet:Subnet"
    )
    assert subnets == [
        "10.50.0.0/23",
        "10.50.14.0/26",
        "10.50.14.128/26",
        "10.50.14.64/26",
        "10.50.2.0/23",
        "10.50.4.0/23",
    ]
    cluster = next(r for r in written if r["type"] == "eks:index:Cluster")
    assert cluster["inputs"]["name"] == "gpu-alt"
    assert cluster["urn"].startswith("urn:pulumi:alt::eks-gpu-platform::")
    assert not (out / "iam" / "platform-karpenter-interruption.json").exists()
    release = yaml.safe_load((out / "helm" / "karpenter.yaml").read_text())
    assert release["values"]["settings"]["interruptionQueue"] == ""
    outputs = json.loads((out / "outputs.json").read_text())
    assert outputs["interruptionQueueName"] == ""
    assert outputs["karpenterNodeRoleArn"] == (
        f"arn:aws:iam::{mocks.PLACEHOLDER_ACCOUNT_ID}:role/KarpenterNodeRole-gpu-alt"
    )


def test_module_entry_point(tmp_path):
    out = tmp_path / "dev"
    proc = subprocess.run(
        [
            *(str(PYTHON), "-m", "eks_gpu_platform.offline", "--stack", "dev"),
            *("--config-file", str(fixture_stack_path("dev")), "--out", str(out)),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"Rendered {len(resources(out))} resources to {out}"
    assert_ends_with_wall_time_and_refusals(lines)
    assert (out / "helm" / "karpenter.yaml").is_file()


def test_module_entry_point_exit_code_for_bad_config(tmp_path):
    proc = subprocess.run(
        [str(PYTHON), "-m", "eks_gpu_platform.offline", "--stack", "nope", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: stack file {REPO / 'Pulumi.nope.yaml'} does not exist\n"


def test_a_bad_configuration_exits_before_any_pulumi_sdk_is_imported(tmp_path):
    """The command line reads and validates the stack file with the pure modules and imports
    the Pulumi SDKs (a second of the process's time) only to run the program: a configuration
    error exits 2 without loading one (``render.py``'s lazy imports, ``lazy.py``)."""
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(BAD_STACK)
    program = (
        "import sys\n"
        "from eks_gpu_platform.offline.render import main\n"
        "code = main(sys.argv[1:])\n"
        "print(code, sorted(m for m in sys.modules if m.startswith('pulumi')))\n"
    )
    args = ("--stack", "bad", "--config-file", str(stack), "--project-dir", str(REPO))
    proc = subprocess.run(
        [str(PYTHON), "-c", program, *args, "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.stdout == "2 []\n", proc.stderr
    assert proc.stderr.splitlines()[:2] == [
        "invalid stack configuration:",
        "  cluster.kubernetesVersion: 1.3 is not a string (quote it in YAML)",
    ]


# --- strict mocks ------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", USER_STACKS, ids=user_id)
def test_user_stacks_use_only_modelled_types_and_invokes(stack, render_user_stack):
    """The render answers unmodelled types generically (for other projects' programs); this
    project's own stacks must use none, or their render would not be realistic."""
    recording = render_user_stack(stack)
    assert recording.unmodelled == {}
    assert recording.notices == []


def test_dev_render_prints_no_notice(dev):
    _, stdout, _, out = dev
    assert [line for line in stdout.splitlines() if "notice" in line] == []
    assert "notice" not in (out / "summary.md").read_text()


def test_unknown_invoke_raises_in_strict_mode():
    m = mocks.RecordingMocks(region="us-west-2", partition="aws")
    with pytest.raises(NotImplementedError) as err:
        m.call(pulumi.runtime.MockCallArgs("aws:ec2/getVpc:getVpc", {"id": "vpc-1"}, ""))
    assert str(err.value) == (
        "offline mocks: invoke 'aws:ec2/getVpc:getVpc' is not modelled (strict mode); "
        "RecordingMocks(strict=False) answers it with its arguments"
    )
    assert m.calls == [("aws:ec2/getVpc:getVpc", {"id": "vpc-1"})]


def test_unknown_resource_type_raises_in_strict_mode():
    m = mocks.RecordingMocks(region="us-west-2", partition="aws")
    args = pulumi.runtime.MockResourceArgs(
        typ="aws:s3/bucket:Bucket", name="b", inputs={}, provider="", resource_id="", custom=True
    )
    with pytest.raises(NotImplementedError) as err:
        m.new_resource(args)
    assert str(err.value) == (
        "offline mocks: resource type 'aws:s3/bucket:Bucket' ('b') is not modelled (strict "
        "mode); RecordingMocks(strict=False) renders it with generic outputs"
    )
    assert m.unmodelled == {}


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        (
            "aws:index/getPartition:getPartition",
            {
                "partition": "aws-cn",
                "dnsSuffix": "amazonaws.com.cn",
                "reverseDnsPrefix": "cn.com.amazonaws",
                "id": "aws-cn",
            },
        ),
        (
            "aws:index/getCallerIdentity:getCallerIdentity",
            {
                "accountId": "111122223333",
                "arn": "arn:aws-cn:iam::111122223333:user/offline-render",
                "userId": "AIDAOFFLINERENDER0000",
                "id": "111122223333",
            },
        ),
        (
            "aws:index/getRegion:getRegion",
            {"name": "cn-north-1", "region": "cn-north-1", "id": "cn-north-1"},
        ),
    ],
    ids=["partition", "caller", "region"],
)
def test_known_invokes(token, expected):
    m = mocks.RecordingMocks(region="cn-north-1", partition="aws-cn", account_id="111122223333")
    assert m.call(pulumi.runtime.MockCallArgs(token, {}, "")) == expected


AZ_TOKEN = "aws:index/getAvailabilityZones:getAvailabilityZones"


def test_availability_zone_names():
    m = mocks.RecordingMocks(region="us-west-2", partition="aws")
    zones = m.call(pulumi.runtime.MockCallArgs(AZ_TOKEN, {}, ""))
    # us-west-2's four zones that need no opt-in (regions.py, issue 13).
    assert zones["names"] == [f"us-west-2{c}" for c in "abcd"]
    # Asked for the zones in one state, the mocks drop the others (issue 21, point 7).
    m.impaired_zones = frozenset({"us-west-2b"})
    available = m.call(pulumi.runtime.MockCallArgs(AZ_TOKEN, {"state": "available"}, ""))
    assert available["names"] == ["us-west-2a", "us-west-2c", "us-west-2d"]
    assert available["state"] == "available"
    assert m.call(pulumi.runtime.MockCallArgs(AZ_TOKEN, {}, ""))["names"] == zones["names"]


@pytest.mark.parametrize(
    ("region", "zone_id"),
    [("us-west-2", "usw2-az1"), ("eu-central-1", "euc1-az1"), ("ap-northeast-1", "apne1-az1")],
    ids=lambda v: v,
)
def test_availability_zone_ids_are_shaped_like_aws(region, zone_id):
    m = mocks.RecordingMocks(region=region, partition="aws")
    zones = m.call(pulumi.runtime.MockCallArgs(AZ_TOKEN, {}, ""))
    assert zones["zoneIds"][0] == zone_id


def test_kubernetes_and_provider_types_pass_through():
    m = mocks.RecordingMocks(region="us-west-2", partition="aws")
    release = pulumi.runtime.MockResourceArgs(
        typ="kubernetes:helm.sh/v3:Release", name="r", inputs={"chart": "c"}, custom=True
    )
    assert m.new_resource(release) == ("r-id", {"chart": "c"})
    component = pulumi.runtime.MockResourceArgs(
        typ="eks-gpu-platform:index:Anything", name="x", inputs={}, custom=False
    )
    assert m.new_resource(component) == ("", {})


@pytest.mark.parametrize(
    ("stack", "config_file", "expected"),
    [
        ("dev", None, "build/dev"),
        ("prod", None, "build/prod"),
        # --config-file never lands on a stack's render (issue 23, point 8c).
        ("dev", "stacks/Pulumi.staging.yaml", "build/file-staging"),
        ("dev", "/tmp/Pulumi.dev.yaml", "build/file-dev"),
        ("dev", "big-cluster.yml", "build/file-big-cluster"),
    ],
    ids=["stack", "other-stack", "config-file", "named-after-a-stack", "yml"],
)
def test_default_out(stack, config_file, expected):
    project = Path("/project")
    file = Path(config_file) if config_file else None
    assert default_out(project, stack, file) == project / expected
