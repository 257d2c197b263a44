"""Issue 28: the first `pulumi up` of a shipped stack on a fresh account. Every check that can
refuse `up` runs before the first registration (point 3), every principal is looked up (point
2), the deployer cannot lock itself out (point 5), the Kubernetes provider waits until the new
access works (point 4), refusals print no traceback (point 8), and the GPU pools are checked
against the EC2 vCPU quotas (point 12).

The programs run as `up` (``preview=False``) under the recording mocks, on the fixture dev stack
with what README tells a new user to change: a real public-access CIDR, the add-on versions, and
a deployer listed in ``cluster.admins`` (``role/PlatformAdmin``)."""

from __future__ import annotations

import json
import runpy

import pulumi
import pytest
from addon_pins import ADDON_VERSIONS
from render_cache import cached
from stack_files import REPO, fixture_stack

from eks_gpu_platform import GpuPlatform, read_stack_config
from eks_gpu_platform.errors import SpecError
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.mock_monitor import RecordingMonitor

ACCOUNT = mocks.PLACEHOLDER_ACCOUNT_ID
ENTRY = "aws:eks/accessEntry:AccessEntry"
PROVIDER = "pulumi:providers:kubernetes"
SSO_PATH = "/aws-reserved/sso.amazonaws.com/us-west-2/"
SSO_ROLE = "AWSReservedSSO_Admin_0123456789abcdef"
DEPLOYER = "assumed-role/PlatformAdmin/gha"


def dev_config(**cluster) -> dict:
    """The fixture dev stack with README's first-deploy edits, and ``cluster`` keys changed."""
    stack = fixture_stack("dev")
    config = dict(stack.config)
    values = dict(config["eks-gpu-platform:cluster"])
    values.update({"publicAccessCidrs": ["192.168.10.0/24"], "addonVersions": dict(ADDON_VERSIONS)})
    values.update(cluster)
    config["eks-gpu-platform:cluster"] = values
    return config


def up(monkeypatch, config: dict, *, caller=DEPLOYER, program=None, **mock):
    """Run the platform (or ``program``) as `pulumi up` on the mocks' account."""
    monkeypatch.setattr(mocks.RecordingMocks, "caller", caller)
    for key, value in mock.items():
        monkeypatch.setattr(mocks.RecordingMocks, key, value)
    return mocks.run(
        program or (lambda: GpuPlatform("platform", read_stack_config())),
        project="eks-gpu-platform",
        stack="dev",
        config=config,
        region="us-west-2",
        preview=False,
    )


def shared_up(monkeypatch, config: dict):
    """``up(monkeypatch, config)`` of the platform, run once per process for the same
    configuration (render_cache.cached: afresh when a test has patched anything else the run
    reads); callers must not change the recording they get."""
    monkeypatch.setattr(mocks.RecordingMocks, "caller", DEPLOYER)
    key = ("test_preflight.up", json.dumps(config), DEPLOYER)
    return cached(key, lambda: up(monkeypatch, config))


def cluster_entries(rec) -> list:
    """The admins', viewers' and break-glass entries (not Karpenter's node entry)."""
    return [r for r in rec.of_type(ENTRY) if r.name.startswith("platform-cluster-")]


def refused(monkeypatch, config: dict, **kw) -> list[str]:
    with pytest.raises(SpecError) as err:
        up(monkeypatch, config, **kw)
    return err.value.lines


def registrations_on_refusal(monkeypatch, config: dict, **kw) -> list[tuple[str, str]]:
    """What the program registered before its refusal (mocks.run raises, so the monitor is
    read from the run itself)."""
    seen: list[tuple[str, str]] = []
    original = RecordingMonitor.RegisterResource

    def record(self, request):
        seen.append((request.type, request.name))
        return original(self, request)

    monkeypatch.setattr(RecordingMonitor, "RegisterResource", record)
    with pytest.raises(SpecError):
        up(monkeypatch, config, **kw)
    return seen


# The stack and the platform component: no resource of any provider.
ONLY_THE_COMPONENT = [
    ("pulumi:pulumi:Stack", "eks-gpu-platform-dev"),
    ("eks-gpu-platform:index:GpuPlatform", "platform"),
]
MISSING_VIEWER = (
    "cluster.viewers[0]: 'role/GitHubActionsPreview-dev': no IAM role named "
    f"GitHubActionsPreview-dev exists in account {ACCOUNT} (iam:GetRole found none); EKS would "
    'refuse its access entry ("The specified principalArn is invalid: invalid principal") after '
    "the cluster is created; create it first, or remove it from the list"
)


