"""EKS add-on versions resolved at deploy time (issue 28, point 1): the decision table, the
invokes the program makes in preview and in `up`, the floor, the logs, the stack output, and the
fixture stacks running as `up` with only README's first-deploy edits."""

import logging
import runpy
from pathlib import Path

import pulumi
import pytest
from addon_pins import ADDON_VERSIONS, PUBLISHED
from pulumi.runtime.proto import resource_pb2
from stack_files import fixture_stack

from eks_gpu_platform.cluster.addon_versions import (
    INSTALLED,
    LOOKUP,
    PIN,
    addon_missing,
    decide,
)
from eks_gpu_platform.cluster.args import EksClusterArgs
from eks_gpu_platform.cluster.component import EksCluster
from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.mock_invokes import InvokeFailed
from eks_gpu_platform.offline.mock_monitor import RecordingMonitor

SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
ADDONS = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent", "coredns")
GET_CLUSTER = "aws:eks/getCluster:getCluster"
GET_ADDON = "aws:eks/getAddon:getAddon"
GET_VERSION = "aws:eks/getAddonVersion:getAddonVersion"
TAG = "eks-gpu-platform/addon-minor"


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ({"pin": "v1.20.1-eksbuild.3", "cluster_minor": None}, (PIN, "v1.20.1-eksbuild.3")),
        (
            {"pin": "v1.20.1-eksbuild.3", "cluster_minor": "1.36", "installed": "v1.19.0"},
            (PIN, "v1.20.1-eksbuild.3"),
        ),
        (
            {"cluster_minor": "1.36", "installed": "v1.19.2-eksbuild.1"},
            (INSTALLED, "v1.19.2-eksbuild.1"),
        ),
        (
            {"cluster_minor": "1.36", "installed": "v1.19.2-eksbuild.1", "installed_for": "1.36"},
            (INSTALLED, "v1.19.2-eksbuild.1"),
        ),
        ({"cluster_minor": "1.35", "installed": "v1.19.2-eksbuild.1"}, (LOOKUP, None)),
        (
            {"cluster_minor": "1.36", "installed": "v1.19.2-eksbuild.1", "installed_for": "1.35"},
            (LOOKUP, None),
        ),
        ({"cluster_minor": "1.36"}, (LOOKUP, None)),
        ({"cluster_minor": None}, (LOOKUP, None)),
    ],
    ids=[
        "pin-new-cluster",
        "pin-over-installed",
        "installed-same-minor-untagged",
        "installed-same-minor-tagged",
        "installed-other-minor",
        "interrupted-upgrade",
        "not-installed",
        "new-cluster",
    ],
)
def test_decide(case, expected):
    args = {"pin": None, "installed": None, "installed_for": None, **case}
    assert decide(target_minor="1.36", **args) == expected


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        (
            "invoke of aws:eks/getAddon:getAddon failed: invoking aws:eks/getAddon:getAddon: 1 "
            "error occurred:\n\t* reading EKS Add-On (gpu-dev:coredns): couldn't find "
            "resource\n\n",
            True,
        ),
        (
            "invoke of aws:eks/getAddon:getAddon failed: reading EKS Add-On (gpu-dev:coredns): "
            "operation error EKS: DescribeAddon, StatusCode: 403, AccessDeniedException",
            False,
        ),
    ],
    ids=["not-found", "access-denied"],
)
def test_addon_missing(text, missing):
    assert addon_missing(Exception(text)) is missing


@pytest.fixture
def aws(monkeypatch):
    """The mocks' view of AWS, set per test (class attributes, restored after it)."""

    def set_(**attrs):
        for key, value in attrs.items():
            monkeypatch.setattr(mocks.RecordingMocks, key, value)

    return set_


def run_cluster(spec: ClusterSpec, *, preview: bool) -> mocks.Recording:
    def program():
        EksCluster(
            "c",
            EksClusterArgs(spec=spec, vpc_id="vpc-0123456789abcdef0", private_subnet_ids=SUBNETS),
        )

    return mocks.run(
        program,
        project="eks-gpu-platform",
        stack="test",
        config={"aws:region": "us-west-2"},
        region="us-west-2",
        preview=preview,
    )


