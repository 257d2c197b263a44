"""How long ``pulumi up`` may wait for each step of a Kubernetes minor upgrade: one table, from
which the add-ons' and the system node group's ``customTimeouts`` (``EksCluster``), the offline
plan's wait figures (``offline.plan_waits.waits``) and the CI deploy job's budget check
(tests/test_workflows.py) are all computed.

The chain, one step after another (``EksCluster``'s dependencies): the control plane; vpc-cni,
kube-proxy and eks-pod-identity-agent (in parallel); the system node group's roll; coredns.

Figures from others (each a bound ``pulumi up`` would otherwise fail at while AWS carries on):
- The providers' defaults (hashicorp/terraform-provider-aws ``website/docs/r/eks_cluster.html.
  markdown``, ``eks_addon.html.markdown``, ``eks_node_group.html.markdown``, "Timeouts"): a
  cluster update 60 minutes, an add-on create/update 20, a node group create/update 60. The
  control plane is pulumi-eks's child (``eks:index:Cluster``), so its 60 stays.
- A managed node group's update (EKS user guide, "Understand each phase of node updates",
  https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html;
  awsdocs/amazon-eks-user-guide latest/ug/nodes/managed-node-update-behavior.adoc at
  0bfeeaf233f2f2df7e207aefc96bea476babe113): the setup and scale-up phases launch the new
  nodes and wait until they are Ready; the upgrade phase then takes up to ``maxUnavailable``
  old nodes at a time, drains each ("If the Pods don't leave the node within 15 minutes and
  there's no force flag, the upgrade phase fails with a PodEvictionFailure error": the system
  controllers' PodDisruptionBudgets are what can hold a drain that long), cordons it and waits
  60 seconds, terminates it, and repeats until no old node is left; the scale-down phase
  returns the group to its size. At most ``maxSize`` nodes are old.
- A DaemonSet add-on's update replaces its pod on every node of the cluster, GPU nodes
  included, 10% of the nodes at a time (aws/amazon-vpc-cni-k8s charts/aws-vpc-cni/values.yaml
  ``updateStrategy.rollingUpdate.maxUnavailable: "10%"``, at
  005542504b4d7edc15af18e353b30ac7849e8ed2): ten waves whatever the cluster's size.

Our own allowances (no upstream figure exists; each is named so that it can be argued with):
``NODE_REPLACEMENT_MINUTES`` per batch of the roll, ``ROLL_PHASES_MINUTES`` for the setup,
scale-up and scale-down phases together, ``DAEMONSET_WAVE_MINUTES`` per wave.
"""

from __future__ import annotations

import math

# The providers' defaults, in minutes (module docstring).
CONTROL_PLANE_UPDATE_MINUTES = 60
ADDON_DEFAULT_MINUTES = 20
NODE_GROUP_DEFAULT_MINUTES = 60
# EKS's managed node group update (module docstring).
DRAIN_LIMIT_MINUTES = 15
CORDON_WAIT_MINUTES = 1
# Ours: a terminated node's replacement launching and joining, per batch.
NODE_REPLACEMENT_MINUTES = 4
# Ours: the setup, scale-up (new nodes launched and Ready) and scale-down phases together.
ROLL_PHASES_MINUTES = 15
# A DaemonSet add-on: ten waves of 10% of the nodes, each ours to bound.
DAEMONSET_WAVES = 10
DAEMONSET_WAVE_MINUTES = 4
DAEMONSET_UPDATE_MINUTES = DAEMONSET_WAVES * DAEMONSET_WAVE_MINUTES + 5
# Each add-on's update bound: the DaemonSets roll every node; coredns is a Deployment of two
# replicas on the system nodes, within the provider's default.
ADDON_UPDATE_MINUTES = {
    "vpc-cni": DAEMONSET_UPDATE_MINUTES,
    "kube-proxy": DAEMONSET_UPDATE_MINUTES,
    "eks-pod-identity-agent": DAEMONSET_UPDATE_MINUTES,
    "coredns": ADDON_DEFAULT_MINUTES,
}
# The system node group rolls one node at a time (EksCluster ``update_config``).
SYSTEM_MAX_UNAVAILABLE = 1


def system_roll_minutes(max_size: int, max_unavailable: int = SYSTEM_MAX_UNAVAILABLE) -> int:
    """The longest a managed node group of at most ``max_size`` nodes takes to roll."""
    batches = math.ceil(max_size / max_unavailable)
    per_batch = DRAIN_LIMIT_MINUTES + CORDON_WAIT_MINUTES + NODE_REPLACEMENT_MINUTES
    return ROLL_PHASES_MINUTES + batches * per_batch


def node_group_update_minutes(max_size: int) -> int:
    """The system node group's update timeout: its roll, never below the provider's default."""
    return max(NODE_GROUP_DEFAULT_MINUTES, system_roll_minutes(max_size))


def addon_timeouts(addon: str) -> dict[str, str]:
    """An add-on's ``customTimeouts`` (``update`` only; create and delete keep the defaults)."""
    return {"update": f"{ADDON_UPDATE_MINUTES[addon]}m"}


def node_group_timeouts(max_size: int) -> dict[str, str]:
    """The system node group's ``customTimeouts`` (``update`` only)."""
    return {"update": f"{node_group_update_minutes(max_size)}m"}


def minor_upgrade_steps(max_size: int) -> tuple[tuple[str, int], ...]:
    """The chain's steps and their bounds, for a system node group of ``max_size`` nodes."""
    before = max(ADDON_UPDATE_MINUTES[a] for a in ADDON_UPDATE_MINUTES if a != "coredns")
    return (
        ("control plane", CONTROL_PLANE_UPDATE_MINUTES),
        ("add-ons", before),
        ("system nodes", node_group_update_minutes(max_size)),
        ("coredns", ADDON_UPDATE_MINUTES["coredns"]),
    )


def minor_upgrade_minutes(max_size: int) -> int:
    """The whole chain's bound."""
    return sum(m for _, m in minor_upgrade_steps(max_size))
