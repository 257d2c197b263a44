"""Issue 22 on the cluster: the vpc-cni add-on's own Pod Identity role (point 3), Session
Manager on nodes only when asked for, read-only viewers' access entries (point 1), the public
endpoint allowlist's breadth (point 8) and the required control-plane logs (Low list)."""

import json
import re

import pytest

from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.errors import SpecError

from .test_component import ACCOUNT, eks_cluster, find

ROLE = "aws:iam/role:Role"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"


def test_vpc_cni_has_its_own_pod_identity_role(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    role = find(rec, ROLE, "c-vpc-cni")
    attachment = find(rec, ATTACHMENT, "c-vpc-cni-AmazonEKS_CNI_Policy")
    addon = find(rec, "aws:eks/addon:Addon", "c-vpc-cni")
    assert role.inputs["name"] == "EKSVpcCniRole-gpu-dev"
    # EKS user guide pod-id-role.html ("Setting Conditions") and pod-id-abac.html (the tags).
    assert json.loads(role.inputs["assumeRolePolicy"]) == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowEksAuthToAssumeRoleForPodIdentity",
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {
                        "aws:SourceAccount": ACCOUNT,
                        "aws:RequestTag/eks-cluster-arn": (
                            f"arn:aws:eks:us-west-2:{ACCOUNT}:cluster/gpu-dev"
                        ),
                        "aws:RequestTag/kubernetes-namespace": "kube-system",
                        "aws:RequestTag/kubernetes-service-account": "aws-node",
                    }
                },
            }
        ],
    }
    assert attachment.inputs == {
        "role": "EKSVpcCniRole-gpu-dev",
        "policyArn": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    }
    assert addon.inputs["podIdentityAssociations"] == [
        {"roleArn": role.outputs["arn"], "serviceAccount": "aws-node"}
    ]
    assert attachment.urn in addon.dependencies


def test_no_node_role_carries_the_cni_or_ssm_policy_by_default(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    attached = sorted(
        a.inputs["policyArn"].rsplit("/", 1)[1]
        for a in rec.of_type(ATTACHMENT)
        if a.name.startswith("c-system-node-")
    )
    assert attached == ["AmazonEC2ContainerRegistryPullOnly", "AmazonEKSWorkerNodePolicy"]


def test_ssm_on_the_system_nodes_is_opt_in(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev", node_ssm_access=True))
    ssm = find(rec, ATTACHMENT, "c-system-node-AmazonSSMManagedInstanceCore")
    assert ssm.inputs == {
        "role": "EKSSystemNodeRole-gpu-dev",
        "policyArn": "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
    }


def test_viewers_get_a_read_only_access_entry(run_program):
    spec = ClusterSpec(
        name="gpu-dev",
        viewers=("role/GitHubActionsPreview-dev", "arn:aws:iam::444455556666:role/Auditor"),
    )
    rec = eks_cluster(run_program, spec)
    entries = {e.name: e.inputs["principalArn"] for e in rec.of_type(ENTRY)}
    assert entries == {
        "c-viewer-role-GitHubActionsPreview-dev": (
            f"arn:aws:iam::{ACCOUNT}:role/GitHubActionsPreview-dev"
        ),
        "c-viewer-444455556666-role-Auditor": "arn:aws:iam::444455556666:role/Auditor",
    }
    for name in entries:
        entry = find(rec, ENTRY, name)
        assert entry.inputs["type"] == "STANDARD"
        assoc = find(rec, ASSOCIATION, f"{name}-admin-view")
        assert assoc.parent == entry.urn
        assert assoc.inputs == {
            "clusterName": "gpu-dev",
            "principalArn": entry.inputs["principalArn"],
            "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy",
            "accessScope": {"type": "cluster"},
        }


def problems(**fields) -> str:
    with pytest.raises(SpecError) as err:
        ClusterSpec(name="gpu-dev", **fields)
    return str(err.value)


@pytest.mark.parametrize(
    ("cidrs", "message"),
    [
        (
            ("0.0.0.0/1",),
            "ClusterSpec.public_access_cidrs: ['0.0.0.0/1'] allow 2,147,483,648 IPv4 addresses, "
            "more than a /16 (65,536); list your egress ranges, keep the endpoint private "
            "(runners inside the VPC), or set allowBroadPublicAccess: true",
        ),
        (
            ("0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3"),
            "ClusterSpec.public_access_cidrs: ['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3'] allow "
            "3,758,096,384 IPv4 addresses, more than a /16 (65,536); list your egress ranges, "
            "keep the endpoint private (runners inside the VPC), or set "
            "allowBroadPublicAccess: true",
        ),
        (
            ("52.94.0.0/17", "52.95.0.0/17"),
            "ClusterSpec.public_access_cidrs: ['52.94.0.0/17', '52.95.0.0/17'] allow 65,536 "
            "IPv4 addresses"
            "",
        ),
        (
            ("2001:db8::/47",),
            "ClusterSpec.public_access_cidrs: ['2001:db8::/47'] allow "
            "2,417,851,639,229,258,349,412,352 IPv6 addresses, more than a /48 "
            "(1,208,925,819,614,629,174,706,176); list your egress ranges, keep the endpoint "
            "private (runners inside the VPC), or set allowBroadPublicAccess: true",
        ),
    ],
    ids=["half-of-ipv4", "seven-eighths", "two-17s-are-one-16", "ipv6-47"],
)
def test_public_access_broader_than_the_bound_is_refused(cidrs, message):
    if message.endswith("addresses"):  # exactly a /16's worth: accepted
        ClusterSpec(name="gpu-dev", endpoint_public_access=True, public_access_cidrs=cidrs)
        return
    assert problems(endpoint_public_access=True, public_access_cidrs=cidrs) == message


def test_broad_public_access_needs_the_explicit_override():
    spec = ClusterSpec(
        name="gpu-dev",
        endpoint_public_access=True,
        public_access_cidrs=("0.0.0.0/1",),
        allow_broad_public_access=True,
    )
    assert spec.public_access_cidrs == ("0.0.0.0/1",)
    # The override never lets the whole internet in.
    assert problems(
        endpoint_public_access=True,
        public_access_cidrs=("0.0.0.0/0",),
        allow_broad_public_access=True,
    ) == (
        "ClusterSpec.public_access_cidrs[0]: '0.0.0.0/0' opens the API server to the internet; "
        "list specific CIDRs"
    )


@pytest.mark.parametrize(
    ("log_types", "missing"),
    [
        ((), "audit, authenticator"),
        (("api",), "audit, authenticator"),
        (("audit",), "authenticator"),
    ],
)
def test_audit_and_authenticator_logs_are_required(log_types, missing):
    assert problems(log_types=log_types) == (
        f"ClusterSpec.log_types: {list(log_types)!r} leaves out {missing}; the control plane's "
        "audit and authenticator logs are required (who did what, and who authenticated as "
        "whom)"
    )


def test_viewers_are_iam_principals_listed_once_and_not_admins():
    assert problems(viewers=("role/*",)) == (
        "ClusterSpec.viewers[0]: 'role/*' is not an IAM role or user; expected an ARN such as "
        "'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME'"
    )
    message = problems(admins=("role/Ops",), viewers=("role/ops",))
    assert message == (
        "ClusterSpec.viewers[0]: 'role/ops' is also in admins; a principal has one access "
        "entry, list it in one of the two"
    )
    assert re.search(
        r"names the same IAM principal as viewers\[0\]", problems(viewers=("role/A", "role/path/A"))
    )