def addon_calls(rec: mocks.Recording) -> list[tuple[str, dict]]:
    return [(t, a) for t, a in rec.calls if t in (GET_CLUSTER, GET_ADDON, GET_VERSION)]


def versions_of(rec: mocks.Recording) -> dict[str, str]:
    return {
        a.inputs["addonName"]: a.inputs["addonVersion"] for a in rec.of_type("aws:eks/addon:Addon")
    }


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
def test_a_new_cluster_looks_each_addon_up_for_its_minor(aws, preview, caplog):
    """Fails on the old code, which refused `up` for three of the four add-ons on 1.36."""
    caplog.set_level(logging.INFO)
    aws(published_addon_versions=PUBLISHED)
    rec = run_cluster(ClusterSpec(name="gpu-dev"), preview=preview)
    assert addon_calls(rec) == [
        (GET_CLUSTER, {"name": "gpu-dev"}),
        *[
            (GET_VERSION, {"kubernetesVersion": "1.36", "addonName": a, "mostRecent": True})
            for a in ADDONS
        ],
    ]
    assert versions_of(rec) == PUBLISHED
    (component,) = rec.of_type("eks-gpu-platform:index:EksCluster")
    assert component.registered_outputs["addon_versions"] == PUBLISHED
    for addon in ADDONS:
        assert (
            f"EKS add-on {addon}: {PUBLISHED[addon]} (EKS's most recent {addon} for Kubernetes "
            "1.36, looked up)"
        ) in caplog.text


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
def test_an_existing_cluster_keeps_its_installed_versions(aws, preview, caplog):
    """An unrelated `up` never moves an add-on: the installed version for the cluster's minor
    is kept; an add-on not yet installed (here coredns) is looked up; a pin wins."""
    caplog.set_level(logging.INFO)
    aws(
        existing_cluster_tags={"eks-gpu-platform/cluster": "gpu-dev"},
        existing_cluster_version="1.36",
        installed_addons={
            "vpc-cni": {"addonVersion": "v1.19.2-eksbuild.1", "tags": {TAG: "1.36"}},
            "kube-proxy": {"addonVersion": "v1.36.0-eksbuild.3", "tags": {}},
            "eks-pod-identity-agent": {"addonVersion": "v1.3.4-eksbuild.1", "tags": {}},
        },
        published_addon_versions=PUBLISHED,
        caller="role/PlatformAdmin",
    )
    spec = ClusterSpec(
        name="gpu-dev",
        admins=("role/PlatformAdmin",),
        addon_versions={"eks-pod-identity-agent": "v1.3.8-eksbuild.1"},
    )
    rec = run_cluster(spec, preview=preview)
    assert addon_calls(rec)[:4] == [
        (GET_CLUSTER, {"name": "gpu-dev"}),
        (GET_ADDON, {"clusterName": "gpu-dev", "addonName": "vpc-cni"}),
        (GET_ADDON, {"clusterName": "gpu-dev", "addonName": "kube-proxy"}),
        (GET_ADDON, {"clusterName": "gpu-dev", "addonName": "coredns"}),
    ]
    assert (
        GET_VERSION,
        {"kubernetesVersion": "1.36", "addonName": "coredns", "mostRecent": True},
    ) in addon_calls(rec)
    assert [a["addonName"] for t, a in addon_calls(rec) if t == GET_VERSION] == ["coredns"]
    assert versions_of(rec) == {
        "vpc-cni": "v1.19.2-eksbuild.1",
        "kube-proxy": "v1.36.0-eksbuild.3",
        "eks-pod-identity-agent": "v1.3.8-eksbuild.1",
        "coredns": PUBLISHED["coredns"],
    }
    assert (
        "EKS add-on vpc-cni: v1.19.2-eksbuild.1 (installed on the cluster (Kubernetes 1.36), kept)"
        in caplog.text
    )
    assert (
        "EKS add-on eks-pod-identity-agent: v1.3.8-eksbuild.1 "
        "(cluster.addonVersions.eks-pod-identity-agent)"
    ) in caplog.text


