"""Pure builders: a pool spec in, Karpenter manifests (plain dicts) out; no Pulumi.

The NodePool's labels, taints and requirements, the EC2NodeClass with its block devices and
EFA hugepages user data, the NodeOverlay, and the tolerations node DaemonSets need.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .. import catalog, versions
from ..budget.dra import dra_limit_per_gpu
from ..budget.nodepools import type_slug as type_slug  # re-exported (its earlier home)
from ..catalog_cpu import GRAVITON_FAMILY as GRAVITON_FAMILY  # re-exported (its earlier home)
from ..catalog_cpu import family_arch as family_arch  # re-exported, likewise
from ..cluster.spec import DEFAULT_LABEL_DOMAIN, LABEL_DOMAIN_ANNOTATION
from ..naming import DISCOVERY_TAG
from .constants import (
    CAPACITY_TYPE_LABEL,
    DEFAULT_CONSOLIDATE_AFTER,
    DEFAULT_CPU_CATEGORIES,
    DEFAULT_CPU_MIN_GENERATION,
    DEVICE_PLUGIN_DEPLOY_LABEL,
    DEVICE_PLUGIN_HELD,
    EFA_TAINT,
    GPU_RESOURCE,
    GPU_TAINT,
    MIG_PENDING_TAINT,
)
from .dra import dra_labels
from .placement import PLACEMENT_GROUP_ID
from .spec import NodePoolSpec
from .userdata import HUGEPAGE_BYTES as HUGEPAGE_BYTES  # re-exported (its earlier home)
from .userdata import hugepages_user_data as hugepages_user_data  # re-exported, likewise
from .userdata import node_user_data

# The GPU Operator's switch for all of its operands on a node (getting-started.rst L628-632).
OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"


def pool_labels(spec: NodePoolSpec, label_domain: str) -> dict[str, str]:
    """Labels on every node of the pool: the pool label first (friction point 4)."""
    labels = {
        f"{label_domain}/pool": spec.name,
        f"{label_domain}/preemptible": "true" if spec.preemptible else "false",
    }
    if spec.kind == "efa":
        labels[f"{label_domain}/efa"] = "true"
    if spec.mig_profile:
        labels["nvidia.com/mig.config"] = spec.mig_profile
    if spec.mig_startup_taint:
        # The device plugin stays off until the MIG startup remover sees the layout applied
        # (DEVICE_PLUGIN_HELD): before the MIG manager reconfigures, it would advertise the whole
        # GPUs as nvidia.com/gpu under either strategy (NVIDIA/k8s-device-plugin v0.20.0
        # internal/rm/rm.go L111), and Karpenter would charge the node 8 instead of its overlay.
        # Karpenter puts NodePool template labels on the NodeClaim (kubernetes-sigs/karpenter
        # v1.15.0 pkg/apis/v1/nodepool.go L276-281), which karpenter-provider-aws v1.15.0 passes
        # to the kubelet as --node-labels (pkg/providers/launchtemplate/launchtemplate.go
        # L149-151, pkg/providers/amifamily/bootstrap/bootstrap.go L90-100): the node registers
        # with it, before the operator can label it. The kubelet sets --node-labels only when it
        # creates the Node (kubernetes v1.36.3 pkg/kubelet/kubelet_node_status.go L127-133,
        # L353-358), and Karpenter syncs NodeClaim labels only until registration
        # (pkg/controllers/nodeclaim/lifecycle/registration.go L60-64, L207-221), so neither
        # puts "false" back after the remover's "true" (nor after the MIG manager's reboot).
        labels[DEVICE_PLUGIN_DEPLOY_LABEL] = DEVICE_PLUGIN_HELD
    if spec.time_slicing:
        labels["nvidia.com/device-plugin.config"] = spec.time_slicing
    if spec.is_gpu and spec.ami.family == "bottlerocket":
        # Bottlerocket's NVIDIA variants run their own device plugin (EKS User Guide, "Install
        # Kubernetes device plugin for GPUs"; bottlerocket-os/bottlerocket#4309), and the
        # operator's validator finds no nvidia-smi where it looks (NVIDIA/gpu-operator v26.7.0
        # cmd/nvidia-validator/main.go L251-258), so every operand waiting on its marker
        # (/run/nvidia/validations/toolkit-ready: GFD, DCGM, device plugin, MIG manager) would
        # stay in Init. The operator deploys nothing on nodes labelled so (controllers/
        # state_manager.go L372-378, L457-462).
        labels[OPERANDS_LABEL] = "false"
    labels.update(dra_labels(spec, label_domain))
    # The platform's own labels win over user labels (config also rejects such keys).
    return {**spec.labels, **labels}


def pool_taints(spec: NodePoolSpec) -> list[dict[str, str]]:
    taints = []
    if spec.is_gpu:
        taints.append(dict(GPU_TAINT))
    if spec.kind == "efa":
        taints.append(dict(EFA_TAINT))
    taints += [taint.manifest() for taint in spec.taints]
    return taints


def pool_startup_taints(spec: NodePoolSpec) -> list[dict[str, str]]:
    """The NodePool's ``startupTaints``: a MIG pool's nodes stay tainted, and uninitialized for
    Karpenter, until the MIG manager has applied the pool's layout and the device plugin
    advertises it (``MIG_PENDING_TAINT``; ``NodePoolSpec.mig_startup_taint``)."""
    return [dict(MIG_PENDING_TAINT)] if spec.mig_startup_taint else []


def taint_tolerations(
    pools: Sequence[NodePoolSpec], skip: Sequence[str] = (GPU_RESOURCE,)
) -> list[dict[str, str]]:
    """Tolerations for node DaemonSets (GPU Operator operands, EFA device plugin) beyond the
    ``skip`` keys they tolerate already: every other taint the pools put on their nodes, startup
    taints included (the MIG manager and the device plugin must run on a node still carrying
    ``MIG_PENDING_TAINT`` to get it removed), once per key and effect, sorted."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in pools:
        for taint in pool_taints(pool) + pool_startup_taints(pool):
            if taint["key"] not in skip:
                seen.setdefault(
                    (taint["key"], taint["effect"]),
                    {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]},
                )
    return [seen[k] for k in sorted(seen)]


