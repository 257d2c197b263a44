"""EFA pools whose budget leaves one of their NodePools empty (issue 30, point 5; review M3).

An EFA pool renders one NodePool per EFA layout and splits its budget greedily
(``nodepools.split_gpu_limit``): without ``typeShares`` the first layout takes it all and the
next get ``limits: {nvidia.com/gpu: 0}``, a NodePool that can never launch a node (Karpenter
launches only while the NodePool's usage plus the node stays within its limits:
kubernetes-sigs/karpenter v1.15.0 ``scheduler.go`` ``filterByRemainingResources`` L1097-1114).
So the configuration refuses it, naming the pool, its layouts (with their types), the budget,
and ``typeShares`` that give every layout whole nodes (``suggested_shares``).

Pure: pool specs (read by attribute) and their budgets in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import catalog
from ..spec import Problem, show
from .nodepools import layout_groups, nodepool_groups


def suggested_shares(
    budget: int, groups: Sequence[Sequence[catalog.InstanceType]]
) -> dict[str, int] | None:
    """``typeShares`` giving each layout (keyed by its first type) an even part of ``budget`` in
    whole nodes of its smallest type, what rounding leaves to the first layouts in order; None
    when the budget holds less than one node of every layout."""
    sizes = [min(t.gpu_count for t in g if t.gpu_count > 0) for g in groups]
    if budget < sum(sizes):
        return None
    even = budget // len(groups)
    shares = [max(size, (even // size) * size) for size in sizes]
    left = budget - sum(shares)
    for i, size in enumerate(sizes):
        extra = (left // size) * size
        shares[i] += extra
        left -= extra
    return {g[0].name: s for g, s in zip(groups, shares, strict=True)}


def empty_layout_problems(
    pools: Sequence[Any], budgets: Mapping[str, int | None], indexes: Mapping[str, int]
) -> list[Problem]:
    """Every EFA pool whose budget leaves a NodePool with no whole node while another gets some
    (a budget that holds no node anywhere is ``gpu_limit_shortfall``'s, shares above it
    ``stack.type_share_budget_problems``'); ``indexes``: each pool's index in ``nodePools``."""
    out: list[Problem] = []
    for pool in pools:
        budget = budgets.get(pool.name)
        if pool.kind != "efa" or budget is None or sum(pool.type_shares.values()) > budget:
            continue  # shares above the budget: ``type_share_budget_problems`` says so
        groups = layout_groups(pool)
        nodepools = nodepool_groups(pool, budget)
        empty = [g for g in nodepools if not g.gpus]
        if not empty or len(empty) == len(nodepools):
            continue
        layouts = "; ".join(
            f"{show(g.name)} ({', '.join(g.instance_types)}): {g.gpus} GPUs" for g in nodepools
        )
        suggestion = suggested_shares(budget, groups)
        if suggestion is not None:
            fix = (
                "set typeShares to split it, e.g. typeShares: {"
                + ", ".join(f"{t}: {n}" for t, n in suggestion.items())
                + "}"
            )
        else:
            fix = (
                "it does not hold one node of every layout: raise the budget or remove the "
                f"types of {', '.join(show(g.name) for g in empty)} from instanceTypes"
            )
        now = (
            f"typeShares {dict(pool.type_shares)} leave"
            if pool.type_shares
            else "without typeShares the first layout takes it all, leaving"
        )
        out.append(
            (
                ("node_pools", indexes[pool.name], "type_shares"),
                f"efa pool {show(pool.name)} has {len(nodepools)} EFA layouts, one NodePool "
                f"each ({layouts}) from a budget of {budget} GPUs: {now} "
                f"{', '.join(show(g.name) for g in empty)} with no whole node, a NodePool "
                f"that can never launch; {fix}",
            )
        )
    return out
