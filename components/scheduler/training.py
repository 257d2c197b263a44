"""Distributed training for KAI on one pool with what every cluster has (pure builders, dicts
out): a ``batch/v1`` Indexed Job whose pods start ``torchrun`` with c10d rendezvous at pod 0,
reached by name through a headless Service (no training operator needed).

- Indexed Job: each pod gets its index in ``JOB_COMPLETION_INDEX`` and the hostname
  ``<job>-<index>``; with ``subdomain`` naming a headless Service, each pod's fully qualified
  name is ``<job>-<index>.<service>.<namespace>.svc.<cluster domain>``
  (https://kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode,
  https://kubernetes.io/docs/tasks/job/job-with-pod-to-pod-communication/,
  https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/
  #pod-s-hostname-and-subdomain-fields). The kubelet writes that name into the pod's own
  ``/etc/hosts`` as ``<ip> <fqdn> <hostname>`` (kubernetes pkg/kubelet/kubelet_pods.go:
  ``GeneratePodHostNameAndDomain`` builds ``<subdomain>.<namespace>.svc.<clusterDomain>``,
  ``managedHostsFileContent`` writes the line); the other pods resolve it through the headless
  Service's DNS records.
- torchrun (https://docs.pytorch.org/docs/stable/elastic/run.html): ``--nnodes`` is the number
  of pods, ``--nproc-per-node`` the GPUs per pod, ``--rdzv-id`` the job's id, and
  ``--rdzv-backend=c10d --rdzv-endpoint=<host>:<port>`` hosts the rendezvous store on the node
  that ``host`` names: pod 0. torch/distributed/elastic/rendezvous/utils.py
  ``_matches_machine_hostname`` compares ``host`` with ``gethostname()`` (``<job>-0``), with the
  canonical name of ``gethostname()`` (``getaddrinfo(..., AI_CANONNAME)``: the first name of
  the ``/etc/hosts`` line, the FQDN) and with the addresses ``host`` resolves to, a DNS lookup
  whose failure (``gaierror``) it swallows. The endpoint is therefore the FQDN: pod 0 recognises
  it from ``/etc/hosts`` even before the Service's record is published, where the short
  ``<job>-0.<service>`` matched only through DNS (a pod 0 started before the record existed did
  not host the store and every rank timed out). The c10d
  backend assigns node ranks at the rendezvous; torch/distributed/run.py hands ``--node-rank``
  (here ``$(JOB_COMPLETION_INDEX)``) to the rendezvous only for the ``static`` backend, so it
  documents the pod's index and keeps the command right if the backend is switched to static.
"""

from collections.abc import Mapping, Sequence

