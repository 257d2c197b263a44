"""Pure helpers of the capacity phase: what the render says about each GPU pool, the Job that
runs ``nvidia-smi`` on one unit of what the pool advertises, and the parsers of its output.

Plain data in, dicts out; no API calls.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import catalog
from ..nodepool.constants import EFA_RESOURCE, GPU_RESOURCE
from ..scheduler.constants import QUEUE_LABEL, SCHEDULER_NAME
from ..scheduler.podsecurity import (
    WRITABLE_HOME,
    restricted_container_security_context,
    restricted_pod_security_context,
)
from . import prices

# A CUDA base image, pinned by exact tag (no digest for this tag is published in NVIDIA's docs or
# the GPU Operator sources; a digest-only reference would hide which CUDA it is). The GPU
# Operator's own end-to-end test runs ``nvidia-smi`` in this image on a one-GPU pod
# (NVIDIA/gpu-operator v26.7.0 tests/e2e/helpers/workload.go:127-150). ``nvidia-smi`` itself is
# not in the image: the NVIDIA container toolkit (preinstalled on the EKS NVIDIA AMIs) mounts the
# host's into any container that is allocated a GPU, with the image's
# ``NVIDIA_DRIVER_CAPABILITIES=compute,utility``; it runs unprivileged.
CUDA_IMAGE = "nvcr.io/nvidia/cuda:12.6.0-base-ubuntu22.04"
# nvidia-smi(1) (https://docs.nvidia.com/deploy/nvidia-smi/index.html), ``--query-gpu`` with
# ``--format=csv,noheader``: one line per visible GPU, the queried fields comma-separated in the
# order asked, memory with its unit ("<n> MiB").
NVIDIA_SMI_QUERY = (
    "nvidia-smi",
    "--query-gpu=name,memory.total,driver_version",
    "--format=csv,noheader",
)
# ``nvidia-smi -L``: "GPU <i>: <name> (UUID: GPU-...)" per GPU, and under it
# "  MIG <profile>     Device  <j>: (UUID: MIG-...)" per MIG device the container can see
# (recorded: NVIDIA/cloud-native-docs gpu-operator/manifests/output/mig-nvidia-smi.txt).
NVIDIA_SMI_LIST = ("nvidia-smi", "-L")
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
NVIDIA_RESOURCE_PREFIX = "nvidia.com/"
JOB_CPU = "100m"
JOB_MEMORY = "128Mi"
# Karpenter's NodePool label on its NodeClaims and Nodes (sigs.k8s.io/karpenter v1.15.0
# pkg/apis/v1/labels.go:46 NodePoolLabelKey, put on every NodeClaim it creates by
# pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go:79-82).
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# The launched type's label on a NodeClaim, once launched: the AWS provider labels the NodeClaim
# it returns with every single-valued requirement of the chosen instance type, the type's own
# name included (aws/karpenter-provider-aws v1.15.0 pkg/cloudprovider/cloudprovider.go:515-526),
# and the launch controller copies those labels onto the NodeClaim (sigs.k8s.io/karpenter v1.15.0
# pkg/controllers/nodeclaim/lifecycle/launch.go:164-170 PopulateNodeClaimDetails).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# The label the Job controller puts on its pods (kubernetes v1.36.3 pkg/apis/batch/types.go:44
# JobNameLabel).
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
NEVER = "Never"


@dataclass(frozen=True)
class Pool:
    """A GPU pool as the render describes it."""

    name: str
    instance_types: tuple[str, ...]
    advertised: dict[str, dict[str, int]]  # capacity.json advertisedPerNode
    node_pools: tuple[str, ...]  # its NodePools' names
    queues: tuple[str, ...]  # the leaf queues routed to it, in render order
    pool_label: str  # "<labelDomain>/pool"
    taints: tuple[dict, ...]  # the NodePool template's taints (not its startupTaints)
    consolidate_after: dict[str, str]  # NodePool name -> spec.disruption.consolidateAfter
    efa: bool  # an EFA pool (its NodePools carry "<labelDomain>/efa: 'true'")
    dra: bool = False  # a DRA pool (capacity.json draDevicesPerNode: budget/dra.py)


def _nodepools(render_manifests) -> dict[str, dict]:
    return {
        m["metadata"]["name"]: m
        for m in render_manifests
        if m.get("kind") == "NodePool" and m.get("apiVersion", "").startswith("karpenter.sh/")
    }


def pools(capacity: dict, manifests) -> dict[str, Pool]:
    """Every pool of ``capacity.json`` with its rendered NodePools, by name, in render order."""
    nodepools = _nodepools(manifests)
    out: dict[str, Pool] = {}
    for entry in capacity.get("pools", []):
        names = tuple(np["name"] for np in entry.get("nodePools", []))
        rendered = [nodepools[n] for n in names if n in nodepools]
        labels = rendered[0]["spec"]["template"]["metadata"]["labels"] if rendered else {}
        pool_label = next((k for k in labels if k.endswith("/pool")), "eks-gpu-platform.io/pool")
        efa_label = pool_label.rsplit("/", 1)[0] + "/efa"
        out[entry["name"]] = Pool(
            name=entry["name"],
            instance_types=tuple(entry.get("instanceTypes", ())),
            advertised={t: dict(v) for t, v in entry.get("advertisedPerNode", {}).items()},
            node_pools=names,
            queues=tuple(
                q["name"] for q in capacity.get("queues", []) if entry["name"] in q.get("pools", ())
            ),
            pool_label=pool_label,
            taints=tuple(rendered[0]["spec"]["template"]["spec"].get("taints", ()))
            if rendered
            else (),
            consolidate_after={
                np["metadata"]["name"]: np["spec"].get("disruption", {}).get("consolidateAfter", "")
                for np in rendered
            },
            efa=labels.get(efa_label) == "true",
            dra="draDevicesPerNode" in entry,
        )
    return out


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def duration_s(text: str) -> float | None:
    """A NodePool duration (Go ``time.ParseDuration`` units h, m, s, ms, as Karpenter's
    ``NillableDuration`` reads it) in seconds; None for ``Never``. Raises ``ValueError`` naming
    the value otherwise."""
    if text == NEVER:
        return None
    if text and _DURATION.sub("", text) == "":
        return sum(float(n) * _UNIT_S[u] for n, u in _DURATION.findall(text))
    raise ValueError(f"duration {text!r}: expected Go duration units (e.g. 5m, 30s) or Never")


def unit_resource(advertised: dict[str, int]) -> str | None:
    """The resource one unit of which a capacity pod requests: a MIG device
    (``nvidia.com/mig-<profile>``, the first by name) where the node advertises one, else
    ``nvidia.com/gpu`` (a whole GPU, or a time-slice of one); None when the node advertises
    neither."""
    mig = sorted(k for k in advertised if k.startswith(MIG_RESOURCE_PREFIX))
    if mig:
        return mig[0]
    return GPU_RESOURCE if advertised.get(GPU_RESOURCE) else None


def cheapest_type(
    pool: Pool, region_name: str, user: Mapping[str, float] | None = None
) -> tuple[str | None, list[str]]:
    """The pool's cheapest instance type in the region that advertises a GPU unit (priced by the
    table, else by ``user``, the ``--price`` prices), and the types left out for want of a
    price (so a caller can say why there is none)."""
    candidates = [t for t in pool.instance_types if unit_resource(pool.advertised.get(t, {}))]
    priced = [t for t in candidates if prices.hourly_usd(region_name, t, user) is not None]
    unpriced = [t for t in candidates if t not in priced]
    if not priced:
        return None, unpriced
    return min(priced, key=lambda t: prices.hourly_usd(region_name, t, user)), unpriced


def is_mig(resource: str) -> bool:
    return resource.startswith(MIG_RESOURCE_PREFIX)


def capacity_job(
    *,
    name: str,
    namespace: str,
    queue: str,
    pool: Pool,
    instance_type: str,
    resource: str,
    deadline_s: int,
) -> dict[str, Any]:
    """A Job whose one pod requests one ``resource`` on the pool's nodes of ``instance_type``
    (the type the cost estimate priced, so Karpenter can launch nothing dearer), through KAI and
    the queue, and runs ``nvidia-smi`` (``-L`` for a MIG device). It meets Pod Security
    "restricted": non-root, no privilege escalation, seccomp RuntimeDefault, every capability
    dropped; no API token."""
    command = list(NVIDIA_SMI_LIST if is_mig(resource) else NVIDIA_SMI_QUERY)
    labels = {QUEUE_LABEL: queue}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline_s,
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "schedulerName": SCHEDULER_NAME,
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": restricted_pod_security_context(),
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": pool.pool_label,
                                                "operator": "In",
                                                "values": [pool.name],
                                            },
                                            {
                                                "key": INSTANCE_TYPE_LABEL,
                                                "operator": "In",
                                                "values": [instance_type],
                                            },
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": [
                        {"key": t["key"], "operator": "Exists", "effect": t["effect"]}
                        for t in pool.taints
                    ],
                    "containers": [
                        {
                            "name": "nvidia-smi",
                            "image": CUDA_IMAGE,
                            "command": command,
                            "env": [dict(WRITABLE_HOME)],
                            "resources": {
                                "requests": {resource: "1", "cpu": JOB_CPU, "memory": JOB_MEMORY},
                                "limits": {resource: "1", "memory": JOB_MEMORY},
                            },
                            "securityContext": restricted_container_security_context(),
                        }
                    ],
                },
            },
        },
    }


@dataclass(frozen=True)
class SmiGpu:
    name: str
    memory_mib: int | None = None
    driver: str | None = None
    uuid: str | None = None
    mig: tuple[tuple[str, str], ...] = ()  # (profile, MIG UUID) per MIG device


def parse_smi_csv(text: str) -> list[SmiGpu]:
    """``nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader``: one
    GPU per line, e.g. ``NVIDIA L4, 23034 MiB, 580.95.05``. Raises ``ValueError`` naming the
    first line that is not three fields with a MiB figure."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        memory = re.fullmatch(r"(\d+) MiB", fields[1]) if len(fields) == 3 else None
        if memory is None:
            raise ValueError(f"not an nvidia-smi csv line (name, memory.total, driver): {line!r}")
        gpus.append(SmiGpu(name=fields[0], memory_mib=int(memory.group(1)), driver=fields[2]))
    return gpus


