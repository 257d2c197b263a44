"""A model of Karpenter v1.15.0 launching GPU nodes, fed ONLY what Karpenter sees.

Inputs: a render (``build/<stack>/``: ``manifests/*.yaml`` NodePools, EC2NodeClasses,
NodeOverlays, Queues and ``helm/gpu-operator.yaml``, the device plugin's and MIG manager's
configuration) plus independent tables: ``tests/data/advertised.yaml`` (EC2's instance data from
moto, Karpenter's static prices, the operator's default mig-parted config; tests/gen_advertised.py)
and the system pods of a real node (``tests/fixtures/system-pods/``). Nothing is imported from
``eks_gpu_platform`` (tests/test_karpenter_model.py checks that on the AST).

Every rule cites kubernetes-sigs/karpenter v1.15.0 (``K``) or aws/karpenter-provider-aws v1.15.0
(``A``), the modules of the chart's 1.15.1 (tests/upstream_modules.py):

- Instance types of a NodePool: the table's types whose labels intersect the NodePool's
  requirements (K ``scheduling/requirements.go`` ``Intersects`` L256-276) and that have an
  available offering (a price, a zone of the region, a capacity type the pool allows: A
  ``offering/base_resolver.go`` L110-135). Reserved offerings need capacity reservations, which a
  render does not hold: not modelled.
- Capacity (A ``instancetype/types.go`` ``computeCapacity`` L492-510): cpu = vCPUs; memory = MiB
  less the VM overhead (7.5 %, L516-527); pods = ENI-limited (L645-665; efa-only interfaces on
  card 0 take an ENI); ``nvidia.com/gpu`` = NVIDIA GPUs (L576-586); ``vpc.amazonaws.com/efa``
  (L632-643). Allocatable = capacity - kube-reserved (cpu by range, memory 11 x pods + 255 Mi:
  L682-712) - eviction threshold (100 Mi: L714-733) - hugepages from memory (K
  ``cloudprovider/types.go`` L342-352).
- NodeOverlays (K ``controllers/nodeoverlay``): ordered by weight, then name descending
  (``apis/v1alpha1/nodeoverlay.go`` L127-136); one matches a NodePool's type when the NodePool's
  labels and the type's requirements are compatible with its requirements (``controller.go``
  L226-245, operators In/NotIn/Exists/DoesNotExist/Gt/Lt/Gte/Lte as ``requirement.go``
  L50-117); per resource the first overlay wins (``store.go`` L192-212); an overlay setting a
  resource the last applied overlay of the same weight set conflicts (``store.go`` L214-238) and
  is then rejected for EVERY NodePool (``controller.go`` L163-181); its capacity replaces the
  type's (K ``cloudprovider/types.go`` ``ApplyCapacityOverlay`` ``lo.Assign``).
- Scheduling (K ``controllers/provisioning/scheduling/scheduler.go``): pods largest first
  (``queue.go`` L72-102); a pod goes to an existing node, else to the in-flight NodeClaim with
  the fewest pods that can take it (L627-637), else to a new NodeClaim of the first NodePool by
  weight then name descending (``utils/nodepool/nodepool.go`` L161-171) whose types, filtered by
  the remaining limits (``filterByRemainingResources`` L1097-1114), fit the pod plus the
  DaemonSet overhead (``nodeclaim.go`` L598-687; overhead of the DaemonSet pods compatible with
  the template, L1049-1072). A NodeClaim keeps every viable type; the NodePool's remaining
  resources lose the largest capacity of its options (``subtractMax`` L815, L1074-1095).
- Launch: the cheapest option (``OrderByPrice``, K ``cloudprovider/types.go`` L396-415; A
  ``instance/types.go`` L234-244 lowest-price on-demand; for spot AWS's price-capacity-optimized
  may pick another option: assumed cheapest). Prices: Karpenter's static on-demand table, which
  spot uses until the pricing API answers (A ``pricing/pricing.go`` L452-464); ties by name.
- Accounting: a NodePool's usage is the sum of its nodes' capacity, the NodeClaim's (overlaid)
  until initialized, then ``Node.Status.Capacity`` (K ``state/statenode.go`` L458-474); nodes
  marked for deletion count zero (``state/cluster.go`` L866-875). What the node advertises is the
  device plugin's (below), never the overlay.
- Disruption: a node is a graceful-disruption candidate only if no pod on it, DaemonSet and
  mirror pods included, has ``karpenter.sh/do-not-disrupt: "true"`` (K ``state/statenode.go``
  L328-339; ``disruption/types.go`` ``NewCandidate`` L194-211); it is empty when only DaemonSet
  pods remain (``disruption/emptiness.go``).

What a node advertises (NVIDIA/k8s-device-plugin v0.20.0, as bundled by gpu-operator v26.7.0):
the node label ``nvidia.com/device-plugin.config`` selects a config of the rendered
``devicePlugin.config``; time-slicing with ``renameByDefault: false`` advertises ``nvidia.com/gpu``
= GPUs x replicas (README "Shared Access to GPUs"); ``nvidia.com/mig.config`` selects a mig-parted
profile (rendered ``migManager.config``, else the operator's default) for the GPU's PCI id; MIG
strategy ``single`` advertises the MIG devices as ``nvidia.com/gpu`` (``internal/rm/rm.go``
L116-117), ``mixed`` as ``nvidia.com/mig-<profile>`` with ``nvidia.com/gpu`` 0 (L140-147).

CLI (the differential test with the Go conformance suite runs the real Karpenter on the same
render and compares)::

    python tests/karpenter_model.py flood <render-dir> <pool> [--gpus N] [--cpu M] [--memory-mib M]
        [--resource NAME] [--instance-type T] [--pods N]

prints one JSON object::

    {"pool": "<pool label value>",                 # eks-gpu-platform.io/pool of the pods
     "pod": {"requests": {"nvidia.com/gpu": 1, "cpu": 1000, "memory": 4294967296},
             "nodeSelector": {...}},               # cpu in millicores, memory in bytes
     "podsSent": 512,
     "nodeClaims": [                                # in launch order
        {"nodePool": "gpu-spot", "round": 1, "launched": "g6.48xlarge",
         "instanceTypeOptions": ["g6.48xlarge", "g6e.48xlarge"],   # sorted by price
         "pods": 8, "capacity": {...}, "advertised": {...}}],
     "launched": {"<nodePool>/<instance type>": count},
     "podsScheduled": 8,                            # the flood count until the limits stop it
     "podsPending": 504,
     "usage": {"<nodePool>": {"nvidia.com/gpu": 8}},
     "limits": {"<nodePool>": {"nvidia.com/gpu": 8}}}
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ADVERTISED = HERE / "data" / "advertised.yaml"
SYSTEM_PODS = HERE / "fixtures" / "system-pods"

GPU = "nvidia.com/gpu"
EFA = "vpc.amazonaws.com/efa"
CPU, MEMORY, PODS = "cpu", "memory", "pods"
POOL_LABEL = "eks-gpu-platform.io/pool"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
MI = 1024 * 1024
# libyaml's parser where PyYAML has it (the same documents, parsed in C; resolution is PyYAML's)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
OPERANDS = (
    "driver", "toolkit", "device-plugin", "gpu-feature-discovery", "dcgm", "dcgm-exporter",
    "operator-validator", "container-toolkit",
)  # fmt: skip

Resources = dict[str, int]

# --- quantities and requirements ------------------------------------------------------------

_SUFFIX = {
    "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "": 1,
}  # fmt: skip


def quantity(name: str, value: Any) -> int:
    """A Kubernetes quantity in the model's unit: millicores for cpu, else whole units."""
    text = str(value)
    m = re.fullmatch(r"([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T|)", text)
    if not m:
        raise ValueError(f"quantity {name}={text!r}")
    number, suffix = float(m.group(1)), m.group(2)
    base = number / 1000 if suffix == "m" else number * _SUFFIX[suffix]
    return math.ceil(base * 1000) if name == CPU else math.ceil(base)


