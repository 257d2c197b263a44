"""The offline plan (issue 11): ``--compare DIR`` against a previous render."""

import json
from pathlib import Path

import pytest
import yaml
from render_cache import shared_render
from stack_files import fixture_stack_path

from eks_gpu_platform.offline.plan import changed_keys, plan, write_plan
from eks_gpu_platform.offline.plan_replace import delete_before_replace
from eks_gpu_platform.offline.plan_state import registrations
from eks_gpu_platform.offline.plan_waits import gate, minutes
from eks_gpu_platform.offline.render import load_stack_file, write_state

REPO = Path(__file__).resolve().parents[2]
NODEGROUP = "aws:eks/nodeGroup:NodeGroup"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def render_to(tmp: Path, name: str, change=None) -> Path:
    """Render the fixture dev stack (its file changed by ``change``) into ``tmp/name``."""
    document = yaml.safe_load(fixture_stack_path("dev").read_text())
    if change:
        change(document["config"])
    path = tmp / f"{name}.yaml"
    # The file's key order kept: the unchanged stack renders from the fixture stack's inputs.
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    out = tmp / name
    write_state(shared_render(REPO, load_stack_file(REPO, "dev", path)), out)
    return out


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return render_to(tmp_path_factory.mktemp("plan"), "base")


def by_type(rows, typ):
    return [r for r in rows if r["type"] == typ]


def test_same_render_plans_no_change(base):
    rows = write_plan(base, base)
    assert rows and {r["action"] for r in rows} == {"same"}
    # A plan without changes is one line (issue 23, point 4: it carried the whole teardown).
    assert (
        base / "plan.md"
    ).read_text() == f"# Plan\n\nNo changes ({len(rows)} resources unchanged).\n"


def test_system_instance_types_replace_the_group_first_and_leave_the_pools(base, tmp_path):
    """The issue's check: the node group is replaced, created before the old one is deleted
    (no explicit nodeGroupName), and no NodePool changes."""

    def change(config):
        config["eks-gpu-platform:systemNodeGroup"]["instanceTypes"] = ["m7i.xlarge"]

    new = render_to(tmp_path, "new", change)
    rows = write_plan(base, new)
    (group,) = by_type(rows, NODEGROUP)
    assert group["action"] == "replace"
    assert group["changed"] == ["instanceTypes"]
    assert group["deleteBeforeReplace"] is False
    pools = by_type(rows, NODEPOOL)
    assert pools and {p["action"] for p in pools} == {"same"}
    assert [r["urn"].rsplit("::", 1)[1] for r in rows if r["action"] != "same"] == [
        "platform-cluster-system"
    ]
    written = json.loads((new / "plan.json").read_text())
    assert written["changes"] == rows
    md = (new / "plan.md").read_text()
    assert (
        "- replace `aws:eks/nodeGroup:NodeGroup platform-cluster-system`: creates the new one "
        "before deleting the old one; **rolls nodes**\n"
        '  - `instanceTypes`: `["m7i.large"]` -> `["m7i.xlarge"]`\n'
    ) in md
    assert (
        "- **System nodes roll** (node group replaced (instanceTypes): "
        "`aws:eks/nodeGroup:NodeGroup platform-cluster-system`: `instanceTypes`): the managed "
        "node group replaces every system node, rescheduling the controllers on them.\n"
    ) in md
    assert "Teardown order" not in md  # nothing is deleted (issue 23, point 4)


def test_stack_tag_edit_rolls_no_node(base, tmp_path):
    """Issue 11, item 6 (fails on the old code: the stack tags were in every EC2NodeClass's
    spec.tags, which Karpenter hashes for drift, so every GPU node was replaced)."""

    def change(config):
        config.setdefault("eks-gpu-platform:tags", {})["cost-center"] = "1234"

    rows = write_plan(base, render_to(tmp_path, "tags", change))
    classes, pools = by_type(rows, NODECLASS), by_type(rows, NODEPOOL)
    assert classes and {r["action"] for r in classes + pools} == {"same"}
    assert not [r for r in rows if r.get("rollsNodes")]


