"""Example workloads on a DRA pool (``nodePools[].dra``): the queue's template asks the NVIDIA
DRA driver for its GPUs through a ``ResourceClaimTemplate`` instead of ``nvidia.com/gpu``,
which a DRA pool's nodes do not advertise (no device plugin there: ``nodepool.dra``).

Pure: the template's documents in, documents out. Each pod template whose containers limit
``nvidia.com/gpu`` loses that limit (and request), its containers name the claim
(``resources.claims``) and the pod lists it (``spec.resourceClaims``, one claim per pod made
from the template); the ``ResourceClaimTemplate`` goes first, in the workload's namespace. The
GPU toleration stays: the pool's nodes keep the ``nvidia.com/gpu`` taint. KAI charges the queue
the claim's count in GPUs (kai-scheduler v0.16.8 and v0.17.0 ``pkg/common/resources/dra.go``),
and Karpenter 1.15 sizes the node from the claim (``nodepool/dra.py``).
"""

import copy
from typing import Any

from ..budget import GPU_RESOURCE
from ..nodepool.dra import DRA_CLAIM_NAME, pod_claim, resource_claim_template


def _pod_specs(document: dict[str, Any]) -> list[dict[str, Any]]:
    if document.get("kind") == "Pod":
        return [document["spec"]]
    template = document.get("spec", {}).get("template", {})
    return [template["spec"]] if "spec" in template else []


def _claim_gpus(pod_spec: dict[str, Any]) -> int:
    """Take ``nvidia.com/gpu`` off the pod's containers; the GPUs they asked for."""
    gpus = 0
    for container in pod_spec.get("containers", []):
        resources = container.get("resources", {})
        asked = 0
        for part in ("limits", "requests"):
            value = resources.get(part, {}).pop(GPU_RESOURCE, None)
            if value is not None:
                asked = max(asked, int(value))
        if asked:
            gpus += asked
            resources["claims"] = [{"name": DRA_CLAIM_NAME}]
    return gpus


def dra_documents(documents: list[dict[str, Any]], pool: Any) -> list[dict[str, Any]]:
    """``documents`` unchanged for a pool without ``dra``; else with GPU claims (docstring)."""
    if not getattr(pool, "dra", False):
        return documents
    out: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []
    for document in documents:
        document = copy.deepcopy(document)
        for pod_spec in _pod_specs(document):
            gpus = _claim_gpus(pod_spec)
            if not gpus:
                continue
            name = f"{document['metadata']['name']}-gpus"
            claims.append(
                resource_claim_template(
                    name=name, namespace=document["metadata"]["namespace"], gpus=gpus
                )
            )
            pod_spec["resourceClaims"] = [pod_claim(name)]
        out.append(document)
    return claims + out
