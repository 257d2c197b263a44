"""plan.md for a reviewer (issue 23, point 4): crafted base and new renders, exact text.

Independent of the shipped stacks: every render here is a handful of resources written below.
"""

import base64
import json

from eks_gpu_platform.offline.fields import field_changes, show
from eks_gpu_platform.offline.plan import plan
from eks_gpu_platform.offline.plan_report import markdown

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def res(typ, name, inputs, **options):
    urn = f"urn:pulumi:s::p::{typ}::{name}"
    return {"type": typ, "name": name, "urn": urn, "inputs": inputs, **options}


def nodepool(gpus=8, template=None, **options):
    spec = {"limits": {"nvidia.com/gpu": gpus}, "template": template or {"spec": {"a": 1}}}
    inputs = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"}}
    return res(NODEPOOL, "pool-gpu", {**inputs, "spec": spec}, **options)


def nodeclass(alias="al2023@v20260801"):
    inputs = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "gpu"},
        "spec": {"amiSelectorTerms": [{"alias": alias}], "role": "node"},
    }
    return res(NODECLASS, "pool-gpu-class", inputs)


def text(old, new):
    return markdown(plan(old, new), new, old)


def test_no_changes_is_one_line():
    resources = [nodepool(), nodeclass()]
    assert text(resources, resources) == "# Plan\n\nNo changes (2 resources unchanged).\n"


def test_a_field_change_shows_its_path_and_both_values():
    """Fails on the old code, which named only the top-level input (`spec`)."""
    assert text([nodepool(8)], [nodepool(16)]) == (
        "# Plan\n"
        "\n"
        "0 to create, 1 to update, 0 to replace, 0 to delete, 0 unchanged\n"
        "\n"
        "## Changes\n"
        "\n"
        "- update `kubernetes:karpenter.sh/v1:NodePool pool-gpu`\n"
        "  - `spec.limits.nvidia.com/gpu`: `8` -> `16`\n"
    )


def test_secrets_stay_masked_on_both_sides():
    """A value made secret is not shown in the clear either; a secret nested in a changed
    mapping stays masked."""
    old = [res("aws:ssm/parameter:Parameter", "p", {"value": "hunter2", "tags": {"a": "1"}})]
    new = [
        res(
            "aws:ssm/parameter:Parameter",
            "p",
            {"value": "[secret]", "tags": {"a": "1", "token": "[secret]"}},
        )
    ]
    assert text(old, new) == (
        "# Plan\n"
        "\n"
        "0 to create, 1 to update, 0 to replace, 0 to delete, 0 unchanged\n"
        "\n"
        "## Changes\n"
        "\n"
        "- update `aws:ssm/parameter:Parameter p`\n"
        "  - `tags.token`: `[secret]` -> `[secret]`\n"
        "  - `value`: `[secret]` -> `[secret]`\n"
    )
    assert "hunter2" not in json.dumps(plan(old, new))


def test_cluster_replace_heads_the_plan_with_its_cost():
    """Fails on the old code: a cluster replacement was one table row among the others. A new
    name replaces the cluster (terraform-provider-aws internal/service/eks/cluster.go: `name`
    is ForceNew)."""

    def cluster(name):
        inputs = {"name": name, "vpcId": "vpc-1", "version": "1.36"}
        return res("eks:index:Cluster", "cluster-eks", inputs, custom=False, protect=True)

    old, new = [cluster("gpu-prod"), nodepool()], [cluster("gpu-prod2"), nodepool()]
    assert text(old, new) == (
        "# Plan\n"
        "\n"
        "0 to create, 0 to update, 1 to replace, 0 to delete, 1 unchanged\n"
        "\n"
        "## Destructive and disruptive changes\n"
        "\n"
        "- **EKS cluster `gpu-prod2` replaced** (`name` changed): "
        "`eks:index:Cluster cluster-eks`; the cluster and everything on it is recreated: a new "
        "control plane (new endpoint and certificate authority), every node, add-on, Helm "
        "release and workload; protected: `pulumi up` refuses this until `protect` is lifted.\n"
        "\n"
        "## Changes\n"
        "\n"
        "- replace `eks:index:Cluster cluster-eks`: creates the new one before deleting the "
        "old one\n"
        "  - `name`: `gpu-prod` -> `gpu-prod2`\n"
    )