_GPU_LINE = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[^)]+)\)\s*$")
_MIG_LINE = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)]+)\)\s*$")


def parse_smi_list(text: str) -> list[SmiGpu]:
    """``nvidia-smi -L``: each GPU with its MIG devices. Raises ``ValueError`` naming the first
    line that is neither a GPU nor a MIG device line."""
    gpus: list[SmiGpu] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        gpu = _GPU_LINE.match(line)
        mig = _MIG_LINE.match(line)
        if gpu:
            gpus.append(SmiGpu(name=gpu.group(2), uuid=gpu.group(3)))
        elif mig and gpus:
            last = gpus[-1]
            gpus[-1] = SmiGpu(
                name=last.name, uuid=last.uuid, mig=(*last.mig, (mig.group(1), mig.group(3)))
            )
        else:
            raise ValueError(f"not an nvidia-smi -L line: {line!r}")
    return gpus


def gpu_matches(instance_type: str, smi_name: str) -> bool:
    """Whether an ``nvidia-smi`` GPU name is the GPU of ``instance_type``: every ``-``-separated
    token of Karpenter's ``instance-gpu-name`` (catalog ``gpu_name``: ``l4``, ``a10g``,
    ``rtx-pro-server-6000``) is a token of the name split on spaces and ``-`` (``NVIDIA L4``,
    ``NVIDIA A100-SXM4-40GB``, ``NVIDIA RTX PRO 6000 Blackwell Server Edition``), so ``l4`` does
    not match ``NVIDIA L40S``."""
    it = catalog.INSTANCE_TYPES.get(instance_type)
    if it is None:
        return False
    tokens = {t for t in re.split(r"[\s-]+", smi_name.lower()) if t}
    return all(t in tokens for t in it.gpu_name.split("-"))


def nvidia_allocatable(node: dict) -> dict[str, int]:
    """The node's allocatable ``nvidia.com/*`` resources, as integers (device counts)."""
    allocatable = node.get("status", {}).get("allocatable", {})
    return {
        k: int(str(v))
        for k, v in allocatable.items()
        if k.startswith(NVIDIA_RESOURCE_PREFIX) and str(v).isdigit()
    }


__all__ = [
    "CUDA_IMAGE",
    "EFA_RESOURCE",
    "GPU_RESOURCE",
    "Pool",
    "SmiGpu",
    "capacity_job",
    "cheapest_type",
    "duration_s",
    "gpu_matches",
    "nvidia_allocatable",
    "parse_smi_csv",
    "parse_smi_list",
    "pools",
    "unit_resource",
]
