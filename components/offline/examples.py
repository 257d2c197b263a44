"""The example workload templates the render writes (``examples/`` under the render's output,
and ``examples/`` in the repository for prod): an NCCL all-reduce MPIJob per EFA pool and, with
the scheduler, a template per leaf queue routed to a GPU pool. Each is a ``WorkloadTemplate``:
its queue's Namespace (Pod Security labels), the objects it needs and the workload.
"""

from typing import Any

from .. import catalog, versions
from ..budget import (
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    PoolCapacity,
    capacity_of,
    capacity_plan,
    mig_g_count,
    pool_nodepools,
)
from ..budget.gangs import GangChoice
from ..budget.preemption import delay_for, preemption_delays
from ..budget.resources import (
    CPU_PER_GPU,
    EFA_CPU,
    EFA_MEMORY,
    INFERENCE_CPU,
    INFERENCE_MEMORY,
    MEMORY_GIB_PER_GPU,
    NOTEBOOK_CPU,
    NOTEBOOK_MEMORY,
)
from ..config import PlatformConfig
from ..efa import nccl_test_manifest
from ..efa.manifests import NCCL_ENV, NCCL_NAMESPACE, NCCL_POD_SECURITY, NCCL_POD_SECURITY_REASON
from ..gang_checks import stack_gangs
from ..scheduler import (
    APP_LABEL,
    RESTRICTED,
    WorkloadTemplate,
    fractional_pod_template,
    inference_deployment_template,
    inference_network_policy_template,
    inference_service_account_template,
    inference_service_template,
    isolated_pod_network_policy_template,
    namespace_manifest,
    notebook_pod_template,
    training_job_template,
    training_network_policy_template,
    training_script_config_map,
    training_service_template,
)
from ..scheduler.inference import PORTS as INFERENCE_PORTS
from ..scheduler.network import allow_dns_policy, default_deny_policy, namespace_internal_policy
from ..scheduler.preemption_delay import PREEMPTION_DELAY_ANNOTATION, with_preemption_delay
from ..scheduler.training import SMOKE_TEST_SCRIPT
from .dra_examples import dra_documents

TRAINING_REPLICAS = 2
# The pods' CPU and memory requests: the budget checks queues' cpu/memory against them
# (budget.resources, issue 30 point 8).
SHM_GIB_PER_GPU = 2
EFA_SHM = "64Gi"
MODEL_VOLUME_SIZE = "20Gi"


def training_notes(namespace: str, name: str) -> tuple[str, ...]:
    return (
        "Distributed training without a training operator: a batch/v1 Indexed Job and a headless",
        "Service; torchrun's c10d rendezvous runs in pod 0 (<job>-0.<service>). Needs KAI",
        "Scheduler and the queue (both installed by the stack). The ConfigMap's train.py is an",
        "NCCL all-reduce smoke test: replace it with your script. On an EFA pool NCCL uses EFA",
        "only if the image carries the aws-ofi-nccl plugin: the log says NET/OFI Selected",
        "provider is efa.",
        "Run: kubectl apply -f <this file>",
        f"     kubectl logs -n {namespace} -l batch.kubernetes.io/job-name={name} --prefix -f",
    )


def gang_notes(queue: str, choice: GangChoice) -> tuple[str, ...]:
    if not choice.pinned:
        return ()
    zone = (
        f"zone {choice.zone} ({choice.zone_reason}) and"
        if choice.zone is not None
        else "(the zone is not known before deployment)"
    )
    return (
        "Karpenter may spread a gang over the pool's zones or instance types, so the Job pins",
        zone,
        f"instance type {choice.instance_type} ({choice.reason}); override with",
        f"scheduler.queues[{queue}].gangZone / gangInstanceType (capacity.json gangs).",
    )