def test_a_minor_upgrade_looks_every_addon_up_for_the_new_minor(aws):
    aws(
        existing_cluster_tags={"eks-gpu-platform/cluster": "gpu-dev"},
        existing_cluster_version="1.35",
        installed_addons={a: {"addonVersion": "v1.0.0-eksbuild.1", "tags": {}} for a in ADDONS},
        published_addon_versions=PUBLISHED,
        caller="role/PlatformAdmin",
    )
    rec = run_cluster(ClusterSpec(name="gpu-dev", admins=("role/PlatformAdmin",)), preview=False)
    assert not [t for t, _ in addon_calls(rec) if t == GET_ADDON]
    assert [
        (a["addonName"], a["kubernetesVersion"]) for t, a in addon_calls(rec) if t == GET_VERSION
    ] == [(a, "1.36") for a in ADDONS]
    assert versions_of(rec) == PUBLISHED
    assert {a.inputs["tags"][TAG] for a in rec.of_type("aws:eks/addon:Addon")} == {"1.36"}


def test_every_addon_pinned_asks_eks_nothing(aws):
    rec = run_cluster(ClusterSpec(name="gpu-dev", addon_versions=ADDON_VERSIONS), preview=False)
    assert addon_calls(rec) == []
    assert versions_of(rec) == ADDON_VERSIONS


def failing_lookup(monkeypatch, details: str) -> None:
    original = mocks.RecordingMocks.call

    def call(self, args):
        if args.token == GET_VERSION and args.args["addonName"] == "coredns":
            self.calls.append((args.token, dict(args.args)))
            raise InvokeFailed(details)
        return original(self, args)

    monkeypatch.setattr(mocks.RecordingMocks, "call", call)


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
def test_a_failed_lookup_is_refused_in_preview_as_in_up(aws, monkeypatch, preview):
    """Preview and `up` agree: what `up` refuses, the preview refuses, before anything is
    registered (the component itself aside)."""
    aws(published_addon_versions=PUBLISHED)
    failing_lookup(
        monkeypatch,
        "reading EKS Add-On version info (coredns, 1.36): empty result",
    )
    with pytest.raises(SpecError) as err:
        run_cluster(ClusterSpec(name="gpu-dev"), preview=preview)
    assert err.value.lines == [
        "cluster.addonVersions: looking up EKS's most recent coredns for Kubernetes 1.36: "
        "invoke of aws:eks/getAddonVersion:getAddonVersion failed: reading EKS Add-On version "
        "info (coredns, 1.36): empty result; the deploying identity needs eks:DescribeCluster, "
        "eks:DescribeAddon and eks:DescribeAddonVersions, and EKS must publish the add-on for "
        "Kubernetes 1.36 (or pin a version in cluster.addonVersions)"
    ]


def unknown_lookups(monkeypatch) -> None:
    """The engine answers the add-on lookups unknown, as it does for a provider configured from
    other resources' outputs in a preview (pulumi/runtime/invoke.py L368-369, 3.272.0)."""
    original = RecordingMonitor.Invoke

    def invoke(self, request):
        if request.tok in (GET_CLUSTER, GET_VERSION):
            self.mocks.calls.append((request.tok, {}))
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        return original(self, request)

    monkeypatch.setattr(RecordingMonitor, "Invoke", invoke)


