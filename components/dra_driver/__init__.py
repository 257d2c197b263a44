"""The NVIDIA DRA driver for GPUs (its own Helm chart), on the nodes of DRA pools only
(``nodePools[].dra``; docs/dra-pools.md)."""

from .values import NAMESPACE, RELEASE_NAME, dra_driver_values

__all__ = ["NAMESPACE", "RELEASE_NAME", "dra_driver_values"]
