"""The offline render of other projects' programs (``--project-dir``): the region given in code,
no stack file, resource types the mocks do not model, and SpecErrors raised by the program.

Each test writes a small Pulumi project (``Pulumi.yaml``, ``__main__.py``, maybe a stack file) to
a temporary folder and runs the render's CLI entry point on it in this process.
"""

import contextlib
import hashlib
import io
import json
import re
import textwrap
from pathlib import Path

import pulumi
import pytest

from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.render import main
from eks_gpu_platform.spec import SpecError

ACCOUNT = mocks.PLACEHOLDER_ACCOUNT_ID
ARN = re.compile(r"arn:(aws[a-z-]*):([a-z0-9-]+):([a-z0-9-]*):")
NO_REGION = "aws:region: is required; set it with `pulumi config set aws:region`"
PLATFORM_HEADER = "import pulumi\nfrom eks_gpu_platform import GpuPlatform, PlatformConfig\n"


def project(tmp_path: Path, program: str, stack: dict | None = None) -> Path:
    """A Pulumi project named ``research``; ``stack``: the ``config`` of ``Pulumi.dev.yaml``
    (None: no stack file at all)."""
    folder = tmp_path / "research"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: research\nruntime: python\n")
    (folder / "__main__.py").write_text(textwrap.dedent(program))
    if stack is not None:
        (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": stack}))
    return folder


def render(folder: Path) -> tuple[int, str, str, Path]:
    """The CLI on ``folder`` (stack dev, no policy pack): exit code, stdout, stderr, out dir."""
    out = folder / "build"
    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["--project-dir", str(folder), "--out", str(out), "--no-policy"]
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return code, stdout.getvalue(), stderr.getvalue(), out


def resources(out: Path) -> list[dict]:
    return json.loads((out / "resources.json").read_text())


def outputs(out: Path) -> dict:
    return json.loads((out / "outputs.json").read_text())


def arn_scopes(out: Path) -> set[tuple[str, str]]:
    """Every (partition, region) an ARN in the render names; global ARNs (no region) aside."""
    text = (out / "resources.json").read_text() + (out / "outputs.json").read_text()
    return {(m[0], m[2]) for m in ARN.findall(text) if m[2]}


def autoname(name: str) -> str:
    """The mocks' Pulumi auto-name: the logical name and 7 hex digits derived from it."""
    return f"{name}-{hashlib.sha256(name.encode()).hexdigest()[:7]}"


def assert_config_error(result: tuple[int, str, str, Path], lines: list[str]) -> None:
    """Exit 2, the exact lines on stderr, nothing on stdout, nothing written."""
    code, stdout, stderr, out = result
    assert (code, stdout) == (2, ""), stderr
    assert stderr.splitlines() == ["invalid configuration:", *[f"  {line}" for line in lines]]
    assert not out.exists()
    # Not even a staging folder is left behind.
    assert {p.name for p in out.parent.iterdir()} - {"Pulumi.dev.yaml"} == {
        "Pulumi.yaml",
        "__main__.py",
    }


PLATFORM_IN_CODE = (
    PLATFORM_HEADER
    + """
config = PlatformConfig.load({"cluster": {"name": "research"}}, region=REGION)
platform = GpuPlatform("research", config)
pulumi.export("queueArn", platform.karpenter.queue_arn)
pulumi.export("nodeRoleArn", platform.karpenter.node_role_arn)
"""
)


# --- (a) the region given in code ----------------------------------------------------------


@pytest.mark.parametrize(
    ("region", "partition"), [("eu-central-1", "aws"), ("cn-north-1", "aws-cn")], ids=str
)
def test_region_in_code_without_a_stack_file(tmp_path, region, partition):
    folder = project(tmp_path, PLATFORM_IN_CODE.replace("REGION", repr(region)))
    code, stdout, stderr, out = render(folder)
    assert code == 0, stderr
    assert stderr == ""
    assert outputs(out) == {
        "queueArn": f"arn:{partition}:sqs:{region}:{ACCOUNT}:Karpenter-research",
        "nodeRoleArn": f"arn:{partition}:iam::{ACCOUNT}:role/KarpenterNodeRole-research",
    }
    assert arn_scopes(out) == {(partition, region)}
    written = resources(out)
    zones = {r["inputs"]["availabilityZone"] for r in written if r["type"].endswith(":Subnet")}
    assert zones == {f"{region}a", f"{region}b", f"{region}c"}
    # The platform's own AWS provider carries the region, and every AWS resource uses it (the
    # stack sets no aws:region, so the default provider would not know it).
    (provider,) = [r for r in written if r["type"] == "pulumi:providers:aws"]
    assert (provider["name"], provider["inputs"]["region"]) == ("research-aws", region)
    aws_resources = [r for r in written if r["custom"] and r["type"].startswith("aws:")]
    assert len(aws_resources) > 30
    assert {r["provider"].rpartition("::")[0] for r in aws_resources} == {provider["urn"]}
    (cluster,) = [r for r in written if r["type"] == "eks:index:Cluster"]
    assert cluster["inputs"]["name"] == "research"
    assert "notice" not in stdout


def test_region_in_code_equal_to_the_stack_region_uses_the_default_provider(tmp_path):
    program = PLATFORM_IN_CODE.replace("REGION", "'eu-west-1'")
    code, _, stderr, out = render(project(tmp_path, program, {"aws:region": "eu-west-1"}))
    assert code == 0, stderr
    written = resources(out)
    assert [r for r in written if r["type"].startswith("pulumi:providers:aws")] == []
    assert {r["provider"] for r in written if r["type"].startswith("aws:")} == {""}
    assert arn_scopes(out) == {("aws", "eu-west-1")}


def test_components_with_an_explicit_provider_in_code(tmp_path):
    """Components composed one by one follow the AWS provider they are given, invokes too."""
    program = """
    import pulumi
    import pulumi_aws as aws
    from eks_gpu_platform import Network, NetworkArgs, VpcSpec

    tokyo = aws.Provider("tokyo", region="ap-northeast-1")
    network = Network(
        "research-network",
        NetworkArgs(spec=VpcSpec(az_count=2), cluster_name="research"),
        opts=pulumi.ResourceOptions(providers=[tokyo]),
    )
    pulumi.export("vpcId", network.vpc_id)
    """
    code, _, stderr, out = render(project(tmp_path, program))
    assert code == 0, stderr
    written = resources(out)
    zones = sorted(r["inputs"]["availabilityZone"] for r in written if r["type"].endswith("Subnet"))
    assert zones == ["ap-northeast-1a", "ap-northeast-1a", "ap-northeast-1b", "ap-northeast-1b"]
    (tokyo,) = [r for r in written if r["type"] == "pulumi:providers:aws"]
    aws_resources = [r for r in written if r["type"].startswith("aws:")]
    assert {r["provider"].rpartition("::")[0] for r in aws_resources} == {tokyo["urn"]}


def test_platform_given_an_aws_provider_uses_it(tmp_path):
    """An AWS provider passed to GpuPlatform governs it; the stack's aws:region (the default
    provider's) is then not the platform's, so it is no conflict."""
    program = """
    import pulumi
    import pulumi_aws as aws
    from eks_gpu_platform import GpuPlatform, PlatformConfig

    stockholm = aws.Provider("stockholm", region="eu-north-1")
    platform = GpuPlatform(
        "research",
        PlatformConfig.load({"cluster": {"name": "research"}}, "eu-north-1"),
        opts=pulumi.ResourceOptions(providers=[stockholm]),
    )
    pulumi.export("queueArn", platform.karpenter.queue_arn)
    """
    code, _, stderr, out = render(project(tmp_path, program, {"aws:region": "us-west-2"}))
    assert code == 0, stderr
    assert outputs(out) == {"queueArn": f"arn:aws:sqs:eu-north-1:{ACCOUNT}:Karpenter-research"}
    assert arn_scopes(out) == {("aws", "eu-north-1")}
    providers = [r["name"] for r in resources(out) if r["type"] == "pulumi:providers:aws"]
    assert providers == ["stockholm"]


# --- (b) a region in code conflicting with aws:region -------------------------------------

CONFLICT = (
    "region: 'us-west-2' (given in code) conflicts with aws:region 'eu-west-1' in the stack "
    "configuration; set one of them"
)


def test_region_in_code_conflicting_with_the_stack(tmp_path):
    program = PLATFORM_IN_CODE.replace("REGION", "'us-west-2'")
    folder = project(tmp_path, program, {"aws:region": "eu-west-1"})
    assert_config_error(render(folder), [CONFLICT])


def test_other_aws_keys_without_aws_region_are_reported(tmp_path):
    """The platform's own provider (no aws:region) would not read aws:profile: say so."""
    program = PLATFORM_IN_CODE.replace("REGION", "'us-west-2'")
    folder = project(tmp_path, program, {"aws:profile": "research", "aws:skipMetadataApiCheck": 0})
    assert_config_error(
        render(folder),
        [
            f"aws:{key}: not read by the AWS provider the platform creates for region "
            "'us-west-2' (given in code, no aws:region); set aws:region: us-west-2 in the stack "
            "configuration"
            for key in ("profile", "skipMetadataApiCheck")
        ],
    )


def test_stack_credentials_the_kubernetes_steps_cannot_use_are_refused(tmp_path):
    """Issue 21, point 3; fails on the old code, which deployed with static keys in the stack:
    the AWS provider used them, `aws eks get-token` did not (every Kubernetes step 401)."""
    program = PLATFORM_IN_CODE.replace("REGION", "'us-west-2'")
    config = {
        "aws:region": "us-west-2",
        "aws:accessKey": "AKIAEXAMPLE",
        "aws:assumeRoles": '[{"roleArn": "arn:aws:iam::111122223333:role/A", "externalId": "x"}]',
    }
    assert_config_error(
        render(project(tmp_path, program, config)),
        [
            "aws:accessKey: static credentials in the stack configuration reach the AWS "
            "provider but not `aws eks get-token`, which every Kubernetes step runs with the "
            "environment's credentials; remove it and provide them through the environment "
            "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) or aws:profile",
            "aws:assumeRoles[0].externalId: `aws eks get-token --role-arn` cannot pass it, so "
            "the Kubernetes steps could not assume the role the provider assumes; allowed: "
            "roleArn, sessionName, duration (assume the role in the environment instead)",
        ],
    )


# --- the multi-language input: GpuPlatform's ``region`` arg --------------------------------

HOSTED = """
import pulumi
from eks_gpu_platform import GpuPlatform

platform = GpuPlatform("research", {ARGS})
pulumi.export("queueArn", platform.karpenter.queue_arn)
"""


def test_hosted_region_input_governs_the_resources(tmp_path):
    program = HOSTED.replace("{ARGS}", '{"region": "us-west-2", "cluster": {"name": "research"}}')
    code, _, stderr, out = render(project(tmp_path, program))
    assert code == 0, stderr
    assert outputs(out) == {"queueArn": f"arn:aws:sqs:us-west-2:{ACCOUNT}:Karpenter-research"}
    assert arn_scopes(out) == {("aws", "us-west-2")}


def test_hosted_region_input_conflicting_with_the_stack(tmp_path):
    program = HOSTED.replace("{ARGS}", '{"region": "us-west-2", "cluster": {"name": "research"}}')
    assert_config_error(render(project(tmp_path, program, {"aws:region": "eu-west-1"})), [CONFLICT])


def test_hosted_without_region_input_uses_the_stack_region(tmp_path):
    program = HOSTED.replace("{ARGS}", '{"cluster": {"name": "research"}}')
    code, _, stderr, out = render(project(tmp_path, program, {"aws:region": "eu-west-1"}))
    assert code == 0, stderr
    assert outputs(out) == {"queueArn": f"arn:aws:sqs:eu-west-1:{ACCOUNT}:Karpenter-research"}
    assert [r for r in resources(out) if r["type"] == "pulumi:providers:aws"] == []


# --- (c) resource types the mocks do not model -------------------------------------------


def test_unmodelled_types_render_with_generic_outputs_and_one_notice_each(tmp_path):
    program = """
    import pulumi
    import pulumi_aws as aws
    from eks_gpu_platform import GpuPlatform, PlatformConfig

    config = PlatformConfig.load({"cluster": {"name": "research"}}, "us-west-2")
    platform = GpuPlatform("research", config)
    logs = aws.s3.Bucket("logs", bucket="research-logs")
    scratch = aws.s3.Bucket("scratch")
    models = aws.ecr.Repository("models", name="models")
    pulumi.export("logs", logs.arn)
    pulumi.export("logsId", logs.id)
    pulumi.export("scratch", scratch.arn)
    pulumi.export("models", models.arn)
    """
    code, stdout, stderr, out = render(project(tmp_path, program, {"aws:region": "us-west-2"}))
    assert code == 0, stderr
    assert stderr == ""
    notices = [line for line in stdout.splitlines() if "notice" in line]
    assert notices == [
        "notice: aws:ecr/repository:Repository is not modelled by the offline mocks; rendered "
        "with generic outputs",
        "notice: aws:s3/bucket:Bucket is not modelled by the offline mocks; rendered with "
        "generic outputs",
    ]
    assert outputs(out) == {
        # S3 bucket ARNs have no region and no account (S3 user guide, s3-arn-format.html).
        "logs": "arn:aws:s3:::research-logs",
        "logsId": "research-logs",
        "scratch": f"arn:aws:s3:::{autoname('scratch')}",
        # The generic shape, which is ECR's.
        "models": f"arn:aws:ecr:us-west-2:{ACCOUNT}:repository/models",
    }
    (logs,) = [r for r in resources(out) if r["name"] == "logs"]
    assert (logs["type"], logs["inputs"]) == ("aws:s3/bucket:Bucket", {"bucket": "research-logs"})
    summary = (out / "summary.md").read_text().splitlines()
    assert [line for line in summary if "notice" in line] == [f"- {n}" for n in notices]


# --- (d) SpecErrors raised by the program -------------------------------------------------

KIND_LINE = (
    "NodePoolSpec.kind: 'tpu' is not allowed; expected one of gpu, efa, cpu; did you mean 'gpu'?"
)


@pytest.mark.parametrize(
    "program",
    [
        # In the program's own code.
        """
        from eks_gpu_platform import NodePoolSpec
        NodePoolSpec(name="l4", kind="tpu", gpus=("l4",))
        """,
        # Wrapped, as this project's __main__.py does for `pulumi up`.
        """
        import pulumi
        from eks_gpu_platform import NodePoolSpec, SpecError
        try:
            NodePoolSpec(name="l4", kind="tpu", gpus=("l4",))
        except SpecError as err:
            raise pulumi.RunError(f"invalid configuration:\\n{err}") from None
        """,
        # In an apply whose output is a resource input: the SDK wraps it in a ValueError.
        """
        import pulumi_aws as aws
        from eks_gpu_platform import NodePoolSpec
        first = aws.s3.Bucket("first", region="us-west-2")
        aws.s3.Bucket(
            "second",
            region="us-west-2",
            bucket=first.arn.apply(lambda _: NodePoolSpec(name="l4", kind="tpu").name),
        )
        """,
        # In an exported output.
        """
        import pulumi
        from eks_gpu_platform import NodePoolSpec
        pulumi.export("x", pulumi.Output.from_input("l4").apply(
            lambda n: NodePoolSpec(name=n, kind="tpu").name))
        """,
    ],
    ids=["code", "run-error", "apply-input", "apply-export"],
)
def test_spec_error_in_the_program_exits_2(tmp_path, program):
    assert_config_error(render(project(tmp_path, program)), [KIND_LINE])


def test_spec_error_with_several_problems_from_platform_config(tmp_path):
    program = """
    from eks_gpu_platform import GpuPlatform, PlatformConfig
    values = {"cluster": {"name": "research", "kubernetesVersion": "1.2"}, "vpc": {"azCount": 9}}
    GpuPlatform("research", PlatformConfig.load(values, "us-west-2"))
    """
    assert_config_error(
        render(project(tmp_path, program, {"aws:region": "us-west-2"})),
        [
            "cluster.kubernetesVersion: '1.2' is not supported; expected one of 1.30, 1.31, "
            "1.32, 1.33, 1.34, 1.35, 1.36",
            "vpc.azCount: 9 is out of range; expected a number from 2 to 6",
        ],
    )


def test_other_errors_keep_their_traceback_and_name_no_library_file(tmp_path):
    program = """
    import pulumi_aws as aws
    aws.s3.Bucket("logs", region="us-west-2")
    raise RuntimeError("boom")
    """
    code, stdout, stderr, out = render(project(tmp_path, program))
    assert (code, stdout) == (1, "")
    lines = stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-2:] == ["RuntimeError: boom", "error: the offline render failed (see above)"]
    assert "eks_gpu_platform.offline.mocks" not in stderr
    assert not out.exists()