def test_a_new_vpc_id_is_refused_not_a_cluster_replacement():
    """pulumi-eks gives `vpcId` to the cluster security group; the aws:eks/cluster:Cluster's
    `vpcConfig.subnetIds` and `securityGroupIds` are updated in place (not ForceNew in
    terraform-provider-aws internal/service/eks/cluster.go), and EKS takes only subnets of the
    original VPC (EKS User Guide, network-reqs.adoc). Fails on the old code, which planned a
    cluster replacement."""

    def cluster(vpc):
        inputs = {"name": "gpu-prod", "vpcId": vpc, "version": "1.36"}
        return res("eks:index:Cluster", "cluster-eks", inputs, custom=False, protect=True)

    old, new = [cluster("vpc-1"), nodepool()], [cluster("vpc-2"), nodepool()]
    assert text(old, new) == (
        "# Plan\n"
        "\n"
        "0 to create, 1 to update, 0 to replace, 0 to delete, 1 unchanged\n"
        "\n"
        "## Destructive and disruptive changes\n"
        "\n"
        "- **EKS cluster `gpu-prod` cannot take this change** (`vpcId` changed): "
        "`eks:index:Cluster cluster-eks`; EKS keeps a cluster in the VPC it was created in, so "
        "`pulumi up` fails at the cluster's update (its subnets must stay in the original VPC); "
        "to move, create a new cluster (a new `cluster.name`) and move the workloads.\n"
        "\n"
        "## Changes\n"
        "\n"
        "- update `eks:index:Cluster cluster-eks`: **refused by EKS** (`vpcId`)\n"
        "  - `vpcId`: `vpc-1` -> `vpc-2`\n"
    )


def test_a_new_encryption_key_is_refused_not_a_cluster_replacement():
    """`encryption_config` forces a new cluster only when removed (cluster.go CustomizeDiff
    ForceNewIfChange); the update associates a key only with a cluster that has none. Fails on
    the old code, which planned a cluster replacement."""

    def cluster(key):
        inputs = {"name": "gpu-prod", "encryptionConfigKeyArn": key}
        return res("eks:index:Cluster", "cluster-eks", inputs, custom=False)

    rows = plan([cluster("arn:k1")], [cluster("arn:k2")])
    assert [(r["action"], r.get("refused")) for r in rows] == [
        ("update", {"encryptionConfigKeyArn": []})
    ]
    assert text([cluster("arn:k1")], [cluster("arn:k2")]).splitlines()[6] == (
        "- **EKS cluster `gpu-prod` cannot take this change** (`encryptionConfigKeyArn` "
        "changed): `eks:index:Cluster cluster-eks`; EKS cannot change a cluster's secrets "
        "encryption key, and the provider only associates a key with a cluster that has none: "
        "the update never applies it."
    )


def test_vpc_replace_heads_the_plan():
    def vpc(cidr):
        return res("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": cidr})

    lines = text([vpc("10.0.0.0/16")], [vpc("10.1.0.0/16")]).splitlines()
    assert lines[4:7] == [
        "## Destructive and disruptive changes",
        "",
        "- **VPC replaced** (`cidrBlock` changed): `aws:ec2/vpc:Vpc vpc`; an EKS cluster in "
        "the network cannot move with it: EKS keeps a cluster in the VPC and the Availability "
        "Zones it was created in, so the cluster's update fails and the old network stays in "
        "use.",
    ]


def test_pools_rolling_for_one_reason_are_one_bullet():
    """Two pools drifting for the same AMI change: one headline bullet naming both."""

    def klass(pool, alias):
        reg = nodeclass(alias)
        reg["inputs"] = {**reg["inputs"], "metadata": {"name": pool}}
        return {**reg, "name": f"pool-{pool}-class", "urn": reg["urn"].replace("gpu", pool)}

    old = [klass("a", "al2023@v1"), klass("b", "al2023@v1")]
    new = [klass("a", "al2023@v2"), klass("b", "al2023@v2")]
    assert text(old, new).splitlines()[6] == (
        "- **Nodes roll** in pools `a`, `b` (EC2NodeClass: AMI change: "
        "`spec.amiSelectorTerms[0].alias`): Karpenter drifts every node of the pool: each is "
        "cordoned, drained and replaced, within the pool's disruption budgets."
    )