def resources_of(raw: Mapping[str, Any] | None) -> Resources:
    return {k: quantity(k, v) for k, v in (raw or {}).items()}


@dataclass(frozen=True)
class Requirement:
    """K ``scheduling/requirement.go`` L37-117: a value set or its complement, and integer
    bounds (Gt N is Gte N+1, Lt N is Lte N-1)."""

    key: str
    complement: bool
    values: frozenset[str]
    gte: int | None = None
    lte: int | None = None

    @classmethod
    def of(cls, key: str, operator: str, values: Sequence[str] = ()) -> Requirement:
        if operator == "In":
            return cls(key, False, frozenset(values))
        if operator == "NotIn":
            return cls(key, True, frozenset(values))
        if operator == "Exists":
            return cls(key, True, frozenset())
        if operator == "DoesNotExist":
            return cls(key, False, frozenset())
        bound = int(values[0])
        if operator == "Gt":
            return cls(key, True, frozenset(), gte=bound + 1)
        if operator == "Lt":
            return cls(key, True, frozenset(), lte=bound - 1)
        if operator == "Gte":  # since v1.9
            return cls(key, True, frozenset(), gte=bound)
        if operator == "Lte":
            return cls(key, True, frozenset(), lte=bound)
        raise ValueError(f"operator {operator!r}")

    @property
    def operator(self) -> str:  # L305-315 (bounded complements count as Exists)
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def _within(self, value: str, gte: int | None, lte: int | None) -> bool:  # L404-420
        if gte is None and lte is None:
            return True
        try:
            number = int(value)
        except ValueError:
            return False
        return (gte is None or number >= gte) and (lte is None or number <= lte)

    def has(self, value: str) -> bool:  # L289-294
        inside = value in self.values
        return (not inside if self.complement else inside) and self._within(
            value, self.gte, self.lte
        )

    def intersects(self, other: Requirement) -> bool:  # HasIntersection L234-268
        gte = max((b for b in (self.gte, other.gte) if b is not None), default=None)
        lte = min((b for b in (self.lte, other.lte) if b is not None), default=None)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and self._within(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and self._within(v, gte, lte) for v in self.values)
        return any(v in other.values and self._within(v, gte, lte) for v in self.values)


Requirements = dict[str, Requirement]


def requirements(raw: Iterable[Mapping[str, Any]]) -> Requirements:
    out: Requirements = {}
    for r in raw:
        req = Requirement.of(r["key"], r["operator"], r.get("values") or ())
        if r["key"] in out:  # Add intersects requirements on the same key
            old = out[r["key"]]
            values = {v for v in old.values | req.values if old.has(v) and req.has(v)}
            req = (
                Requirement(r["key"], True, old.values | req.values, old.gte, old.lte)
                if old.complement and req.complement
                else Requirement(r["key"], False, frozenset(values))
            )
        out[r["key"]] = req
    return out


