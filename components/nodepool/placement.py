"""An EFA pool's existing cluster placement group (``placementGroup``): its checks."""

import re

from ..spec import Problem, show

PLACEMENT_GROUP_ID = r"^pg-[0-9a-z]+$"


def placement_group_problems(group: str | None, kind: str) -> list[Problem]:
    """An existing placement group: EFA pools only, a name or an id as EC2 writes them.

    A Capacity Reservation created in a cluster placement group can be used only by instances
    launched into that group, and cannot be moved out of it (EC2 User Guide, "Use Capacity
    Reservations with placement groups", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/
    cr-cpg.html); Karpenter launches an EC2NodeClass's instances into the one group its
    ``placementGroupSelector`` names (name, or ``pg-`` id: karpenter-provider-aws v1.15.0
    ``pkg/apis/v1/ec2nodeclass.go`` L57-61 and the CRD's CEL rules). So an efa pool using such
    reservations names their group, and the platform creates none.
    """
    if group is None:
        return []
    if kind != "efa":
        return [
            (
                ("placement_group",),
                "only applies to efa pools (their nodes share one cluster placement group); "
                f"this pool is {kind!r}",
            )
        ]
    if group.startswith("pg-"):
        if not re.fullmatch(PLACEMENT_GROUP_ID, group):
            return [(("placement_group",), f"{show(group)} is not a placement group id")]
    elif not 1 <= len(group) <= 255 or not group.isprintable() or group != group.strip():
        return [
            (
                ("placement_group",),
                f"{show(group)} is not a placement group name; expected 1-255 printable "
                "characters without leading or trailing spaces, or an id pg-...",
            )
        ]
    return []