def test_a_node_roll_names_the_pool_and_why():
    """Fails on the old code: a roll was a note in the table, without the pool or the field."""
    old, new = [nodeclass("al2023@v20260801")], [nodeclass("al2023@v20260903")]
    assert text(old, new) == (
        "# Plan\n"
        "\n"
        "0 to create, 1 to update, 0 to replace, 0 to delete, 0 unchanged\n"
        "\n"
        "## Destructive and disruptive changes\n"
        "\n"
        "- **Nodes roll** in pool `gpu` (EC2NodeClass: AMI change: "
        "`spec.amiSelectorTerms[0].alias`): Karpenter drifts every node of the pool: each is "
        "cordoned, drained and replaced, within the pool's disruption budgets.\n"
        "\n"
        "## Changes\n"
        "\n"
        "- update `kubernetes:karpenter.k8s.aws/v1:EC2NodeClass pool-gpu-class`: **rolls nodes**\n"
        "  - `spec.amiSelectorTerms[0].alias`: `al2023@v20260801` -> `al2023@v20260903`\n"
    )


def test_a_pool_delete_heads_the_plan_with_its_wait_and_teardown():
    """Fails on the old code: the delete was a row, and the teardown order was the whole
    stack's (here the kept queue's too)."""
    klass = nodeclass()
    pool = nodepool(dependencies=[klass["urn"]], customTimeouts={"delete": "1h20m"})
    queue = res("kubernetes:scheduling.run.ai/v2:Queue", "queue-a", {"metadata": {"name": "a"}})
    old, new = [klass, pool, queue], [queue]
    assert text(old, new) == (
        "# Plan\n"
        "\n"
        "0 to create, 0 to update, 0 to replace, 2 to delete, 1 unchanged\n"
        "\n"
        "## Destructive and disruptive changes\n"
        "\n"
        "- **NodePool `gpu` deleted**: its running nodes are drained and terminated, their "
        "pods evicted.\n"
        "\n"
        "## Waits\n"
        "\n"
        "This change can keep `pulumi up` waiting up to 80 minutes (the CI job's credentials "
        "and timeout must outlast it):\n"
        "\n"
        "- `kubernetes:karpenter.sh/v1:NodePool pool-gpu`: 80 minutes (delete: waits for its "
        "nodes to drain (up to 1h20m))\n"
        "\n"
        "## Changes\n"
        "\n"
        "- delete `kubernetes:karpenter.k8s.aws/v1:EC2NodeClass pool-gpu-class`\n"
        "- delete `kubernetes:karpenter.sh/v1:NodePool pool-gpu`\n"
        "\n"
        "## Teardown order of the deleted resources\n"
        "\n"
        "The order `pulumi up` deletes them in (each step in parallel, after the one before "
        "it; from the recorded dependencies):\n"
        "\n"
        "1. `kubernetes:karpenter.sh/v1:NodePool pool-gpu`\n"
        "2. `kubernetes:karpenter.k8s.aws/v1:EC2NodeClass pool-gpu-class`\n"
    )


def test_queue_and_namespace_deletes_say_what_they_cost():
    queue = res("kubernetes:scheduling.run.ai/v2:Queue", "queue-a", {"metadata": {"name": "a"}})
    namespace = res("kubernetes:core/v1:Namespace", "ns-a", {"metadata": {"name": "team-a"}})
    lines = text([queue, namespace], []).splitlines()
    assert lines[6:8] == [
        "- **Namespace `team-a` deleted**: every object in it is deleted with it: its "
        "workloads, their pods.",
        "- **Queue `a` deleted**: its pending and new jobs are no longer scheduled "
        "(`QueueDoesNotExist`).",
    ]


def test_list_items_match_by_their_name_key():
    old = {"requirements": [{"key": "a", "values": ["x"]}, {"key": "b", "values": ["y"]}]}
    new = {"requirements": [{"key": "c", "values": ["z"]}, {"key": "b", "values": ["y", "w"]}]}
    assert field_changes(old, new) == [
        ("requirements[key=a]", '{"key": "a", "values": ["x"]}', "(none)"),
        ("requirements[key=b].values", '["y"]', '["y", "w"]'),
        ("requirements[key=c]", "(none)", '{"key": "c", "values": ["z"]}'),
    ]
    reordered = {"requirements": list(reversed(old["requirements"]))}
    assert field_changes(old, reordered) == [("requirements (order)", '["a", "b"]', '["b", "a"]')]