def label_requirements(labels: Mapping[str, str]) -> Requirements:
    return {k: Requirement(k, False, frozenset([v])) for k, v in labels.items()}


def _failed_keys(left: Requirements, right: Requirements) -> bool:
    """``Intersects`` (requirements.go L256-276): every shared key intersects, or both sides
    are NotIn/DoesNotExist."""
    for key in left.keys() & right.keys():
        a, b = left[key], right[key]
        if not a.intersects(b) and not (
            b.operator in ("NotIn", "DoesNotExist") and a.operator in ("NotIn", "DoesNotExist")
        ):
            return True
    return False


def intersects(left: Requirements, right: Requirements) -> bool:
    return not _failed_keys(left, right)


WELL_KNOWN = {
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "karpenter.sh/capacity-type",
    "karpenter.sh/nodepool",
}  # fmt: skip  K apis/v1/labels.go WellKnownLabels (the keys used here)


def compatible(left: Requirements, right: Requirements, allow_undefined: set[str]) -> bool:
    """``Compatible`` (requirements.go L181-198): a key of ``right`` that ``left`` does not
    define fails unless it is allowed undefined or ``right`` says NotIn/DoesNotExist."""
    for key, req in right.items():
        if key in allow_undefined or key in left or req.operator in ("NotIn", "DoesNotExist"):
            continue
        return False
    return intersects(left, right)


# --- the independent tables -----------------------------------------------------------------


@cache
def table() -> dict[str, Any]:
    return yaml.load(ADVERTISED.read_text(), Loader=_LOADER)


def type_labels(name: str, row: Mapping[str, Any]) -> dict[str, str]:
    """The instance type's requirements that a NodePool can select on (A ``types.go``
    ``computeRequirements`` L323-471)."""
    family, size = name.split(".", 1)
    gpu = row["gpu"]
    return {
        "node.kubernetes.io/instance-type": name,
        "kubernetes.io/arch": row["arch"],
        "kubernetes.io/os": "linux",
        "karpenter.k8s.aws/instance-family": family,
        "karpenter.k8s.aws/instance-size": size,
        "karpenter.k8s.aws/instance-gpu-name": gpu["name"],
        "karpenter.k8s.aws/instance-gpu-manufacturer": gpu["manufacturer"],
        "karpenter.k8s.aws/instance-gpu-count": str(gpu["count"]),
        "karpenter.k8s.aws/instance-gpu-memory": str(gpu["memoryMiB"]),
        "karpenter.k8s.aws/instance-cpu": str(row["vcpu"]),
        "karpenter.k8s.aws/instance-memory": str(row["memoryMiB"]),
    }


def type_capacity(
    row: Mapping[str, Any], network_interfaces: Sequence[Mapping] | None
) -> Resources:
    """A ``types.go`` ``computeCapacity`` L492-510 (AL2023 and Bottlerocket: ENI-limited pods)."""
    mem = row["memoryMiB"] * MI
    if row["arch"] == "arm64":  # L518-520
        mem -= 64 * MI
    mem -= math.ceil(mem * table()["vmMemoryOverheadPercent"] / MI) * MI  # L524
    efa_only_card0 = sum(
        1
        for n in network_interfaces or ()
        if n.get("networkCardIndex", 0) == 0 and n.get("interfaceType") == "efa-only"
    )
    usable = max(row["defaultCardInterfaces"] - efa_only_card0, 0)  # L645-665
    pods = usable * (row["ipv4PerInterface"] - 1) + 2 if usable else 0
    efa = (
        sum(1 for n in network_interfaces if n.get("interfaceType") == "efa-only")
        if network_interfaces is not None
        else row["efa"]
    )  # L632-643
    return {CPU: row["vcpu"] * 1000, MEMORY: mem, PODS: pods, GPU: row["gpu"]["count"], EFA: efa}


def overhead(capacity: Mapping[str, int]) -> Resources:
    """kube-reserved + eviction threshold (A ``types.go`` L682-733, no kubelet overrides)."""
    cpu = capacity[CPU]
    reserved = 0
    for start, end, pct in ((0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005),
                            (4000, 1 << 31, 0.0025)):  # fmt: skip
        if cpu >= start:
            reserved += int((min(cpu, end) - start) * pct)
    return {CPU: reserved, MEMORY: (11 * capacity[PODS] + 255) * MI + 100 * MI}


def allocatable(capacity: Mapping[str, int]) -> Resources:
    out = {k: v for k, v in capacity.items()}
    for k, v in overhead(capacity).items():
        out[k] = out.get(k, 0) - v
    for k, v in capacity.items():  # hugepages come out of memory (K cloudprovider/types.go L342)
        if k.startswith("hugepages-"):
            out[MEMORY] = max(out[MEMORY] - v, 0)
    return out


def pod_requests(pod: Mapping[str, Any]) -> Resources:
    """Effective requests: max(sum of containers, each init container) per resource."""
    spec = pod["spec"]
    total: Resources = {}
    for c in spec.get("containers", []):
        for k, v in resources_of(c.get("resources", {}).get("requests")).items():
            total[k] = total.get(k, 0) + v
    for c in spec.get("initContainers", []):
        for k, v in resources_of(c.get("resources", {}).get("requests")).items():
            total[k] = max(total.get(k, 0), v)
    return total


