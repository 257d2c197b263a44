"""The models themselves (tests/karpenter_model.py, tests/kai_model.py): their inputs, the
upstream rules they claim, the independent table and the CLI the Go differential test calls."""

from __future__ import annotations

import ast
import importlib.metadata
import json
from pathlib import Path

import pytest
from capacity_cases import stack_render
from kai_model import Kai
from karpenter_model import (
    DO_NOT_DISRUPT,
    GPU,
    POOL_LABEL,
    Karpenter,
    Pod,
    Render,
    Requirement,
    main,
    system_pods,
    table,
)
from stack_files import fixture_stack_path

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("module", ["karpenter_model.py", "kai_model.py", "gen_advertised.py"])
def test_the_models_import_nothing_of_the_project(module):
    """Their inputs are the render and the independent tables only: no eks_gpu_platform
    import (capacity, nodepool.capacity, split_gpu_limit or any budget code)."""
    tree = ast.parse((HERE / module).read_text())
    imported = [
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in (n.names if isinstance(n, ast.Import) else [n])
    ]
    assert [
        m for m in imported if m and m.split(".")[0] in ("eks_gpu_platform", "components")
    ] == []
    assert "split_gpu_limit" not in (HERE / module).read_text()


def test_the_table_holds_ec2s_numbers():
    """p5.48xlarge as DescribeInstanceTypes has it, and max pods as Karpenter's AWS provider
    computes it (types.go L645-665: 2 interfaces on card 0 x (50 - 1) + 2)."""
    row = table()["instanceTypes"]["p5.48xlarge"]
    assert (row["vcpu"], row["memoryMiB"], row["maxPods"], row["efa"]) == (192, 2097152, 100, 32)
    assert row["gpu"] == {
        "count": 8, "manufacturer": "nvidia", "memoryMiB": 81920, "name": "h100",
        "pciId": "0x233010DE",
    }  # fmt: skip
    assert row["onDemandPrice"] == 55.04
    assert table()["migParted"]["all-1g.10gb"][0]["devices"] == {"1g.10gb": 7}


def test_the_tables_ec2_rows_are_what_moto_holds():
    """Every NVIDIA single-GPU-model instance type of EC2's data (moto 5.2.5, pinned in
    requirements-dev.txt) with its vCPUs, memory, GPUs, EFA, interfaces, max pods and zones in
    us-east-1 and us-west-2, and no other type: the committed table is that data."""
    import gen_advertised

    assert importlib.metadata.version("moto") == "5.2.5"
    rows = {
        name: {k: v for k, v in row.items() if k != "onDemandPrice"}
        for name, row in table()["instanceTypes"].items()
    }
    assert rows == gen_advertised.ec2_rows(None)
    assert table()["sources"]["instanceTypes"] == "moto==5.2.5 " + (
        "moto/ec2/resources/instance_types.json.gz"
    )


def test_the_tables_mig_layouts_follow_the_mig_parted_config():
    """Spot checks of the table's MIG layouts against the GPU Operator v26.7.0 default
    mig-parted config (NVIDIA/gpu-operator assets/state-mig-manager/0400_configmap.yaml:
    all-3g.71gb, ``devices: all``, two 3g.71gb per GPU, L498-502)."""
    assert table()["migParted"]["all-3g.71gb"] == [
        {"deviceFilter": None, "devices": {"3g.71gb": 2}}
    ]


# What v1.15.0's static price table adds to v1.14.1's, from which tests/data/advertised.yaml was
# generated: the g7 family (NVIDIA RTX PRO 4500), a GPU no catalog name selects
# (components/catalog.py), so no NodePool of the project admits it.
PRICED_SINCE_1_15 = [
    "g7.12xlarge",
    "g7.24xlarge",
    "g7.2xlarge",
    "g7.48xlarge",
    "g7.4xlarge",
    "g7.8xlarge",
]


def test_the_tables_prices_are_karpenters_static_prices():
    """The table's prices are Karpenter's generated us-east-1 on-demand prices at the pinned
    version (aws/karpenter-provider-aws v1.15.0 ``pkg/providers/pricing/zz_generated.pricing_aws
    .go``, fetched by tests/upstream_modules.py: never skipped). The table was generated from
    v1.14.1's file; every price it holds is the same at v1.15.0, and the types v1.15.0 prices
    that it leaves unpriced (no offering in the model) are exactly :data:`PRICED_SINCE_1_15`:
    regenerating the table from v1.15.0's file empties that list."""
    import gen_advertised
    import gen_prices

    price = gen_advertised.prices(gen_prices.pricing_file())
    rows = table()["instanceTypes"]
    priced = {name: row["onDemandPrice"] for name, row in rows.items() if "onDemandPrice" in row}
    assert priced == {name: price.get(name) for name in priced}
    assert sorted(n for n in rows if n in price and n not in priced) == PRICED_SINCE_1_15


