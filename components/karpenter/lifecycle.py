"""How long ``pulumi destroy`` waits for Karpenter objects to go. Pure.

Deleting a NodePool or an EC2NodeClass only returns once Karpenter has removed its finalizer:
a NodeClaim's after its node is drained (at most the pool's ``terminationGracePeriod``) and its
instance terminated (kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle/
controller.go L198-263, v1.15.0); an EC2NodeClass's once no NodeClaim uses it, re-checked every
10 minutes (karpenter-provider-aws pkg/controllers/nodeclass/controller.go L222-229, v1.15.0).
The Kubernetes provider waits 10 minutes by default, else the resource's
``customTimeouts.delete`` (pulumi-kubernetes provider/pkg/await/await.go L975-980, v4.32.0), and
a delete that times out fails: the engine then keeps its dependencies but deletes everything
else (pulumi/pulumi pkg/resource/deploy/deployment_executor.go L515-547). So the delete timeout
is the grace period plus the 10-minute recheck and a margin for instance termination.
"""

import re

# Instance termination and the EC2NodeClass finalizer's 10-minute recheck.
DELETE_MARGIN_SECONDS = 20 * 60
_UNIT = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(duration: str) -> int:
    """``'48h'``, ``'1h30m'``, ``'90s'`` -> seconds (the pools' duration syntax)."""
    parts = re.findall(r"([0-9]+)([smh])", duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        raise ValueError(f"{duration!r} is not a duration like '4h' or '1h30m'")
    return sum(int(n) * _UNIT[u] for n, u in parts)


def go_duration(seconds: int) -> str:
    """Seconds as a Go duration string, the form of Pulumi's custom timeouts: ``'48h20m'``."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    return out + (f"{secs}s" if secs or not out else "")


def finalizer_delete_timeout(termination_grace_period: str) -> str:
    """The ``customTimeouts.delete`` of a pool's NodePool and EC2NodeClass."""
    return go_duration(duration_seconds(termination_grace_period) + DELETE_MARGIN_SECONDS)
