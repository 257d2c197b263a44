"""How long a GPU pool's new node takes to start: ONE table of estimates per instance family.

What a pool's preemption delay is sized from (``budget.preemption``): from the moment
Karpenter sees a pending pod, the time until a node of the pool advertises its GPUs. Three
legs:

1. **Karpenter's batch window**: Karpenter v1.15.0 waits for pods to stop arriving, at most
   ``BATCH_MAX_DURATION`` (default 10 s; ``pkg/operator/options/options.go`` L231, the chart's
   ``settings.batchMaxDuration``, which the project leaves at its default), before it launches.
   ``KARPENTER_BATCH_SECONDS`` below.
2. **Launch to Ready** (``launch_to_ready``): EC2 launch, boot, nodeadm/Bottlerocket join, the
   kubelet registers and the node goes Ready (vpc-cni up).
3. **Ready to GPUs allocatable** (``gpu_ready``): with drivers from the AMI (docs/gpu-operator.md),
   the GPU Operator's operands on the node (container toolkit, device plugin, GFD) start and the
   device plugin advertises ``nvidia.com/gpu``; only then does Karpenter initialize the node
   (kubernetes-sigs/karpenter v1.15.0 ``pkg/controllers/nodeclaim/lifecycle/initialization.go``)
   and can KAI bind GPU pods there.

**Every figure in the table is an estimate**, not a measurement on this project's nodes. The
figures they start from:

- ~70-80 s from instance launch to node registration on a general-purpose type, and the launch
  ~1 s after Karpenter sees the pod: a Karpenter maintainer reading controller logs,
  aws/karpenter-provider-aws#6128 (2024-05-17).
- 39 s to kubelet registration on c5.xlarge, with "GPU instance types often take much longer to
  boot within EC2" and types with local disks "a little longer": awslabs/amazon-eks-ami#1099
  (2022-12-15, the node-startup latency work).
- Karpenter gives a node 5 minutes to launch and 15 minutes to register before it deletes the
  NodeClaim and tries again (kubernetes-sigs/karpenter v1.15.0
  ``pkg/controllers/nodeclaim/lifecycle/liveness.go`` L54 ``registrationTimeout``, L62
  ``LaunchTimeout``); its maintainers name "longer startup times with GPUs" as the reason to
  revisit that bound (kubernetes-sigs/karpenter#357, 2025-07-24). So no estimate may exceed
  15 minutes (``MAX_NODE_START_SECONDS``).
- The node-start levers of this project (docs/node-pools.md, "Node start"): every GPU and EFA
  pool puts containerd and the kubelet on an instance-store RAID0 that nodeadm builds at boot
  (a step a disk-less type skips), and drivers come from the AMI (no driver build at start).

The tiers: single-GPU-card PCIe families boot close to the general-purpose figure plus the
RAID0 step (120 s) and start the operands in about a minute; the large PCIe families with up to
8 GPUs and EFA on their largest sizes take longer (150 s + 90 s); the 8-GPU SXM families
(NVSwitch, fabric manager, 4 to 32 network cards, 8 NVMe drives, 1-2 TiB of memory to
initialize) are the slowest (300-360 s + 120 s). A family is estimated at its largest size.
Measure your own (the NodeClaim's ``Launched`` to the node's ``Initialized`` condition, or
Karpenter's ``karpenter_nodeclaims_*`` metrics) and set ``scheduler.queues[].
preemptionDelaySeconds`` when yours differ.

A MIG pool starts twice: the MIG manager reconfigures the GPUs and, on cloud instances,
reboots the node (GPU Operator MIG guide: cloud users set ``WITH_REBOOT``; docs/gpu-operator.md),
so its estimate adds ``launch_to_ready`` once more.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import catalog

# Karpenter v1.15.0 BATCH_MAX_DURATION default (pkg/operator/options/options.go L231).
KARPENTER_BATCH_SECONDS = 10
# Karpenter v1.15.0 registrationTimeout (pkg/controllers/nodeclaim/lifecycle/liveness.go L54).
MAX_NODE_START_SECONDS = 900


@dataclass(frozen=True)
class NodeStart:
    """One family's estimate (seconds): launch to Ready, then Ready to GPUs allocatable."""

    launch_to_ready: int
    gpu_ready: int
    tier: str

    @property
    def seconds(self) -> int:
        return self.launch_to_ready + self.gpu_ready


_PCIE_SMALL = "PCIe, one GPU card per node or a few"
_PCIE_LARGE = "PCIe, up to 8 GPUs and EFA on the largest sizes"
_SXM_A100 = "8 SXM GPUs, NVSwitch, 4 EFA cards, 8 NVMe"
_SXM_H100_UP = "8 SXM GPUs, NVSwitch, 8-32 network cards, 8 NVMe"

# THE table: every catalogued GPU family (catalog.GPU_FAMILIES), one estimate each.
NODE_START: dict[str, NodeStart] = {
    "g4dn": NodeStart(120, 60, _PCIE_SMALL),
    "g5": NodeStart(120, 60, _PCIE_SMALL),
    "g5g": NodeStart(120, 60, _PCIE_SMALL),
    "g6": NodeStart(120, 60, _PCIE_SMALL),
    "g6f": NodeStart(120, 60, _PCIE_SMALL),
    "gr6": NodeStart(120, 60, _PCIE_SMALL),
    "g6e": NodeStart(150, 90, _PCIE_LARGE),
    "g7e": NodeStart(150, 90, _PCIE_LARGE),
    "p4d": NodeStart(300, 120, _SXM_A100),
    "p4de": NodeStart(300, 120, _SXM_A100),
    "p5": NodeStart(360, 120, _SXM_H100_UP),
    "p5e": NodeStart(360, 120, _SXM_H100_UP),
    "p5en": NodeStart(360, 120, _SXM_H100_UP),
    "p6-b200": NodeStart(360, 120, _SXM_H100_UP),
    "p6-b300": NodeStart(360, 120, _SXM_H100_UP),
}


@dataclass(frozen=True)
class PoolNodeStart:
    """A pool's node start: the slowest family it may launch (Karpenter picks any of them)."""

    seconds: int
    family: str
    mig: bool

    @property
    def source(self) -> str:
        row = NODE_START[self.family]
        text = (
            f"estimate for {self.family} ({row.tier}): {row.launch_to_ready} s launch to Ready "
            f"+ {row.gpu_ready} s to GPUs allocatable"
        )
        if self.mig:
            text += f" + {row.launch_to_ready} s MIG reboot"
        return text


def pool_node_start(types: tuple[catalog.InstanceType, ...], mig: bool) -> PoolNodeStart:
    """The node start of a pool selecting ``types``: the largest estimate among their families
    (first in catalog order on a tie), plus one more boot under MIG."""
    family = max(
        dict.fromkeys(t.family for t in types), key=lambda f: NODE_START[f].seconds, default=None
    )
    if family is None:
        raise ValueError("pool_node_start: the pool selects no instance type")
    row = NODE_START[family]
    seconds = row.seconds + (row.launch_to_ready if mig else 0)
    return PoolNodeStart(min(seconds, MAX_NODE_START_SECONDS), family, mig)