def test_the_shipped_dev_stack_with_readmes_edits_deploys(monkeypatch):
    """Done-when of issue 28: dev as `up`, every resource registered, no refusal."""
    rec = shared_up(monkeypatch, dev_config())
    assert [r.name for r in cluster_entries(rec)] == ["platform-cluster-admin-role-PlatformAdmin"]
    assert rec.api_probes  # the access wait ran


def test_a_missing_viewer_is_refused_before_anything_is_registered(monkeypatch):
    """Points 2 and 3 (fails on the old code: no lookup; the entry failed after the cluster)."""
    missing = frozenset({"GitHubActionsPreview-dev"})
    config = dev_config(viewers=["role/GitHubActionsPreview-dev"])
    assert refused(monkeypatch, config, missing_iam_principals=missing) == [MISSING_VIEWER]
    seen = registrations_on_refusal(monkeypatch, config, missing_iam_principals=missing)
    assert seen == ONLY_THE_COMPONENT


def test_a_missing_principal_is_refused_by_the_preview_too(monkeypatch):
    """Whoever previews (CI's read-only role), a principal IAM does not know is refused there
    as in `up`: a pull request's preview fails as its deploy would."""
    monkeypatch.setattr(mocks.RecordingMocks, "caller", "assumed-role/GitHubActionsPreview/pr")
    monkeypatch.setattr(
        mocks.RecordingMocks, "missing_iam_principals", frozenset({"GitHubActionsPreview-dev"})
    )
    with pytest.raises(SpecError) as err:
        mocks.run(
            lambda: GpuPlatform("platform", read_stack_config()),
            project="eks-gpu-platform",
            stack="dev",
            config=dev_config(viewers=["role/GitHubActionsPreview-dev"]),
            region="us-west-2",
            preview=True,
        )
    assert err.value.lines == [MISSING_VIEWER]


def test_an_unlisted_deployer_is_refused_before_the_network(monkeypatch):
    """Point 3 (fails on the old code: 18 network resources were registered first)."""
    seen = registrations_on_refusal(monkeypatch, dev_config(), caller="user/someone-else")
    assert seen == ONLY_THE_COMPONENT


def test_every_bad_principal_is_named_at_once(monkeypatch):
    config = dev_config(
        admins=["role/PlatformAdmin", "user/alice"],
        viewers=["role/GitHubActionsPreview-dev"],
        breakGlassRole="role/BreakGlass",
    )
    lines = refused(
        monkeypatch,
        config,
        missing_iam_principals=frozenset({"alice", "GitHubActionsPreview-dev"}),
        denied_iam_principals=frozenset({"BreakGlass"}),
    )
    assert lines == [
        f"cluster.admins[1]: 'user/alice': no IAM user named alice exists in account {ACCOUNT} "
        '(iam:GetUser found none); EKS would refuse its access entry ("The specified '
        'principalArn is invalid: invalid principal") after the cluster is created; create it '
        "first, or remove it from the list",
        MISSING_VIEWER,
        "cluster.breakGlassRole: looking up 'role/BreakGlass' failed (invoke of "
        "aws:iam/getRole:getRole failed: invoking "
        # Escaped: a provider's line break never splits a refusal (issue 29, point 11).
        "aws:iam/getRole:getRole: 1 error occurred:\\n\\t* reading IAM Role (BreakGlass): "
        "operation error IAM: GetRole, https response error StatusCode: 403, RequestID: 0, api "
        "error AccessDenied: not authorized to perform: iam:GetRole); the deploying identity "
        "needs iam:GetRole to check every principal before anything is created",
    ]


def test_a_role_with_a_path_gets_its_entry_under_its_real_arn(monkeypatch):
    """Point 2: ``role/NAME`` of an SSO role (path aws-reserved/sso.amazonaws.com/<region>/)
    resolves to the ARN IAM answers; EKS refuses the path-less one
    (terraform-aws-modules/terraform-aws-eks#2969). Fails on the old code (path dropped)."""
    rec = up(
        monkeypatch,
        dev_config(viewers=[f"role/{SSO_ROLE}"]),
        iam_paths={SSO_ROLE: SSO_PATH},
    )
    principals = sorted(r.inputs["principalArn"] for r in cluster_entries(rec))
    assert principals == [
        f"arn:aws:iam::{ACCOUNT}:role/PlatformAdmin",
        f"arn:aws:iam::{ACCOUNT}:role{SSO_PATH}{SSO_ROLE}",
    ]