def test_json_documents_and_text_are_compared_inside():
    policy = {"Statement": [{"Sid": "Read", "Action": ["s3:GetObject"]}]}
    wider = {"Statement": [{"Sid": "Read", "Action": ["s3:GetObject", "s3:ListBucket"]}]}
    assert field_changes({"policy": json.dumps(policy)}, {"policy": json.dumps(wider)}) == [
        (
            "policy.Statement[Sid=Read].Action",
            '["s3:GetObject"]',
            '["s3:GetObject", "s3:ListBucket"]',
        )
    ]
    before = "#!/bin/bash\nset -e\nmax_pods=110\necho done\n"
    after = "#!/bin/bash\nset -e\nmax_pods=250\necho done\n"
    assert field_changes({"userData": before}, {"userData": after}) == [
        ("userData (line 3)", "max_pods=110", "max_pods=250")
    ]
    encoded = [base64.b64encode(t.encode()).decode() for t in (before, after)]
    assert field_changes({"userData": encoded[0]}, {"userData": encoded[1]}) == [
        ("userData (line 3, base64-decoded)", "max_pods=110", "max_pods=250")
    ]


def test_long_values_are_cut_in_the_middle():
    value = "a" * 60 + "b" * 40
    assert show(value) == "a" * 50 + "…" + "b" * 20 + " (100 chars)"
    assert show("short") == "short"
    assert show(["x"]) == '["x"]'


def test_a_replacement_replaces_what_takes_a_forcenew_input_from_it():
    """The VPC's new CIDR replaces it; the subnet's vpcId comes from it (a recorded property
    dependency) and is ForceNew, so the subnet is replaced too: the offline ids do not change,
    the dependencies show it. The cluster's vpcId comes from it as well, but a cluster cannot
    move to another VPC: its update is refused, and nothing is replaced through it. Fails on
    the old code, which planned the subnet as unchanged (and then the cluster as replaced)."""

    def vpc(cidr):
        return res("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": cidr})

    vpc_urn = vpc("")["urn"]
    subnet = res(
        "aws:ec2/subnet:Subnet",
        "subnet-a",
        {"vpcId": "vpc-1", "cidrBlock": "10.0.0.0/19"},
        propertyDependencies={"vpcId": [vpc_urn]},
    )
    cluster = res(
        "eks:index:Cluster",
        "cluster-eks",
        {"name": "gpu", "vpcId": "vpc-1", "subnetIds": ["subnet-1"]},
        custom=False,
        propertyDependencies={"vpcId": [vpc_urn], "subnetIds": [subnet["urn"]]},
    )
    old, new = [vpc("10.0.0.0/16"), subnet, cluster], [vpc("10.1.0.0/16"), subnet, cluster]
    assert text(old, new) == (
        "# Plan\n"
        "\n"
        "0 to create, 1 to update, 2 to replace, 0 to delete, 0 unchanged\n"
        "\n"
        "## Destructive and disruptive changes\n"
        "\n"
        "- **EKS cluster `gpu` cannot take this change** (`vpcId` from the replaced "
        "`aws:ec2/vpc:Vpc vpc`): `eks:index:Cluster cluster-eks`; EKS keeps a cluster in the "
        "VPC it was created in, so `pulumi up` fails at the cluster's update (its subnets must "
        "stay in the original VPC); to move, create a new cluster (a new `cluster.name`) and "
        "move the workloads.\n"
        "- **VPC replaced** (`cidrBlock` changed): `aws:ec2/vpc:Vpc vpc`; the EKS cluster in the "
        "network cannot move with it (above).\n"
        "- **Subnet replaced** (`vpcId` from the replaced `aws:ec2/vpc:Vpc vpc`): "
        "`aws:ec2/subnet:Subnet subnet-a`; the EKS cluster in the network cannot move with it "
        "(above).\n"
        "\n"
        "## Changes\n"
        "\n"
        "- replace `aws:ec2/subnet:Subnet subnet-a`: creates the new one before deleting the "
        "old one\n"
        "  - `vpcId`: `vpc-1` -> `(new after the replacement)`\n"
        "- replace `aws:ec2/vpc:Vpc vpc`: creates the new one before deleting the old one\n"
        "  - `cidrBlock`: `10.0.0.0/16` -> `10.1.0.0/16`\n"
        "- update `eks:index:Cluster cluster-eks`: **refused by EKS** (`vpcId`)\n"
        "  - `vpcId`: `vpc-1` -> `(new after the replacement)`\n"
    )