# --- (e) no region anywhere ---------------------------------------------------------------


@pytest.mark.parametrize(
    "program",
    [
        # Components composed one by one: the mocks find no region for the default provider.
        """
        from eks_gpu_platform import Network, NetworkArgs, VpcSpec
        Network("research-network", NetworkArgs(spec=VpcSpec(), cluster_name="research"))
        """,
        # GpuPlatform's args without a region (the multi-language shape).
        """
        from eks_gpu_platform import GpuPlatform
        GpuPlatform("research", {"cluster": {"name": "research"}})
        """,
        # Any AWS resource.
        """
        import pulumi_aws as aws
        aws.s3.Bucket("logs")
        """,
    ],
    ids=["components", "hosted-args", "bucket"],
)
def test_no_region_anywhere_exits_2(tmp_path, program):
    assert_config_error(render(project(tmp_path, program)), [NO_REGION])


def test_no_region_with_a_stack_file_without_aws_region(tmp_path):
    program = """
    import pulumi_aws as aws
    aws.s3.Bucket("logs")
    """
    assert_config_error(render(project(tmp_path, program, {"research:team": "ml"})), [NO_REGION])


# --- the generic mocks, unit by unit ------------------------------------------------------


def new(m: mocks.RecordingMocks, typ: str, name: str, inputs: dict, provider: str = ""):
    args = pulumi.runtime.MockResourceArgs(
        typ=typ, name=name, inputs=inputs, provider=provider, resource_id="", custom=True
    )
    return m.new_resource(args)


