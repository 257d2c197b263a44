"""``pulumi destroy`` order (issue 11, item 3): computed from each user stack's recorded
dependency graph (``eks_gpu_platform.offline.teardown``, the engine's ScheduleDeletes model),
every NodePool, EC2NodeClass and NodeOverlay is deleted before anything the Karpenter
controller needs to drain and terminate their nodes.

On the old code this fails: nothing depended on the private routes, route-table associations,
NAT gateways, the coredns add-on, the node role's access entry and policy attachments, so the
engine deleted them in the same antichain as (or before) the node pools."""

from pathlib import Path

import pytest
from stack_files import USER_STACKS, user_id

from eks_gpu_platform.offline.teardown import (
    delete_order,
    delete_step,
    dependencies,
    kept_if_delete_fails,
)

REPO = Path(__file__).resolve().parents[2]
KARPENTER_KINDS = ("karpenter.sh/v1:NodePool", "karpenter.k8s.aws/v1:EC2NodeClass")


def stacks() -> list[str]:
    """The user's stacks (the project root's Pulumi.<stack>.yaml): the order holds for each."""
    return USER_STACKS


def is_karpenter_object(r) -> bool:
    return r.type.startswith("kubernetes:karpenter.")


def controller_needs(rec) -> list:
    """What the running controller needs while it finalizes NodeClaims and EC2NodeClasses."""
    wanted = {
        "aws:ec2/route:Route": lambda r: True,
        "aws:ec2/routeTableAssociation:RouteTableAssociation": lambda r: True,
        "aws:ec2/natGateway:NatGateway": lambda r: True,
        "aws:ec2/internetGateway:InternetGateway": lambda r: True,
        "aws:eks/addon:Addon": lambda r: True,
        "aws:eks/nodeGroup:NodeGroup": lambda r: True,
        "aws:eks/podIdentityAssociation:PodIdentityAssociation": lambda r: True,
        "aws:eks/accessEntry:AccessEntry": lambda r: r.inputs.get("type") == "EC2_LINUX",
        "aws:iam/role:Role": lambda r: "karpenter" in r.name,
        "aws:iam/policy:Policy": lambda r: "karpenter" in r.name,
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment": lambda r: "karpenter" in r.name,
        "aws:sqs/queue:Queue": lambda r: True,
        "aws:sqs/queuePolicy:QueuePolicy": lambda r: True,
        "kubernetes:helm.sh/v3:Release": lambda r: r.inputs.get("name", "").startswith("karpenter"),
        "pulumi:providers:kubernetes": lambda r: True,
        "eks:index:Cluster": lambda r: True,
    }
    return [r for r in rec.resources if r.type in wanted and wanted[r.type](r)]


@pytest.mark.parametrize("stack", stacks(), ids=user_id)
def test_karpenter_objects_are_deleted_before_what_the_controller_needs(render_user_stack, stack):
    rec = render_user_stack(stack)
    resources = [r.to_json() for r in rec.resources]
    step = delete_step(resources)
    objects = [r for r in rec.resources if is_karpenter_object(r)]
    kinds = {r.type.removeprefix("kubernetes:") for r in objects}
    assert set(KARPENTER_KINDS) <= kinds
    needs = controller_needs(rec)
    types = {r.type for r in needs}
    # Every kind of prerequisite is present in the stack (a filter that matches nothing
    # would make this test pass vacuously).
    assert {
        "aws:ec2/route:Route",
        "aws:ec2/routeTableAssociation:RouteTableAssociation",
        "aws:ec2/natGateway:NatGateway",
        "aws:eks/addon:Addon",
        "aws:eks/accessEntry:AccessEntry",
        "aws:eks/podIdentityAssociation:PodIdentityAssociation",
        "aws:sqs/queuePolicy:QueuePolicy",
        "kubernetes:helm.sh/v3:Release",
    } <= types
    late = [(o.name, n.type, n.name) for o in objects for n in needs if step[o.urn] >= step[n.urn]]
    assert late == []


@pytest.mark.parametrize("stack", stacks(), ids=user_id)
def test_a_failed_pool_delete_keeps_what_the_controller_needs(render_user_stack, stack):
    """A NodePool or EC2NodeClass whose delete fails (its finalizer outlasts the timeout) keeps
    its transitive dependencies; the engine goes on deleting everything else. So everything the
    controller needs must be among them, or a failed drain strands running GPU instances with
    no controller, network or permissions left to terminate them."""
    rec = render_user_stack(stack)
    resources = [r.to_json() for r in rec.resources]
    needs = controller_needs(rec)
    # kept_if_delete_fails is pure: computed once per Karpenter object, not once per pair.
    kept = {
        o.urn: kept_if_delete_fails(resources, o.urn)
        for o in rec.resources
        if is_karpenter_object(o)
    }
    missing = sorted(
        {
            (n.type, n.name)
            for o in rec.resources
            if is_karpenter_object(o)
            for n in needs
            if n.urn not in kept[o.urn]
        }
    )
    assert missing == []