def test_node_class_change_is_marked_as_rolling_nodes(base, tmp_path):
    def change(config):
        config["eks-gpu-platform:nodePools"][0]["rootVolume"] = {"sizeGib": 777}

    rows = write_plan(base, render_to(tmp_path, "volume", change))
    rolling = [r for r in rows if r.get("rollsNodes")]
    assert [(r["type"], r["action"], r["changed"]) for r in rolling] == [
        (NODECLASS, "update", ["spec"])
    ]
    assert "**rolls nodes**" in (tmp_path / "volume" / "plan.md").read_text()


def test_explicit_autoname_means_delete_before_replace():
    (reg,) = registrations(
        [{"type": NODEGROUP, "name": "g", "urn": "u", "inputs": {"nodeGroupName": "x"}}]
    )
    assert delete_before_replace(reg) is True
    (reg,) = registrations(
        [{"type": NODEGROUP, "name": "g", "urn": "u", "inputs": {"nodeGroupNamePrefix": "x-"}}]
    )
    assert delete_before_replace(reg) is False


def test_changed_keys_respect_ignore_changes():
    old = {"scalingConfig": {"minSize": 2, "desiredSize": 2}, "tags": {"a": "1"}}
    new = {"scalingConfig": {"minSize": 2, "desiredSize": 5}, "tags": {"a": "2"}}
    assert changed_keys(old, new, ["scalingConfig.desiredSize"]) == ["tags"]
    assert changed_keys(old, new, []) == ["scalingConfig", "tags"]


def test_create_delete_and_alias():
    def res(urn, name, **kw):
        return {"type": "aws:eks/accessEntry:AccessEntry", "name": name, "urn": urn, **kw}

    old = [res("urn:pulumi:s::p::aws:eks/accessEntry:AccessEntry::old", "old", inputs={"a": 1})]
    new = [
        res(
            "urn:pulumi:s::p::aws:eks/accessEntry:AccessEntry::new",
            "new",
            inputs={"a": 1},
            aliases=[{"name": "old"}],
        ),
        res("urn:pulumi:s::p::aws:eks/accessEntry:AccessEntry::more", "more", inputs={"b": 2}),
    ]
    rows = plan(old, new)
    assert [(r["urn"].rsplit("::", 1)[1], r["action"], r["changed"]) for r in rows] == [
        ("more", "create", ["b"]),
        ("new", "same", []),
    ]
    assert plan(old, [])[0]["action"] == "delete"


def test_pulumi_eks_access_entries_match_their_aliased_successors():
    """A render from before the move keeps the admins in eks.Cluster's accessEntries; the plan
    expands them as pulumi-eks does and matches the new entry through its alias (item 2)."""
    comp = "urn:pulumi:s::p::eks-gpu-platform:index:EksCluster::c"
    eks = "urn:pulumi:s::p::eks-gpu-platform:index:EksCluster$eks:index:Cluster::c-eks"
    arn = "arn:aws:iam::111122223333:role/A"
    entry = {"principalArn": arn, "type": "STANDARD", "accessPolicies": {"cluster-admin": {}}}
    base = [
        {"type": "eks-gpu-platform:index:EksCluster", "name": "c", "urn": comp, "custom": False},
        {
            "type": "eks:index:Cluster",
            "name": "c-eks",
            "urn": eks,
            "parent": comp,
            "custom": False,
            "inputs": {"name": "gpu", "accessEntries": {"admin-0": entry}},
        },
    ]
    new_entry = "urn:pulumi:s::p::eks-gpu-platform:index:EksCluster$aws:eks/accessEntry:AccessEntry"
    new = [
        base[0],
        {**base[1], "inputs": {"name": "gpu", "accessEntries": {}}},
        {
            "type": "aws:eks/accessEntry:AccessEntry",
            "name": "c-admin-role-A",
            "urn": f"{new_entry}::c-admin-role-A",
            "parent": comp,
            "inputs": {"clusterName": "gpu", "principalArn": arn, "type": "STANDARD"},
            "aliases": [{"name": "c-eks-admin-0", "parentUrn": eks}],
        },
    ]
    rows = {r["urn"].rsplit("::", 1)[1]: r for r in plan(base, new)}
    assert rows["c-admin-role-A"]["action"] == "same"
    assert rows["c-admin-role-A"]["aliasOf"].endswith("::c-eks-admin-0")
    assert rows["c-eks-admin-0-cluster-admin"]["action"] == "delete"