@cache
def system_pods() -> tuple[dict, ...]:
    """The system pods of a real GPU node (tests/fixtures/system-pods, kept by the admission
    tests); empty until that fixture exists."""
    if not SYSTEM_PODS.is_dir():
        return ()
    pods = []
    for path in sorted(SYSTEM_PODS.glob("*.yaml")):
        docs = yaml.load_all(path.read_text(), Loader=_LOADER)
        pods += [d for d in docs if d and d.get("kind") == "Pod"]
    return tuple(pods)


def is_daemonset_pod(pod: Mapping[str, Any]) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in pod["metadata"].get("ownerReferences", []))


def tolerates(pod: Mapping[str, Any], taints: Sequence[Mapping[str, Any]]) -> bool:
    tolerations = pod["spec"].get("tolerations", [])

    def ok(t: Mapping[str, Any]) -> bool:
        for tol in tolerations:
            if tol.get("effect") not in (None, "", t.get("effect")):
                continue
            if tol.get("operator") == "Exists" and tol.get("key") in (None, "", t["key"]):
                return True
            if tol.get("key") == t["key"] and str(tol.get("value", "")) == str(t.get("value", "")):
                return True
        return False

    return all(ok(t) for t in taints if t.get("effect") in ("NoSchedule", "NoExecute"))


def daemon_requirements(pod: Mapping[str, Any]) -> Requirements:
    """The DaemonSet template's node requirements: nodeSelector and matchExpressions (the
    matchFields on metadata.name are the DaemonSet controller's per-node pin)."""
    reqs = label_requirements(pod["spec"].get("nodeSelector", {}))
    affinity = pod["spec"].get("affinity", {}).get("nodeAffinity", {})
    terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    for term in terms.get("nodeSelectorTerms", [])[:1]:
        reqs.update(requirements(term.get("matchExpressions", [])))
    return reqs


# --- what the device plugin advertises --------------------------------------------------------


def device_plugin_advertises(
    row: Mapping[str, Any], labels: Mapping[str, str], gpu_operator: Mapping[str, Any]
) -> Resources:
    """``nvidia.com/*`` on ``Node.Status.Capacity`` of a node of this type and labels."""
    gpus = row["gpu"]["count"]
    ops = gpu_operator
    mig_config = labels.get("nvidia.com/mig.config")
    if mig_config and mig_config != "all-disabled":
        devices = mig_devices(row["gpu"].get("pciId"), mig_config, ops)
        if ops.get("mig", {}).get("strategy", "single") == "mixed":
            out = {GPU: 0}
            out.update({f"nvidia.com/mig-{p}": n * gpus for p, n in devices.items()})
            return out
        return {GPU: sum(devices.values()) * gpus}
    name = labels.get("nvidia.com/device-plugin.config")
    data = ops.get("devicePlugin", {}).get("config", {}).get("data", {})
    if name and name in data:
        config = _parsed(data[name]) or {}
        sharing = (config.get("sharing") or {}).get("timeSlicing") or {}
        for r in sharing.get("resources", []):
            if r["name"] == GPU and not sharing.get("renameByDefault") and not r.get("rename"):
                return {GPU: gpus * int(r["replicas"])}
    return {GPU: gpus}


def mig_devices(pci_id: str | None, profile: str, ops: Mapping[str, Any]) -> dict[str, int]:
    """MIG devices per GPU: the rendered mig-parted config, else the operator's default."""
    data = ops.get("migManager", {}).get("config", {}).get("data", {})
    if "config.yaml" in data:
        entries = (_parsed(data["config.yaml"])["mig-configs"]).get(profile, [])
        entries = [
            {"deviceFilter": e.get("device-filter"), "devices": e.get("mig-devices") or {}}
            for e in entries
            if e.get("mig-enabled")
        ]
    else:
        entries = table()["migParted"].get(profile, [])
    for e in entries:
        f = e["deviceFilter"]
        f = [f] if isinstance(f, str) else f
        if f is None or (pci_id is not None and pci_id in f):
            return dict(e["devices"])
    return {}


@cache
def _parsed(text: str) -> Any:
    """``yaml.safe_load(text)``, once per text (every launch reads the same rendered configs);
    its callers copy what they return, never change it."""
    return yaml.load(text, Loader=_LOADER)


# --- the render -------------------------------------------------------------------------------


@dataclass
class Render:
    """What Karpenter (and the device plugin) sees of a stack."""

    nodepools: dict[str, dict]
    nodeclasses: dict[str, dict]
    overlays: list[dict]
    queues: dict[str, dict]
    gpu_operator: dict
    region: str

    @classmethod
    def load(cls, path: str | Path, region: str | None = None) -> Render:
        path = Path(path)
        docs = [yaml.safe_load(p.read_text()) for p in sorted((path / "manifests").glob("*.yaml"))]
        helm = path / "helm" / "gpu-operator.yaml"
        values = yaml.safe_load(helm.read_text()).get("values", {}) if helm.exists() else {}
        return cls.of(docs, values, region or _region(path))

    @classmethod
    def of(cls, docs: Iterable[Mapping], gpu_operator: Mapping, region: str) -> Render:
        by_kind: dict[str, dict[str, dict]] = {}
        for d in docs:
            by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = dict(d)
        return cls(
            nodepools=by_kind.get("NodePool", {}),
            nodeclasses=by_kind.get("EC2NodeClass", {}),
            overlays=list(by_kind.get("NodeOverlay", {}).values()),
            queues=by_kind.get("Queue", {}),
            gpu_operator=dict(gpu_operator),
            region=region,
        )