from .constants import (
    BATCH_MIN_MEMBER_ANNOTATION,
    DEFAULT_TRAINING_CONTAINER,
    EFA_TOLERATION,
    GPU_TOLERATION,
    JOB_NAME_LABEL,
    QUEUE_LABEL,
    SCHEDULER_NAME,
    ZONE_LABEL,
)
from .parts import (
    check_quantities,
    check_workload,
    container,
    pod_annotations,
    pool_node_affinity,
    resources,
)
from .podsecurity import WRITABLE_HOME, restricted_pod_security_context

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
RENDEZVOUS_PORT = 29400  # torchrun's default c10d port (docs: "defaults to 29400")
RENDEZVOUS_PORT_NAME = "rendezvous"
# The cluster's DNS domain (the kubelet's ``clusterDomain``), the last part of a pod's FQDN. EKS
# nodes use the Kubernetes default: AL2023's nodeadm writes ``clusterDomain: cluster.local``
# (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go ``defaultKubeletSubConfig``), and
# Bottlerocket's ``settings.kubernetes.cluster-domain`` "Defaults to `cluster.local`"
# (bottlerocket-os/bottlerocket README.md, Kubernetes settings); Karpenter's bootstrap sets
# neither (aws/karpenter-provider-aws v1.15.0 and v1.15.1 pkg/providers/amifamily/bootstrap/:
# nodeadm.go and bottlerocket.go assign no cluster domain; bottlerocketsettings.go L92 only
# declares ``cluster-domain`` for the user's settings). A cluster built with another domain needs
# this constant changed.
CLUSTER_DOMAIN = "cluster.local"
# Set by the Job controller in every container of an Indexed Job's pods; Kubernetes expands
# ``$(VAR)`` in command and args from the container's environment.
COMPLETION_INDEX_VARIABLE = "JOB_COMPLETION_INDEX"
SHM_VOLUME = "shm"
SCRIPT_VOLUME = "script"
SCRIPT_DIR = "/workspace"
# A training script that runs as written: one NCCL all-reduce over every GPU of every pod, the
# sum checked against the world size (torchrun sets LOCAL_RANK, RANK, WORLD_SIZE, MASTER_ADDR and
# MASTER_PORT for each process it starts).
SMOKE_TEST_SCRIPT = """\
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
total = torch.ones(1, device="cuda")
dist.all_reduce(total)
rank, world = dist.get_rank(), dist.get_world_size()
print(f"rank {rank}/{world}: all-reduce sum {total.item():.0f}", flush=True)
assert total.item() == world, f"all-reduce sum {total.item()} != world size {world}"
dist.destroy_process_group()
"""


def gang_placement(
    zones: Sequence[str],
    instance_types: Sequence[str],
    *,
    zone: str | None = None,
    instance_type: str | None = None,
) -> tuple[str | None, str | None]:
    """The one zone and one instance type a gang template pins on a pool with several of
    either, or ``(None, None)`` for a pool with one of each (and no override).

    Why pin: Karpenter does not keep a self-affine gang together when each pod needs a node of
    its own. For a required pod affinity with no domain recorded yet, ``nextDomainAffinity`` may
    offer two domains (kubernetes-sigs/karpenter v1.15.0 pkg/controllers/provisioning/
    scheduling/topologygroup.go L365-386: both loops insert one), and ``Topology.Record`` records
    a pod's domain only once its requirements narrow to one value (topology.go L205-209), so each
    NodeClaim of the gang can bootstrap its own zone or type. Required node affinity with one
    zone and one type narrows every NodeClaim to the same pair.

    ``zones``: the pool's zones (an EFA pool's one zone, or the VPC's, in subnet order; empty
    when not known, e.g. an existing VPC before deployment); ``instance_types``: the pool's
    types in order of preference. Defaults: the first zone, the first type; ``zone`` and
    ``instance_type`` override them (configuration ``scheduler.queues[].gangZone`` and
    ``gangInstanceType``). The render's own templates take the pool, zone and type from
    ``budget.gangs`` (reserved capacity first, then ``instanceTypes`` order, among types whose
    NodePool holds a node), which decides the same pin."""
    if len(set(zones)) <= 1 and len(instance_types) <= 1 and zone is None and instance_type is None:
        return None, None
    return (zone or (zones[0] if zones else None)), (
        instance_type or (instance_types[0] if instance_types else None)
    )


def gang_node_affinity(
    pool_label_key: str, pool: str, *, zone: str | None, instance_type: str | None
) -> dict:
    """Required node affinity: the pool, and the pinned zone and instance type if any."""
    affinity = pool_node_affinity(pool_label_key, pool)
    term = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    for key, value in ((ZONE_LABEL, zone), (INSTANCE_TYPE_LABEL, instance_type)):
        if value is not None:
            term["matchExpressions"].append({"key": key, "operator": "In", "values": [value]})
    return affinity


def rendezvous_host(*, name: str, service: str, namespace: str) -> str:
    """Pod 0's fully qualified name, ``<job>-0.<service>.<namespace>.svc.<cluster domain>``
    (see the module docstring for why not the short ``<job>-0.<service>``)."""
    return f"{name}-0.{service}.{namespace}.svc.{CLUSTER_DOMAIN}"