def test_an_sso_deployer_gets_its_entry_with_its_issuer_arn(monkeypatch):
    """Point 2 (review H2): the deployer written as ``role/AWSReservedSSO_...`` gets the entry
    for its exact issuer ARN, path included (fails on the old code: the path-less ARN)."""
    rec = up(
        monkeypatch,
        dev_config(admins=[f"role/{SSO_ROLE}"], viewers=[]),
        caller=f"assumed-role/{SSO_ROLE}/alice@example.com",
        iam_paths={SSO_ROLE: SSO_PATH},
    )
    (entry,) = cluster_entries(rec)
    assert entry.name == f"platform-cluster-admin-role-{SSO_ROLE}"
    assert entry.inputs["principalArn"] == f"arn:aws:iam::{ACCOUNT}:role{SSO_PATH}{SSO_ROLE}"


def test_the_deployer_cannot_remove_its_own_entry(monkeypatch):
    """Point 5 (fails on the old code: the owned entry was deleted at the end of the run)."""
    deployer = f"arn:aws:iam::{ACCOUNT}:role/PlatformAdmin"
    lines = refused(
        monkeypatch,
        dev_config(admins=["role/OtherAdmin"]),
        existing_cluster_tags={},
        existing_access_entries={
            deployer: {"eks-gpu-platform/cluster": "gpu-dev"},
            f"arn:aws:iam::{ACCOUNT}:role/OtherAdmin": {"eks-gpu-platform/cluster": "gpu-dev"},
            f"arn:aws:iam::{ACCOUNT}:role/GitHubActionsPreview-dev": {
                "eks-gpu-platform/cluster": "gpu-dev"
            },
        },
    )
    assert lines == [
        f"cluster.admins: the deploying identity {deployer} is not listed, but its access entry "
        "on cluster gpu-dev is this stack's (tag eks-gpu-platform/cluster=gpu-dev): this "
        "`pulumi up` would delete it and lock the deployer out of the cluster; put it back in "
        "cluster.admins, or run this change as another admin that stays listed"
    ]


# -- point 4: the access wait ----------------------------------------------------------------


def test_the_kubernetes_provider_depends_on_the_access_check(monkeypatch):
    """The provider's kubeconfig is computed after every admin association, by the wait (fails
    on the old code: the kubeconfig depended on the cluster only, the associations were only a
    depends_on and no call was made)."""
    rec = up(
        monkeypatch,
        dev_config(),
        api_answers=((False, "401 Unauthorized"), (False, "allowed: false")),
    )
    (provider,) = [r for r in rec.of_type(PROVIDER) if r.name == "platform-cluster-k8s"]
    associations = [
        r.urn
        for r in rec.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
        if r.name.endswith("-cluster-admin")
    ]
    assert associations
    assert set(associations) <= set(provider.property_dependencies["kubeconfig"])
    # Two refusals, then allowed: three reviews against the cluster's endpoint.
    endpoint = rec.named("platform-cluster-eks").outputs["core"]["endpoint"]
    assert rec.api_probes == [endpoint] * 3


def test_the_access_wait_times_out_with_what_to_do(monkeypatch):
    with pytest.raises(pulumi.RunError) as err:
        up(monkeypatch, dev_config(), api_answers=((False, "401 Unauthorized"),) * 100)
    assert str(err.value) == (
        "cluster gpu-dev: the deploying identity's access entry and cluster-admin association "
        "exist, but the API server still refused it after 300 s and 61 attempts (last answer: "
        "401 Unauthorized); nothing is lost: run `pulumi up` again once `kubectl auth can-i '*' "
        "'*'` (with this stack's kubeconfig output) answers yes. Kubernetes steps were not "
        "started, so the provider did not cache an unreachable cluster"
    )


# -- point 8: clean refusals -----------------------------------------------------------------


def test_a_refusal_of_the_program_is_a_run_error_without_traceback(monkeypatch):
    """``__main__.py`` turns the platform's SpecError into pulumi.RunError (the language host
    prints a RunError's message without a traceback: pulumi/runtime/stack.py). Fails on the old
    code (a SpecError escaped: a Python traceback)."""
    program = REPO / "__main__.py"
    with pytest.raises(pulumi.RunError) as err:
        up(
            monkeypatch,
            dev_config(viewers=["role/GitHubActionsPreview-dev"]),
            program=lambda: runpy.run_path(str(program), run_name="__main__"),
            # as the dev stack ships it commented out, before CI creates the role
            missing_iam_principals=frozenset({"GitHubActionsPreview-dev"}),
        )
    assert str(err.value) == f"refused before anything was created:\n{MISSING_VIEWER}"


# -- point 12: quotas ------------------------------------------------------------------------