def test_release_depends_directly_on_the_controller_needs(render_stack):
    rec = render_stack("prod")
    (release,) = [
        r
        for r in rec.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs.get("name") == "karpenter"
    ]
    deps = dependencies([r.to_json() for r in rec.resources])[release.urn]
    names = {rec_r.name for rec_r in rec.resources if rec_r.urn in deps}
    assert {
        "platform-network-private-a-default",
        "platform-network-private-b",
        "platform-network-nat-c",
        "platform-cluster-coredns",
        "platform-cluster-system",
        "platform-karpenter-node",
        "platform-karpenter-interruption",
        "platform-karpenter-node-AmazonEKSWorkerNodePolicy",
    } <= names


def test_delete_order_model():
    """Dependents first; a component's children before it; a dependency on a component
    covers its earlier children (dependency_graph.go DependenciesOf)."""
    res = [
        {"urn": "vpc", "custom": True},
        {"urn": "comp", "custom": False},
        {"urn": "route", "custom": True, "parent": "comp", "dependencies": ["vpc"]},
        {"urn": "k8s", "custom": True},
        {"urn": "release", "custom": True, "dependencies": ["comp"], "provider": "k8s::id"},
        {"urn": "pool", "custom": True, "dependencies": ["release"], "provider": "k8s::id"},
    ]
    assert delete_order(res) == [["pool"], ["release"], ["route"], ["comp", "k8s", "vpc"]]


@pytest.mark.parametrize("stack", stacks(), ids=user_id)
def test_karpenter_objects_wait_for_the_drain(render_user_stack, stack):
    """Fails on the old code (no custom timeouts: the provider's 10-minute default). Every
    NodePool and EC2NodeClass waits its pool's terminationGracePeriod plus 20 minutes."""
    rec = render_user_stack(stack)
    timeouts = {
        r.name: (r.custom_timeouts or {}).get("delete")
        for r in rec.resources
        if r.type.removeprefix("kubernetes:") in KARPENTER_KINDS
    }
    graces = {
        r.name: r.inputs["spec"]["template"]["spec"]["terminationGracePeriod"]
        for r in rec.resources
        if r.type == "kubernetes:karpenter.sh/v1:NodePool"
    }
    expected_pool = {name: f"{g}20m" for name, g in graces.items()}
    assert {n: t for n, t in timeouts.items() if n in graces} == expected_pool
    assert all(t is not None and t.endswith("20m") for t in timeouts.values())


def admin_access(rec) -> list:
    """The admins' access entries and their cluster-admin policy associations (``<cluster>-
    admin-<principal>``); not the viewers' (``-viewer-``) nor the break-glass role's entries
    (issue 22), which no Kubernetes step of the stack uses."""
    return [
        r
        for r in rec.resources
        if (
            (r.type == "aws:eks/accessEntry:AccessEntry" and r.inputs.get("type") == "STANDARD")
            or r.type == "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
        )
        and "-admin-" in r.name
        and "-viewer-" not in r.name
        and "-break-glass" not in r.name
    ]


def kubernetes_objects(rec) -> list:
    """Every resource the Kubernetes provider serves, and the provider itself."""
    return [
        r
        for r in rec.resources
        if r.type.startswith("kubernetes:") or r.type == "pulumi:providers:kubernetes"
    ]


@pytest.mark.parametrize("stack", stacks(), ids=user_id)
def test_every_kubernetes_resource_depends_on_every_admin_association(render_user_stack, stack):
    """Issue 21, point 1; fails on the old code: the Kubernetes provider depended only on the
    cluster, so no Kubernetes object reached the admins' entries or associations. A failed
    Kubernetes delete (a drain past its timeout, a Helm error) withholds only its transitive
    dependencies (pulumi/pulumi pkg/resource/deploy/deployment_executor.go L501-553,
    ``TransitiveDependenciesOf``: ``kept_if_delete_fails``): the admins' access must be among
    them, or the engine removes it and every retry by an admin gets 401/403."""
    rec = render_user_stack(stack)
    resources = [r.to_json() for r in rec.resources]
    access = admin_access(rec)
    objects = kubernetes_objects(rec)
    admins = {"dev": 1, "prod": 2}.get(stack)
    if admins is not None:  # one entry and one association per admin of the shipped stacks
        assert len(access) == 2 * admins
    assert access and len(objects) > 10
    # kept_if_delete_fails is pure: computed once per object, not once per pair.
    kept = {o.urn: kept_if_delete_fails(resources, o.urn) for o in objects}
    missing = sorted(
        {(o.name, a.name) for o in objects for a in access if a.urn not in kept[o.urn]}
    )
    assert missing == []