@pytest.mark.parametrize(
    ("operator", "values", "count", "matches"),
    [
        ("In", ["8"], 8, True),
        ("NotIn", ["8"], 8, False),
        ("Exists", [], 8, True),
        ("DoesNotExist", [], 8, False),
        ("Gt", ["4"], 8, True),
        ("Gt", ["8"], 8, False),
        ("Lt", ["8"], 8, False),
        ("Lt", ["9"], 8, True),
        ("Gte", ["8"], 8, True),
        ("Lte", ["7"], 8, False),
    ],
)
def test_requirement_operators(operator, values, count, matches):
    """requirement.go L50-117 (Gt N is Gte N+1, Lt N is Lte N-1; Gte/Lte since v1.9)."""
    label = Requirement.of("karpenter.k8s.aws/instance-gpu-count", "In", [str(count)])
    req = Requirement.of("karpenter.k8s.aws/instance-gpu-count", operator, values)
    assert label.intersects(req) is matches


def _overlay(name: str, gpus: str, *reqs: dict, weight: int = 10) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": name},
        "spec": {"weight": weight, "requirements": list(reqs), "capacity": {GPU: gpus}},
    }


def _with(render: Render, *overlays: dict) -> Render:
    return Render(
        render.nodepools, render.nodeclasses, [*render.overlays, *overlays], render.queues,
        render.gpu_operator, render.region,
    )  # fmt: skip