@pytest.mark.parametrize(
    ("typ", "name", "inputs", "expected_id", "arn"),
    [
        (
            "aws:ec2/transitGateway:TransitGateway",
            "tgw",
            {"description": "hub"},
            autoname("tgw"),
            f"arn:aws-us-gov:ec2:us-gov-west-1:{ACCOUNT}:transit-gateway/{autoname('tgw')}",
        ),
        (
            "aws:iam/user:User",
            "alice",
            {"name": "alice"},
            "alice",
            f"arn:aws-us-gov:iam::{ACCOUNT}:user/alice",
        ),
        ("aws:s3/bucket:Bucket", "b", {"bucket": "data"}, "data", "arn:aws-us-gov:s3:::data"),
        (
            "aws:cloudwatch/logGroup:LogGroup",
            "lg",
            {"name": "/jobs"},
            "/jobs",
            f"arn:aws-us-gov:logs:us-gov-west-1:{ACCOUNT}:log-group:/jobs",
        ),
        (
            "aws:sns/topic:Topic",
            "t",
            {"name": "alerts"},
            f"arn:aws-us-gov:sns:us-gov-west-1:{ACCOUNT}:alerts",
            f"arn:aws-us-gov:sns:us-gov-west-1:{ACCOUNT}:alerts",
        ),
        (
            "aws:lambda/function:Function",
            "f",
            {"name": "fn"},
            "fn",
            f"arn:aws-us-gov:lambda:us-gov-west-1:{ACCOUNT}:function:fn",
        ),
    ],
    ids=["generic", "iam-global", "s3", "log-group", "sns-id-is-arn", "lambda"],
)
def test_generic_aws_state(typ, name, inputs, expected_id, arn):
    m = mocks.RecordingMocks(region="us-gov-west-1", strict=False)
    rid, state = new(m, typ, name, inputs)
    assert rid == expected_id
    assert state["arn"] == arn
    assert {k: state[k] for k in inputs} == inputs
    assert m.unmodelled == {typ: "resource"}


