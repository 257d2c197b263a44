"""Parts shared by the workload templates (pure): the pool node affinity, the disruption
annotations, resources with requests and limits, name checks, and the "restricted" container.
"""

import re
from collections.abc import Sequence

from .constants import (
    DNS_LABEL,
    DNS_LABEL_TEXT,
    DO_NOT_DISRUPT_ANNOTATION,
    EFA_RESOURCE,
    GPU_RESOURCE,
    HUGEPAGES_2MI_RESOURCE,
    NON_PREEMPTIBLE_CLASSES,
)
from .podsecurity import restricted_container_security_context

# Kubernetes quantities as the templates take them ("8", "500m", "64Gi").
QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$"


def pool_node_affinity(pool_label_key: str, pool: str) -> dict:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": pool_label_key, "operator": "In", "values": [pool]}]}
            ]
        }
    }


def pod_annotations(priority_class: str, do_not_disrupt: str | None) -> dict[str, str]:
    if priority_class in NON_PREEMPTIBLE_CLASSES:
        return {DO_NOT_DISRUPT_ANNOTATION: "true"}
    if do_not_disrupt is not None:
        return {DO_NOT_DISRUPT_ANNOTATION: do_not_disrupt}
    return {}


def resources(
    *, cpu: str, memory: str, gpus: int = 0, efa: int = 0, hugepages_2mi: str | None = None
) -> dict:
    """Requests for everything; limits for memory and the devices, none for CPU.

    Karpenter sizes nodes and KAI charges queues from requests. A memory limit equal to the
    request keeps a pod from being OOM-killed for its neighbours' use; a CPU limit would only
    throttle. Extended resources (GPUs, EFA) must have limits equal to requests, and so must
    hugepages, which also need a cpu or memory request
    (https://kubernetes.io/docs/tasks/manage-hugepages/scheduling-hugepages/).
    """
    requests: dict[str, str] = {"cpu": cpu, "memory": memory}
    limits: dict[str, str] = {"memory": memory}
    for key, amount in (
        (GPU_RESOURCE, str(gpus) if gpus else None),
        (EFA_RESOURCE, str(efa) if efa else None),
        (HUGEPAGES_2MI_RESOURCE, hugepages_2mi),
    ):
        if amount is not None:
            requests[key] = amount
            limits[key] = amount
    return {"requests": requests, "limits": limits}


def check_workload(function: str, **names: str) -> None:
    for what, value in names.items():
        if not re.fullmatch(DNS_LABEL, value):
            raise ValueError(f"{function}: {what} {value!r} is not a DNS label ({DNS_LABEL_TEXT})")


def check_quantities(function: str, **quantities: str | None) -> None:
    for what, value in quantities.items():
        if value is not None and not re.fullmatch(QUANTITY, value):
            raise ValueError(
                f"{function}: {what} {value!r} is not a Kubernetes quantity (e.g. '8', '500m', "
                "'64Gi')"
            )


def container(
    name: str,
    image: str,
    *,
    command: Sequence[str] = (),
    args: Sequence[str] = (),
    env: Sequence[dict] = (),
    resources: dict,
    **fields: object,
) -> dict:
    """A container with the "restricted" security context; ``fields`` are added as given."""
    out: dict = {"name": name, "image": image}
    if command:
        out["command"] = list(command)
    if args:
        out["args"] = list(args)
    if env:
        out["env"] = [dict(e) for e in env]
    out.update(fields)
    out["resources"] = resources
    out["securityContext"] = restricted_container_security_context()
    return out