def torchrun_command(
    *,
    name: str,
    service: str,
    namespace: str,
    nodes: int,
    gpus_per_pod: int,
    script: Sequence[str],
) -> list[str]:
    """``torchrun`` for pod ``$(JOB_COMPLETION_INDEX)`` of ``nodes``, rendezvous at pod 0."""
    host = rendezvous_host(name=name, service=service, namespace=namespace)
    return [
        "torchrun",
        f"--nnodes={nodes}",
        f"--nproc-per-node={gpus_per_pod}",
        f"--node-rank=$({COMPLETION_INDEX_VARIABLE})",
        f"--rdzv-id={name}",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint={host}:{RENDEZVOUS_PORT}",
        *script,
    ]


def training_script_config_map(
    *, name: str, namespace: str, queue: str, files: dict[str, str]
) -> dict:
    """A ConfigMap of training scripts, mounted read-only at ``/workspace`` by a Job built with
    ``script_config_map=name``."""
    check_workload("training_script_config_map", name=name, namespace=namespace, queue=queue)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "data": dict(files),
    }


def training_service_template(*, name: str, namespace: str, queue: str) -> dict:
    """The headless Service giving the Job's pods their DNS names (``clusterIP: None``).

    ``publishNotReadyAddresses`` publishes pod 0's name as soon as it has an address: the other
    pods need it to reach the rendezvous before any pod could pass a readiness check (ServiceSpec
    ``publishNotReadyAddresses``: the endpoint controllers consider every endpoint ready; its
    primary use is a headless Service's DNS records for peer discovery,
    https://kubernetes.io/docs/reference/kubernetes-api/service-resources/service-v1/#ServiceSpec).
    """
    check_workload("training_service_template", name=name, namespace=namespace, queue=queue)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "clusterIP": "None",
            "selector": {JOB_NAME_LABEL: name},
            "publishNotReadyAddresses": True,
            "ports": [
                {
                    "name": RENDEZVOUS_PORT_NAME,
                    "port": RENDEZVOUS_PORT,
                    "targetPort": RENDEZVOUS_PORT,
                    "protocol": "TCP",
                }
            ],
        },
    }