def _region(path: Path) -> str:
    resources = path / "resources.json"
    if resources.exists():
        m = re.search(r'"region":\s*"([a-z]{2}-[a-z]+-\d)"', resources.read_text())
        if m:
            return m.group(1)
    return "us-east-1"


@dataclass
class InstanceType:
    name: str
    labels: dict[str, str]
    capacity: Resources
    offerings: list[tuple[str, str, float]]  # (capacity type, zone, price), available only
    # allocatable() of the capacity it was computed for: computed again if that changed.
    _allocatable: tuple[Resources, Resources] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def allocatable(self) -> Resources:
        if self._allocatable is None or self._allocatable[0] != self.capacity:
            self._allocatable = (dict(self.capacity), allocatable(self.capacity))
        return dict(self._allocatable[1])

    @property
    def price(self) -> float:
        return min(p for _, _, p in self.offerings)


def _copied(types: dict[str, dict[str, InstanceType]]) -> dict[str, dict[str, InstanceType]]:
    out: dict[str, dict[str, InstanceType]] = {}
    for np, by_name in types.items():
        out[np] = {}
        for name, it in by_name.items():
            copy = InstanceType(it.name, dict(it.labels), dict(it.capacity), list(it.offerings))
            copy._allocatable = it._allocatable
            out[np][name] = copy
    return out


# Karpenter.__init__'s instance types (base, overlaid, rejected overlays) by what they depend on.
_TYPES: dict[str, tuple[dict, dict, list[str]]] = {}


def _template_labels(nodepool: Mapping) -> dict[str, str]:
    labels = dict(nodepool["spec"]["template"].get("metadata", {}).get("labels", {}))
    labels["karpenter.sh/nodepool"] = nodepool["metadata"]["name"]
    return labels