def minor(version):
    def change(config):
        config["eks-gpu-platform:cluster"]["kubernetesVersion"] = version

    return change


def test_a_minor_upgrade_marks_every_alias_node_class_as_rolling(tmp_path):
    """Issue 21, point 4; fails on the old code, whose plan said nothing rolls on a minor
    upgrade while Karpenter drifts every node of an alias-based EC2NodeClass."""
    old = render_to(tmp_path, "old", minor("1.35"))
    new = render_to(tmp_path, "new", minor("1.36"))
    rows = write_plan(old, new)
    classes = by_type(rows, NODECLASS)
    assert sorted(r["urn"].rsplit("::", 1)[1] for r in classes) == [
        "platform-pool-general-class",
        "platform-pool-gpu-spot-class",
        "platform-pool-inference-class",
        "platform-pool-notebooks-class",
    ]
    assert {(r["action"], r["rollsNodes"], r["minorDrift"]) for r in classes} == {
        ("same", True, "Kubernetes 1.35 -> 1.36: al2023@v20260903 resolves for 1.36")
    }
    # The add-ons' versions move with the minor: each is looked up for the new minor at deploy
    # (issue 28, point 1), and the plan names the change.
    addons = {
        r["urn"].rsplit("::", 1)[1]: r.get("version") for r in by_type(rows, "aws:eks/addon:Addon")
    }
    moved = ["resolved at deploy for 1.35", "resolved at deploy for 1.36"]
    assert addons == {
        "platform-cluster-coredns": moved,
        "platform-cluster-eks-pod-identity-agent": moved,
        "platform-cluster-kube-proxy": moved,
        "platform-cluster-vpc-cni": moved,
    }
    text = (new / "plan.md").read_text()
    assert (
        "- same `kubernetes:karpenter.k8s.aws/v1:EC2NodeClass platform-pool-general-class`: "
        "**rolls nodes**; Kubernetes 1.35 -> 1.36: al2023@v20260903 resolves for 1.36\n"
    ) in text
    # The upgrade's chain is the change's wait (issue 21, point 6), each step its recorded
    # update timeout (issue 28, point 6; fails on the old code's provider defaults, 160): the
    # control plane's default 60; the DaemonSet add-ons 45 (ten waves of 10% of the nodes, 4
    # minutes each, plus 5); the dev system group's roll, maxSize 3 nodes one at a time, 15
    # (phases) + 3 * (15 drain + 1 cordon + 4 replacement) = 75; coredns's default 20.
    document = json.loads((new / "plan.json").read_text())
    assert document["waits"] == [
        {
            "resource": "eks:index:Cluster platform-cluster-eks",
            "minutes": 200,
            "why": "Kubernetes minor upgrade: control plane 60m, add-ons 45m, system nodes 75m, "
            "coredns 20m, one after another",
        }
    ]
    assert document["longestWaitMinutes"] == 200