def test_a_new_vpc_cidr_in_a_real_render(tmp_path):
    """The program's own recorded dependencies carry the replacement to the system node group
    and mark the cluster's update refused (a stack written here, not a shipped one)."""
    from pathlib import Path

    from eks_gpu_platform.offline.render import load_stack_file, render, write_state

    repo = Path(__file__).resolve().parents[2]
    outs = []
    for cidr in ("10.9.0.0/16", "10.10.0.0/16"):
        stack = tmp_path / f"{cidr.split('.')[1]}.yaml"
        stack.write_text(
            "config:\n  aws:region: eu-west-1\n  eks-gpu-platform:cluster:\n    name: gpu-mini\n"
            "    endpointPublicAccess: false\n    admins: [role/Ops]\n"
            f"  eks-gpu-platform:vpc:\n    cidr: {cidr}\n"
        )
        outs.append(tmp_path / stack.stem)
        write_state(render(repo, load_stack_file(repo, "mini", stack)), outs[-1])
    old, new = (json.loads((o / "resources.json").read_text()) for o in outs)
    rows = {r["urn"].rsplit("::", 1)[1]: r for r in plan(old, new)}
    assert rows["platform-cluster-eks"]["action"] == "update"
    assert rows["platform-cluster-eks"]["refused"] == {
        "vpcId": ["aws:ec2/vpc:Vpc platform-network-vpc"]
    }
    assert "replacedWith" not in rows["platform-cluster-eks"]
    # The system node group's subnetIds are ForceNew (node_group.go): it is replaced.
    assert rows["platform-cluster-system"]["action"] == "replace"


def test_a_requirements_change_rolls_only_the_nodes_outside_them():
    """Karpenter hashes a NodePool's template without its requirements (kubernetes-sigs/
    karpenter v1.15.0 pkg/apis/v1/nodepool.go L238 `hash:"ignore"`); a requirements change drifts
    only the nodes whose labels no longer satisfy them (disruption/drift.go
    areRequirementsDrifted). Fails on the old code, which said every node of the pool rolls."""
    req = {"key": "karpenter.k8s.aws/instance-family", "operator": "In"}

    def pool(families, taint="gpu"):
        spec = {"requirements": [{**req, "values": families}], "taints": [{"key": taint}]}
        return nodepool(template={"spec": spec})

    assert text([pool(["p5"])], [pool(["p5", "p5e"])]) == (
        "# Plan\n"
        "\n"
        "0 to create, 1 to update, 0 to replace, 0 to delete, 0 unchanged\n"
        "\n"
        "## Destructive and disruptive changes\n"
        "\n"
        "- **Nodes may roll** in pool `gpu` (NodePool requirements: "
        "`spec.template.spec.requirements[key=karpenter.k8s.aws/instance-family].values`): "
        "Karpenter drifts only the nodes whose labels no longer satisfy the new requirements "
        "(`RequirementsDrifted`); nodes that still satisfy them stay.\n"
        "\n"
        "## Changes\n"
        "\n"
        "- update `kubernetes:karpenter.sh/v1:NodePool pool-gpu`: rolls the nodes outside the "
        "new requirements\n"
        "  - `spec.template.spec.requirements[key=karpenter.k8s.aws/instance-family].values`: "
        '`["p5"]` -> `["p5", "p5e"]`\n'
    )
    # A hashed template field (here a taint) still drifts every node of the pool.
    rows = plan([pool(["p5"])], [pool(["p5", "p5e"], taint="other")])
    assert [(r.get("rollsNodes"), r.get("requirementsDrift")) for r in rows] == [(True, None)]
