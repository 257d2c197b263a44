"""``budget.nodepools``: an EFA pool's NodePools (one per EFA layout) and the greedy split of its
budget, on exact tables."""

import pytest

from eks_gpu_platform import catalog
from eks_gpu_platform.budget import (
    NodePoolGroup,
    efa_layout,
    layout_groups,
    nodepool_groups,
    split_gpu_limit,
)
from eks_gpu_platform.nodepool.spec import NodePoolSpec
from eks_gpu_platform.spec import load_value


def efa_pool(*types: str, **extra) -> NodePoolSpec:
    raw = {"name": "train", "kind": "efa", "zone": "us-east-1a", "instanceTypes": list(types)}
    return load_value(NodePoolSpec, {**raw, **extra}, "nodePools[0]")


def group_names(pool: NodePoolSpec) -> list[tuple[str, ...]]:
    return [tuple(t.name for t in g) for g in layout_groups(pool)]


def test_p5_and_p5e_share_one_layout_the_others_do_not():
    # The key is the EC2NodeClass's networkInterfaces: ENA 0/0 + efa-only 0/1 .. 31/1.
    assert efa_layout("p5.48xlarge") == efa_layout("p5e.48xlarge")
    assert len(efa_layout("p5.48xlarge")) == 33
    assert efa_layout("p5.48xlarge") != efa_layout("p5en.48xlarge")  # cards 0-15
    # Same number of interfaces, different cards (p6-b300's card 0 is ENA only).
    assert len(efa_layout("p5en.48xlarge")) == len(efa_layout("p6-b300.48xlarge")) == 17
    assert efa_layout("p5en.48xlarge") != efa_layout("p6-b300.48xlarge")


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (("p5.48xlarge", "p5e.48xlarge"), [("p5.48xlarge", "p5e.48xlarge")]),
        # Configured order, not catalog order: the reservation's type first.
        (("p5e.48xlarge", "p5.48xlarge"), [("p5e.48xlarge", "p5.48xlarge")]),
        (
            ("p5en.48xlarge", "p5.48xlarge", "p5e.48xlarge"),
            [("p5en.48xlarge",), ("p5.48xlarge", "p5e.48xlarge")],
        ),
        (
            ("g6e.48xlarge", "p4d.24xlarge", "g6e.24xlarge"),
            [("g6e.48xlarge", "p4d.24xlarge"), ("g6e.24xlarge",)],
        ),
    ],
)
def test_layout_groups(types, expected):
    assert group_names(efa_pool(*types)) == expected


def types(*names: str) -> tuple[catalog.InstanceType, ...]:
    return tuple(catalog.INSTANCE_TYPES[n] for n in names)


@pytest.mark.parametrize(
    ("total", "groups", "shares", "expected"),
    [
        (None, [types("p5.48xlarge"), types("p5en.48xlarge")], {}, [None, None]),
        # Greedy: the first NodePool gets the whole budget (was 32 / 32, round-robin).
        (64, [types("p5.48xlarge", "p5e.48xlarge")], {}, [64]),
        (64, [types("p5en.48xlarge"), types("p5.48xlarge")], {}, [64, 0]),
        # Whole nodes of the group's smallest type; the rest goes on.
        (12, [types("g6e.48xlarge"), types("g6e.24xlarge")], {}, [8, 4]),
        # A share caps its group (the sum of its types' shares).
        (64, [types("p5en.48xlarge"), types("p5.48xlarge")], {"p5en.48xlarge": 24}, [24, 40]),
        (
            64,
            [types("p5en.48xlarge"), types("p5.48xlarge", "p5e.48xlarge")],
            {"p5en.48xlarge": 16, "p5.48xlarge": 8, "p5e.48xlarge": 8},
            [16, 16],
        ),
        # A share that is not reached leaves the rest where it is.
        (8, [types("p5en.48xlarge"), types("p5.48xlarge")], {"p5en.48xlarge": 16}, [8, 0]),
    ],
    ids=["none", "one-layout", "greedy", "whole-nodes", "share", "shares-sum", "short"],
)
def test_split_gpu_limit(total, groups, shares, expected):
    assert split_gpu_limit(total, groups, shares) == expected


def test_nodepool_groups_names_and_largest_gang():
    assert nodepool_groups(efa_pool("p5.48xlarge", "p5e.48xlarge"), 64) == [
        NodePoolGroup("train", types("p5.48xlarge", "p5e.48xlarge"), 64, efa=True)
    ]
    two = nodepool_groups(efa_pool("p5en.48xlarge", "p5.48xlarge"), 40)
    assert [(g.name, g.gpus, g.largest_gang) for g in two] == [
        ("train-p5en-48xlarge", 40, 40),
        ("train-p5-48xlarge", 0, 0),
    ]
    # Mixed sizes in one layout: a gang on one type gets whole nodes of that type only.
    mixed = NodePoolGroup("m", types("g6e.48xlarge", "p4d.24xlarge"), 20, efa=True)
    assert mixed.largest_gang == 16
    four = NodePoolGroup("f", types("g6e.24xlarge"), 10, efa=True)
    assert (four.node_gpus, four.largest_gang) == (4, 8)
    # A GPU pool is one NodePool named after the pool.
    gpu = load_value(NodePoolSpec, {"name": "spot", "gpus": ["l4"]}, "nodePools[0]")
    (only,) = nodepool_groups(gpu, 8)
    assert (only.name, only.gpus, only.efa) == ("spot", 8, False)