def _requirement(key: str, operator: str, values: Sequence[str]) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def pool_requirements(
    spec: NodePoolSpec, instance_type: str | Sequence[str] | None = None
) -> list[dict]:
    """The NodePool's requirements: what it may launch, where, and on which capacity.

    ``instance_type``: the type, or the types, of one of an EFA pool's NodePools (one per EFA
    layout, ``budget.nodepools``)."""
    reqs = []
    if spec.is_gpu:
        reqs.append(_requirement("karpenter.k8s.aws/instance-gpu-manufacturer", "In", ["nvidia"]))
        # At least one whole GPU where the pool selects types by GPU name or family (an EFA
        # NodePool, or a pool of listed types, names its types): the fractional-GPU types (g6f,
        # gr6f: an L4 partition) carry the same GPU name, but EC2 reports their GPU ``Count`` as
        # 0 (DescribeInstanceTypes ``GpuInfo.Gpus[0].Count``, ``GpuPartitionSize`` 0.125-0.5),
        # which Karpenter puts in this label (karpenter-provider-aws v1.15.0
        # pkg/providers/instancetype/types.go L430-436), with no ``nvidia.com/gpu`` capacity.
        # Without it a pod that requests no GPU (KAI's fractional pods) lands on a g6f node whose
        # GPU KAI's reservation cannot use (found by the conformance suite's pool-shapes scenario).
        if (
            instance_type is None
            and not spec.instance_types
            and (spec.gpus or spec.instance_families)
        ):
            reqs.append(_requirement("karpenter.k8s.aws/instance-gpu-count", "Gt", ["0"]))
        if instance_type is not None:
            types = [instance_type] if isinstance(instance_type, str) else list(instance_type)
            reqs.append(_requirement("node.kubernetes.io/instance-type", "In", types))
        else:
            if spec.gpus:
                reqs.append(_requirement("karpenter.k8s.aws/instance-gpu-name", "In", spec.gpus))
            if spec.instance_families:
                reqs.append(
                    _requirement("karpenter.k8s.aws/instance-family", "In", spec.instance_families)
                )
            if spec.instance_types:
                reqs.append(
                    _requirement("node.kubernetes.io/instance-type", "In", spec.instance_types)
                )
        arches = sorted({t.kubernetes_arch for t in spec.catalog_types})
        reqs.append(_requirement("kubernetes.io/arch", "In", arches))
    else:
        if spec.instance_types:
            reqs.append(_requirement("node.kubernetes.io/instance-type", "In", spec.instance_types))
        elif spec.instance_families:
            reqs.append(
                _requirement("karpenter.k8s.aws/instance-family", "In", spec.instance_families)
            )
        else:
            reqs.append(
                _requirement("karpenter.k8s.aws/instance-category", "In", DEFAULT_CPU_CATEGORIES)
            )
            reqs.append(
                _requirement(
                    "karpenter.k8s.aws/instance-generation",
                    "Gt",
                    [str(DEFAULT_CPU_MIN_GENERATION)],
                )
            )
        families = [t.split(".")[0] for t in spec.instance_types] or list(spec.instance_families)
        arches = sorted({family_arch(f) for f in families}) if families else ["amd64"]
        reqs.append(_requirement("kubernetes.io/arch", "In", arches))
    reqs.append(_requirement("kubernetes.io/os", "In", ["linux"]))
    reqs.append(_requirement(CAPACITY_TYPE_LABEL, "In", spec.capacity_types))
    if spec.zone is not None:
        reqs.append(_requirement("topology.kubernetes.io/zone", "In", [spec.zone]))
    return reqs


