"""The ``Karpenter`` component (``eks_gpu_platform.karpenter.component``): its children and their
inputs under the recording mocks."""

import json

import pulumi
import pulumi_kubernetes as k8s
import pytest
from render_cache import cached_copy

from eks_gpu_platform.iam import compact_json, ec2_trust_policy
from eks_gpu_platform.karpenter.component import Karpenter, KarpenterArgs
from eks_gpu_platform.karpenter.events import INTERRUPTION_EVENTS, interruption_rules
from eks_gpu_platform.karpenter.iam import (
    POLICY_GROUPS,
    controller_policies,
    irsa_trust_policy,
    pod_identity_trust_policy,
    queue_policy,
)
from eks_gpu_platform.karpenter.spec import KarpenterSpec
from eks_gpu_platform.karpenter.values import karpenter_values
from eks_gpu_platform.offline import mocks

from .helpers import SYSTEM_SELECTOR, SYSTEM_TOLERATIONS

COMPONENT = "eks-gpu-platform:index:Karpenter"

OIDC_MOCK_ARN = (
    "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABCDEF0123"
)
OIDC_MOCK_URL = "https://oidc.eks.us-west-2.amazonaws.com/id/ABCDEF0123"
# Upstream's four minus the CNI policy (the vpc-cni add-on's own role) and SSM (opt-in):
# issue 22, point 3.
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
)


def karpenter(run_program, spec: KarpenterSpec, *, region="us-west-2", partition="aws", **extra):
    """The component's recording for these arguments: run once per test process (the variants
    repeat across tests) and copied for each caller (render_cache.cached_copy: run afresh when a
    test has patched what the run reads, e.g. the mocks' spot role)."""

    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        # Stands for the system node group the chart's pods need (KarpenterArgs.depends_on).
        nodes = k8s.core.v1.ConfigMap(
            "system-nodes", opts=pulumi.ResourceOptions(provider=provider)
        )
        Karpenter(
            "k",
            KarpenterArgs(
                spec=spec,
                cluster_name="gpu-dev",
                cluster="gpu-dev",
                oidc_provider_arn=OIDC_MOCK_ARN,
                oidc_provider_url=OIDC_MOCK_URL,
                k8s_provider=provider,
                node_selector=SYSTEM_SELECTOR,
                tolerations=SYSTEM_TOLERATIONS,
                depends_on=[nodes],
                tags={"team": "ml"},
                **extra,
            ),
        )

    key = ("karpenter.test_component", repr(spec), region, partition, repr(sorted(extra.items())))
    return cached_copy(key, lambda: run_program(program, region=region, partition=partition))


def find(recording, typ: str, name: str):
    matches = [r for r in recording.resources if r.type == typ and r.name == name]
    assert len(matches) == 1, (typ, name, len(matches))
    return matches[0]


def expected_children(
    *, pod_identity: bool, interruption: bool, spot: bool
) -> list[tuple[str, str]]:
    out = [
        ("aws:iam/role:Role", "k-node"),
        *[
            ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-node-{p}")
            for p in NODE_POLICIES
        ],
        ("aws:eks/accessEntry:AccessEntry", "k-node"),
        ("aws:iam/role:Role", "k-controller"),
        ("kubernetes:helm.sh/v3:Release", "k-crd"),
        ("kubernetes:helm.sh/v3:Release", "k-chart"),
    ]
    for group in POLICY_GROUPS:
        if group == "Interruption" and not interruption:
            continue
        out += [
            ("aws:iam/policy:Policy", f"k-{group}"),
            ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-{group}"),
        ]
    if interruption:
        out += [
            ("aws:sqs/queue:Queue", "k-interruption"),
            ("aws:sqs/queuePolicy:QueuePolicy", "k-interruption"),
        ]
        for key in INTERRUPTION_EVENTS:
            out += [
                ("aws:cloudwatch/eventRule:EventRule", f"k-{key}"),
                ("aws:cloudwatch/eventTarget:EventTarget", f"k-{key}"),
            ]
    if pod_identity:
        out.append(("aws:eks/podIdentityAssociation:PodIdentityAssociation", "k-controller"))
    if spot:
        out.append(("aws:iam/serviceLinkedRole:ServiceLinkedRole", "k-spot"))
    return sorted(out)


VARIANTS = [
    # The spot role is created by default when the account has none (the mocks' account has
    # none: offline/mock_account.py), issue 28 point 7.
    pytest.param(KarpenterSpec(), True, True, True, 33, id="pod-identity"),
    pytest.param(KarpenterSpec(auth="irsa"), False, True, True, 32, id="irsa"),
    pytest.param(
        KarpenterSpec(interruption_handling=False), True, False, True, 19, id="no-interruption"
    ),
    pytest.param(
        KarpenterSpec(auth="irsa", interruption_handling=False),
        False,
        False,
        True,
        18,
        id="irsa-no-interruption",
    ),
    pytest.param(
        KarpenterSpec(spot_service_linked_role=False), True, True, False, 32, id="no-spot-slr"
    ),
]


