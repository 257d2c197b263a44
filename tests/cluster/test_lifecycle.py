"""Cluster lifecycle (issue 11): the Kubernetes provider's kubeconfig carries the stack's
aws:profile (item 8); documentation CIDRs in publicAccessCidrs warn in preview and are refused
by `pulumi up` (item 10)."""

import json
import logging

import pytest
from addon_pins import ADDON_VERSIONS

from eks_gpu_platform.cluster.args import EksClusterArgs
from eks_gpu_platform.cluster.component import EksCluster
from eks_gpu_platform.cluster.lifecycle import (
    credential_problems,
    kubeconfig_with_credentials,
    kubeconfig_with_profile,
    placeholder_cidrs,
    placeholder_message,
)
from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.offline import mocks

SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
MESSAGE = (
    "cluster.publicAccessCidrs: 198.51.100.0/24 is a documentation range (RFC 5737), not your "
    "network: pulumi-eks would wait minutes for an endpoint it cannot reach and every Kubernetes "
    "step would time out; list your operators' and CI runners' egress CIDRs"
)


def program(spec: ClusterSpec):
    def run():
        EksCluster(
            "c",
            EksClusterArgs(spec=spec, vpc_id="vpc-0123456789abcdef0", private_subnet_ids=SUBNETS),
        )

    return run


def run(prog, *, preview: bool, config=None):
    return mocks.run(
        prog,
        project="eks-gpu-platform",
        stack="test",
        config={"aws:region": "us-west-2", **(config or {})},
        region="us-west-2",
        preview=preview,
    )


def test_placeholder_cidrs():
    assert placeholder_cidrs(
        ("192.0.2.0/24", "198.51.100.7/32", "203.0.113.0/25", "52.94.76.0/22", "10.0.0.0/8")
    ) == ["192.0.2.0/24", "198.51.100.7/32", "203.0.113.0/25"]
    assert placeholder_message(["198.51.100.0/24"]) == MESSAGE


PLACEHOLDER = ClusterSpec(
    name="gpu-prod",
    endpoint_public_access=True,
    public_access_cidrs=("198.51.100.0/24",),
    addon_versions=ADDON_VERSIONS,
)


def test_placeholder_cidr_is_refused_by_up():
    """Fails on the old code, which deployed it and hung on the unreachable endpoint."""
    with pytest.raises(SpecError) as err:
        run(program(PLACEHOLDER), preview=False)
    assert err.value.lines == [MESSAGE]


def test_placeholder_cidr_warns_in_preview(caplog):
    caplog.set_level(logging.WARNING)
    rec = run(program(PLACEHOLDER), preview=True)
    assert rec.of_type("eks:index:Cluster")
    assert MESSAGE + " (refused by `pulumi up`)" in caplog.text


KUBECONFIG = {
    "users": [
        {
            "name": "aws",
            "user": {
                "exec": {
                    "command": "aws",
                    "args": ["eks", "get-token", "--cluster-name", "c", "--region", "us-west-2"],
                }
            },
        }
    ]
}


def test_kubeconfig_with_profile():
    with_profile = json.loads(kubeconfig_with_profile(json.dumps(KUBECONFIG), "ops"))
    assert with_profile["users"][0]["user"]["exec"]["args"] == [
        *KUBECONFIG["users"][0]["user"]["exec"]["args"],
        "--profile",
        "ops",
    ]
    assert kubeconfig_with_profile(json.dumps(KUBECONFIG), None) == json.dumps(KUBECONFIG)


def test_kubernetes_provider_uses_the_stack_profile():
    """Fails on the old code: the provider got pulumi-eks's kubeconfig, which has no profile."""
    rec = run(
        program(ClusterSpec(name="gpu-dev", addon_versions=ADDON_VERSIONS)),
        preview=False,
        config={"aws:profile": "ops"},
    )
    (provider,) = rec.of_type("pulumi:providers:kubernetes")
    args = json.loads(provider.inputs["kubeconfig"])["users"][0]["user"]["exec"]["args"]
    assert args[-2:] == ["--profile", "ops"]
    (cluster,) = rec.of_type("eks:index:Cluster")
    assert provider.inputs["kubeconfig"] == kubeconfig_with_profile(
        cluster.outputs["kubeconfigJson"], "ops"
    )


ROLE = "arn:aws:iam::111122223333:role/Deploy"
GET_TOKEN = KUBECONFIG["users"][0]["user"]["exec"]["args"]


