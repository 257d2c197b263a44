"""summary.md, the pull-request comment (issue 23, point 5): the Cluster section, the program's
warnings, and resources counted once. Two small stacks written here: a new VPC and an existing
one; independent of the shipped stacks."""

from pathlib import Path

import pytest

from eks_gpu_platform.offline.render import load_stack_file, markdown_summary, render

REPO = Path(__file__).resolve().parents[2]

NEW_VPC = """\
config:
  aws:region: eu-west-1
  eks-gpu-platform:cluster:
    name: gpu-mini
    kubernetesVersion: "1.35"
    endpointPublicAccess: false
    admins: [role/Ops]
  eks-gpu-platform:vpc:
    cidr: 10.9.0.0/16
    azCount: 3
    natGatewayPerAz: true
"""
EXISTING_VPC = """\
config:
  aws:region: eu-west-1
  eks-gpu-platform:cluster:
    name: gpu-mini
    endpointPublicAccess: true
    publicAccessCidrs: [192.0.2.0/24]
    admins: [role/Ops, arn:aws:iam::210987654321:role/Break-glass]
    viewers: [role/Audit]
  eks-gpu-platform:vpc:
    vpcId: vpc-0123456789abcdef0
    privateSubnetIds: [subnet-0aaaaaaaaaaaaaaaa, subnet-0bbbbbbbbbbbbbbbb]
"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("summary")
    out = {}
    for name, text in (("new-vpc", NEW_VPC), ("existing-vpc", EXISTING_VPC)):
        path = tmp / f"{name}.yaml"
        path.write_text(text)
        out[name] = render(REPO, load_stack_file(REPO, "mini", path))
    return out


def section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"#### {title}") + 2
    return lines[start : lines.index("", start)]


def test_cluster_section_of_a_new_vpc(rendered):
    """Fails on the old code: the comment said nothing of the cluster."""
    text = markdown_summary(rendered["new-vpc"], "mini")
    assert section(text, "Cluster") == [
        "- Kubernetes: 1.35 (`gpu-mini`)",
        "- Endpoint: private (in the VPC)",
        "- Admins: `arn:aws:iam::123456789012:role/Ops`",
        "- Viewers: none",
        "- EKS add-ons: coredns resolved at deploy for 1.35, eks-pod-identity-agent resolved at "
        "deploy for 1.35, kube-proxy resolved at deploy for 1.35, vpc-cni resolved at deploy for "
        "1.35",
        "- VPC: new, 10.9.0.0/16 in eu-west-1a, eu-west-1b, eu-west-1c",
        "- NAT: one gateway per zone (3)",
        "- System node group: m7i.xlarge, on-demand, 2-4 nodes (2 at creation), "
        "AL2023_x86_64_STANDARD",
    ]


def test_cluster_section_of_an_existing_vpc(rendered):
    text = markdown_summary(rendered["existing-vpc"], "mini")
    assert section(text, "Cluster") == [
        "- Kubernetes: 1.36 (`gpu-mini`)",
        "- Endpoint: public from 192.0.2.0/24 and private (in the VPC)",
        "- Admins: `arn:aws:iam::123456789012:role/Ops`, "
        "`arn:aws:iam::210987654321:role/Break-glass`",
        "- Viewers: `arn:aws:iam::123456789012:role/Audit`",
        "- EKS add-ons: coredns resolved at deploy for 1.36, eks-pod-identity-agent resolved at "
        "deploy for 1.36, kube-proxy resolved at deploy for 1.36, vpc-cni resolved at deploy for "
        "1.36",
        "- VPC: existing `vpc-0123456789abcdef0` (its routing and NAT are its own)",
        "- System node group: m7i.xlarge, on-demand, 2-4 nodes (2 at creation), "
        "AL2023_x86_64_STANDARD",
    ]


def refusals(text: str) -> list[str]:
    """The list under summary.md's "`pulumi up` refuses this stack" heading (issue 28)."""
    lines = text.splitlines()
    (start,) = [i + 2 for i, line in enumerate(lines) if line.startswith("**`pulumi up` refuses")]
    return lines[start : lines.index("", start)]