@pytest.mark.parametrize(("spec", "pod_identity", "interruption", "spot", "count"), VARIANTS)
def test_children(run_program, spec, pod_identity, interruption, spot, count):
    rec = karpenter(run_program, spec)
    (component,) = rec.of_type(COMPONENT)
    assert component.name == "k"
    children = rec.children_of(component.urn)
    assert len(children) == count
    assert sorted((c.type, c.name) for c in children) == expected_children(
        pod_identity=pod_identity, interruption=interruption, spot=spot
    )
    # Nothing else: the program's provider and system-nodes stand-in, the component and its
    # direct children.
    assert len(rec.resources) == count + 3


@pytest.mark.parametrize(("spec", "pod_identity", "interruption", "spot", "count"), VARIANTS)
def test_access_entry_waits_for_the_queue_policy(
    run_program, spec, pod_identity, interruption, spot, count
):
    rec = karpenter(run_program, spec)
    entry = find(rec, "aws:eks/accessEntry:AccessEntry", "k-node")
    node_role = find(rec, "aws:iam/role:Role", "k-node")
    assert entry.inputs == {
        "clusterName": "gpu-dev",
        "principalArn": node_role.outputs["arn"],
        "type": "EC2_LINUX",
        "tags": {"team": "ml"},
    }
    queue_policies = rec.of_type("aws:sqs/queuePolicy:QueuePolicy")
    assert len(queue_policies) == (1 if interruption else 0)
    for qp in queue_policies:
        assert qp.urn in entry.dependencies


