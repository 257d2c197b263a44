"""Where each queue's gangs run, over a whole stack (``budget.gangs`` holds the rule): the
zones the render knows, the choices, and the checks of ``gangZone`` / ``gangInstanceType``
against the pool the gang template uses (issue 30, point 4: one rule for both).

Pure (no Pulumi); reads ``PlatformConfig`` by attribute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .budget import nodepool_groups, pool_nodepools
from .budget.gangs import GangChoice, gang_pool, override_problems, queue_gangs
from .errors import SpecError
from .network.layout import vpc_zone_names
from .regions import modelled_zone_names
from .spec import Problem

if TYPE_CHECKING:
    from .config import PlatformConfig


def stack_zones(config: PlatformConfig) -> list[str]:
    """The zones of the stack's VPC as the render knows them: a new VPC's, chosen by the network
    package from the zones the render models for the region; none for an existing VPC (its
    subnets' zones are known only at deployment) or a VPC configuration with problems (reported
    by its own checks)."""
    if not config.vpc.create:
        return []
    try:
        return vpc_zone_names(modelled_zone_names(config.region), config.vpc.azs, config.vpc.zones)
    except SpecError:
        return []


def stack_gangs(config: PlatformConfig) -> dict[str, GangChoice]:
    """Per queue routed to a GPU pool, where its gangs run (``budget.gangs.gang_choice``)."""
    if not config.scheduler.enabled:
        return {}
    return queue_gangs(
        config.scheduler.queues,
        config.gpu_pools,
        pool_nodepools(config.pools, config.gpu_operator, config.scheduler),
        stack_zones(config),
    )


def gang_problems(config: PlatformConfig, *, budgets: bool = True) -> list[Problem]:
    """Each queue's ``gangZone`` and ``gangInstanceType`` against the pool its gangs run on
    (``budget.gangs.gang_pool``, the pool the template uses), with its NodePools' budgets;
    ``budgets=False`` (queue routing with problems, which leave the budgets unknown) checks
    them as if every NodePool had room."""
    out: list[Problem] = []
    pools = {p.name: p for p in config.gpu_pools}
    if budgets:
        nodepools = pool_nodepools(config.pools, config.gpu_operator, config.scheduler)
    else:
        nodepools = {p.name: nodepool_groups(p, None) for p in config.gpu_pools}
    zones = stack_zones(config)
    for i, queue in enumerate(config.scheduler.queues):
        routed = [pools[n] for n in queue.node_pools if n in pools]
        path = ("scheduler", "queues", i)
        if not routed:
            for key in ("gang_zone", "gang_instance_type"):
                if getattr(queue, key) is not None:
                    out.append(
                        ((*path, key), "is set but the queue routes to no GPU pool; remove it")
                    )
            continue
        pool = gang_pool(routed, nodepools)
        problems = override_problems(queue, pool, nodepools[pool.name], zones, config.region)
        out += [((*path, key), msg) for key, msg in problems]
    return out