def test_the_programs_warnings_are_in_the_comment(rendered):
    """Fails on the old code: the warnings were only printed. Those `pulumi up` refuses are
    listed first, under their own heading, without the suffix (issue 28, point 11); the add-ons
    are refused no more (issue 28, point 1)."""
    text = markdown_summary(rendered["existing-vpc"], "mini")
    refused = refusals(text)
    assert len(refused) == 2
    assert (
        "- cluster.publicAccessCidrs: 192.0.2.0/24 is a documentation range (RFC 5737), not "
        "your network: pulumi-eks would wait minutes for an endpoint it cannot reach and every "
        "Kubernetes step would time out; list your operators' and CI runners' egress CIDRs"
    ) in refused
    # No spot-role warning: the stack creates the role the mocks' fresh account lacks (issue 28,
    # point 7); nothing else to warn of.
    assert "#### Warnings" not in text
    # The render passes the ones its capacity section already lists; none: no section.
    assert "#### Warnings" not in markdown_summary(rendered["existing-vpc"], "mini", warnings=[])


def test_each_resource_is_counted_once_under_its_nearest_component(rendered):
    """Fails on the old code, whose rows were nested totals (the platform counted every
    resource below it again) and skipped components; an access policy association,
    parented to its access entry, counts under the cluster component."""
    recording = rendered["existing-vpc"]
    text = markdown_summary(recording, "mini")
    lines = text.splitlines()
    table = lines[lines.index("| Component | Resources |") + 2 :]
    table = table[: table.index("")]
    assert table == [
        "| EksCluster platform-cluster | 22 |",
        "| GpuOperator platform-gpu-operator | 2 |",
        "| GpuPlatform platform | 5 |",
        "| Karpenter platform-karpenter | 33 |",
        "| Network platform-network | 2 |",
        "| NodePool platform-pool-general | 2 |",
        "| Stack | 1 |",
        f"| **Total** | {len(recording.resources)} |",
    ]
    assert len(recording.resources) == 67


def test_the_render_lists_each_warning_once(tmp_path):
    """The capacity section keeps its own warnings; the Warnings section has the others."""
    from eks_gpu_platform.offline.render import main

    stack = tmp_path / "big.yaml"
    stack.write_text(
        "config:\n"
        "  aws:region: eu-west-1\n"
        "  eks-gpu-platform:cluster:\n"
        "    name: gpu-mini\n"
        "    endpointPublicAccess: false\n"
        "    admins: [role/Ops]\n"
        "  eks-gpu-platform:nodePools:\n"
        "    - name: big\n"
        "      kind: gpu\n"
        "      instanceTypes: [p5.48xlarge]\n"
        "      capacityTypes: [on-demand]\n"
        "      limits: {gpus: 16}\n"
    )
    out = tmp_path / "out"
    args = ["--config-file", str(stack), "--project-dir", str(REPO), "--out", str(out)]
    assert main([*args, "--no-policy"]) == 0
    text = (out / "summary.md").read_text()
    line = (
        "- warning: pool 'big' offers h100 only on 8-GPU or larger nodes (p5.48xlarge): "
        "Karpenter charges the pool's limit a whole node, so a 1-GPU h100 pod uses 8 of it"
    )
    assert text.count("offers h100 only") == 1
    assert line in text.splitlines()[text.splitlines().index("#### Capacity plan") :]
    # No add-on refusal: the versions are resolved at deploy (issue 28, point 1).
    assert [w.split(":", 1)[0] for w in refusals(text)] == [
        "- cluster.admins",
    ]
    # No spot-role warning either: the stack creates the role (issue 28, point 7).
    assert "#### Warnings" not in text
