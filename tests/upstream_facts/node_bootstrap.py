"""How amazon-eks-ami's nodeadm and Bottlerocket start a node: the facts the user-data tests
(``tests/nodepool/test_userdata.py``) hold our user data to, each with its upstream line.

Sources:

- ``EKS_AMI``: awslabs/amazon-eks-ami tag v20260724 (commit
  81fec2e895854f599974fe4d3d72f61c0a9aaffa, the newest release in reach when written; the AMI
  pin in components/versions.py is v20260903);
- ``KUBELET_TYPES``: ``k8s.io/kubelet/config/v1beta1/types.go`` v0.36.2 as nodeadm vendors it
  (``nodeadm/vendor/``, same tag; ``nodeadm/go.mod`` requires k8s.io/kubelet v0.36.2);
- ``BOTTLEROCKET``: bottlerocket-os/bottlerocket-core-kit commit
  a10182f974abd19de803bb7a324b5a0bdeab4ced (v3.1.0+26), ``packages/kubernetes-1.31/kubelet-config``
  (the kubelet configuration template; the same lines at v3.1.1).
"""

from __future__ import annotations

from typing import NamedTuple


class Source(NamedTuple):
    repository: str
    ref: str
    path: str


class Fact(NamedTuple):
    value: object
    source: Source
    line: str  # a line or a range, "L27" or "L96-101"


EKS_AMI = "awslabs/amazon-eks-ami", "v20260724"
NODECONFIG_TYPES = Source(*EKS_AMI, "nodeadm/api/v1alpha1/nodeconfig_types.go")
LOCAL_DISK = Source(*EKS_AMI, "nodeadm/internal/system/local_disk.go")
SETUP_LOCAL_DISKS = Source(*EKS_AMI, "templates/al2023/runtime/bin/setup-local-disks")
NODEADM_RUN = Source(
    *EKS_AMI, "templates/al2023/runtime/rootfs/etc/systemd/system/nodeadm-run.service"
)
CACHE_PAUSE = Source(*EKS_AMI, "templates/al2023/runtime/bin/cache-pause-container")
KUBELET_TYPES = Source(*EKS_AMI, "nodeadm/vendor/k8s.io/kubelet/config/v1beta1/types.go")
BOTTLEROCKET = Source(
    "bottlerocket-os/bottlerocket-core-kit",
    "a10182f974abd19de803bb7a324b5a0bdeab4ced",
    "packages/kubernetes-1.31/kubelet-config",
)

# --- nodeadm's NodeConfig (node.eks.aws/v1alpha1) ------------------------------------------------

# The JSON path of the KubeletConfiguration nodeadm merges over its own: NodeConfigSpec.Kubelet
# (json "kubelet", L35), KubeletOptions.Config (json "config", L66, map[string]RawExtension).
NODECONFIG_KUBELET_CONFIG_PATH = Fact(
    ("spec", "kubelet", "config"), NODECONFIG_TYPES, "L20, L35, L66"
)
# NodeConfigSpec.Instance.LocalStorage.Strategy (L34, L93, L118); its RAID0 value (L135).
LOCAL_STORAGE_RAID0 = Fact("RAID0", NODECONFIG_TYPES, "L135")

# --- the kubelet's image-pull fields (KubeletConfiguration v1beta1) -------------------------------

# field -> (default, line of the field). maxParallelImagePulls "cannot be set if
# SerializeImagePulls is true" (L569), nil (no limit) by default (L571).
KUBELET_PULL_FIELDS = {
    "serializeImagePulls": Fact(True, KUBELET_TYPES, "L565-567"),
    "maxParallelImagePulls": Fact(None, KUBELET_TYPES, "L569-573"),
    "registryPullQPS": Fact(5, KUBELET_TYPES, "L243-246"),  # 0 means no limit (L243)
    "registryBurst": Fact(10, KUBELET_TYPES, "L250-253"),  # used only with a QPS > 0 (L250)
}

# --- instance-store RAID0 on AL2023 ---------------------------------------------------------------

# nodeadm runs `setup-local-disks <strategy lower-cased>` (L27-28, L46); no --no-bind-containerd
# unless the NodeConfig disables it (L39).
SETUP_LOCAL_DISKS_COMMAND = Fact(("setup-local-disks", "raid0"), LOCAL_DISK, "L27-28, L46")
# setup-local-disks raid0: the array /dev/md/kubernetes (L42-43) mounted at ${MNT_DIR}/0 (L45),
# MNT_DIR /mnt/k8s-disks (L220); the kubelet and containerd dirs bind-mounted onto it, both on by
# default (L221-222, L96-101).
RAID_DEVICE = Fact("/dev/md/kubernetes", SETUP_LOCAL_DISKS, "L42-43")
RAID_MOUNT_POINT = Fact("/mnt/k8s-disks/0", SETUP_LOCAL_DISKS, "L45, L220")
RAID_BIND_MOUNTS = Fact(
    ("/var/lib/kubelet", "/var/lib/containerd"), SETUP_LOCAL_DISKS, "L96-101, L221-222"
)

# --- unit ordering and image caching --------------------------------------------------------------

# nodeadm-run.service (containerd, kubelet) starts after cloud-final, where user scripts run.
NODEADM_RUN_AFTER = Fact(("nodeadm-config.service", "cloud-final.service"), NODEADM_RUN, "L6")
# The AMI caches its pause image with ctr in the kubelet's namespace, logging in to ECR with
# `--user AWS:$(aws ecr get-login-password)` (L25, L35).
CTR_PULL_NAMESPACE = Fact("k8s.io", CACHE_PAUSE, "L35")
ECR_PULL_USER = Fact("AWS:$(aws ecr get-login-password)", CACHE_PAUSE, "L25")

# --- Bottlerocket's kubelet configuration template ------------------------------------------------

# Bottlerocket already pulls in parallel: serializeImagePulls false (L140), and no
# maxParallelImagePulls line (no bound). registryPullQPS and registryBurst come from these
# settings.kubernetes keys, written only when set (L66-71).
BOTTLEROCKET_SERIALIZE_IMAGE_PULLS = Fact(False, BOTTLEROCKET, "L140")
BOTTLEROCKET_PULL_SETTINGS = {
    "registryPullQPS": Fact("registry-qps", BOTTLEROCKET, "L66-68"),
    "registryBurst": Fact("registry-burst", BOTTLEROCKET, "L69-71"),
}