def training_job_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: str,
    pool_label_key: str,
    replicas: int,
    gpus_per_pod: int,
    image: str,
    script: Sequence[str],
    cpu: str,
    memory: str,
    shm_size: str,
    service: str | None = None,
    script_config_map: str | None = None,
    priority_class: str = "train",
    efa_per_pod: int = 0,
    hugepages_2mi: str | None = None,
    env: Mapping[str, str] | None = None,
    do_not_disrupt: str | None = None,
    zone: str | None = None,
    instance_type: str | None = None,
) -> dict:
    """A gang-scheduled multi-pod training ``batch/v1`` Job (Indexed) for KAI on one pool.

    ``zone`` and ``instance_type`` (``gang_placement``) add required node affinity on one zone
    and one instance type: on a pool with several, Karpenter's pod affinity alone does not keep
    a gang of whole-node pods in one zone and type (see ``gang_placement``).

    KAI gangs it (``kai.scheduler/batch-min-member`` = replicas on the Job); required node
    affinity on the pool label keeps it in one pool; required pod affinity, selecting the Job's
    own pods (``batch.kubernetes.io/job-name``, set by the Job controller), on the pool label, the
    zone and the instance type keeps every pod in the same pool, AZ and instance type for KAI
    and the kube-scheduler; Karpenter provisions by it only when the pool has one zone and one
    type, hence ``zone`` and ``instance_type``. Non-preemptible classes get
    ``karpenter.sh/do-not-disrupt: "true"``; ``do_not_disrupt`` (e.g. ``"4h"``) protects a
    preemptible job for a while. ``script`` is the training script and its arguments, started
    by ``torchrun`` (see the module docstring); ``service`` names the headless Service
    (default: ``name``); ``script_config_map`` names a ConfigMap mounted read-only at
    ``/workspace`` (``training_script_config_map``), the working directory; ``env`` adds
    environment variables (on EFA pools, NCCL's and libfabric's). Pods meet Pod
    Security "restricted" and mount no API token; ``/dev/shm`` is a memory ``emptyDir`` of
    ``shm_size`` (counted in the memory limit)."""
    service = service if service is not None else name
    check_workload(
        "training_job_template",
        name=name,
        namespace=namespace,
        queue=queue,
        pool=pool,
        service=service,
        **({"script_config_map": script_config_map} if script_config_map else {}),
    )
    check_quantities(
        "training_job_template",
        cpu=cpu,
        memory=memory,
        shm_size=shm_size,
        hugepages_2mi=hugepages_2mi,
    )
    if replicas < 1:
        raise ValueError(f"training_job_template: replicas {replicas} must be at least 1")
    if gpus_per_pod < 1:
        raise ValueError(f"training_job_template: gpus_per_pod {gpus_per_pod} must be at least 1")
    if efa_per_pod < 0:
        raise ValueError(f"training_job_template: efa_per_pod {efa_per_pod} must not be negative")
    if not script:
        raise ValueError("training_job_template: script is empty; name the training script")
    own_pods = {"matchLabels": {JOB_NAME_LABEL: name}}
    tolerations = [dict(GPU_TOLERATION)]
    if efa_per_pod:
        tolerations.append(dict(EFA_TOLERATION))
    mounts = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
    volumes: list[dict] = [
        {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": shm_size}}
    ]
    workdir = {}
    if script_config_map:
        mounts.append({"name": SCRIPT_VOLUME, "mountPath": SCRIPT_DIR, "readOnly": True})
        volumes.append({"name": SCRIPT_VOLUME, "configMap": {"name": script_config_map}})
        workdir = {"workingDir": SCRIPT_DIR}
    pod_metadata: dict = {"labels": {QUEUE_LABEL: queue}}
    if annotations := pod_annotations(priority_class, do_not_disrupt):
        pod_metadata["annotations"] = annotations
    trainer = container(
        DEFAULT_TRAINING_CONTAINER,
        image,
        command=torchrun_command(
            name=name,
            service=service,
            namespace=namespace,
            nodes=replicas,
            gpus_per_pod=gpus_per_pod,
            script=script,
        ),
        env=[WRITABLE_HOME, *({"name": k, "value": v} for k, v in (env or {}).items())],
        ports=[{"name": RENDEZVOUS_PORT_NAME, "containerPort": RENDEZVOUS_PORT}],
        volumeMounts=mounts,
        **workdir,
        resources=resources(
            cpu=cpu, memory=memory, gpus=gpus_per_pod, efa=efa_per_pod, hugepages_2mi=hugepages_2mi
        ),
    )
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue},
            "annotations": {BATCH_MIN_MEMBER_ANNOTATION: str(replicas)},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": replicas,
            "parallelism": replicas,
            "template": {
                "metadata": pod_metadata,
                "spec": {
                    "schedulerName": SCHEDULER_NAME,
                    "priorityClassName": priority_class,
                    "restartPolicy": "Never",
                    "subdomain": service,
                    "automountServiceAccountToken": False,
                    "securityContext": restricted_pod_security_context(),
                    "affinity": {
                        "nodeAffinity": gang_node_affinity(
                            pool_label_key, pool, zone=zone, instance_type=instance_type
                        ),
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": own_pods, "topologyKey": key}
                                for key in (pool_label_key, ZONE_LABEL, INSTANCE_TYPE_LABEL)
                            ]
                        },
                    },
                    "tolerations": tolerations,
                    "containers": [trainer],
                    "volumes": volumes,
                },
            },
        },
    }