@pytest.mark.parametrize("stack", stacks(), ids=user_id)
def test_every_kubernetes_delete_precedes_every_access_removal(render_user_stack, stack):
    """Fails on the old code: the admin associations were deleted in the same antichain as
    five Kubernetes objects, and after the NodePools' (review F1)."""
    rec = render_user_stack(stack)
    step = delete_step([r.to_json() for r in rec.resources])
    last_kubernetes = max(step[o.urn] for o in kubernetes_objects(rec))
    first_access = min(step[a.urn] for a in admin_access(rec))
    assert last_kubernetes < first_access


def test_a_failed_delete_keeps_its_transitive_dependencies_only():
    """The engine's rule, on a small graph: when the pool's delete fails, what it depends on
    (through the provider, transitively) stays; an unrelated resource is still deleted."""
    res = [
        {"urn": "entry", "custom": True},
        {"urn": "assoc", "custom": True, "dependencies": ["entry"]},
        {"urn": "k8s", "custom": True, "dependencies": ["assoc"]},
        {"urn": "pool", "custom": True, "provider": "k8s::id"},
        {"urn": "other", "custom": True},
    ]
    assert kept_if_delete_fails(res, "pool") == {"k8s", "assoc", "entry"}
    assert delete_order(res) == [["pool"], ["k8s"], ["assoc"], ["entry", "other"]]


def test_cluster_protect_guards_state_and_capacity(render_stack):
    """Issue 21, point 8; fails on the old code, which protected only the KMS key, the cluster
    and the VPC: `pulumi destroy --skip-preview` drained every GPU node (the NodePools go
    first) and released the NAT addresses before failing at the cluster."""
    rec = render_stack("prod")
    protected = sorted((r.type, r.name) for r in rec.resources if r.protect)
    # One NodePool and EC2NodeClass per pool: prod's EFA pool has one layout, so its pair is
    # named after the pool (issue 19, branch capacity), not one pair per instance type.
    pools = ("general", "inference", "train-efa", "train-spot")
    assert protected == sorted(
        [
            ("aws:kms/key:Key", "platform-cluster-secrets"),
            ("eks:index:Cluster", "platform-cluster-eks"),
            ("aws:ec2/vpc:Vpc", "platform-network-vpc"),
            *[("aws:ec2/eip:Eip", f"platform-network-nat-{z}") for z in "abc"],
            *[
                ("aws:ec2/subnet:Subnet", f"platform-network-{k}-{z}")
                for k in ("private", "public")
                for z in "abc"
            ],
            *[("eks-gpu-platform:index:NodePool", f"platform-pool-{p}") for p in pools],
            *[("kubernetes:karpenter.sh/v1:NodePool", f"platform-pool-{p}-pool") for p in pools],
            *[
                ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", f"platform-pool-{p}-class")
                for p in pools
            ],
            ("kubernetes:karpenter.sh/v1alpha1:NodeOverlay", "platform-pool-train-efa-hugepages"),
            ("aws:ec2/placementGroup:PlacementGroup", "platform-pool-train-efa-pg"),
            ("aws:ec2/securityGroup:SecurityGroup", "platform-pool-train-efa-efa"),
            (
                "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
                "platform-pool-train-efa-efa-self-out",
            ),
            (
                "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
                "platform-pool-train-efa-efa-self-in",
            ),
        ]
    )
    # A refused NodePool delete keeps what it depends on: the controller, the system nodes,
    # the admins' access, the network and the cluster (so no GPU node is left unmanaged).
    resources = [r.to_json() for r in rec.resources]
    pool = next(r for r in rec.resources if r.name == "platform-pool-general-pool")
    kept = {r.name for r in rec.resources if r.urn in kept_if_delete_fails(resources, pool.urn)}
    assert {
        "platform-cluster-eks",
        "platform-cluster-system",
        "platform-cluster-admin-role-PlatformAdmin-cluster-admin",
        "platform-network-nat-a",
        "platform-network-vpc",
    } <= kept
    assert not [r for r in render_stack("dev").resources if r.protect]
