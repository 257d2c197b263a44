"""The break-glass role (issue 22 point 10): ``cluster.breakGlassRole`` gets a cluster-admin
access entry only when set; it must be an IAM role, and not a standing admin."""

import pytest
from addon_pins import ADDON_VERSIONS

from eks_gpu_platform.cluster.args import EksClusterArgs
from eks_gpu_platform.cluster.component import EksCluster
from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.errors import SpecError

ACCOUNT = "111122223333"
SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
# The mocks' deploying identity: it must be an admin (no creator bootstrap entry: issue 21).
DEPLOYER = "user/offline-render"


def run(run_program, **spec):
    def program():
        EksCluster(
            "c",
            EksClusterArgs(
                # `up` needs a version for every add-on (issue 21, point 5).
                spec=ClusterSpec(name="gpu-prod", addon_versions=ADDON_VERSIONS, **spec),
                vpc_id="vpc-0123456789abcdef0",
                private_subnet_ids=SUBNETS,
            ),
        )

    return run_program(program, account_id=ACCOUNT)


def test_break_glass_entry_with_cluster_admin(run_program):
    rec = run(
        run_program, admins=("role/PlatformAdmin", DEPLOYER), break_glass_role="role/BreakGlass"
    )
    (entry,) = [r for r in rec.of_type(ENTRY) if r.name == "c-break-glass"]
    assert entry.inputs == {
        "clusterName": "gpu-prod",
        "principalArn": "arn:aws:iam::111122223333:role/BreakGlass",
        "type": "STANDARD",
        # Tagged like the admins' entries, so a later run knows it is this stack's (issue 21).
        "tags": {"eks-gpu-platform/cluster": "gpu-prod"},
    }
    (association,) = [
        r for r in rec.of_type(ASSOCIATION) if r.name == "c-break-glass-cluster-admin"
    ]
    assert association.inputs == {
        "clusterName": "gpu-prod",
        "principalArn": "arn:aws:iam::111122223333:role/BreakGlass",
        "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
        "accessScope": {"type": "cluster"},
    }
    assert association.parent == entry.urn


def test_no_break_glass_entry_unless_configured(run_program):
    rec = run(run_program, admins=("role/PlatformAdmin", DEPLOYER))
    assert [r.name for r in rec.of_type(ENTRY) if "break-glass" in r.name] == []


def test_a_full_arn_in_another_partition(run_program):
    rec = run(run_program, break_glass_role="arn:aws-us-gov:iam::444455556666:role/ops/BreakGlass")
    (entry,) = [r for r in rec.of_type(ENTRY) if r.name == "c-break-glass"]
    assert entry.inputs["principalArn"] == "arn:aws-us-gov:iam::444455556666:role/ops/BreakGlass"


@pytest.mark.parametrize(
    ("admins", "role", "message"),
    [
        (
            (),
            "user/alice",
            "ClusterSpec.break_glass_role: 'user/alice' is not an IAM role; expected an ARN such "
            "as 'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME' (a role, so that its "
            "trust policy can require MFA)",
        ),
        (
            (),
            "arn:aws:iam::111122223333:root",
            "ClusterSpec.break_glass_role: 'arn:aws:iam::111122223333:root' is not an IAM role;",
        ),
        (
            ("role/PlatformAdmin", "role/ops/BreakGlass"),
            "role/breakglass",
            "ClusterSpec.break_glass_role: 'role/breakglass' is also admins[1] "
            "'role/ops/BreakGlass': a break-glass role is not a standing admin; remove it from "
            "admins",
        ),
    ],
    ids=["user", "root", "also-admin"],
)
def test_break_glass_role_is_validated(admins, role, message):
    with pytest.raises(SpecError) as err:
        ClusterSpec(name="gpu-prod", admins=admins, break_glass_role=role)
    assert str(err.value).startswith(message)


def test_break_glass_role_is_not_also_a_viewer():
    # cluster.viewers (read-only access entries) and breakGlassRole each create an access entry
    # for their principal; EKS takes one per principal, so the two keys may not share one.
    with pytest.raises(SpecError) as err:
        ClusterSpec(
            name="gpu-prod",
            viewers=("role/CiPreview", "role/ops/BreakGlass"),
            break_glass_role="role/breakglass",
        )
    assert err.value.lines == [
        "ClusterSpec.break_glass_role: 'role/breakglass' is also viewers[1] "
        "'role/ops/BreakGlass': a principal has one access entry; remove it from "
        "viewers"
    ]


def test_config_error_names_the_config_key():
    from eks_gpu_platform.spec import load_spec

    with pytest.raises(SpecError) as err:
        load_spec(ClusterSpec, {"name": "x", "breakGlassRole": "user/a"}, "cluster")
    assert err.value.lines == [
        "cluster.breakGlassRole: 'user/a' is not an IAM role; expected an ARN such as "
        "'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME' (a role, so that its trust "
        "policy can require MFA)"
    ]
