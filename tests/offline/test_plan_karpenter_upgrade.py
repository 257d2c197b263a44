"""The plan's headline for the Karpenter 1.14 -> 1.15 upgrade (issue 31, point 1): crafted base
and new renders, exact text. The expected words are written from the releases at their tags
(docs/karpenter-upgrade.md), not taken from the code under test."""

from eks_gpu_platform.offline.plan import plan
from eks_gpu_platform.offline.plan_report import markdown

RELEASE = "kubernetes:helm.sh/v3:Release"
KARPENTER = "oci://public.ecr.aws/karpenter/karpenter"


def release(name, chart, version):
    typ = RELEASE
    inputs = {"chart": chart, "version": version, "namespace": "kube-system"}
    return {"type": typ, "name": name, "urn": f"urn:pulumi:s::p::{typ}::{name}", "inputs": inputs}


def text(old, new):
    return markdown(plan(old, new), new, old)


UPGRADE = (
    "- **Karpenter 1.14.1 -> 1.15.1** (`kubernetes:helm.sh/v3:Release platform-karpenter-chart`): "
    "a planned upgrade (docs/karpenter-upgrade.md): the `karpenter-crd` release goes first "
    "(NodePool `consolidateAfter` becomes optional, defaulted to `0s`; the `Unhealthy` "
    "disruption reason; EC2NodeClass `enclaveOptions` and an open `kubelet`), then the "
    "controller, whose IAM policy gains `ec2:RebootInstances` (used only with the alpha "
    "`rebootForRepair` gate, off). No node rolls from the upgrade itself: the EC2NodeClass hash "
    "version moves v5 -> v6 and Karpenter re-hashes the NodeClaims instead of drifting them."
)


def test_the_1_14_to_1_15_upgrade_heads_the_plan_with_its_steps():
    """Fails on the old code, whose plan listed the version change without a headline."""
    old = [release("platform-karpenter-chart", KARPENTER, "1.14.1")]
    new = [release("platform-karpenter-chart", KARPENTER, "1.15.1")]
    assert text(old, new) == (
        "# Plan\n"
        "\n"
        "0 to create, 1 to update, 0 to replace, 0 to delete, 0 unchanged\n"
        "\n"
        "## Destructive and disruptive changes\n"
        "\n"
        f"{UPGRADE}\n"
        "\n"
        "## Changes\n"
        "\n"
        "- update `kubernetes:helm.sh/v3:Release platform-karpenter-chart`\n"
        "  - `version`: `1.14.1` -> `1.15.1`\n"
    )


def test_a_patch_bump_or_another_chart_says_nothing_more():
    for chart, before, after in (
        (KARPENTER, "1.15.0", "1.15.1"),
        ("oci://public.ecr.aws/karpenter/karpenter-crd", "1.14.1", "1.15.1"),
    ):
        old = [release("platform-karpenter-chart", chart, before)]
        new = [release("platform-karpenter-chart", chart, after)]
        assert "## Destructive" not in text(old, new)