def test_removing_a_pool_waits_for_its_drain_and_ci_refuses_it(base, tmp_path):
    """Issue 21, point 6; fails on the old code (no waits in the plan, nothing to gate on):
    the notebooks pool (48h grace) cannot be removed within a CI job."""

    def change(config):
        config["eks-gpu-platform:nodePools"] = [
            p for p in config["eks-gpu-platform:nodePools"] if p["name"] != "notebooks"
        ]
        queues = config["eks-gpu-platform:scheduler"]["queues"]
        config["eks-gpu-platform:scheduler"]["queues"] = [
            q for q in queues if q["name"] != "research-notebooks"
        ]

    new = render_to(tmp_path, "removed", change)
    write_plan(base, new)
    document = json.loads((new / "plan.json").read_text())
    assert document["waits"] == [
        {
            "resource": f"{kind} platform-pool-notebooks-{suffix}",
            "minutes": 2900,
            "why": "delete: waits for its nodes to drain (up to 48h20m)",
        }
        for kind, suffix in ((NODECLASS, "class"), (NODEPOOL, "pool"))
    ]
    assert document["longestWaitMinutes"] == 2900
    assert gate(new / "plan.json", 300) == [
        "this change can keep `pulumi up` waiting 2900 minutes, more than the CI job's "
        "300-minute budget (its timeout and its AWS session would end first, leaving pending "
        "operations in the state):",
        f"  {NODECLASS} platform-pool-notebooks-class: 2900 minutes (delete: waits for its nodes "
        "to drain (up to 48h20m))",
        f"  {NODEPOOL} platform-pool-notebooks-pool: 2900 minutes (delete: waits for its nodes "
        "to drain (up to 48h20m))",
        'run this `pulumi up` by hand with credentials that last longer (README, "Upgrades and '
        'tear-down")',
    ]
    assert gate(new / "plan.json", 3000) == []
    assert "## Waits" in (new / "plan.md").read_text()


@pytest.mark.parametrize(
    ("duration", "expected"), [("48h20m", 2900), ("4h20m", 260), ("20m", 20), ("1h", 60), (None, 0)]
)
def test_minutes(duration, expected):
    assert minutes(duration) == expected


def test_the_plan_names_each_addon_version(base, tmp_path):
    """Issue 28, point 1: offline, an unpinned add-on shows as resolved at deploy for the
    cluster's minor; pinning one is an in-place version change the plan names."""

    def pin(config):
        config["eks-gpu-platform:cluster"]["addonVersions"] = {"vpc-cni": "v1.20.1-eksbuild.3"}

    new = render_to(tmp_path, "pinned", pin)
    rows = write_plan(base, new)
    (row,) = [r for r in by_type(rows, "aws:eks/addon:Addon") if r["action"] != "same"]
    assert row["version"] == ["resolved at deploy for 1.36", "v1.20.1-eksbuild.3"]
    assert (
        "- update `aws:eks/addon:Addon platform-cluster-vpc-cni`: version resolved at deploy "
        "for 1.36 -> v1.20.1-eksbuild.3\n"
    ) in (new / "plan.md").read_text()


def test_a_new_stack_plans_each_addon_at_its_version(tmp_path):
    """Against a render without the cluster (a new stack), each add-on's create row names its
    version (issue 28, point 1)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "resources.json").write_text("[]\n")
    new = render_to(tmp_path, "new")
    write_plan(empty, new)
    text = (new / "plan.md").read_text()
    for addon in ("coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni"):
        assert (
            f"- create `aws:eks/addon:Addon platform-cluster-{addon}`: version resolved at "
            "deploy for 1.36\n"
        ) in text


def test_an_unpinned_addon_on_the_same_minor_keeps_its_installed_version(base, tmp_path):
    """A pin removed on the same minor: offline the installed version is unknown, and `up`
    keeps it (issue 28, point 1), which the plan says instead of a version move."""

    def pinned(config):
        config["eks-gpu-platform:cluster"]["addonVersions"] = {"kube-proxy": "v1.36.0-eksbuild.3"}

    old = render_to(tmp_path, "pinned", pinned)
    new = render_to(tmp_path, "unpinned")
    rows = write_plan(old, new)
    (row,) = [r for r in by_type(rows, "aws:eks/addon:Addon") if r["action"] != "same"]
    assert row["versionKept"] is True
    assert (
        "- update `aws:eks/addon:Addon platform-cluster-kube-proxy`: version resolved at deploy "
        "for 1.36: on the same minor `pulumi up` keeps the installed one\n"
    ) in (new / "plan.md").read_text()