class Karpenter:
    """The NodePools of a render, their instance types with overlays applied, and the nodes."""

    def __init__(self, render: Render, *, overlay_gate: bool = True) -> None:
        self.render = render
        self.overlay_gate = overlay_gate
        key = json.dumps(
            [render.nodepools, render.nodeclasses, render.overlays, render.region, overlay_gate],
            default=str,
        )  # all the types depend on besides the table (a model per flood: computed once)
        if key not in _TYPES:
            self.base: dict[str, dict[str, InstanceType]] = {
                np: self._instance_types(manifest) for np, manifest in render.nodepools.items()
            }
            self.rejected_overlays: list[str] = []
            self.types = self._apply_overlays() if overlay_gate else self.base
            _TYPES[key] = (self.base, self.types, self.rejected_overlays)
        base, types, rejected = _TYPES[key]
        self.base = _copied(base)  # each model its own (a test may change one)
        self.types = _copied(types) if types is not base else self.base
        self.rejected_overlays = list(rejected)
        self.nodes: list[Node] = []

    # instance types and offerings
    def _instance_types(self, nodepool: Mapping) -> dict[str, InstanceType]:
        spec = nodepool["spec"]["template"]["spec"]
        nodeclass = self.render.nodeclasses.get(spec["nodeClassRef"]["name"], {})
        interfaces = nodeclass.get("spec", {}).get("networkInterfaces")
        reqs = requirements(spec.get("requirements", []))
        capacity_types = reqs.get("karpenter.sh/capacity-type")
        zone_req = reqs.get("topology.kubernetes.io/zone")
        out = {}
        for name, row in table()["instanceTypes"].items():
            if "onDemandPrice" not in row:
                continue  # no price: no available offering (base_resolver.go L120-135)
            offerings = [
                (ct, z, row["onDemandPrice"])
                for ct in ("on-demand", "spot")
                for z in row["zones"].get(self.render.region, [])
                if (capacity_types is None or capacity_types.has(ct))
                and (zone_req is None or zone_req.has(z))
            ]
            labels = type_labels(name, row)
            if offerings and intersects(label_requirements(labels), reqs):
                out[name] = InstanceType(name, labels, type_capacity(row, interfaces), offerings)
        return out

    def _apply_overlays(self) -> dict[str, dict[str, InstanceType]]:
        ordered = sorted(
            self.render.overlays,
            key=lambda o: (-(o["spec"].get("weight") or 0), _Desc(o["metadata"]["name"])),
        )
        # (nodepool, type) -> [applied capacity, last applied overlay's keys, its weight]
        store: dict[tuple[str, str], list] = {}
        for overlay in ordered:
            reqs = requirements(overlay["spec"].get("requirements", []))
            capacity = resources_of(overlay["spec"].get("capacity"))
            weight = overlay["spec"].get("weight") or 0
            matched = [
                (np, t)
                for np, manifest in self.render.nodepools.items()
                for t, it in self.base[np].items()
                if self._overlay_matches(manifest, it, reqs)
            ]
            if capacity and any(
                (np, t) in store and store[np, t][2] == weight and set(capacity) & store[np, t][1]
                for np, t in matched
            ):
                self.rejected_overlays.append(overlay["metadata"]["name"])
                continue
            for key in matched:
                if not capacity:
                    continue
                entry = store.setdefault(key, [{}, set(), weight])
                for r, v in capacity.items():
                    entry[0].setdefault(r, v)
                entry[1], entry[2] = set(capacity), weight
        out: dict[str, dict[str, InstanceType]] = {}
        for np, types in self.base.items():
            out[np] = {}
            for t, it in types.items():
                update = store.get((np, t), [{}])[0]
                out[np][t] = InstanceType(
                    it.name, it.labels, {**it.capacity, **update}, it.offerings
                )
        return out

    def _overlay_matches(self, nodepool: Mapping, it: InstanceType, reqs: Requirements) -> bool:
        """controller.go ``getOverlaidOfferings`` L226-245."""
        left = label_requirements(_template_labels(nodepool))
        left.update(label_requirements(it.labels))
        left["karpenter.sh/capacity-type"] = Requirement(
            "karpenter.sh/capacity-type", False, frozenset(ct for ct, _, _ in it.offerings)
        )
        left["topology.kubernetes.io/zone"] = Requirement(
            "topology.kubernetes.io/zone", False, frozenset(z for _, z, _ in it.offerings)
        )
        return compatible(left, reqs, set())

    # accounting
    def limits(self, nodepool: str) -> Resources:
        return resources_of(self.render.nodepools[nodepool]["spec"].get("limits"))

    def usage(self, nodepool: str) -> Resources:
        total: Resources = {}
        for n in self.nodes:
            if n.nodepool != nodepool or n.deleting:
                continue
            for r, v in n.counted.items():
                total[r] = total.get(r, 0) + v
        return total

    @cache  # noqa: B019 (the model lives for one test)
    def daemon_overhead(self, nodepool: str, type_name: str) -> Resources:
        """Requests of the DaemonSet pods compatible with the template (scheduler.go
        L1049-1072): they tolerate its taints, and their node requirements are compatible with
        the template's (undefined well-known labels allowed) and intersect the type's."""
        it = self.types[nodepool][type_name]
        manifest = self.render.nodepools[nodepool]
        spec = manifest["spec"]["template"]["spec"]
        template = requirements(spec.get("requirements", []))
        template.update(label_requirements(_template_labels(manifest)))
        total: Resources = {}
        for pod in system_pods():
            if not is_daemonset_pod(pod) or not tolerates(pod, spec.get("taints", [])):
                continue
            reqs = daemon_requirements(pod)
            if not compatible(template, reqs, WELL_KNOWN) or not intersects(
                label_requirements(it.labels), reqs
            ):
                continue
            for k, v in {**pod_requests(pod), PODS: 1}.items():
                total[k] = total.get(k, 0) + v
        return total

    def node_daemons(self, nodepool: str, labels: Mapping[str, str]) -> list[dict]:
        """The DaemonSet pods that run on a real node: the GPU Operator labels GPU nodes
        ``nvidia.com/gpu.deploy.<operand>=true`` (gpu-operator v26.7.0
        ``controllers/state_manager.go``; mig-manager only where MIG is configured)."""
        spec = self.render.nodepools[nodepool]["spec"]["template"]["spec"]
        node = dict(labels)
        if node.get("nvidia.com/gpu.deploy.operands") != "false":
            for operand in OPERANDS:
                node.setdefault(f"nvidia.com/gpu.deploy.{operand}", "true")
            if "nvidia.com/mig.config" in node:
                node.setdefault("nvidia.com/gpu.deploy.mig-manager", "true")
        node.setdefault("feature.node.kubernetes.io/pci-10de.present", "true")
        out = []
        for pod in system_pods():
            if not is_daemonset_pod(pod) or not tolerates(pod, spec.get("taints", [])):
                continue
            reqs = daemon_requirements(pod)
            if all((k in node and r.has(node[k])) or (k not in node and r.operator in
                   ("NotIn", "DoesNotExist")) for k, r in reqs.items()):  # fmt: skip
                out.append(pod)
        return out

    # provisioning
    def nodepool_order(self) -> list[str]:
        """utils/nodepool/nodepool.go L161-171: weight descending, then name descending."""
        return sorted(
            self.render.nodepools,
            key=lambda n: (-(self.render.nodepools[n]["spec"].get("weight") or 0), _Desc(n)),
        )

    def provision(self, pods: Sequence[Pod], rounds: int = 100) -> list[Pod]:
        """Bind what fits, launch NodeClaims for the rest, initialize them, repeat; returns the
        pods left pending. A pod listed more than once (``[pod] * n``) is that many pods of its
        shape: each is bound and claimed on its own (the claims track pods by identity)."""
        seen: set[int] = set()
        distinct = []
        for pod in pods:
            distinct.append(pod if id(pod) not in seen else pod.copy())
            seen.add(id(distinct[-1]))
        pending = sorted(
            distinct, key=lambda p: (-p.requests.get(CPU, 0), -p.requests.get(MEMORY, 0))
        )
        non_negative = all(n >= 0 for p in pending for n in p.requests.values())
        for round_ in range(1, rounds + 1):
            # Per pod shape (all _bind reads of a pod): the first node that may still take it.
            # Binding only takes from a node's free resources (requests are not negative), so
            # a node that refused a shape refuses it for the rest of the pass; a shape no node
            # took is refused outright.
            first: dict[tuple, int | None] | None = {} if non_negative else None
            still = [p for p in pending if not self._bind(p, first)]
            if not still:
                return []
            claims = self._schedule(still, round_)
            if not claims:
                return still
            claimed = set()
            for claim in claims:
                self._launch(claim)
                claimed.update(id(p) for p in claim.pods)
            pending = [p for p in still if id(p) not in claimed]
        return pending

    def _bind(self, pod: Pod, first: dict[tuple, int | None] | None = None) -> bool:
        """Bind to the first node (in launch order) that selects the pod and fits it."""
        key = pod.shape() if first is not None else None
        start = first.get(key, 0) if first is not None else 0
        if start is None:  # refused by every node since the pass began
            return False
        for i in range(start, len(self.nodes)):
            node = self.nodes[i]
            if node.deleting or not pod.selects(node.labels):
                continue
            if fits(pod.requests, node.free):
                node.bind(pod)
                if first is not None:
                    first[key] = i
                return True
        if first is not None:
            first[key] = None
        return False

    def _schedule(self, pending: Sequence[Pod], round_: int) -> list[Claim]:
        remaining = {np: self._remaining(np) for np in self.render.nodepools}
        order = self.nodepool_order()
        claims: list[Claim] = []
        # A pod that no claim and no NodePool takes changes nothing (a claim changes only when
        # it takes a pod, ``remaining`` only when a claim is made), so every later pod of its
        # shape (all that try_add and _new_claim read of a pod) is refused too, until one is
        # taken.
        refused: set[tuple] = set()
        for pod in pending:
            shape = pod.shape()
            if shape in refused:
                continue
            for claim in sorted(claims, key=lambda c: len(c.pods)):  # scheduler.go L632
                if claim.try_add(pod):
                    break
            else:
                claim = self._new_claim(pod, remaining, round_, order)
                if claim is None:
                    refused.add(shape)
                    continue
                claims.append(claim)
            refused.clear()
        return claims

    def _remaining(self, nodepool: str) -> Resources:
        usage = self.usage(nodepool)
        return {r: v - usage.get(r, 0) for r, v in self.limits(nodepool).items()}

    def _new_claim(
        self, pod: Pod, remaining: dict[str, Resources], round_: int, order: list[str] | None = None
    ) -> Claim | None:
        for np in self.nodepool_order() if order is None else order:
            template_labels = _template_labels(self.render.nodepools[np])
            types = [
                it
                for it in self.types[np].values()
                if all(it.capacity.get(r, 0) <= v for r, v in remaining[np].items())
            ]  # filterByRemainingResources
            claim = Claim(self, np, round_, template_labels, types)
            if claim.try_add(pod):
                if claim.options:  # subtractMax
                    for r in remaining[np]:
                        remaining[np][r] -= max(it.capacity.get(r, 0) for it in claim.options)
                return claim
        return None

    def _launch(self, claim: Claim) -> None:
        it = min(claim.options, key=lambda t: (t.price, t.name))  # OrderByPrice, then name
        labels = {**claim.labels, **it.labels}
        row = table()["instanceTypes"][it.name]
        advertised = {k: v for k, v in it.capacity.items() if not k.startswith("nvidia.com/")}
        advertised.update(device_plugin_advertises(row, labels, self.render.gpu_operator))
        node = Node(
            nodepool=claim.nodepool,
            instance_type=it.name,
            labels=labels,
            claim_capacity={k: v for k, v in it.capacity.items() if v},
            advertised=advertised,
            options=sorted(claim.options, key=lambda t: (t.price, t.name)),
            round=claim.round,
        )
        node.free = allocatable(advertised)
        for daemon in self.node_daemons(claim.nodepool, labels):
            node.bind(Pod.of_manifest(daemon))
        for pod in claim.pods:
            node.bind(pod)
        self.nodes.append(node)

    # disruption
    def consolidation_candidates(self) -> list[Node]:
        """Nodes graceful disruption (emptiness, consolidation) may take."""
        return [
            n
            for n in self.nodes
            if not n.deleting
            and not any(p.annotations.get(DO_NOT_DISRUPT) == "true" for p in n.pods)
        ]

    def empty_candidates(self) -> list[Node]:
        return [n for n in self.consolidation_candidates() if all(p.daemon for p in n.pods)]