G6 = {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge"]}


def test_equal_weight_overlays_apply_in_descending_name_order():
    """nodeoverlay.go L127-136: at equal weight the later name comes first and wins; the other
    sets the same key and is rejected (store.go L214-238)."""
    model = Karpenter(_with(stack_render("dev"), _overlay("aa", "9", G6), _overlay("zz", "5", G6)))
    assert model.types["gpu-spot"]["g6.xlarge"].capacity[GPU] == 5
    assert model.rejected_overlays == ["aa"]


def test_a_conflicting_overlay_is_rejected_for_every_nodepool():
    """controller.go L163-181: 'aa' conflicts with 'zz' on gpu-spot only, yet it is applied to
    no NodePool, inference included."""
    pool = {"key": POOL_LABEL, "operator": "In", "values": ["gpu-spot"]}
    wide = {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gte", "values": ["1"]}
    render = _with(stack_render("dev"), _overlay("zz", "5", G6, pool), _overlay("aa", "9", wide))
    model = Karpenter(render)
    assert model.rejected_overlays == ["aa"]
    assert model.types["inference"]["g6.12xlarge"].capacity[GPU] == 4


def test_each_model_of_a_render_has_its_own_instance_types():
    """The model computes a render's types once (``karpenter_model._TYPES``) and hands every
    Karpenter its own copies: what one test changes in one model shows in no other, and a
    type's allocatable follows a change to its capacity."""
    first = Karpenter(stack_render("dev"))
    g6 = first.types["notebooks"]["g6.xlarge"]
    assert (g6.capacity[GPU], g6.allocatable[GPU]) == (4, 4)  # the overlay: 1 L4 x 4 slices
    g6.capacity[GPU] = 9
    assert g6.allocatable[GPU] == 9
    del first.types["notebooks"]["g6.2xlarge"]
    second = Karpenter(stack_render("dev"))
    assert second.types["notebooks"]["g6.xlarge"].capacity[GPU] == 4
    assert second.base["notebooks"]["g6.xlarge"].capacity[GPU] == 1
    assert "g6.2xlarge" in second.types["notebooks"]


def test_a_nodeclaim_keeps_every_viable_type_and_subtracts_the_largest():
    """scheduler.go L738-745, L815, L1074-1095: gpu-spot's limit is 6 GPUs (dev's research
    limit 12 less its serving 4 and notebooks 2: issue 19, branch capacity), so the 8-GPU types
    are filtered out and the first pod's NodeClaim may become any l4/l40s type of 1 or 4 GPUs
    (16 of the 18); the largest, 4, is subtracted, leaving 2 for the round. A 4-GPU pod pinned
    to g6e.12xlarge waits for round 2, when usage is what was launched (the cheapest option,
    g6.xlarge: 1 GPU), so 5 remain. Subtracting what is launched instead would leave 5 in
    round 1."""
    model = Karpenter(stack_render("dev"))
    assert model.limits("gpu-spot") == {GPU: 6}
    pinned = {POOL_LABEL: "gpu-spot", "node.kubernetes.io/instance-type": "g6e.12xlarge"}
    pods = [
        Pod({GPU: 1, "pods": 1}, {POOL_LABEL: "gpu-spot"}),
        Pod({GPU: 4, "pods": 1}, pinned),
    ]
    assert model.provision(pods) == []
    assert [(n.round, n.instance_type) for n in model.nodes] == [
        (1, "g6.xlarge"),
        (2, "g6e.12xlarge"),
    ]
    assert len(model.nodes[0].options) == 16


def test_pending_pods_pack_onto_the_in_flight_nodeclaim():
    """Eight one-GPU pods under gpu-spot's limit of 6: the first four pack onto one NodeClaim
    whose options narrow to the 4-GPU types (the 8-GPU ones exceed the limit: scheduler.go
    L738-745), the cheapest (Karpenter's static prices) is launched; its largest option (4) is
    subtracted, so the next two get a 1-GPU NodeClaim each and the last two stay pending: 6 GPUs
    bought, the limit."""
    model = Karpenter(stack_render("dev"))
    left = model.provision([Pod({GPU: 1, "pods": 1}, {POOL_LABEL: "gpu-spot"})] * 8)
    assert len(left) == 2
    assert [(n.instance_type, len([p for p in n.pods if not p.daemon])) for n in model.nodes] == [
        ("g6.12xlarge", 4),
        ("g6.xlarge", 1),
        ("g6.xlarge", 1),
    ]
    assert [t.name for t in model.nodes[0].options] == [
        "g6.12xlarge",
        "g6.24xlarge",
        "g6e.12xlarge",
        "g6e.24xlarge",
    ]
    assert model.usage("gpu-spot")[GPU] == 6


def test_pods_another_pool_refuses_do_not_hold_up_the_next_pools_pods():
    """The eight gpu-spot pods above, then four for notebooks (limit 4 slices: one g6.xlarge of
    1 L4 x 4 time-slicing replicas, the cheapest of its 4-slice types): the two gpu-spot pods
    over the limit are refused (the model skips the rest of a refused shape: requests and node
    selector), the notebooks pods are not."""
    model = Karpenter(stack_render("dev"))
    spot = [Pod({GPU: 1, "pods": 1}, {POOL_LABEL: "gpu-spot"})] * 8
    notebooks = [Pod({GPU: 1, "pods": 1}, {POOL_LABEL: "notebooks"})] * 4
    left = model.provision(spot + notebooks)
    assert [p.node_selector for p in left] == [{POOL_LABEL: "gpu-spot"}] * 2
    assert [
        (n.nodepool, n.instance_type, len([p for p in n.pods if not p.daemon])) for n in model.nodes
    ] == [
        ("gpu-spot", "g6.12xlarge", 4),
        ("gpu-spot", "g6.xlarge", 1),
        ("gpu-spot", "g6.xlarge", 1),
        ("notebooks", "g6.xlarge", 4),
    ]
    assert (model.usage("gpu-spot")[GPU], model.usage("notebooks")[GPU]) == (6, 4)


def test_an_empty_gpu_node_with_its_daemonsets_is_a_candidate_and_do_not_disrupt_blocks_it():
    """statenode.go L328-339, disruption/types.go L194-211: DaemonSet pods count too."""
    assert system_pods(), "tests/fixtures/system-pods"
    model = Karpenter(stack_render("dev"))
    model.provision([Pod({GPU: 1, "pods": 1}, {POOL_LABEL: "inference"})])
    (node,) = model.nodes
    node.pods = [p for p in node.pods if p.daemon]  # the workload finished
    assert sorted(p.name for p in node.pods) == [
        "aws-node-7xk2p", "eks-pod-identity-agent-q8rtz", "gpu-feature-discovery-b9k1z",
        "gpu-operator-node-feature-discovery-worker-h7m2c", "kube-proxy-4mbq9",
        "nvidia-dcgm-exporter-c9k2z", "nvidia-device-plugin-daemonset-a9k0z",
        "nvidia-operator-validator-d9k3z",
    ]  # fmt: skip
    assert model.empty_candidates() == [node]
    node.pods[0].annotations[DO_NOT_DISRUPT] = "true"  # e.g. a mutating policy on aws-node
    assert model.consolidation_candidates() == []


def test_kai_checks_every_ancestor_and_non_preemptible_quota():
    kai = Kai.of_manifests(stack_render("dev").queues)
    assert kai.admit("research-batch", 8)
    assert kai.refusal("research-serving", 4) is None
    assert kai.admit("research-serving", 4)
    assert kai.refusal("research-notebooks", 1) == "OverLimit: queue 'research'"
    kai = Kai.of_manifests(stack_render("dev").queues)
    assert kai.refusal("research-batch", 3, preemptible=False) == (
        "NonPreemptibleOverQuota: queue 'research-batch'"
    )


def test_the_flood_cli_prints_json(tmp_path, capsys):
    from render_cache import cli_renders

    from eks_gpu_platform.offline.render import main as render_main

    out = tmp_path / "dev"
    with cli_renders():
        code = render_main(
            [
                *("--stack", "dev", "--config-file", str(fixture_stack_path("dev"))),
                *("--out", str(out), "--project-dir", str(HERE.parent)),
            ]
        )
    assert code == 0
    capsys.readouterr()
    assert main(["flood", str(out), "notebooks"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["launched"] == {"notebooks/g6.xlarge": 1}
    assert (result["podsScheduled"], result["podsPending"]) == (4, 508)
    assert result["limits"] == {"notebooks": {GPU: 4}}
    assert result["usage"]["notebooks"][GPU] == 4
    assert result["nodeClaims"][0]["advertised"][GPU] == 4  # 1 L4 x 4 time-slicing replicas
