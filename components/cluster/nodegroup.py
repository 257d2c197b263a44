"""The system node group's pure builders: its label and taint (and the tolerations controllers
need to run on it), its managed policies, and its launch template settings."""

from ..naming import bounded_name

# Karpenter's node role minus the CNI policy (on the vpc-cni add-on's own Pod Identity role,
# EKS Best Practices IAM) and Session Manager's (opt-in, ``cluster.nodeSsmAccess``): see
# eks_gpu_platform.karpenter.iam.NODE_ROLE_POLICIES.
SYSTEM_NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
)
SYSTEM_TAINT_KEY = "CriticalAddonsOnly"
# EKS node group names are at most 63 characters; the provider appends a 26-character unique
# suffix to a prefix, so a prefix is at most 37 (terraform-provider-aws
# internal/service/eks/node_group.go: node_group_name_prefix, StringLenBetween(0,
# 63-id.UniqueIDSuffixLength)).
NODE_GROUP_NAME_PREFIX_MAX = 63 - 26


def system_node_group_prefix(cluster_name: str) -> str:
    """``<cluster>-system-``: the system node group's name prefix, the cluster name shortened
    with a stable hash when it would not fit."""
    suffix = "-system-"
    return bounded_name("", cluster_name, NODE_GROUP_NAME_PREFIX_MAX - len(suffix)) + suffix


def system_node_label(label_domain: str) -> tuple[str, str]:
    """The label every system node carries; controllers select it."""
    return f"{label_domain}/system", "true"


def system_tolerations() -> list[dict[str, str]]:
    """Tolerations a controller needs to run on the system nodes."""
    return [{"key": SYSTEM_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]


def system_launch_template_data(disk_size_gib: int) -> dict:
    """Launch template settings for system nodes: IMDSv2 only, hop limit 1, encrypted gp3."""
    return {
        "metadata_options": {
            "http_endpoint": "enabled",
            "http_tokens": "required",
            "http_put_response_hop_limit": 1,
        },
        "block_device_mappings": [
            {
                "device_name": "/dev/xvda",
                "ebs": {
                    "volume_size": disk_size_gib,
                    "volume_type": "gp3",
                    "encrypted": "true",
                    "delete_on_termination": "true",
                },
            }
        ],
    }