class _Desc(str):
    """A string that sorts descending."""

    def __lt__(self, other: str) -> bool:  # type: ignore[override]
        return str.__gt__(self, other)


def fits(request: Mapping[str, int], free: Mapping[str, int]) -> bool:
    return all(free.get(r, 0) >= n for r, n in request.items() if n)


@dataclass
class Pod:
    requests: Resources
    node_selector: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    daemon: bool = False
    name: str = ""

    @classmethod
    def of_manifest(cls, pod: Mapping[str, Any]) -> Pod:
        return cls(
            requests={**pod_requests(pod), PODS: 1},
            annotations=dict(pod["metadata"].get("annotations") or {}),
            daemon=is_daemonset_pod(pod),
            name=pod["metadata"]["name"],
        )

    def selects(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.node_selector.items())

    def shape(self) -> tuple:
        """All that scheduling reads of the pod: its requests and node selector."""
        return (tuple(sorted(self.requests.items())), tuple(sorted(self.node_selector.items())))

    def copy(self) -> Pod:
        """Another pod of the same shape (its own dicts)."""
        return Pod(
            dict(self.requests), dict(self.node_selector), dict(self.annotations), self.daemon,
            self.name,
        )  # fmt: skip


@dataclass
class Node:
    nodepool: str
    instance_type: str
    labels: dict[str, str]
    claim_capacity: Resources
    advertised: Resources
    options: list[InstanceType]
    round: int
    initialized: bool = True
    deleting: bool = False
    free: Resources = field(default_factory=dict)
    pods: list[Pod] = field(default_factory=list)

    @property
    def counted(self) -> Resources:
        """StateNode.Capacity (statenode.go L458-474)."""
        return self.advertised if self.initialized else self.claim_capacity

    def bind(self, pod: Pod) -> None:
        for r, n in pod.requests.items():
            self.free[r] = self.free.get(r, 0) - n
        self.pods.append(pod)


