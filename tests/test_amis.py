"""The AMI alias of every pool against the cluster's Kubernetes minor (issue 21, point 4): the
exact SSM parameters Karpenter v1.15.0 reads (al2023.go ``resolvePath``, bottlerocket.go
``DescribeImageQuery``), looked up by `pulumi up`, which refuses a missing one."""

import pytest
from addon_pins import ADDON_VERSIONS

from eks_gpu_platform.amis import alias_parameter, pool_parameters
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.nodepool.parts import AmiSpec
from eks_gpu_platform.nodepool.spec import NodePoolSpec
from eks_gpu_platform.offline import mocks

NVIDIA_136 = (
    "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/nvidia/"
    "amazon-eks-node-al2023-x86_64-nvidia-1.36-v20260903/image_id"
)
STANDARD_136 = (
    "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/"
    "amazon-eks-node-al2023-x86_64-standard-1.36-v20260903/image_id"
)


@pytest.mark.parametrize(
    ("alias", "arch", "gpu", "expected"),
    [
        ("al2023@v20260903", "amd64", True, NVIDIA_136),
        ("al2023@v20260903", "amd64", False, STANDARD_136),
        (
            "al2023@v20260903",
            "arm64",
            False,
            "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard/"
            "amazon-eks-node-al2023-arm64-standard-1.36-v20260903/image_id",
        ),
        (
            "bottlerocket@v1.65.0",
            "amd64",
            True,
            "/aws/service/bottlerocket/aws-k8s-1.36-nvidia/x86_64/1.65.0/image_id",
        ),
        (
            "bottlerocket@v1.65.0",
            "arm64",
            False,
            "/aws/service/bottlerocket/aws-k8s-1.36/arm64/1.65.0/image_id",
        ),
    ],
)
def test_alias_parameter(alias, arch, gpu, expected):
    assert alias_parameter(alias, "1.36", arch, gpu) == expected


def test_pool_parameters():
    pools = [
        NodePoolSpec(name="l4", kind="gpu", gpus=("l4",)),
        NodePoolSpec(name="br", kind="gpu", gpus=("l4",), ami=AmiSpec(family="bottlerocket")),
        NodePoolSpec(name="general", kind="cpu"),
        NodePoolSpec(name="arm", kind="cpu", instance_families=("m7g",)),
    ]
    assert pool_parameters(pools, "1.36") == {
        NVIDIA_136: ["l4"],
        "/aws/service/bottlerocket/aws-k8s-1.36-nvidia/x86_64/1.65.0/image_id": ["br"],
        STANDARD_136: ["general"],
        "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard/"
        "amazon-eks-node-al2023-arm64-standard-1.36-v20260903/image_id": ["arm"],
    }


CONFIG = {
    "cluster": {"name": "gpu", "addonVersions": ADDON_VERSIONS},
    "nodePools": [
        {"name": "l4", "kind": "gpu", "gpus": ["l4"], "limits": {"gpus": 4}},
        {"name": "general", "kind": "cpu"},
    ],
}


def platform(run_program, monkeypatch, missing=(), denied=()):
    from eks_gpu_platform import GpuPlatform

    monkeypatch.setattr(mocks.RecordingMocks, "missing_ssm_parameters", frozenset(missing))
    monkeypatch.setattr(mocks.RecordingMocks, "denied_ssm_parameters", frozenset(denied))
    config = PlatformConfig.load(CONFIG, "us-west-2")
    return run_program(lambda: GpuPlatform("platform", config), config={"aws:region": "us-west-2"})


def test_up_looks_every_pool_parameter_up(run_program, monkeypatch):
    rec = platform(run_program, monkeypatch)
    asked = [a["name"] for t, a in rec.calls if t == "aws:ssm/getParameter:getParameter"]
    assert asked == [NVIDIA_136, STANDARD_136]


def test_up_refuses_an_alias_without_an_image_for_the_minor(run_program, monkeypatch):
    """Fails on the old code, which deployed the pools and left every EC2NodeClass
    AMIsReady=False (no capacity)."""
    with pytest.raises(SpecError) as err:
        platform(run_program, monkeypatch, missing=[NVIDIA_136])
    assert err.value.lines == [
        f"nodePools (l4): the AMI alias al2023@v20260903 has no image for Kubernetes 1.36 (SSM "
        f"parameter {NVIDIA_136} does not exist), so Karpenter would launch no node "
        "(EC2NodeClass AMIsReady=False); set the pools' ami.version to a release that "
        "publishes 1.36"
    ]


def test_parameter_missing_reads_the_providers_not_found():
    """pulumi-aws's getParameter fails for a missing parameter with the data source's
    "reading SSM Parameter (NAME): couldn't find resource" (terraform-provider-aws
    internal/service/ssm/parameter.go ``findParameterByName`` wraps ``ParameterNotFound`` in a
    ``retry.NotFoundError`` without a message); the old check looked for "ParameterNotFound"
    only, so a real missing parameter raised the raw invoke error."""
    from eks_gpu_platform.amis import parameter_missing

    real = Exception(
        "invoke of aws:ssm/getParameter:getParameter failed: invocation of "
        "aws:ssm/getParameter:getParameter returned an error: 1 error occurred:\n\t* reading "
        f"SSM Parameter ({NVIDIA_136}): couldn't find resource\n\n"
    )
    assert parameter_missing(real)
    assert not parameter_missing(
        Exception(f"reading SSM Parameter ({NVIDIA_136}): api error AccessDeniedException")
    )
    assert not parameter_missing(Exception("reading EKS Cluster (gpu): couldn't find resource"))


def test_up_names_a_parameter_it_may_not_read(run_program, monkeypatch):
    """An access-denied lookup is a configuration error naming the parameter and the
    permission (the old code re-raised the invoke's exception: a traceback); a missing
    parameter found in the same run is listed with it."""
    with pytest.raises(SpecError) as err:
        platform(run_program, monkeypatch, missing=[STANDARD_136], denied=[NVIDIA_136])
    assert err.value.lines == [
        f"nodePools (l4): looking up the SSM parameter {NVIDIA_136} (the image of AMI alias "
        "al2023@v20260903 for Kubernetes 1.36) failed (invoke of "
        "aws:ssm/getParameter:getParameter failed: invoking aws:ssm/getParameter:getParameter: 1 "
        # The provider's multi-line error, escaped onto the problem's one line (issue 29).
        f"error occurred:\\n\\t* reading SSM Parameter ({NVIDIA_136}): operation error SSM: "
        "GetParameter, https response error StatusCode: 400, RequestID: 0, api error "
        "AccessDeniedException: not authorized to perform: ssm:GetParameter); the deploying "
        "identity needs ssm:GetParameter on the public /aws/service/ parameters",
        f"nodePools (general): the AMI alias al2023@v20260903 has no image for Kubernetes 1.36 "
        f"(SSM parameter {STANDARD_136} does not exist), so Karpenter would launch no node "
        "(EC2NodeClass AMIsReady=False); set the pools' ami.version to a release that "
        "publishes 1.36",
    ]