def test_kubeconfig_with_credentials():
    both = json.loads(kubeconfig_with_credentials(json.dumps(KUBECONFIG), "ops", ROLE))
    assert both["users"][0]["user"]["exec"]["args"] == [
        *GET_TOKEN,
        "--role-arn",
        ROLE,
        "--profile",
        "ops",
    ]
    role_only = json.loads(kubeconfig_with_credentials(json.dumps(KUBECONFIG), None, ROLE))
    assert role_only["users"][0]["user"]["exec"]["args"] == [*GET_TOKEN, "--role-arn", ROLE]
    assert kubeconfig_with_credentials(json.dumps(KUBECONFIG), None, None) == json.dumps(KUBECONFIG)


def test_kubernetes_provider_assumes_the_stack_role():
    """Issue 21, point 3; fails on the old code: with aws:assumeRoles the provider resolved the
    assumed role while `aws eks get-token` ran as the runner's base identity (401)."""
    roles = json.dumps([{"roleArn": ROLE, "sessionName": "pulumi"}])
    rec = run(
        program(ClusterSpec(name="gpu-dev", addon_versions=ADDON_VERSIONS)),
        preview=False,
        config={"aws:assumeRoles": roles},
    )
    (provider,) = rec.of_type("pulumi:providers:kubernetes")
    args = json.loads(provider.inputs["kubeconfig"])["users"][0]["user"]["exec"]["args"]
    assert args == [
        "eks",
        "get-token",
        "--cluster-name",
        "gpu-dev",
        "--region",
        "us-west-2",
        "--role-arn",
        ROLE,
    ]


STATIC = (
    "{key}: static credentials in the stack configuration reach the AWS provider but not `aws "
    "eks get-token`, which every Kubernetes step runs with the environment's credentials; "
    "remove it and provide them through the environment (AWS_ACCESS_KEY_ID, "
    "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) or aws:profile"
)


@pytest.mark.parametrize(
    ("config", "lines"),
    [
        ({"aws:region": "us-west-2", "aws:profile": "ops"}, []),
        ({"aws:assumeRoles": json.dumps([{"roleArn": ROLE, "duration": "1h"}])}, []),
        ({"aws:assumeRoles": "[]"}, []),
        (
            {"aws:accessKey": "AKIA", "aws:secretKey": "s", "aws:token": "t"},
            [STATIC.format(key=k) for k in ("aws:accessKey", "aws:secretKey", "aws:token")],
        ),
        (
            {"aws:assumeRoles": json.dumps([{"roleArn": ROLE}, {"roleArn": ROLE + "2"}])},
            [
                "aws:assumeRoles: lists 2 roles (a chain); `aws eks get-token --role-arn` "
                "assumes one role from the environment's credentials, so the Kubernetes steps "
                "would run as another identity; list one role, or assume the chain in the "
                "environment"
            ],
        ),
        (
            {"aws:assumeRoles": json.dumps([{"roleArn": ROLE, "externalId": "x"}])},
            [
                "aws:assumeRoles[0].externalId: `aws eks get-token --role-arn` cannot pass it, "
                "so the Kubernetes steps could not assume the role the provider assumes; "
                "allowed: roleArn, sessionName, duration (assume the role in the environment "
                "instead)"
            ],
        ),
        (
            {"aws:assumeRoles": json.dumps([{"sessionName": "x"}])},
            ["aws:assumeRoles[0].roleArn: is required"],
        ),
        (
            {"aws:assumeRoleWithWebIdentity": json.dumps({"roleArn": ROLE})},
            [
                "aws:assumeRoleWithWebIdentity: `aws eks get-token` cannot assume a role with "
                "a web identity token, so the Kubernetes steps would run as another identity; "
                "assume the role in the environment instead (CI: "
                "aws-actions/configure-aws-credentials)"
            ],
        ),
        (
            {"aws:assumeRole": json.dumps({"roleArn": ROLE})},
            [
                "aws:assumeRole: not read by pulumi-aws 7 (its setting is aws:assumeRoles, a "
                "list); use aws:assumeRoles with one roleArn"
            ],
        ),
    ],
    ids=[
        "profile",
        "one-role",
        "empty",
        "static-keys",
        "chain",
        "external-id",
        "no-role-arn",
        "web-identity",
        "assume-role",
    ],
)
def test_credential_problems(config, lines):
    assert credential_problems(config) == lines


def test_addon_versions_are_validated():
    """As the stack configures them: the key and the value named, every problem at once."""
    from eks_gpu_platform.config import PlatformConfig

    bad = {"corends": "v1", "kube-proxy": "1.36.0"}
    with pytest.raises(SpecError) as err:
        PlatformConfig.load({"cluster": {"name": "x", "addonVersions": bad}}, "us-west-2")
    assert err.value.lines == [
        "cluster.addonVersions: key 'corends' is not allowed; expected one of vpc-cni, "
        "kube-proxy, eks-pod-identity-agent, coredns; did you mean 'coredns'?",
        "cluster.addonVersions.kube-proxy: '1.36.0' is not an EKS add-on version such as "
        "'v1.20.1-eksbuild.3'",
    ]