def nodepool_manifest(
    spec: NodePoolSpec,
    *,
    name: str,
    node_class: str,
    label_domain: str,
    gpu_limit: int | None,
    instance_type: str | Sequence[str] | None = None,
    per_gpu: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A Karpenter ``NodePool`` (``karpenter.sh/v1``) for the pool (or one EFA layout of it:
    ``instance_type`` then names its types).

    ``gpu_limit`` is the pool's budget in physical GPUs; its ``limits`` carry it in the units
    the nodes advertise: ``per_gpu`` of each resource per GPU (``PoolCapacity.per_gpu``;
    default one ``nvidia.com/gpu``), because Karpenter charges initialized nodes with their
    ``Node.Status.Capacity`` (kubernetes-sigs/karpenter v1.15.0 statenode.go ``Capacity()``).
    """
    limits: dict[str, Any] = {}
    if spec.limits.cpu is not None:
        limits["cpu"] = spec.limits.cpu
    if spec.limits.memory is not None:
        limits["memory"] = spec.limits.memory
    if spec.dra:
        # Its nodes advertise no nvidia.com/gpu: the budget is a cpu limit (budget/dra.py).
        per_gpu = dra_limit_per_gpu(spec)
    if gpu_limit is not None:
        for resource, n in sorted((per_gpu or {GPU_RESOURCE: 1}).items()):
            limits[resource] = str(gpu_limit * n)
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": node_class},
        "requirements": pool_requirements(spec, instance_type),
        "expireAfter": spec.expiry,
        "terminationGracePeriod": spec.grace,
    }
    taints = pool_taints(spec)
    if taints:
        template_spec["taints"] = taints
    if startup := pool_startup_taints(spec):
        template_spec["startupTaints"] = startup
    manifest_spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": pool_labels(spec, label_domain)},
            "spec": template_spec,
        },
        "disruption": {
            "consolidationPolicy": spec.consolidation_policy,
            "consolidateAfter": spec.disruption.consolidate_after or DEFAULT_CONSOLIDATE_AFTER,
            "budgets": spec.budgets,
        },
    }
    if limits:
        manifest_spec["limits"] = limits
    if spec.weight is not None:
        manifest_spec["weight"] = spec.weight
    metadata: dict[str, Any] = {"name": name}
    if label_domain != DEFAULT_LABEL_DOMAIN:
        # Tells the policy pack which domain the labels use (policies/rules/_kube.py).
        metadata["annotations"] = {LABEL_DOMAIN_ANNOTATION: label_domain}
    return {
        "apiVersion": versions.NODEPOOL_API,
        "kind": "NodePool",
        "metadata": metadata,
        "spec": manifest_spec,
    }


def block_device_mappings(spec: NodePoolSpec) -> list[dict[str, Any]]:
    """Encrypted gp3 volumes, sized by ``NodePoolSpec.root_volume_settings``."""
    rv = spec.root_volume
    size, iops, throughput = spec.root_volume_settings
    ebs: dict[str, Any] = {
        "volumeSize": f"{size}Gi",
        "volumeType": "gp3",
        "iops": iops,
        "throughput": throughput,
        "encrypted": True,
        "deleteOnTermination": True,
    }
    if rv.kms_key_id:
        ebs["kmsKeyID"] = rv.kms_key_id
    if spec.ami.family == "bottlerocket":
        os_volume = {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": "4Gi",
                "volumeType": "gp3",
                "encrypted": True,
                "deleteOnTermination": True,
            },
        }
        return [os_volume, {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": ebs}]
    return [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": ebs}]


def ec2nodeclass_manifest(
    spec: NodePoolSpec,
    *,
    name: str,
    cluster_name: str,
    node_role: str,
    tags: Mapping[str, str],
    extra_security_group_ids: Sequence[str] = (),
    placement_group: str | None = None,
    instance_type: str | None = None,
    subnet_selector: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Karpenter ``EC2NodeClass`` (``karpenter.k8s.aws/v1``): AMI, network, storage, IMDS.

    ``subnet_selector``: the tags of the private subnets (``Network.subnet_selector``; default
    ``karpenter.sh/discovery`` = the cluster name). Selector terms are not in the EC2NodeClass
    drift hash (``hash:"ignore"``, karpenter-provider-aws v1.15.0 pkg/apis/v1/ec2nodeclass.go
    L41); a node drifts only when its subnet is no longer selected (``isSubnetDrifted``,
    pkg/cloudprovider/drift.go; website/content/en/docs/concepts/disruption.md L144-149)."""
    discovery = {"tags": {DISCOVERY_TAG: cluster_name}}
    subnets = {"tags": dict(subnet_selector)} if subnet_selector else discovery
    node_spec: dict[str, Any] = {
        "role": node_role,
        "amiSelectorTerms": [{"alias": spec.ami.alias}],
        "subnetSelectorTerms": [subnets],
        "securityGroupSelectorTerms": [discovery, *({"id": sg} for sg in extra_security_group_ids)],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": block_device_mappings(spec),
    }
    if spec.is_gpu:
        # Local NVMe, striped, backs containerd and the kubelet: image pulls at disk speed
        # (how Karpenter and nodeadm / Bottlerocket place them: userdata.py's docstring).
        node_spec["instanceStorePolicy"] = "RAID0"
    kubelet = spec.kubelet.manifest()
    if kubelet:
        node_spec["kubelet"] = kubelet
    if instance_type is not None:
        node_spec["networkInterfaces"] = catalog.efa_network_interfaces(instance_type)
    # Never a public IP, whatever the subnet's mapPublicIpOnLaunch: subnets are selected by tag,
    # and a mistagged public subnet must not give nodes internet-reachable addresses (issue 22,
    # Low list; CIS EKS 5.4.3). EFA classes need it too: EC2 refuses a public IP with several
    # EFA interfaces.
    node_spec["associatePublicIPAddress"] = False
    # Parallel pulls, registry QPS/burst, EFA hugepages and pre-pulled images (userdata.py).
    node_spec["userData"] = node_user_data(
        spec.ami.family,
        hugepages_2mi=catalog.hugepages_2mi_for(instance_type) if instance_type else None,
        pre_pull=spec.pre_pull_images,
    )
    if placement_group is not None:
        # By id (pg-...) or by name (karpenter-provider-aws v1.15.0 EC2NodeClass CRD).
        key = "id" if re.fullmatch(PLACEMENT_GROUP_ID, placement_group) else "name"
        node_spec["placementGroupSelector"] = {key: placement_group}
    if spec.capacity_reservations:
        node_spec["capacityReservationSelectorTerms"] = [
            c.manifest() for c in spec.capacity_reservations
        ]
    node_spec["tags"] = {**tags, "eks-gpu-platform/pool": spec.name}
    return {
        "apiVersion": versions.EC2NODECLASS_API,
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": node_spec,
    }


def nodeoverlay_manifest(spec: NodePoolSpec, *, label_domain: str) -> dict[str, Any]:
    """A ``NodeOverlay`` telling Karpenter the EFA nodes' hugepages, so such pods provision."""
    return {
        "apiVersion": versions.NODEOVERLAY_API,
        "kind": "NodeOverlay",
        "metadata": {"name": f"{spec.name}-hugepages"},
        "spec": {
            "requirements": [
                _requirement(f"{label_domain}/pool", "In", [spec.name]),
                _requirement("node.kubernetes.io/instance-type", "In", spec.efa_types),
            ],
            "capacity": {"hugepages-2Mi": catalog.EFA_HUGEPAGES_2MI},
        },
    }