def test_generic_non_aws_state_echoes_the_inputs():
    m = mocks.RecordingMocks(region=None, strict=False)
    typ = "random:index/randomPet:RandomPet"
    assert new(m, typ, "pet", {"length": 2}) == (autoname("pet"), {"length": 2})
    assert m.unmodelled == {typ: "resource"}


def test_generic_invoke_answers_with_its_arguments_and_is_noticed():
    m = mocks.RecordingMocks(region="us-west-2", strict=False)
    call = pulumi.runtime.MockCallArgs("aws:ec2/getVpc:getVpc", {"id": "vpc-1"}, "")
    assert m.call(call) == {"id": "vpc-1"}
    recording = mocks.Recording(resources=[], unmodelled=m.unmodelled)
    assert recording.notices == [
        "notice: aws:ec2/getVpc:getVpc is not modelled by the offline mocks; answered with its "
        "arguments"
    ]


def test_each_unmodelled_type_is_noticed_once():
    m = mocks.RecordingMocks(region="us-west-2", strict=False)
    for name in ("a", "b", "c"):
        new(m, "aws:s3/bucket:Bucket", name, {})
    assert mocks.Recording(resources=[], unmodelled=m.unmodelled).notices == [
        "notice: aws:s3/bucket:Bucket is not modelled by the offline mocks; rendered with "
        "generic outputs"
    ]