def test_a_pool_whose_largest_node_exceeds_its_quota_is_refused(monkeypatch):
    """dev's gpu-spot is spot only (L4 and L40S: G instances); a fresh account's spot G quota
    is 0 (fails on the old code: no quota was read). Its GPU limit, 6 (from its queue), leaves
    out the 8-GPU types, so its largest node is a 4-GPU g6e.24xlarge: 96 vCPUs (Karpenter
    v1.14.1 instance-types.md, instance-cpu)."""
    lines = refused(monkeypatch, dev_config(), service_quotas={"L-3819A6DF": 0.0})
    assert lines == [
        "nodePools[0](gpu-spot): its largest node (g6e.24xlarge, 96 vCPUs) can never launch: "
        "the EC2 quota All G and VT Spot Instance Requests (L-3819A6DF) is 0 vCPUs in us-west-2; "
        "raise it: `aws service-quotas request-service-quota-increase --service-code ec2 "
        "--quota-code L-3819A6DF --desired-value 96 --region us-west-2`"
    ]


def test_a_denied_quota_lookup_is_a_warning(monkeypatch):
    rec = up(monkeypatch, dev_config(), denied_service_quotas=frozenset({"L-DB2E81BA"}))
    assert any(
        w.startswith(
            "EC2 quota Running On-Demand G and VT instances (L-DB2E81BA): looking it up failed"
        )
        and w.endswith(
            "the GPU pools were not checked against it (the deploying identity needs "
            "servicequotas:GetServiceQuota and servicequotas:GetAWSDefaultServiceQuota)"
        )
        for w in rec.warnings
    )


def test_the_preview_refuses_a_quota_too(monkeypatch):
    """Preview and up agree (the quota is readable in both)."""
    monkeypatch.setattr(mocks.RecordingMocks, "caller", "assumed-role/PlatformAdmin/gha")
    monkeypatch.setattr(mocks.RecordingMocks, "service_quotas", {"L-DB2E81BA": 8.0})
    with pytest.raises(SpecError) as err:
        mocks.run(
            lambda: GpuPlatform("platform", read_stack_config()),
            project="eks-gpu-platform",
            stack="dev",
            config=dev_config(),
            region="us-west-2",
            preview=True,
        )
    assert [line.split(":")[0] for line in err.value.lines] == [
        "nodePools[1](inference)",
        "nodePools[2](notebooks)",
    ]


def dev_config_with_tenants(tenants: list[str]) -> dict:
    """dev with ``tenants`` on its research-batch queue (index 1)."""
    config = dev_config()
    scheduler = dict(config["eks-gpu-platform:scheduler"])
    queues = [dict(q) for q in scheduler["queues"]]
    queues[1]["tenants"] = tenants
    scheduler["queues"] = queues
    config["eks-gpu-platform:scheduler"] = scheduler
    return config


def test_a_missing_tenant_is_refused_before_anything_is_registered(monkeypatch):
    """Issue 29, point 5 with issue 28, point 2: a queue's tenant IAM does not know is refused by
    the pre-flight with the admins, naming the queue's key, before any registration (before the
    merge of both, the tenant's access entry failed after the cluster existed)."""
    config = dev_config_with_tenants(["role/Researcher"])
    missing = frozenset({"Researcher"})
    assert refused(monkeypatch, config, missing_iam_principals=missing) == [
        "scheduler.queues[1](research-batch).tenants[0]: 'role/Researcher': no IAM role named "
        f"Researcher exists in account {ACCOUNT} (iam:GetRole found none); EKS would refuse its "
        'access entry ("The specified principalArn is invalid: invalid principal") after the '
        "cluster is created; create it first, or remove it from the list"
    ]
    seen = registrations_on_refusal(monkeypatch, config, missing_iam_principals=missing)
    assert seen == ONLY_THE_COMPONENT


def test_a_tenant_role_with_a_path_gets_its_entry_under_its_real_arn(monkeypatch):
    """A tenant written ``role/NAME`` whose role has a path (AWS SSO) gets its access entry under
    the ARN IAM answers, as the admins do (terraform-aws-modules/terraform-aws-eks#2969)."""
    rec = up(
        monkeypatch,
        dev_config_with_tenants([f"role/{SSO_ROLE}", "user/bob"]),
        iam_paths={SSO_ROLE: SSO_PATH},
    )
    tenants = sorted(
        r.inputs["principalArn"]
        for r in rec.of_type(ENTRY)
        if r.name.startswith("platform-tenants-")
    )
    assert tenants == [
        f"arn:aws:iam::{ACCOUNT}:role{SSO_PATH}{SSO_ROLE}",
        f"arn:aws:iam::{ACCOUNT}:user/bob",
    ]
