"""The pools the nodepool tests build, the expected pieces they share, and every manifest
built from them (``MANIFESTS``, each also validated against the Karpenter v1.15.0 CRDs).
"""

from collections.abc import Callable

from eks_gpu_platform.nodepool.manifests import (
    ec2nodeclass_manifest,
    nodeoverlay_manifest,
    nodepool_manifest,
    type_slug,
)
from eks_gpu_platform.nodepool.spec import NodePoolSpec, default_cpu_pool
from eks_gpu_platform.spec import load_value

DOMAIN = "example.com"
# Not the default domain: the NodePools say which one their labels use (for the policy pack).
DOMAIN_ANNOTATION = {"eks-gpu-platform.io/label-domain": DOMAIN}
CLUSTER = "gpu-test"
ROLE = "KarpenterNodeRole-gpu-test"
TAGS = {"team": "ml"}
EFA_SG = "sg-0123456789abcdef0"
PLACEMENT_GROUP = "gpu-test-train"
KEY = "nodePools[0]"

# The same value the builders take from versions.py, written out so that a bump shows up here.
AL2023 = "al2023@v20260903"
BOTTLEROCKET = "bottlerocket@v1.65.0"


def spec(raw: dict) -> NodePoolSpec:
    """A pool spec loaded the way the stack configuration loads it."""
    return load_value(NodePoolSpec, raw, KEY)


# --- shared expected pieces --------------------------------------------------------------------

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
EFA_TAINT = {"key": "vpc.amazonaws.com/efa", "value": "true", "effect": "NoSchedule"}
DISCOVERY = {"tags": {"karpenter.sh/discovery": CLUSTER}}
IMDS = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}
GPU_ROOT = {
    "deviceName": "/dev/xvda",
    "rootVolume": True,
    "ebs": {
        # Instance-store GPU types: a 50 GiB root at gp3's baseline (containerd on the RAID0).
        "volumeSize": "50Gi",
        "volumeType": "gp3",
        "iops": 3000,
        "throughput": 125,
        "encrypted": True,
        "deleteOnTermination": True,
    },
}
STABLE_DISRUPTION = {
    "consolidationPolicy": "WhenEmpty",
    "consolidateAfter": "5m",
    "budgets": [
        {"nodes": "1"},
        {"nodes": "0", "reasons": ["Drifted"], "schedule": "0 8 * * mon-fri", "duration": "10h"},
    ],
}
PREEMPTIBLE_DISRUPTION = {
    "consolidationPolicy": "WhenEmptyOrUnderutilized",
    "consolidateAfter": "5m",
    "budgets": [{"nodes": "10%"}],
}
GPU_RESOURCE = "nvidia.com/gpu"


def req(key: str, *values: str, operator: str = "In") -> dict:
    return {"key": key, "operator": operator, "values": list(values)}


def node_class_ref(name: str) -> dict:
    return {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name}


def efa_interfaces(cards: range) -> list[dict]:
    """ENA at card 0 / device 0, then one efa-only at device 1 on each card."""
    return [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}] + [
        {"networkCardIndex": c, "deviceIndex": 1, "interfaceType": "efa-only"} for c in cards
    ]


AL2023_HUGEPAGES = (
    "MIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="//"\n'
    "\n"
    "--//\n"
    'Content-Type: text/x-shellscript; charset="us-ascii"\n'
    "\n"
    "#!/bin/bash\n"
    "set -euo pipefail\n"
    "# Reserve 2 MiB hugepages for EFA (libfabric/NCCL) before the kubelet starts.\n"
    'echo "vm.nr_hugepages = 2560" > /etc/sysctl.d/90-efa-hugepages.conf\n'
    "sysctl -p /etc/sysctl.d/90-efa-hugepages.conf\n"
    "--//--\n"
)
BOTTLEROCKET_HUGEPAGES = '[settings.kernel.sysctl]\n"vm.nr_hugepages" = "2560"\n'

# Every EC2NodeClass's user data (node-start levers, nodepool/userdata.py), written out.
AL2023_NODE_CONFIG_PART = (
    "--//\n"
    "Content-Type: application/node.eks.aws\n"
    "\n"
    "apiVersion: node.eks.aws/v1alpha1\n"
    "kind: NodeConfig\n"
    "spec:\n"
    "  kubelet:\n"
    "    config:\n"
    "      serializeImagePulls: false\n"
    "      maxParallelImagePulls: 10\n"
    "      registryPullQPS: 20\n"
    "      registryBurst: 40\n"
)
AL2023_USER_DATA = (
    "MIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="//"\n'
    "\n" + AL2023_NODE_CONFIG_PART + "--//--\n"
)
# The NodeConfig, then the hugepages script of AL2023_HUGEPAGES.
AL2023_EFA_USER_DATA = AL2023_HUGEPAGES.replace(
    "\n--//\n", "\n" + AL2023_NODE_CONFIG_PART + "--//\n", 1
)
BOTTLEROCKET_USER_DATA = "[settings.kubernetes]\nregistry-qps = 20\nregistry-burst = 40\n"
BOTTLEROCKET_EFA_USER_DATA = BOTTLEROCKET_USER_DATA + "\n" + BOTTLEROCKET_HUGEPAGES


# --- the pools under test ----------------------------------------------------------------------