def test_scope_follows_the_provider_then_the_resource_region():
    m = mocks.RecordingMocks(region="us-west-2")
    ref = "urn:pulumi:dev::research::pulumi:providers:aws::beijing::beijing-id"
    m.register_provider(ref, {"region": "cn-north-1"})
    assert m.scope("") == mocks.Scope("us-west-2", "aws", ACCOUNT)
    assert m.scope(ref) == mocks.Scope("cn-north-1", "aws-cn", ACCOUNT)
    # pulumi-aws v7: a resource's or invoke's own region argument wins.
    assert m.scope(ref, "eu-west-1") == mocks.Scope("eu-west-1", "aws", ACCOUNT)
    rid, state = new(m, "aws:sqs/queue:Queue", "q", {"name": "jobs"}, provider=ref)
    assert state["arn"] == f"arn:aws-cn:sqs:cn-north-1:{ACCOUNT}:jobs"
    assert rid == f"https://sqs.cn-north-1.amazonaws.com.cn/{ACCOUNT}/jobs"


def test_scope_without_a_region_is_a_spec_error():
    m = mocks.RecordingMocks(region=None)
    with pytest.raises(SpecError) as err:
        m.scope("")
    assert err.value.lines == [NO_REGION]
    ref = "urn:pulumi:dev::research::pulumi:providers:aws::bare::bare-id"
    m.register_provider(ref, {})
    with pytest.raises(SpecError) as err:
        m.scope(ref)
    assert err.value.lines == ["bare: this AWS provider has no region; pass region=..."]
