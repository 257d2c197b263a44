"""Constants the node pool specs and builders share: resources, taints, defaults, patterns."""

from .. import versions
from ..budget.units import GPU_RESOURCE as GPU_RESOURCE

EFA_RESOURCE = "vpc.amazonaws.com/efa"
GPU_TAINT = {"key": GPU_RESOURCE, "value": "true", "effect": "NoSchedule"}
EFA_TAINT = {"key": EFA_RESOURCE, "value": "true", "effect": "NoSchedule"}
# The MIG manager's progress label on a node (NVIDIA/mig-parted v0.15.0
# pkg/mig/reconfigure/reconfigure.go L41, L49): "success" once the layout of nvidia.com/mig.config
# is applied, both when it was already in place (L142-145) and after a reconfiguration, once the
# GPU clients (device plugin, GFD, DCGM) are restarted (L233-239).
MIG_CONFIG_STATE_LABEL = "nvidia.com/mig.config.state"
MIG_CONFIG_STATE_SUCCESS = "success"
# The MIG profile without MIG (gpu_operator.spec.MIG_DISABLED; nodepool must not import it).
MIG_DISABLED_PROFILE = "all-disabled"
# A MIG pool's NodePool startup taint: Karpenter keeps the node uninitialized until every startup
# taint is gone (kubernetes-sigs/karpenter v1.15.0 pkg/controllers/nodeclaim/lifecycle/
# initialization.go L81-84, L121-134), charging meanwhile the NodeClaim's (overlaid) capacity only
# for the resources the node reports as zero (pkg/controllers/state/statenode.go L458-467; hence
# DEVICE_PLUGIN_HELD below); pods need not tolerate it to get nodes provisioned
# (pkg/apis/v1/nodeclaim.go L32-35). The MIG startup remover (gpu_operator/mig_ready.py) takes
# it off once the layout is applied and advertised.
MIG_PENDING_TAINT = {"key": MIG_CONFIG_STATE_LABEL, "value": "pending", "effect": "NoSchedule"}
# The GPU Operator's switch for its device plugin on a node: the DaemonSet selects
# nvidia.com/gpu.deploy.device-plugin="true" (NVIDIA/gpu-operator v26.7.0
# assets/state-device-plugin/0500_daemonset.yaml L19-20). A MIG pool's NodePool labels its nodes
# "false" (DEVICE_PLUGIN_HELD): the operator keeps a non-empty value it finds (controllers/
# state_manager.go L469-484), the MIG manager saves it and writes "false" back, never "true",
# when it pauses and restores the GPU clients (NVIDIA/mig-parted v0.15.0
# pkg/mig/reconfigure/reconfigure.go L256-257, L371-386, L513-531, L550-570, L581-593: "It should
# only be 'false' if some external entity has forced it to this value", deployments/container/
# reconfigure-mig.sh L243-265). The MIG startup remover sets it to "true" once the layout is in
# place. Until then the node advertises no nvidia.com/gpu, so Karpenter charges the uninitialized
# node its NodeClaim's overlaid capacity (kubernetes-sigs/karpenter v1.15.0
# pkg/controllers/state/statenode.go L458-467: the NodeClaim's value where the node reports zero).
DEVICE_PLUGIN_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
DEVICE_PLUGIN_HELD = "false"
DEVICE_PLUGIN_RELEASED = "true"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
# Within one NodePool Karpenter always tries reserved capacity first, then spot, then on-demand.
CAPACITY_PRIORITY = ("reserved", "spot", "on-demand")
POOL_KINDS = ("gpu", "efa", "cpu")
AMI_FAMILIES = {"al2023": "AL2023", "bottlerocket": "Bottlerocket"}
# Both EKS GPU AMI families ship the NVIDIA driver and container toolkit.
AMI_SHIPS_NVIDIA_DRIVER = {"al2023": True, "bottlerocket": True}
DEFAULT_AMI_VERSION = {
    "al2023": versions.AL2023_AMI_ALIAS_VERSION,
    "bottlerocket": versions.BOTTLEROCKET_AMI_ALIAS_VERSION,
}
# GPU root volumes, sized by where containerd and the kubelet keep their data (issue 23, point 7):
# - Every type of the pool has instance store: ``instanceStorePolicy: RAID0`` (manifests.py)
#   stripes it and binds /var/lib/kubelet, /var/lib/containerd (and, on AL2023,
#   /var/lib/soci-snapshotter-grpc) and /var/log/pods onto it (karpenter-provider-aws v1.15.0
#   pkg/apis/v1/ec2nodeclass.go L491-495, "The containerd and kubelet state directories ... will
#   then use the ephemeral storage"; pkg/providers/amifamily/bootstrap/nodeadm.go L87-88,
#   bottlerocket.go L99-115; userdata.py's docstring). The root keeps the OS: the EKS AL2023 AMIs
#   are built on a 20 GiB root (awslabs/amazon-eks-ami v20260724 templates/al2023/template.json
#   ``ami_block_device_mappings`` ``volume_size: 20``), and Karpenter's own default root is 20Gi
#   (pkg/providers/amifamily/resolver.go L40-44, ``DefaultEBS``). 50 GiB leaves 30 GiB for the
#   journal, /tmp and anything unbound, at gp3's baseline 3,000 IOPS and 125 MiB/s, which every
#   gp3 volume gets whatever its size (EBS User Guide, "General Purpose SSD volumes", gp3).
# - A type without instance store (g5g; catalog.FAMILIES_WITHOUT_INSTANCE_STORE): images unpack
#   on the root volume. An NGC PyTorch image is about 20 GB unpacked (d4l3k/torchdrive#4 for
#   pytorch:23.03-py3; hiyouga/LlamaFactory#4974: 22 GB), and containerd keeps the compressed
#   layers beside the unpacked snapshot; the kubelet collects images above 85% disk use
#   (the default imageGCHighThresholdPercent, kubernetes v1.36.3
#   pkg/kubelet/apis/config/v1beta1/defaults.go L157-159). 200 GiB holds
#   the 20 GiB OS and four such images (~30 GiB each) under that threshold. Pulls are throughput
#   bound: gp3's maximum 1,000 MiB/s, with the 4,000 IOPS it needs (0.25 MiB/s per IOPS).
INSTANCE_STORE_ROOT_VOLUME_GIB = 50
EBS_ONLY_GPU_ROOT_VOLUME_GIB = 200
EBS_ONLY_GPU_ROOT_IOPS = 4000
EBS_ONLY_GPU_ROOT_THROUGHPUT = 1000
DEFAULT_CPU_ROOT_VOLUME_GIB = 100
GP3_MAX_IOPS = 16000
GP3_MAX_THROUGHPUT = 1000
GP3_BASE_IOPS = 3000
GP3_BASE_THROUGHPUT = 125
DEFAULT_CPU_CATEGORIES = ("c", "m", "r")
DEFAULT_CPU_MIN_GENERATION = 5
DEFAULT_CPU_POOL_NAME = "general"
DEFAULT_PREEMPTIBLE_EXPIRE_AFTER = "168h"
DEFAULT_PREEMPTIBLE_GRACE = "4h"
DEFAULT_STABLE_EXPIRE_AFTER = "720h"
DEFAULT_STABLE_GRACE = "48h"
DEFAULT_CONSOLIDATE_AFTER = "5m"
# Non-preemptible pools: at most one node disrupted at a time, and no drift replacements
# during working hours (UTC, Monday to Friday, 08:00-18:00).
STABLE_BUDGETS = (
    {"nodes": "1"},
    {"nodes": "0", "reasons": ("Drifted",), "schedule": "0 8 * * mon-fri", "duration": "10h"},
)
PREEMPTIBLE_BUDGETS = ({"nodes": "10%"},)
BUDGET_REASONS = ("Underutilized", "Empty", "Drifted")
# Floors for durations (issue 13): a GPU node takes minutes to boot, pull images and pass its
# readiness checks, so expireAfter under an hour churns nodes (0s expires them at launch); a
# terminationGracePeriod under a minute kills pods before they can drain.
MIN_EXPIRE_AFTER = 3600
MIN_TERMINATION_GRACE = 60
NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$"
ZONE_PATTERN = r"^[a-z]{2}(-gov)?-[a-z]+-[0-9][a-z]$"
RESERVED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws", "kubernetes.io", "k8s.io")
KUBELET_RESERVED_KEYS = ("cpu", "memory", "ephemeral-storage", "pid")
# The NodePool CRD's patterns for label/taint keys and values.
QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
LABEL_VALUE_TEXT = (
    "a label value; expected at most 63 letters, digits, '-', '_' or '.', starting and ending "
    "with a letter or digit"
)
QUALIFIED_NAME_TEXT = "a label or taint key such as 'example.com/dedicated'"
# gp3: at most 500 IOPS per GiB and 0.25 MiB/s of throughput per provisioned IOPS.
GP3_IOPS_PER_GIB = 500
GP3_MIBPS_PER_IOPS = 0.25