def gang_gpus(groups, instance_type: catalog.InstanceType, queue_gang: float | None) -> int | None:
    """The largest gang of ``instance_type`` nodes a queue can get on an EFA pool (GPUs): the
    budget of the pool's NodePool holding that type in whole nodes of it (Karpenter never
    launches past a NodePool's ``limits``, kubernetes-sigs/karpenter v1.15.0 ``scheduler.go``
    L1097-1114), at most the queue's largest gang (capacity.json ``largestGang``: the queue's
    and its ancestors' ``gpu.limit`` cap it too). None when that NodePool has no budget."""
    group = next((g for g in groups if instance_type in g.types), None)
    if group is None or group.gpus is None:
        return None
    gpus = (group.gpus // instance_type.gpu_count) * instance_type.gpu_count
    return gpus if queue_gang is None else min(gpus, int(queue_gang))


def gang_replicas(largest: int | None, gpus_per_pod: int) -> int:
    """Pods of the gang template: ``TRAINING_REPLICAS`` whole nodes, at most the largest gang,
    and at least one (a single-node Job when the largest gang is one node)."""
    if largest is None:
        return TRAINING_REPLICAS
    return max(1, min(TRAINING_REPLICAS, largest // gpus_per_pod))


def gang_size_notes(pool: str, replicas: int, gpus: int, largest: int | None) -> tuple[str, ...]:
    if largest is None:
        return ()
    if replicas == 1:
        return (
            f"Pool {pool} holds at most one node for this queue's gang (capacity.json",
            f"largestGang: {largest} GPUs), so this is a single-pod Job of {gpus} GPUs",
            "(torchrun --nnodes=1; NCCL stays inside the node).",
        )
    return (
        f"{replicas} pods x {gpus} GPUs; pool {pool} holds a gang of up to {largest} GPUs for",
        "this queue (capacity.json largestGang): raise parallelism, completions,",
        "kai.scheduler/batch-min-member and --nnodes together to grow it.",
    )


def delay_of(config: PlatformConfig, queue: str, pool: str) -> str | None:
    """The preemption delay of ``queue``'s template on ``pool`` (``budget.preemption``)."""
    return delay_for(preemption_delays(config.gpu_pools, config.scheduler), queue, pool)


def delay_notes(delay: str | None) -> tuple[str, ...]:
    if delay is None:
        return ()
    return (
        f"{PREEMPTION_DELAY_ANNOTATION}: {delay}: pending, this workload evicts nobody for that",
        "long, so Karpenter can add a node first (capacity.json preemptionDelays).",
    )


def inference_notes(namespace: str, name: str, model_uri: str) -> tuple[str, ...]:
    return (
        "Triton behind a ClusterIP Service; the init container copies the model repository from",
        f"{model_uri} (create it, in this account) with a SHA256SUMS manifest of every",
        "file (cd <repository> && find . -type f | sha256sum > SHA256SUMS, before adding it);",
        "set MODEL_MANIFEST_SHA256 below to `sha256sum SHA256SUMS`. The init container fails,",
        "and Triton never starts, unless the bucket belongs to this account and every file",
        "matches. Needs KAI Scheduler and the queue (installed by the stack) and an EKS Pod",
        f"Identity association for the ServiceAccount {namespace}/{name} to a role with",
        "s3:ListBucket and s3:GetObject there, conditioned on s3:ResourceAccount (README,",
        '"Security model": eks_gpu_platform.scheduler.inference.model_read_policy).',
        "Run: kubectl apply -f <this file>",
        f"     kubectl rollout status -n {namespace} deployment/{name}",
    )


def notebook_notes(namespace: str, name: str, how: str) -> tuple[str, ...]:
    return (
        how,
        "Run: kubectl apply -f <this file>",
        f"     kubectl exec -it -n {namespace} {name} -- bash",
    )


def nccl_notes(namespace: str) -> tuple[str, ...]:
    return (
        "NCCL all-reduce over EFA on two whole nodes. Needs the MPI operator v0.6.0:",
        "kubectl apply --server-side -k "
        '"github.com/kubeflow/mpi-operator/manifests/overlays/standalone?ref=v0.6.0"',
        "Run: kubectl apply -f <this file>",
        f"     kubectl logs -n {namespace} -f -l training.kubeflow.org/job-role=launcher",
    )


# (file name, namespace, level, why below restricted, documents without the Namespace, notes)
_Workload = tuple[str, str, str, str | None, list[dict[str, Any]], tuple[str, ...]]


def _queue_workloads(config: PlatformConfig) -> list[_Workload]:
    """One template per NCCL test, then per leaf queue routed to a GPU pool, by the queue's
    workload kind (``PlatformConfig.workload_kinds``)."""
    domain = config.cluster.label_domain
    out = []
    for pool in config.efa_pools:
        out.append(
            (
                f"nccl-allreduce-{pool.name}",
                NCCL_NAMESPACE,
                NCCL_POD_SECURITY,
                NCCL_POD_SECURITY_REASON,
                [
                    default_deny_policy(NCCL_NAMESPACE),
                    allow_dns_policy(NCCL_NAMESPACE),
                    namespace_internal_policy(NCCL_NAMESPACE),
                    nccl_test_manifest(pool, instance_type=pool.efa_types[0], label_domain=domain),
                ],
                nccl_notes(NCCL_NAMESPACE),
            )
        )
    if not config.scheduler.enabled:
        return out
    pools = {p.name: p for p in config.gpu_pools}
    kinds = config.workload_kinds
    stack = (config.pools, config.gpu_operator, config.scheduler)
    nodepools = pool_nodepools(*stack)
    plans = {plan.name: plan for plan in capacity_plan(*stack)}
    gangs = stack_gangs(config)
    for queue in config.scheduler.queues:
        kind = kinds.get(queue.name)
        if kind is None:  # a parent queue, or one routed to no GPU pool
            continue
        routed = [pools[n] for n in queue.node_pools if n in pools]
        if kind == "training":
            out.append(_training(config, queue, gangs[queue.name], nodepools, plans))
        elif kind == "inference":
            out.append(_inference(config, queue, routed[0]))
        else:
            out.append(_notebook(config, queue, routed))
    return out


def _common(config: PlatformConfig, queue, pool) -> tuple[dict[str, str], dict[str, str]]:
    namespace = queue.workload_namespace
    common = {
        "namespace": namespace,
        "queue": queue.name,
        "pool": pool.name,
        "pool_label_key": f"{config.cluster.label_domain}/pool",
    }
    return common, {"namespace": namespace, "queue": queue.name}


def _training(config: PlatformConfig, queue, choice: GangChoice, nodepools, plans) -> _Workload:
    """A gang-scheduled Indexed Job where ``choice`` says (``budget.gangs``: on the EFA pool
    whose NodePools hold the largest gang, else on the queue's first GPU pool; one zone and one
    type when the pool has several, ``gang_placement``)."""
    pool = next(p for p in config.gpu_pools if p.name == choice.pool)
    zone, pinned = (choice.zone, choice.instance_type) if choice.pinned else (None, None)
    smallest = catalog.INSTANCE_TYPES[choice.instance_type]
    common, ids = _common(config, queue, pool)
    namespace = common["namespace"]
    name = f"train-{queue.name}"
    gpus = smallest.gpu_count
    efa = pool.kind == "efa"
    replicas = TRAINING_REPLICAS
    sizing: tuple[str, ...] = ()
    if efa:
        plan = plans.get(queue.name)
        largest = gang_gpus(nodepools[pool.name], smallest, plan.largest_gang if plan else None)
        replicas = gang_replicas(largest, gpus)
        sizing = gang_size_notes(pool.name, replicas, gpus, largest)
    script = f"{name}-script"
    job = training_job_template(
        name=name,
        replicas=replicas,
        gpus_per_pod=gpus,
        image=versions.EXAMPLE_TRAINING_IMAGE,
        script=["train.py"],
        script_config_map=script,
        priority_class="train" if pool.preemptible else "build",
        efa_per_pod=smallest.efa_interfaces if efa else 0,
        hugepages_2mi=catalog.EFA_HUGEPAGES_2MI if efa else None,
        env=NCCL_ENV if efa else None,
        cpu=EFA_CPU if efa else str(CPU_PER_GPU * gpus),
        memory=EFA_MEMORY if efa else f"{MEMORY_GIB_PER_GPU * gpus}Gi",
        shm_size=EFA_SHM if efa else f"{SHM_GIB_PER_GPU * gpus}Gi",
        zone=zone,
        instance_type=pinned,
        **common,
    )
    delay = delay_of(config, queue.name, pool.name)
    job = with_preemption_delay(job, delay)
    documents = [
        training_script_config_map(name=script, files={"train.py": SMOKE_TEST_SCRIPT}, **ids),
        training_service_template(name=name, **ids),
        training_network_policy_template(name=name, **ids),
        job,
    ]
    notes = training_notes(namespace, name) + sizing + gang_notes(queue.name, choice)
    notes += delay_notes(delay)
    documents = dra_documents(documents, pool)
    return (f"training-{queue.name}", namespace, RESTRICTED, None, documents, notes)


def _inference(config: PlatformConfig, queue, pool) -> _Workload:
    """Triton behind a Service, on the queue's first GPU pool."""
    common, ids = _common(config, queue, pool)
    namespace = common["namespace"]
    name = f"serve-{queue.name}"
    model_uri = f"s3://{config.cluster.name}-models/{name}/"
    deployment = inference_deployment_template(
        name=name,
        replicas=2,
        gpus_per_pod=1,
        image=versions.EXAMPLE_INFERENCE_IMAGE,
        model_uri=model_uri,
        fetch_image=versions.EXAMPLE_MODEL_FETCH_IMAGE,
        cpu=INFERENCE_CPU,
        memory=INFERENCE_MEMORY,
        model_volume_size=MODEL_VOLUME_SIZE,
        **common,
    )
    delay = delay_of(config, queue.name, pool.name)
    deployment = with_preemption_delay(deployment, delay)
    documents = [
        inference_service_account_template(name=name, **ids),
        deployment,
        inference_service_template(name=name, **ids),
        inference_network_policy_template(
            name=name,
            ports=[port for _, port in INFERENCE_PORTS],
            client_namespaces=queue.inference_clients,
            **ids,
        ),
    ]
    notes = inference_notes(namespace, name, model_uri) + delay_notes(delay)
    documents = dra_documents(documents, pool)
    return (f"inference-{queue.name}", namespace, RESTRICTED, None, documents, notes)


def slice_resource(capacity: PoolCapacity) -> str | None:
    """The device one notebook takes on a sliced pool: a time-slicing replica or a MIG device
    under ``single`` (``nvidia.com/gpu``), the smallest MIG device under ``mixed``; None on a
    pool of whole GPUs."""
    if capacity.mode in ("time-sliced", "mig-single"):
        return GPU_RESOURCE
    if capacity.mode == "mig-mixed":
        return min(
            capacity.per_gpu,
            key=lambda r: (mig_g_count(r.removeprefix(MIG_RESOURCE_PREFIX)), r),
        )
    return None


def _notebook(config: PlatformConfig, queue, routed) -> _Workload:
    """One interactive pod, in the queue's namespace (so on the queue, issue 23 point 6): on the
    queue's first sliced pool (time-slicing or MIG) one slice; else on its first pool half a GPU
    through KAI GPU sharing (scheduler.gpuSharing), or one whole GPU without it. Priority
    ``build``, KAI's class for notebooks (``build-preemptible`` on a preemptible pool)."""
    sliced = [(p, slice_resource(capacity_of(p, config.gpu_operator))) for p in routed]
    pool, resource = next(((p, r) for p, r in sliced if r is not None), (routed[0], None))
    common, ids = _common(config, queue, pool)
    namespace = common["namespace"]
    name = f"notebook-{queue.name}"
    priority = "build-preemptible" if pool.preemptible else "build"
    shape = {
        "image": versions.EXAMPLE_TRAINING_IMAGE,
        "command": ["sleep", "infinity"],
        "priority_class": priority,
        "cpu": NOTEBOOK_CPU,
        "memory": NOTEBOOK_MEMORY,
    }
    # KAI GPU sharing hands out GPUs the device plugin advertises: none on a DRA pool.
    if resource is None and config.scheduler.gpu_sharing and not pool.dra:
        pod = fractional_pod_template(name=name, gpu_fraction=0.5, **shape, **common)
        how = "Half a GPU through KAI GPU sharing (scheduler.gpuSharing, on by default)."
    else:
        pod = notebook_pod_template(name=name, resource=resource or GPU_RESOURCE, **shape, **common)
        how = (
            f"One {resource} device of pool {pool.name} (a GPU slice)."
            if resource is not None
            else f"One whole GPU of DRA pool {pool.name}, claimed from the NVIDIA DRA driver."
            if pool.dra
            else f"One whole GPU of pool {pool.name} (scheduler.gpuSharing is off)."
        )
    delay = delay_of(config, queue.name, pool.name)
    pod = with_preemption_delay(pod, delay)
    isolation = isolated_pod_network_policy_template(name=name, pod_labels={APP_LABEL: name}, **ids)
    notes = notebook_notes(namespace, name, how) + delay_notes(delay)
    documents = dra_documents([isolation, pod], pool)
    return (f"notebook-{queue.name}", namespace, RESTRICTED, None, documents, notes)


def example_workloads(config: PlatformConfig) -> dict[str, WorkloadTemplate]:
    """Example templates for this stack (not applied by Pulumi), by file name: an NCCL test per
    EFA pool, and with the scheduler, a workload per leaf queue routed to a GPU pool (friction
    point 4). A queue's template runs in the queue's namespace, which the scheduler component
    creates (``scheduler.queue_namespace_manifests``: Pod Security "restricted", the queue
    label the do-not-disrupt policies select), so it does not carry a Namespace; an NCCL test
    starts with its own Namespace, labelled to enforce the level it needs."""
    workloads = _queue_workloads(config)
    version = config.cluster.kubernetes_version
    examples = {}
    for file_name, namespace, level, reason, documents, notes in workloads:
        own = (
            (namespace_manifest(namespace, level, version),) if namespace == NCCL_NAMESPACE else ()
        )
        examples[file_name] = WorkloadTemplate(
            documents=(*own, *documents),
            pod_security=level,
            reason=reason,
            notes=notes,
        )
    return examples