class Claim:
    """An in-flight NodeClaim: its pods and the types that can still take them all."""

    def __init__(self, karpenter: Karpenter, nodepool: str, round_: int, labels: dict,
                 types: list[InstanceType]) -> None:  # fmt: skip
        self.karpenter, self.nodepool, self.round, self.labels = karpenter, nodepool, round_, labels
        self.options = types
        self.pods: list[Pod] = []
        self.requests: Resources = {}
        # Pod shapes refused since the claim last changed: it refuses them again until then
        # (try_add reads only the claim and the pod's shape, and changes the claim only when it
        # takes the pod).
        self._refused: set[tuple] = set()
        self._labels: dict[str, dict[str, str]] = {}  # per type: the template's and its own

    def try_add(self, pod: Pod) -> bool:
        shape = pod.shape()
        if shape in self._refused:
            return False
        total = dict(self.requests)
        for r, n in pod.requests.items():
            total[r] = total.get(r, 0) + n
        options = []
        for it in self.options:
            labels = self._labels.get(it.name)
            if labels is None:
                labels = self._labels[it.name] = {**self.labels, **it.labels}
            if not pod.selects(labels):
                continue
            need = dict(total)
            for k, v in self.karpenter.daemon_overhead(self.nodepool, it.name).items():
                need[k] = need.get(k, 0) + v
            if fits(need, it.allocatable):
                options.append(it)
        if not options:
            self._refused.add(shape)
            return False
        self.options, self.requests = options, total
        self.pods.append(pod)
        self._refused.clear()
        return True


# --- the flood, for the tests and the Go differential test -------------------------------------


def flood(
    render: Render | str | Path,
    pool: str,
    requests: Mapping[str, int] | None = None,
    *,
    pods: int = 512,
    node_selector: Mapping[str, str] | None = None,
    overlay_gate: bool = True,
) -> dict[str, Any]:
    """Send ``pods`` pods of one shape selecting ``pool`` (``eks-gpu-platform.io/pool``) and
    let the model launch until the limits stop it. JSON-able (module docstring)."""
    if not isinstance(render, Render):
        render = Render.load(render)
    model = Karpenter(render, overlay_gate=overlay_gate)
    shape = dict(requests or {GPU: 1})
    selector = {POOL_LABEL: pool, **(node_selector or {})}
    sent = [Pod({**shape, PODS: 1}, dict(selector), name=f"p{i}") for i in range(pods)]
    left = model.provision(sent)
    launched: dict[str, int] = {}
    for n in model.nodes:
        key = f"{n.nodepool}/{n.instance_type}"
        launched[key] = launched.get(key, 0) + 1
    pools = sorted({n.nodepool for n in model.nodes} | {
        np for np, m in render.nodepools.items()
        if _template_labels(m).get(POOL_LABEL) == pool
    })  # fmt: skip
    return {
        "pool": pool,
        "pod": {"requests": shape, "nodeSelector": selector},
        "podsSent": pods,
        "nodeClaims": [
            {
                "nodePool": n.nodepool,
                "round": n.round,
                "launched": n.instance_type,
                "instanceTypeOptions": [t.name for t in n.options],
                "pods": sum(1 for p in n.pods if not p.daemon),
                "capacity": n.claim_capacity,
                "advertised": n.advertised,
            }
            for n in model.nodes
        ],
        "launched": launched,
        "podsScheduled": pods - len(left),
        "podsPending": len(left),
        "usage": {np: model.usage(np) for np in pools},
        "limits": {np: model.limits(np) for np in pools},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="karpenter_model.py")
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("flood", help="flood a pool with pods of one shape; print JSON")
    f.add_argument("render_dir", type=Path)
    f.add_argument("pool")
    f.add_argument("--gpus", type=int, default=1)
    f.add_argument("--resource", default=GPU)
    f.add_argument("--cpu", type=int, default=0, help="millicores")
    f.add_argument("--memory-mib", type=int, default=0)
    f.add_argument("--instance-type")
    f.add_argument("--pods", type=int, default=512)
    args = parser.parse_args(argv)
    requests = {args.resource: args.gpus}
    if args.cpu:
        requests[CPU] = args.cpu
    if args.memory_mib:
        requests[MEMORY] = args.memory_mib * MI
    selector = (
        {"node.kubernetes.io/instance-type": args.instance_type} if args.instance_type else {}
    )
    out = flood(args.render_dir, args.pool, requests, pods=args.pods, node_selector=selector)
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