@pytest.mark.parametrize(("spec", "pod_identity", "interruption", "spot", "count"), VARIANTS)
def test_chart_release_waits_for_crds_permissions_and_identity(
    run_program, spec, pod_identity, interruption, spot, count
):
    rec = karpenter(run_program, spec)
    chart = find(rec, "kubernetes:helm.sh/v3:Release", "k-chart")
    crd = find(rec, "kubernetes:helm.sh/v3:Release", "k-crd")
    controller = find(rec, "aws:iam/role:Role", "k-controller")
    attachments = [
        find(rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-{group}")
        for group in POLICY_GROUPS
        if group != "Interruption" or interruption
    ]
    assert crd.urn in chart.dependencies
    for attachment in attachments:
        assert attachment.urn in chart.dependencies
        assert attachment.inputs["role"] == controller.outputs["name"]
    associations = rec.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert len(associations) == (1 if pod_identity else 0)
    for association in associations:
        assert association.urn in chart.dependencies
        assert association.inputs == {
            "clusterName": "gpu-dev",
            "namespace": "kube-system",
            "serviceAccount": "karpenter",
            "roleArn": controller.outputs["arn"],
            "tags": {"team": "ml"},
        }
    provider = find(rec, "pulumi:providers:kubernetes", "k8s")
    assert chart.provider == crd.provider == f"{provider.urn}::{provider.id}"

    assert crd.inputs == {
        "name": "karpenter-crd",
        "chart": "oci://public.ecr.aws/karpenter/karpenter-crd",
        "version": "1.15.1",
        "namespace": "kube-system",
        "compat": "true",
    }
    values = chart.inputs.pop("values")
    assert chart.inputs == {
        "name": "karpenter",
        "chart": "oci://public.ecr.aws/karpenter/karpenter",
        "version": "1.15.1",
        "namespace": "kube-system",
        "skipCrds": True,
        "compat": "true",
    }
    queues = rec.of_type("aws:sqs/queue:Queue")
    assert values == karpenter_values(
        cluster_name="gpu-dev",
        queue_name=queues[0].outputs["name"] if queues else None,
        spec=spec,
        node_selector=SYSTEM_SELECTOR,
        tolerations=SYSTEM_TOLERATIONS,
        irsa_role_arn=None if pod_identity else controller.outputs["arn"],
    )
    assert values["settings"]["interruptionQueue"] == ("Karpenter-gpu-dev" if interruption else "")


def test_interruption_queue_rules_and_policies(run_program):
    rec = karpenter(run_program, KarpenterSpec())
    queue = find(rec, "aws:sqs/queue:Queue", "k-interruption")
    assert queue.inputs == {
        "name": "Karpenter-gpu-dev",
        "messageRetentionSeconds": 300,
        "sqsManagedSseEnabled": True,
        "tags": {"team": "ml"},
    }
    queue_arn = queue.outputs["arn"]
    assert queue_arn == "arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-dev"
    qp = find(rec, "aws:sqs/queuePolicy:QueuePolicy", "k-interruption")
    assert qp.inputs["queueUrl"] == queue.outputs["url"] == queue.id
    rule_arns = [
        find(rec, "aws:cloudwatch/eventRule:EventRule", f"k-{key}").outputs["arn"]
        for key in interruption_rules()
    ]
    assert len(set(rule_arns)) == 5 and all(":rule/" in a for a in rule_arns)
    assert json.loads(qp.inputs["policy"]) == queue_policy(queue_arn, rule_arns, "123456789012")
    for key, pattern in interruption_rules().items():
        rule = find(rec, "aws:cloudwatch/eventRule:EventRule", f"k-{key}")
        assert json.loads(rule.inputs["eventPattern"]) == pattern
        target = find(rec, "aws:cloudwatch/eventTarget:EventTarget", f"k-{key}")
        assert target.inputs == {
            "rule": rule.outputs["name"],
            "arn": queue_arn,
            "targetId": "KarpenterInterruptionQueueTarget",
        }

    node_role = find(rec, "aws:iam/role:Role", "k-node")
    expected = controller_policies(
        partition="aws",
        region="us-west-2",
        account_id="123456789012",
        cluster_name="gpu-dev",
        node_role_arn=node_role.outputs["arn"],
        queue_arn=queue_arn,
    )
    controller = find(rec, "aws:iam/role:Role", "k-controller")
    for group in POLICY_GROUPS:
        policy = find(rec, "aws:iam/policy:Policy", f"k-{group}")
        assert policy.inputs["name"] == f"KarpenterController{group}Policy-gpu-dev"
        assert policy.inputs["path"] == "/"
        assert policy.inputs["policy"] == compact_json(expected[group])
        attachment = find(rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-{group}")
        assert attachment.inputs == {
            "role": controller.outputs["name"],
            "policyArn": policy.outputs["arn"],
        }


@pytest.mark.parametrize(
    ("region", "partition", "suffix"),
    [("us-west-2", "aws", "amazonaws.com"), ("cn-north-1", "aws-cn", "amazonaws.com.cn")],
    ids=["aws", "aws-cn"],
)
def test_roles_follow_the_partition(run_program, region, partition, suffix):
    rec = karpenter(run_program, KarpenterSpec(), region=region, partition=partition)
    node_role = find(rec, "aws:iam/role:Role", "k-node")
    assert node_role.inputs == {
        "name": "KarpenterNodeRole-gpu-dev",
        "path": "/",
        "description": "Nodes launched by Karpenter in EKS cluster gpu-dev",
        "assumeRolePolicy": json.dumps(ec2_trust_policy(suffix)),
        "tags": {"team": "ml"},
    }
    for policy in NODE_POLICIES:
        attachment = find(
            rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-node-{policy}"
        )
        assert attachment.inputs == {
            "role": "KarpenterNodeRole-gpu-dev",
            "policyArn": f"arn:{partition}:iam::aws:policy/{policy}",
        }
    documents = [json.loads(p.inputs["policy"]) for p in rec.of_type("aws:iam/policy:Policy")]
    text = json.dumps(documents)
    assert f"arn:{partition}:ec2:{region}:*:instance/*" in text
    other = "arn:aws-cn:" if partition == "aws" else "arn:aws:"
    assert other not in text


@pytest.mark.parametrize("auth", ["podIdentity", "irsa"])
def test_controller_role_trust(run_program, auth):
    rec = karpenter(run_program, KarpenterSpec(auth=auth))
    controller = find(rec, "aws:iam/role:Role", "k-controller")
    trust = (
        pod_identity_trust_policy(
            partition="aws", region="us-west-2", account_id="123456789012", cluster_name="gpu-dev"
        )
        if auth == "podIdentity"
        else irsa_trust_policy(OIDC_MOCK_ARN, OIDC_MOCK_URL)
    )
    assert controller.inputs == {
        "name": "KarpenterController-gpu-dev",
        "path": "/",
        "description": "Karpenter controller of EKS cluster gpu-dev",
        "assumeRolePolicy": json.dumps(trust),
        "tags": {"team": "ml"},
    }


def test_spot_service_linked_role(run_program):
    """Issue 28, point 7: absent from the account, so declared, marked as this cluster's, kept
    by `pulumi destroy` (account-wide), and the chart release waits for it."""
    rec = karpenter(run_program, KarpenterSpec(spot_service_linked_role=True))
    slr = find(rec, "aws:iam/serviceLinkedRole:ServiceLinkedRole", "k-spot")
    assert slr.inputs == {
        "awsServiceName": "spot.amazonaws.com",
        "description": "EC2 Spot service-linked role, created by eks-gpu-platform cluster gpu-dev",
    }
    assert slr.retain_on_delete
    chart = find(rec, "kubernetes:helm.sh/v3:Release", "k-chart")
    assert slr.urn in chart.dependencies


@pytest.mark.parametrize(
    ("description", "declared"),
    [
        (None, True),  # absent: created
        ("EC2 Spot service-linked role, created by eks-gpu-platform cluster gpu-dev", True),
        ("", False),  # made by hand or by EC2: left alone
        ("EC2 Spot service-linked role, created by eks-gpu-platform cluster gpu-prod", False),
    ],
)
def test_spot_role_is_declared_only_when_absent_or_this_stacks(
    run_program, monkeypatch, description, declared
):
    monkeypatch.setattr(mocks.RecordingMocks, "spot_role_description", description)
    rec = karpenter(run_program, KarpenterSpec())
    assert len(rec.of_type("aws:iam/serviceLinkedRole:ServiceLinkedRole")) == int(declared)
    # Another's role is read under the same name, by its ARN (the provider's id of the role):
    # a stack that created it before without the marker releases it instead of deleting it
    # (spot_role.py), and the chart still waits for it.
    arn = (
        "arn:aws:iam::123456789012:role/aws-service-role/spot.amazonaws.com/"
        "AWSServiceRoleForEC2Spot"
    )
    reads = [("aws:iam/serviceLinkedRole:ServiceLinkedRole", "k-spot", arn)]
    assert rec.reads == ([] if declared or description is None else reads)


def test_registered_outputs(run_program):
    rec = karpenter(run_program, KarpenterSpec())
    (component,) = rec.of_type(COMPONENT)
    assert component.registered_outputs == {
        "node_role_name": "KarpenterNodeRole-gpu-dev",
        "node_role_arn": "arn:aws:iam::123456789012:role/KarpenterNodeRole-gpu-dev",
        "controller_role_arn": "arn:aws:iam::123456789012:role/KarpenterController-gpu-dev",
        "queue_name": "Karpenter-gpu-dev",
        "queue_arn": "arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-dev",
        "release_name": "karpenter",
    }


def test_registered_outputs_without_a_queue(run_program):
    rec = karpenter(run_program, KarpenterSpec(interruption_handling=False))
    (component,) = rec.of_type(COMPONENT)
    assert component.registered_outputs["queue_name"] == ""
    assert component.registered_outputs["queue_arn"] == ""


@pytest.mark.parametrize(("spec", "pod_identity", "interruption", "spot", "count"), VARIANTS)
def test_chart_release_depends_on_everything_the_controller_needs(
    run_program, spec, pod_identity, interruption, spot, count
):
    """Issue 11, item 3 (fails on the old code: the node role's attachments and access entry,
    the queue's policy and rules were not among the release's dependencies, so `pulumi
    destroy` could delete them while Karpenter still drained the node pools)."""
    rec = karpenter(run_program, spec)
    chart = find(rec, "kubernetes:helm.sh/v3:Release", "k-chart")
    needed = [
        find(rec, "aws:iam/role:Role", "k-node"),
        find(rec, "aws:iam/role:Role", "k-controller"),
        find(rec, "aws:eks/accessEntry:AccessEntry", "k-node"),
        *[
            find(rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"k-node-{p}")
            for p in NODE_POLICIES
        ],
        *rec.of_type("aws:sqs/queue:Queue"),
        *rec.of_type("aws:sqs/queuePolicy:QueuePolicy"),
        *rec.of_type("aws:cloudwatch/eventRule:EventRule"),
        *rec.of_type("aws:cloudwatch/eventTarget:EventTarget"),
        *rec.of_type("aws:iam/serviceLinkedRole:ServiceLinkedRole"),
    ]
    assert len(rec.of_type("aws:cloudwatch/eventTarget:EventTarget")) == (5 if interruption else 0)
    assert [n.name for n in needed if n.urn not in chart.dependencies] == []


@pytest.mark.parametrize("ssm", [False, True])
def test_session_manager_on_karpenter_nodes_is_opt_in(run_program, ssm):
    rec = karpenter(run_program, KarpenterSpec(), node_ssm_access=ssm)
    attached = sorted(
        a.inputs["policyArn"].rsplit("/", 1)[1]
        for a in rec.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if a.name.startswith("k-node-")
    )
    assert attached == sorted(
        ["AmazonEC2ContainerRegistryPullOnly", "AmazonEKSWorkerNodePolicy"]
        + (["AmazonSSMManagedInstanceCore"] if ssm else [])
    )