SPOT = {"name": "gpu-spot", "gpus": ["l4", "l40s"], "capacityTypes": ["spot"], "preemptible": True}
ON_DEMAND = {"name": "inference", "gpus": ["l4"]}
CPU = {
    "name": "general",
    "kind": "cpu",
    "capacityTypes": ["spot", "on-demand"],
    "preemptible": True,
    "limits": {"cpu": "64", "memory": "256Gi"},
}
EFA = {
    "name": "train",
    "kind": "efa",
    "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"],
    "zone": "us-east-1a",
    "limits": {"gpus": 64},
}
BOTTLEROCKET_EFA = {
    "name": "train-br",
    "kind": "efa",
    "instanceTypes": ["p5en.48xlarge"],
    "zone": "us-east-1a",
    "ami": {"family": "bottlerocket"},
    "rootVolume": {
        "sizeGib": 1000,
        "kmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/0f0e0d0c-0b0a-0908-0706-050403020100",
    },
}
RESERVED = {
    "name": "reserved",
    "gpus": ["h100"],
    "capacityTypes": ["reserved", "on-demand"],
    "capacityReservations": [
        {"id": "cr-0123456789abcdef0"},
        {"tags": {"purpose": "training"}, "ownerId": "111122223333"},
    ],
}
MIG = {
    "name": "mig",
    "gpus": ["h100"],
    "migProfile": "all-1g.10gb",
    "labels": {"example.org/team": "research"},
    "kubelet": {
        "maxPods": 110,
        "systemReserved": {"cpu": "500m", "memory": "1Gi"},
        "kubeReserved": {"cpu": "200m", "ephemeral-storage": "10Gi"},
    },
}
TIME_SLICED = {"name": "notebooks", "gpus": ["l4"], "timeSlicing": "shared-4"}


def pool_manifest(raw: dict, gpu_limit: int | None, instance_type: str | None = None) -> dict:
    s = spec(raw)
    name = s.name if instance_type is None else f"{s.name}-{type_slug(instance_type)}"
    return nodepool_manifest(
        s,
        name=name,
        node_class=name,
        label_domain=DOMAIN,
        gpu_limit=gpu_limit,
        instance_type=instance_type,
    )


def class_manifest(raw: dict, instance_type: str | None = None) -> dict:
    s = spec(raw)
    name = s.name if instance_type is None else f"{s.name}-{type_slug(instance_type)}"
    efa = instance_type is not None
    return ec2nodeclass_manifest(
        s,
        name=name,
        cluster_name=CLUSTER,
        node_role=ROLE,
        tags=TAGS,
        extra_security_group_ids=[EFA_SG] if efa else [],
        placement_group=PLACEMENT_GROUP if efa else None,
        instance_type=instance_type,
    )


# Every manifest these tests build, by id: each is compared exactly below and validated against
# the CRDs by ``test_every_built_manifest_passes_the_crds``.
MANIFESTS: dict[str, Callable[[], dict]] = {
    "spot/NodePool": lambda: pool_manifest(SPOT, 8),
    "spot/EC2NodeClass": lambda: class_manifest(SPOT),
    "on-demand/NodePool": lambda: pool_manifest(ON_DEMAND, 4),
    "on-demand/EC2NodeClass": lambda: class_manifest(ON_DEMAND),
    "cpu/NodePool": lambda: pool_manifest(CPU, None),
    "cpu/EC2NodeClass": lambda: class_manifest(CPU),
    "efa-p5/NodePool": lambda: pool_manifest(EFA, 32, "p5.48xlarge"),
    "efa-p5/EC2NodeClass": lambda: class_manifest(EFA, "p5.48xlarge"),
    "efa-p5e/NodePool": lambda: pool_manifest(EFA, 32, "p5e.48xlarge"),
    "efa-p5e/EC2NodeClass": lambda: class_manifest(EFA, "p5e.48xlarge"),
    "efa/NodeOverlay": lambda: nodeoverlay_manifest(spec(EFA), label_domain=DOMAIN),
    "bottlerocket/NodePool": lambda: pool_manifest(BOTTLEROCKET_EFA, 8, "p5en.48xlarge"),
    "bottlerocket/EC2NodeClass": lambda: class_manifest(BOTTLEROCKET_EFA, "p5en.48xlarge"),
    "bottlerocket/NodeOverlay": lambda: nodeoverlay_manifest(
        spec(BOTTLEROCKET_EFA), label_domain=DOMAIN
    ),
    "reserved/NodePool": lambda: pool_manifest(RESERVED, 16),
    "reserved/EC2NodeClass": lambda: class_manifest(RESERVED),
    "mig/NodePool": lambda: pool_manifest(MIG, 8),
    "mig/EC2NodeClass": lambda: class_manifest(MIG),
    "time-sliced/NodePool": lambda: pool_manifest(TIME_SLICED, 2),
    "default-cpu/NodePool": lambda: nodepool_manifest(
        default_cpu_pool(),
        name="general",
        node_class="general",
        label_domain=DOMAIN,
        gpu_limit=None,
    ),
    "default-cpu/EC2NodeClass": lambda: ec2nodeclass_manifest(
        default_cpu_pool(), name="general", cluster_name=CLUSTER, node_role=ROLE, tags={}
    ),
}
