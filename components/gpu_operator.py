"""NVIDIA GPU Operator on EKS GPU AMIs: driver and toolkit from the AMI, the rest from the operator.

- Namespace ``gpu-operator`` (Pod Security ``privileged``: the operands are privileged
  DaemonSets), then the ``gpu-operator`` chart pinned in ``versions.GPU_OPERATOR``.
- On the EKS AL2023 and Bottlerocket NVIDIA AMIs the driver and the container toolkit are
  preinstalled, so ``driver.enabled`` and ``toolkit.enabled`` are off; device plugin, GPU feature
  discovery (KAI needs its labels), DCGM exporter, MIG manager and node feature discovery stay on.
- The operator, NFD master and NFD garbage collector run on the system node group; the operand
  DaemonSets and the NFD worker tolerate the GPU pools' taints.
- MIG: a built-in mig-parted configuration with named profiles for A100 40GB/80GB, H100 80GB and
  H200 141GB (``MIG_PROFILE_NAMES``). A pool picks one with the node label
  ``nvidia.com/mig.config=<profile>``; nodes without the label stay ``all-disabled``.
- Time-slicing: named device-plugin configurations (``GpuOperatorSpec.time_slicing``), picked per
  pool with ``nvidia.com/device-plugin.config=<name>``; unlabelled nodes use ``default`` (no
  sharing). Keep time-sliced pools apart from KAI GPU fractions (FACTS §6, #3376).

Builders (``gpu_operator_values``, ``mig_parted_config``, ``time_slicing_config``) are pure: plain
data in, dict out. Every values key exists in the chart's v26.7.0 defaults (or, under
``node-feature-discovery``, in the NFD subchart's defaults).
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pulumi
import pulumi_kubernetes as k8s
import yaml

from . import versions
from .naming import TYPE_PREFIX
from .nodepool import (
    AMI_SHIPS_NVIDIA_DRIVER,
    EFA_RESOURCE,
    NodePool,
    NodePoolSpec,
    pool_specs,
    taint_tolerations,
)
from .spec import (
    Problem,
    Spec,
    SpecError,
    check_one_of,
    check_pattern,
    derived,
    doc,
    require_instance,
    required_problem,
    set_derived,
    show,
)

if TYPE_CHECKING:  # cluster imports config, which imports this module
    from .cluster import EksCluster

NAMESPACE = "gpu-operator"
RELEASE_NAME = "gpu-operator"
GPU_RESOURCE = "nvidia.com/gpu"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
# ConfigMaps the chart creates from our data; not the operator's own "default-mig-parted-config".
MIG_CONFIG_NAME = "eks-gpu-platform-mig-parted-config"
DEVICE_PLUGIN_CONFIG_NAME = "eks-gpu-platform-device-plugin-config"
# mig-manager reads its configuration from this ConfigMap key (chart values comment).
MIG_CONFIG_KEY = "config.yaml"
MIG_DISABLED = "all-disabled"
# The device-plugin configuration of nodes without the nvidia.com/device-plugin.config label.
NO_SHARING_CONFIG = "default"
MIG_STRATEGIES = ("none", "single", "mixed")
DEFAULT_MIG_STRATEGY = "single"
DEFAULT_PROMETHEUS_RELEASE = "kube-prometheus-stack"
MIN_TIME_SLICING_REPLICAS = 2
MAX_TIME_SLICING_REPLICAS = 48
CONFIG_NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
LABEL_VALUE_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$"
PRIVILEGED_NAMESPACE_LABELS = {
    "pod-security.kubernetes.io/enforce": "privileged",
    "pod-security.kubernetes.io/audit": "privileged",
    "pod-security.kubernetes.io/warn": "privileged",
}
# The chart's defaults for these lists; values replace lists, so ours start from them.
GPU_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": EFA_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}
OPERATOR_NODE_SELECTOR = {"kubernetes.io/os": "linux"}


@dataclass(frozen=True)
class MigGpuClass:
    """One GPU model class as MIG sees it: PCI device ids, EC2 families and valid profiles."""

    description: str
    device_ids: tuple[str, ...]
    """PCI device ids (``0x<device><vendor>``) as mig-parted ``device-filter`` takes them."""
    instance_families: tuple[str, ...]
    """EC2 instance families carrying this GPU."""
    profiles: Mapping[str, int]
    """Each compute profile (without media extensions) and how many fit on one GPU."""
    balanced: Mapping[str, int]
    """The ``all-balanced`` layout: two small, one medium and one large instance."""


# Profiles and counts: NVIDIA MIG user guide, "Supported MIG Profiles"; device ids and balanced
# layouts: NVIDIA/gpu-operator assets/state-mig-manager/0400_configmap.yaml (default config).
# A100 80GB and H100 80GB slice the same way.
MIG_80GB_PROFILES = {
    "1g.10gb": 7,
    "1g.20gb": 4,
    "2g.20gb": 3,
    "3g.40gb": 2,
    "4g.40gb": 1,
    "7g.80gb": 1,
}
MIG_80GB_BALANCED = {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
MIG_GPU_CLASSES: dict[str, MigGpuClass] = {
    "a100-40gb": MigGpuClass(
        description="A100/A800 40GB",
        device_ids=("0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"),
        instance_families=("p4d",),
        profiles={
            "1g.5gb": 7,
            "1g.10gb": 4,
            "2g.10gb": 3,
            "3g.20gb": 2,
            "4g.20gb": 1,
            "7g.40gb": 1,
        },
        balanced={"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1},
    ),
    "a100-80gb": MigGpuClass(
        description="A100/A800 80GB",
        device_ids=("0x20B210DE", "0x20B510DE", "0x20F310DE", "0x20F510DE"),
        instance_families=("p4de",),
        profiles=MIG_80GB_PROFILES,
        balanced=MIG_80GB_BALANCED,
    ),
    "h100-80gb": MigGpuClass(
        description="H100/H800 80GB",
        device_ids=("0x233010DE", "0x233110DE", "0x232210DE", "0x232410DE"),
        instance_families=("p5",),
        profiles=MIG_80GB_PROFILES,
        balanced=MIG_80GB_BALANCED,
    ),
    "h200-141gb": MigGpuClass(
        description="H200 141GB, H200 NVL",
        device_ids=("0x233510DE", "0x233B10DE"),
        instance_families=("p5e", "p5en"),
        profiles={
            "1g.18gb": 7,
            "1g.35gb": 4,
            "2g.35gb": 3,
            "3g.71gb": 2,
            "4g.71gb": 1,
            "7g.141gb": 1,
        },
        balanced={"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1},
    ),
}


# ---------------------------------------------------------------------------------------------
# Spec (configuration key ``gpuOperator``)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GpuOperatorSpec(Spec):
    """The NVIDIA GPU Operator: monitoring, MIG strategy and time-slicing configurations."""

    enabled: bool = doc(True, "Install the GPU Operator (needed by GPU pools and by KAI).")
    service_monitor: bool = doc(
        False,
        "Prometheus (Operator) is present: create the DCGM exporter's ServiceMonitor.",
    )
    prometheus_release: str = doc(
        DEFAULT_PROMETHEUS_RELEASE,
        "Value of the ServiceMonitor's 'release' label, which Prometheus selects on.",
    )
    mig_strategy: Literal["none", "single", "mixed"] = doc(
        DEFAULT_MIG_STRATEGY,
        "How MIG devices are advertised: single (as nvidia.com/gpu), mixed "
        "(nvidia.com/mig-<profile>) or none.",
    )
    time_slicing: Mapping[str, int] = doc(
        text="Named time-slicing configurations: name -> replicas per GPU (2-48); a pool "
        "selects one with timeSlicing. 'default' (no sharing) is reserved.",
        default_factory=dict,
    )

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_one_of(self.mig_strategy, MIG_STRATEGIES):
            out.append((("mig_strategy",), msg))
        if msg := check_pattern(
            self.prometheus_release,
            LABEL_VALUE_PATTERN,
            "a label value; expected 1-63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit",
        ):
            out.append((("prometheus_release",), msg))
        for name, replicas in self.time_slicing.items():
            if name == NO_SHARING_CONFIG:
                out.append(
                    (
                        ("time_slicing",),
                        f"{show(name)} is reserved for the configuration without sharing; "
                        "choose another name",
                    )
                )
            elif not re.fullmatch(CONFIG_NAME_PATTERN, name):
                out.append(
                    (
                        ("time_slicing",),
                        f"{show(name)} is not a valid configuration name; expected 1-63 lowercase "
                        "letters, digits or '-', starting and ending with a letter or digit "
                        f"(it becomes the value of the node label {DEVICE_PLUGIN_CONFIG_LABEL})",
                    )
                )
            # Types (an integer, not a boolean) are checked before _problems runs (spec.py).
            if not MIN_TIME_SLICING_REPLICAS <= replicas <= MAX_TIME_SLICING_REPLICAS:
                out.append(
                    (
                        ("time_slicing",),
                        f"replicas of {show(name)} is {replicas}; expected a number from "
                        f"{MIN_TIME_SLICING_REPLICAS} to {MAX_TIME_SLICING_REPLICAS}",
                    )
                )
        return out


# ---------------------------------------------------------------------------------------------
# Pure builders
# ---------------------------------------------------------------------------------------------


def _mig_layouts() -> dict[str, dict[str, dict[str, int]]]:
    """Each named MIG profile: GPU class -> ``mig-devices`` for that class."""
    layouts: dict[str, dict[str, dict[str, int]]] = {}
    for key, gpu in MIG_GPU_CLASSES.items():
        layouts.setdefault("all-balanced", {})[key] = dict(gpu.balanced)
        for profile, count in gpu.profiles.items():
            layouts.setdefault(f"all-{profile}", {})[key] = {profile: count}
    return dict(sorted(layouts.items(), key=lambda item: _profile_order(item[0])))


def _profile_order(name: str) -> tuple[int, int, str]:
    """``all-balanced`` first, then by slice count and memory (``all-1g.5gb`` < ``all-1g.10gb``)."""
    match = re.fullmatch(r"all-(\d+)g\.(\d+)gb", name)
    if match is None:
        return (0, 0, name)
    return (int(match.group(1)), int(match.group(2)), name)


def mig_parted_config() -> dict:
    """The mig-parted configuration (``version: v1``) behind ``migManager.config``.

    Profiles valid on several GPU classes get one entry per distinct layout, each restricted
    to its GPUs with ``device-filter`` (as upstream's default config does), so one profile name
    works on every pool whose GPUs support it.
    """
    configs: dict[str, list[dict]] = {MIG_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for name, per_class in _mig_layouts().items():
        entries: list[dict] = []
        for key, devices in per_class.items():
            same = next((e for e in entries if e["mig-devices"] == devices), None)
            if same is not None:
                same["device-filter"].extend(MIG_GPU_CLASSES[key].device_ids)
                continue
            entries.append(
                {
                    "device-filter": list(MIG_GPU_CLASSES[key].device_ids),
                    "devices": "all",
                    "mig-enabled": True,
                    "mig-devices": dict(devices),
                }
            )
        configs[name] = entries
    return {"version": "v1", "mig-configs": configs}


MIG_PROFILE_NAMES: tuple[str, ...] = tuple(mig_parted_config()["mig-configs"])


def mig_profiles_for_family(instance_family: str) -> tuple[str, ...]:
    """The MIG profiles a node of this EC2 family can apply (empty: no MIG-capable GPU known)."""
    keys = [k for k, gpu in MIG_GPU_CLASSES.items() if instance_family in gpu.instance_families]
    if not keys:
        return ()
    layouts = _mig_layouts()
    return (MIG_DISABLED, *(n for n, per_class in layouts.items() if keys[0] in per_class))


def mig_devices_per_gpu(profile: str, instance_family: str) -> int:
    """How many ``nvidia.com/gpu`` one GPU of this family advertises under MIG strategy
    ``single`` with ``profile`` applied (1 for ``all-disabled``). Raises ``ValueError`` for a
    profile that mixes sizes (``all-balanced``: strategy ``mixed`` only) or does not apply."""
    if profile == MIG_DISABLED:
        return 1
    per_class = _mig_layouts().get(profile, {})
    for key, gpu in MIG_GPU_CLASSES.items():
        if instance_family in gpu.instance_families and key in per_class:
            devices = per_class[key]
            if len(devices) != 1:
                raise ValueError(
                    f"MIG profile {profile!r} mixes {', '.join(devices)}; migStrategy single "
                    "advertises one size only, so it needs migStrategy mixed"
                )
            return next(iter(devices.values()))
    raise ValueError(f"MIG profile {profile!r} does not apply to {instance_family} GPUs")


def time_slicing_config(replicas: int) -> dict:
    """A device-plugin configuration advertising each GPU as ``replicas`` ``nvidia.com/gpu``."""
    return {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "resources": [{"name": GPU_RESOURCE, "replicas": replicas}],
            }
        },
    }


def no_sharing_config(mig_strategy: str) -> dict:
    """The device-plugin configuration of unlabelled nodes: whole GPUs, the cluster MIG strategy."""
    return {"version": "v1", "flags": {"migStrategy": mig_strategy}}


def _yaml(data: dict) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def _tolerations(*groups: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """The tolerations of every group in order, without exact duplicates."""
    out: list[dict[str, str]] = []
    for group in groups:
        for toleration in group:
            item = dict(toleration)
            if item not in out:
                out.append(item)
    return out


def gpu_operator_values(
    *,
    spec: GpuOperatorSpec,
    drivers_preinstalled: bool,
    system_node_selector: Mapping[str, str],
    system_tolerations: Sequence[Mapping[str, str]],
    gpu_tolerations: Sequence[Mapping[str, str]] = (),
) -> dict:
    """Helm values for the ``gpu-operator`` chart v26.7.0.

    ``drivers_preinstalled`` is true for the EKS NVIDIA AMIs (AL2023, Bottlerocket): the
    operator then deploys neither driver nor toolkit. ``gpu_tolerations`` are the GPU pools'
    taints beyond ``nvidia.com/gpu`` (e.g. ``vpc.amazonaws.com/efa`` on EFA pools): the operand
    DaemonSets and the NFD worker must tolerate every one of them.
    """
    system = dict(system_node_selector)
    system_tol = _tolerations(system_tolerations)
    device_plugin: dict = {"enabled": True}
    if spec.time_slicing:
        data = {NO_SHARING_CONFIG: _yaml(no_sharing_config(spec.mig_strategy))}
        for name, replicas in spec.time_slicing.items():
            data[name] = _yaml(time_slicing_config(replicas))
        device_plugin["config"] = {
            "create": True,
            "name": DEVICE_PLUGIN_CONFIG_NAME,
            "default": NO_SHARING_CONFIG,
            "data": data,
        }
    return {
        "cdi": {"enabled": True, "nriPluginEnabled": False},
        "daemonsets": {"tolerations": _tolerations([GPU_TOLERATION], gpu_tolerations)},
        "operator": {
            "nodeSelector": {**OPERATOR_NODE_SELECTOR, **system},
            "tolerations": system_tol,
        },
        "driver": {"enabled": not drivers_preinstalled},
        "toolkit": {"enabled": not drivers_preinstalled},
        "devicePlugin": device_plugin,
        "gfd": {"enabled": True},
        "mig": {"strategy": spec.mig_strategy},
        "migManager": {
            "enabled": True,
            "config": {
                "create": True,
                "name": MIG_CONFIG_NAME,
                "default": MIG_DISABLED,
                "data": {MIG_CONFIG_KEY: _yaml(mig_parted_config())},
            },
        },
        "dcgmExporter": {
            "enabled": True,
            "serviceMonitor": {
                "enabled": spec.service_monitor,
                "additionalLabels": {"release": spec.prometheus_release},
            },
        },
        "nfd": {"enabled": True},
        "node-feature-discovery": {
            "master": {"nodeSelector": dict(system), "tolerations": list(system_tol)},
            "gc": {"nodeSelector": dict(system), "tolerations": list(system_tol)},
            "worker": {
                "tolerations": _tolerations(
                    [CONTROL_PLANE_TOLERATION, GPU_TOLERATION], gpu_tolerations
                )
            },
        },
    }


# ---------------------------------------------------------------------------------------------
# Component
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GpuOperatorArgs:
    """Inputs of ``GpuOperator``.

    ``cluster`` (the ``EksCluster`` component) gives the Kubernetes provider, the system nodes'
    selector and tolerations (the operator, NFD master and NFD garbage collector run there) and
    the dependency on the system node group. ``node_pools`` (``NodePool`` components or their
    specs) give ``gpu_tolerations`` (every taint of those pools beyond ``nvidia.com/gpu``) and
    ``drivers_preinstalled`` (every GPU pool runs an EKS NVIDIA AMI, driver and toolkit
    included), and are checked against the spec's time-slicing configurations and MIG strategy.
    Explicit arguments win over derived ones; ``depends_on`` adds to them.

    Without ``node_pools`` the operand DaemonSets tolerate ``nvidia.com/gpu`` and
    ``vpc.amazonaws.com/efa``, the taints ``NodePool`` gives GPU and EFA nodes (a pool's own
    extra taints need ``node_pools`` or ``gpu_tolerations``), and ``drivers_preinstalled`` is
    true, as it is for every AMI family a ``NodePool`` can use. Without ``cluster``,
    ``k8s_provider`` and ``system_node_selector`` are required; ``system_tolerations`` defaults
    to the system nodes' ``CriticalAddonsOnly`` taint.
    """

    spec: GpuOperatorSpec = GpuOperatorSpec()
    cluster: "EksCluster | None" = None
    node_pools: Sequence[NodePool | NodePoolSpec] = ()
    k8s_provider: k8s.Provider | None = derived("cluster")
    system_node_selector: Mapping[str, str] | None = derived("cluster")
    system_tolerations: Sequence[Mapping[str, str]] | None = derived("cluster")
    drivers_preinstalled: bool | None = derived("node_pools")
    gpu_tolerations: Sequence[Mapping[str, str]] | None = derived("node_pools")
    depends_on: Sequence[pulumi.Resource] = ()

    def __post_init__(self) -> None:
        from .cluster import EksCluster, system_tolerations

        problems = require_instance(self, "spec", GpuOperatorSpec)
        if not problems and not self.spec.enabled:
            problems.append(
                (
                    ("spec", "enabled"),
                    "is false; leave the GpuOperator component out instead of creating it",
                )
            )
        cluster = self.cluster
        if cluster is not None:
            problems += require_instance(self, "cluster", EksCluster)
        if isinstance(cluster, EksCluster):
            for name, value in (
                ("k8s_provider", cluster.provider),
                ("system_node_selector", dict(cluster.system_node_selector)),
                ("system_tolerations", list(cluster.system_tolerations)),
            ):
                if getattr(self, name) is None:
                    set_derived(self, name, value)
            after = [cluster.system_node_group]
            set_derived(
                self,
                "depends_on",
                [*after, *(d for d in self.depends_on if not any(d is a for a in after))],
            )
        if self.system_tolerations is None:
            set_derived(self, "system_tolerations", system_tolerations())
        for name in ("k8s_provider", "system_node_selector"):
            if getattr(self, name) is None:
                problems.append(required_problem(name, "EksCluster", "cluster"))
        pools, pool_problems = pool_specs(self)
        problems += pool_problems
        gpu_pools = [p for p in pools if p.is_gpu]
        if self.gpu_tolerations is None:
            set_derived(
                self,
                "gpu_tolerations",
                taint_tolerations(gpu_pools) if self.node_pools else [EFA_TOLERATION],
            )
        if self.drivers_preinstalled is None:
            set_derived(
                self,
                "drivers_preinstalled",
                all(AMI_SHIPS_NVIDIA_DRIVER[p.ami.family] for p in gpu_pools),
            )
        if not problems:
            problems += self._pool_problems(pools)
        if problems:
            raise SpecError(type(self).__name__, problems)

    def _pool_problems(self, pools: Sequence[NodePoolSpec]) -> list[Problem]:
        """What the operator must provide for the pools: their time-slicing configurations
        and, for a MIG profile, a MIG strategy."""
        out: list[Problem] = []
        names = sorted(self.spec.time_slicing)
        for i, pool in enumerate(pools):
            if pool.time_slicing is not None and pool.time_slicing not in names:
                out.append(
                    (
                        ("node_pools", i),
                        f"pool {show(pool.name)} selects time-slicing configuration "
                        f"{show(pool.time_slicing)}, which spec.time_slicing does not define; "
                        f"expected one of {', '.join(names) or '(none defined)'}",
                    )
                )
            if pool.mig_profile is not None and self.spec.mig_strategy == "none":
                out.append(
                    (
                        ("node_pools", i),
                        f"pool {show(pool.name)} selects MIG profile {show(pool.mig_profile)}, "
                        "but spec.mig_strategy is 'none'; use single or mixed",
                    )
                )
        return out


class GpuOperator(pulumi.ComponentResource):
    """The NVIDIA GPU Operator chart in its own privileged namespace."""

    namespace: pulumi.Output[str]
    release_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(f"{TYPE_PREFIX}GpuOperator", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAMESPACE, labels=PRIVILEGED_NAMESPACE_LABELS),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
            ),
        )
        values = gpu_operator_values(
            spec=args.spec,
            drivers_preinstalled=bool(args.drivers_preinstalled),
            system_node_selector=args.system_node_selector or {},
            system_tolerations=args.system_tolerations or (),
            gpu_tolerations=args.gpu_tolerations or (),
        )
        chart = versions.GPU_OPERATOR
        self.release = k8s.helm.v3.Release(
            f"{name}-chart",
            name=RELEASE_NAME,
            chart=chart.name,
            version=chart.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart.repository),
            namespace=namespace.metadata.name,
            values=values,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.k8s_provider,
                depends_on=[namespace, *args.depends_on],
            ),
        )
        self.namespace = namespace.metadata.name
        self.release_name = self.release.name
        self.register_outputs({"namespace": self.namespace, "release_name": self.release_name})