def test_unknown_lookups_warn_in_preview_and_are_refused_by_up(monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    unknown_lookups(monkeypatch)
    rec = run_cluster(ClusterSpec(name="gpu-dev"), preview=True)
    message = (
        "cluster.addonVersions: the add-on versions are unknown in this preview (the AWS provider "
        "answered unknown, as it does when configured from other resources' outputs: looking "
        "up cluster gpu-dev, "
        + ", ".join(f"looking up EKS's most recent {a} for Kubernetes 1.36" for a in ADDONS)
        + "); `pulumi up` "
        "resolves them and refuses if it cannot"
    )
    assert message in caplog.text
    # Unknown: the preview's diff shows the versions as computed.
    assert all(
        isinstance(a.inputs["addonVersion"], pulumi.output.Unknown)
        for a in rec.of_type("aws:eks/addon:Addon")
    )
    with pytest.raises(SpecError) as err:
        run_cluster(ClusterSpec(name="gpu-dev"), preview=False)
    assert err.value.lines == [message.replace("in this preview", "in `pulumi up`")]


def platform_up(stack: str, **edits) -> mocks.Recording:
    """The fixture stack run as `up` (mocks, preview=False) with README's first-deploy edits:
    the public endpoint's CIDRs set to the user's own, and the deployer one of the admins."""
    st = fixture_stack(stack)
    config = {k: v for k, v in st.config.items()}
    cluster = dict(config["eks-gpu-platform:cluster"])
    cluster["publicAccessCidrs"] = ["100.20.0.0/24"]
    cluster.update(edits)
    config["eks-gpu-platform:cluster"] = cluster
    return mocks.run(
        lambda: runpy.run_path(
            str(Path(__file__).resolve().parents[2] / "__main__.py"), run_name="__main__"
        ),
        project=st.project,
        stack=st.name,
        config=config,
        region=st.region,
        preview=False,
        secret_keys=st.secret_keys,
    )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_fixture_stacks_run_as_up_without_an_addon_refusal(aws, stack):
    """Issue 28, point 1; fails on the old code, which refused `up` for vpc-cni, coredns and
    eks-pod-identity-agent on 1.36. The stack output lists what was resolved."""
    aws(published_addon_versions=PUBLISHED, caller="assumed-role/PlatformAdmin/ci")
    rec = platform_up(stack)
    assert rec.outputs["addonVersions"] == PUBLISHED
    assert versions_of(rec) == PUBLISHED


def test_a_vpc_cni_below_the_efa_floor_is_refused(aws):
    """prod has an EFA pool: a vpc-cni below v1.18.4 (EKS's answer, or a pin) is refused with
    the reason, before anything is registered."""
    aws(
        published_addon_versions={**PUBLISHED, "vpc-cni": "v1.18.3-eksbuild.2"},
        caller="assumed-role/PlatformAdmin/ci",
    )
    # __main__.py turns the refusal into a RunError: no traceback (issue 28, point 8).
    refused = "refused before anything was created:\n"
    with pytest.raises(pulumi.RunError) as err:
        platform_up("prod")
    assert str(err.value) == refused + (
        "cluster.addonVersions.vpc-cni: v1.18.3-eksbuild.2 is EKS's most recent for Kubernetes "
        "1.36, below v1.18.4: nodePools (train-efa) use efa-only interfaces, which need vpc-cni "
        "v1.18.4 or later; set cluster.addonVersions.vpc-cni to v1.18.4 or later"
    )
    with pytest.raises(pulumi.RunError) as err:
        platform_up("prod", addonVersions={"vpc-cni": "v1.17.1-eksbuild.1"})
    assert str(err.value) == refused + (
        "cluster.addonVersions.vpc-cni: v1.17.1-eksbuild.1 is pinned, below v1.18.4: nodePools "
        "(train-efa) use efa-only interfaces, which need vpc-cni v1.18.4 or later; set "
        "cluster.addonVersions.vpc-cni to v1.18.4 or later"
    )


def test_the_render_shows_unpinned_addons_as_resolved_at_deploy(render_stack):
    rec = render_stack("dev")
    assert rec.outputs["addonVersions"] == {a: "resolved at deploy for 1.36" for a in ADDONS}
    assert versions_of(rec) == {a: "resolved at deploy for 1.36" for a in ADDONS}
