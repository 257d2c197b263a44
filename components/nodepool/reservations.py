"""A pool's capacity reservations against the pool: the ``instanceType`` and ``zone`` a
reservation names (what the gang templates pin first, ``budget.gangs``) must be ones the pool
can launch.

An On-Demand Capacity Reservation or a Capacity Block is for one instance type in one
availability zone (EC2 ``CapacityReservation.InstanceType`` and ``AvailabilityZone``), and
Karpenter offers it only for that type and zone: karpenter-provider-aws v1.15.0
``pkg/providers/instancetype/offering/reserved_capacity_resolver.go`` L71 (the type) and
L92-105 (the offering's zone requirement; available only where the type is offered).
"""

from typing import Any

from ..spec import Problem, show


def reservation_problems(pool: Any) -> list[Problem]:
    """Each reservation's ``instanceType`` among the pool's types, and an efa pool's
    reservation ``zone`` its zone (call once the pool's type selection has no problems)."""
    out: list[Problem] = []
    types = [t.name for t in pool.catalog_types]
    for i, c in enumerate(pool.capacity_reservations):
        path = ("capacity_reservations", i)
        if c.instance_type is not None and c.instance_type not in types:
            out.append(
                (
                    (*path, "instance_type"),
                    f"{show(c.instance_type)} is not an instance type of pool {show(pool.name)}; "
                    f"expected one of {', '.join(types)}",
                )
            )
        if c.zone is not None and pool.zone is not None and c.zone != pool.zone:
            out.append(
                (
                    (*path, "zone"),
                    f"{show(c.zone)} is not the zone of efa pool {show(pool.name)} "
                    f"({pool.zone}): its nodes launch only there",
                )
            )
    return out
