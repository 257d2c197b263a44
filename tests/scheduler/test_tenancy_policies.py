"""The tenancy admission policies (issue 29 points 1-4) evaluated on crafted tenant objects, the
shipped workload templates and the system pods (``tenancy_eval``), per fixture stack."""

from dataclasses import replace

from stack_files import fixture_stack

from eks_gpu_platform.offline.render import validate as validate_stack
from eks_gpu_platform.platform import tenant_pools
from eks_gpu_platform.scheduler.tenancy import queue_tenancy
from eks_gpu_platform.scheduler.tenancy_policies import tenancy_policies


def config_of(stack: str):
    if stack == "dev-1.35":
        dev = validate_stack(fixture_stack("dev"))
        return replace(dev, cluster=replace(dev.cluster, kubernetes_version="1.35"))
    return validate_stack(fixture_stack(stack))


def policies_of(stack: str) -> list[dict]:
    config = config_of(stack)
    return tenancy_policies(
        kubernetes_version=config.cluster.kubernetes_version,
        label_domain=config.cluster.label_domain,
        queues=queue_tenancy(
            config.scheduler.queues,
            config.workload_kinds,
            {p.name: p.preemptible for p in config.gpu_pools},
            config.scheduler.priority_classes,
        ),
        pools=tenant_pools(config),
        extra_priority_classes=config.scheduler.priority_classes,
    )
