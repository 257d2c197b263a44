"""The stack configuration: typed, validated specs for every part of the platform.

Each top-level configuration key of the ``eks-gpu-platform`` namespace maps to one spec here
(``cluster`` -> ``ClusterSpec``, ``karpenter`` -> ``KarpenterSpec``, ...). ``PlatformConfig.load``
parses a whole stack's configuration, collects every problem, and raises one ``SpecError``
listing them all before any resource is registered. Components take these specs as plain values:
they decide the shape of the graph.
"""

from __future__ import annotations

import ipaddress
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from . import versions
from .gpu_operator import GpuOperatorSpec, mig_devices_per_gpu, mig_profiles_for_family
from .nodepool import (
    AMI_SHIPS_NVIDIA_DRIVER,
    DEFAULT_CPU_POOL_NAME,
    NodePoolSpec,
    default_cpu_pool,
)
from .scheduler import PoolRouting, SchedulerSpec, pool_gpu_limits, routing_problems
from .spec import (
    QUANTITY,
    Problem,
    Spec,
    SpecError,
    camel,
    check_cidr,
    check_one_of,
    check_pattern,
    check_range,
    did_you_mean,
    doc,
    is_output,
    load_value,
    show,
)

PROJECT = "eks-gpu-platform"

DEFAULT_VPC_CIDR = "10.0.0.0/16"
DEFAULT_AZ_COUNT = 3
DEFAULT_LABEL_DOMAIN = "eks-gpu-platform.io"
DEFAULT_LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
DEFAULT_SYSTEM_INSTANCE_TYPES = ("m7i.xlarge",)
DEFAULT_SYSTEM_MIN_SIZE = 2
DEFAULT_SYSTEM_MAX_SIZE = 4
DEFAULT_SYSTEM_DISK_GIB = 50
DEFAULT_KARPENTER_REPLICAS = 2
DEFAULT_KARPENTER_CPU = "1"
DEFAULT_KARPENTER_MEMORY = "1Gi"
# The oldest Karpenter whose APIs this project renders (networkInterfaces, placementGroupSelector).
MIN_KARPENTER_VERSION = "1.11.0"
# The next minor is not modelled: its IAM policy and CRDs have to be reviewed first.
MAX_KARPENTER_VERSION_EXCLUSIVE = "1.15.0"

PARTITIONS = {
    "cn-": "aws-cn",
    "us-gov-": "aws-us-gov",
    "us-iso-": "aws-iso",
    "us-isob-": "aws-iso-b",
}
REGION_PATTERN = r"^(us|eu|ap|sa|ca|me|af|il|mx|cn|us-gov|us-iso|us-isob)-[a-z]+-[0-9]$"
EKS_NAME_PATTERN = r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$"
LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
IAM_PRINCIPAL_PATTERN = (
    r"^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b):iam::[0-9]{12}:(role|user)/[\w+=,.@/-]+$"
)
IAM_SHORTHAND_PATTERN = r"^(role|user)/[\w+=,.@/-]+$"
KMS_KEY_ARN_PATTERN = (
    r"^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b):kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]{36}$"
)
LABEL_DOMAIN_PATTERN = (
    r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$"
)
GRAVITON_FAMILY = re.compile(r"^[a-z]+[0-9]+g[a-z]*$")


def partition_for_region(region: str) -> str:
    """The AWS partition a region belongs to (``aws``, ``aws-cn``, ``aws-us-gov``, ...)."""
    for prefix, partition in PARTITIONS.items():
        if region.startswith(prefix):
            return partition
    return "aws"


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.lstrip("v").split("."))


# ---------------------------------------------------------------------------------------------
# cluster
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ClusterSpec(Spec):
    """The EKS control plane: name, version, endpoint access, admins and encryption."""

    name: str = doc(text="EKS cluster name; also names the Karpenter IAM roles and the queue.")
    kubernetes_version: str = doc(
        versions.DEFAULT_KUBERNETES_VERSION,
        "Kubernetes minor version; one the pinned Karpenter supports.",
        example=versions.DEFAULT_KUBERNETES_VERSION,
    )
    endpoint_public_access: bool = doc(
        False, "Expose the API server publicly (the private endpoint is always on)."
    )
    public_access_cidrs: tuple[str, ...] = doc(
        (), "CIDR allowlist for the public endpoint; required when it is on; never 0.0.0.0/0."
    )
    admins: tuple[str, ...] = doc(
        (),
        "IAM principals granted cluster admin through access entries: full ARNs, or "
        "'role/NAME' / 'user/NAME' in the deploying account.",
        output=True,
    )
    kms_key_arn: str | None = doc(
        None,
        "Existing KMS key for secrets encryption; by default a key is created (rotation on).",
        output=True,
    )
    log_types: tuple[str, ...] = doc(
        DEFAULT_LOG_TYPES, "Control-plane log types sent to CloudWatch."
    )
    label_domain: str = doc(
        DEFAULT_LABEL_DOMAIN, "Domain of the project's own node labels, e.g. '<domain>/pool'."
    )
    protect: bool = doc(False, "Protect the cluster, its KMS key and the VPC from deletion.")

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_pattern(
            self.name,
            EKS_NAME_PATTERN,
            "a valid EKS cluster name; expected 1-100 letters, digits, '-' or '_', "
            "starting with a letter or digit",
        ):
            out.append((("name",), msg))
        if self.kubernetes_version not in versions.SUPPORTED_KUBERNETES_VERSIONS:
            out.append(
                (
                    ("kubernetes_version",),
                    f"{show(self.kubernetes_version)} is not supported; expected one of "
                    + ", ".join(versions.SUPPORTED_KUBERNETES_VERSIONS),
                )
            )
        if self.endpoint_public_access and not self.public_access_cidrs:
            out.append(
                (
                    ("public_access_cidrs",),
                    "is empty but endpointPublicAccess is true; list the CIDR blocks allowed to "
                    "reach the public endpoint",
                )
            )
        if not self.endpoint_public_access and self.public_access_cidrs:
            out.append(
                (
                    ("public_access_cidrs",),
                    "is set but endpointPublicAccess is false; turn the public endpoint on or "
                    "remove the list",
                )
            )
        for i, cidr in enumerate(self.public_access_cidrs):
            if msg := check_cidr(cidr):
                out.append((("public_access_cidrs", i), msg))
            elif cidr in ("0.0.0.0/0", "::/0"):
                out.append(
                    (
                        ("public_access_cidrs", i),
                        f"{show(cidr)} opens the API server to the internet; list specific CIDRs",
                    )
                )
        for i, admin in enumerate(self.admins):
            if not is_output(admin) and not (
                re.fullmatch(IAM_PRINCIPAL_PATTERN, admin)
                or re.fullmatch(IAM_SHORTHAND_PATTERN, admin)
            ):
                out.append(
                    (
                        ("admins", i),
                        f"{show(admin)} is not an IAM role or user; expected an ARN such as "
                        "'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME'",
                    )
                )
        if len(set(self.admins)) != len(self.admins):
            out.append((("admins",), "lists the same principal twice"))
        if self.kms_key_arn is not None and (
            msg := check_pattern(
                self.kms_key_arn,
                KMS_KEY_ARN_PATTERN,
                "a KMS key ARN; expected 'arn:<partition>:kms:<region>:<account>:key/<uuid>'",
            )
        ):
            out.append((("kms_key_arn",), msg))
        for i, log_type in enumerate(self.log_types):
            if msg := check_one_of(log_type, LOG_TYPES):
                out.append((("log_types", i), msg + did_you_mean(log_type, LOG_TYPES)))
        if msg := check_pattern(
            self.label_domain, LABEL_DOMAIN_PATTERN, "a DNS domain such as 'example.com'"
        ):
            out.append((("label_domain",), msg))
        elif any(
            self.label_domain == reserved or self.label_domain.endswith("." + reserved)
            for reserved in ("kubernetes.io", "k8s.io", "karpenter.sh", "k8s.aws")
        ):
            out.append(
                (
                    ("label_domain",),
                    f"{show(self.label_domain)} is reserved by Kubernetes or Karpenter; "
                    "use a domain your organisation owns",
                )
            )
        return out


# ---------------------------------------------------------------------------------------------
# vpc
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class VpcSpec(Spec):
    """A new VPC (``cidr``, ``azCount``) or an existing one (``vpcId``, ``privateSubnetIds``)."""

    cidr: str | None = doc(None, f"CIDR of a new VPC (/16 to /20); default {DEFAULT_VPC_CIDR}.")
    az_count: int | None = doc(None, f"AZs of a new VPC (2-6); default {DEFAULT_AZ_COUNT}.")
    nat_gateway_per_az: bool = doc(
        False, "One NAT gateway per AZ (resilient) instead of a single one (cheap)."
    )
    vpc_id: str | None = doc(None, "Use this existing VPC instead of creating one.", output=True)
    private_subnet_ids: tuple[str, ...] = doc(
        (),
        "Existing VPC: private subnets, in at least 2 AZs; tagged for Karpenter discovery.",
        output=True,
    )
    public_subnet_ids: tuple[str, ...] = doc(
        (),
        "Existing VPC: public subnets for internet-facing load balancers (optional).",
        output=True,
    )

    @property
    def create(self) -> bool:
        return self.vpc_id is None

    @property
    def vpc_cidr(self) -> str:
        return self.cidr or DEFAULT_VPC_CIDR

    @property
    def azs(self) -> int:
        return self.az_count or DEFAULT_AZ_COUNT

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.create:
            for name in ("private_subnet_ids", "public_subnet_ids"):
                if getattr(self, name):
                    out.append(
                        ((name,), f"is set without vpcId; set vpcId or remove {camel(name)}")
                    )
            if self.cidr is not None:
                if msg := check_cidr(self.cidr):
                    out.append((("cidr",), msg))
                else:
                    network = ipaddress.ip_network(self.cidr)
                    if network.version != 4 or not 16 <= network.prefixlen <= 20:
                        out.append(
                            (
                                ("cidr",),
                                f"{show(self.cidr)} has the wrong size; expected an IPv4 block "
                                "from /16 to /20",
                            )
                        )
            if self.az_count is not None and (msg := check_range(self.az_count, 2, 6)):
                out.append((("az_count",), msg))
            return out
        if msg := check_pattern(
            self.vpc_id or "", r"^vpc-[0-9a-f]{8,17}$", "a VPC id; expected 'vpc-' and hex digits"
        ):
            out.append((("vpc_id",), msg))
        for name in ("cidr", "az_count"):
            if getattr(self, name) is not None:
                out.append(((name,), f"is set with vpcId; {camel(name)} only applies to a new VPC"))
        if self.nat_gateway_per_az:
            out.append((("nat_gateway_per_az",), "only applies to a new VPC; remove it"))
        if len(self.private_subnet_ids) < 2:
            out.append(
                (
                    ("private_subnet_ids",),
                    f"lists {len(self.private_subnet_ids)} subnet(s); an existing VPC needs at "
                    "least 2 private subnets in different AZs",
                )
            )
        for name in ("private_subnet_ids", "public_subnet_ids"):
            ids = getattr(self, name)
            for i, subnet in enumerate(ids):
                if msg := check_pattern(
                    subnet, r"^subnet-[0-9a-f]{8,17}$", "a subnet id; expected 'subnet-' and hex"
                ):
                    out.append(((name, i), msg))
            if len(set(ids)) != len(ids):
                out.append(((name,), "lists the same subnet twice"))
        return out


# ---------------------------------------------------------------------------------------------
# systemNodeGroup
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SystemNodeGroupSpec(Spec):
    """The managed node group where controllers run and Karpenter never provisions."""

    instance_types: tuple[str, ...] = doc(
        DEFAULT_SYSTEM_INSTANCE_TYPES, "Instance types (on-demand, one architecture)."
    )
    min_size: int = doc(DEFAULT_SYSTEM_MIN_SIZE, "Minimum nodes (at least 2, spread over AZs).")
    max_size: int = doc(DEFAULT_SYSTEM_MAX_SIZE, "Maximum nodes.")
    desired_size: int | None = doc(None, "Initial node count; default minSize.")
    disk_size_gib: int = doc(DEFAULT_SYSTEM_DISK_GIB, "Root volume size in GiB (gp3, encrypted).")

    @property
    def arch(self) -> str:
        family = self.instance_types[0].split(".")[0] if self.instance_types else ""
        return "arm64" if GRAVITON_FAMILY.match(family) else "x86_64"

    @property
    def ami_type(self) -> str:
        return "AL2023_ARM_64_STANDARD" if self.arch == "arm64" else "AL2023_x86_64_STANDARD"

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if not self.instance_types:
            out.append((("instance_types",), "is empty; list at least one instance type"))
        for i, itype in enumerate(self.instance_types):
            if msg := check_pattern(
                itype, r"^[a-z][a-z0-9-]*\.[a-z0-9]+$", "an instance type such as 'm7i.xlarge'"
            ):
                out.append((("instance_types", i), msg))
        arches = {
            "arm64" if GRAVITON_FAMILY.match(t.split(".")[0]) else "x86_64"
            for t in self.instance_types
        }
        if len(arches) > 1:
            out.append(
                (
                    ("instance_types",),
                    f"{show(list(self.instance_types))} mixes arm64 and x86_64; one node group "
                    "runs one AMI architecture",
                )
            )
        if msg := check_range(self.min_size, 2, 100):
            out.append((("min_size",), msg + " (at least 2 nodes keep controllers available)"))
        if msg := check_range(self.max_size, 2, 100):
            out.append((("max_size",), msg))
        if self.max_size < self.min_size:
            out.append((("max_size",), f"{self.max_size} is below minSize {self.min_size}"))
        if self.desired_size is not None and not (
            self.min_size <= self.desired_size <= self.max_size
        ):
            out.append(
                (
                    ("desired_size",),
                    f"{self.desired_size} is outside minSize..maxSize "
                    f"({self.min_size}..{self.max_size})",
                )
            )
        if msg := check_range(self.disk_size_gib, 20, 1000):
            out.append((("disk_size_gib",), msg))
        return out


# ---------------------------------------------------------------------------------------------
# karpenter
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class KarpenterSpec(Spec):
    """The Karpenter controller: chart, identity, interruption handling, sizing."""

    chart_version: str | None = doc(
        None,
        f"Override the pinned chart {versions.KARPENTER_VERSION}; from {MIN_KARPENTER_VERSION} "
        f"up to (not including) {MAX_KARPENTER_VERSION_EXCLUSIVE}.",
        example=versions.KARPENTER_VERSION,
    )
    auth: Literal["podIdentity", "irsa"] = doc(
        "podIdentity", "How the controller gets AWS credentials: EKS Pod Identity or IRSA."
    )
    interruption_handling: bool = doc(
        True, "Create the SQS interruption queue and its five EventBridge rules."
    )
    replicas: int = doc(DEFAULT_KARPENTER_REPLICAS, "Controller replicas (leader election).")
    cpu: str = doc(DEFAULT_KARPENTER_CPU, "Controller CPU request and limit.")
    memory: str = doc(DEFAULT_KARPENTER_MEMORY, "Controller memory request and limit.")
    log_level: Literal["debug", "info", "error"] = doc("info", "Controller log level.")
    spot_service_linked_role: bool = doc(
        False, "Create the account-wide EC2 Spot service-linked role (fails if it exists)."
    )

    @property
    def version(self) -> str:
        return self.chart_version or versions.KARPENTER_VERSION

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.chart_version is not None:
            if not re.fullmatch(r"^[0-9]+\.[0-9]+\.[0-9]+$", self.chart_version):
                out.append(
                    (
                        ("chart_version",),
                        f"{show(self.chart_version)} is not a chart version; expected X.Y.Z "
                        "without a 'v', e.g. '1.14.1'",
                    )
                )
            elif not (
                version_tuple(MIN_KARPENTER_VERSION)
                <= version_tuple(self.chart_version)
                < version_tuple(MAX_KARPENTER_VERSION_EXCLUSIVE)
            ):
                out.append(
                    (
                        ("chart_version",),
                        f"{show(self.chart_version)} is not supported; expected a version from "
                        f"{MIN_KARPENTER_VERSION} up to (not including) "
                        f"{MAX_KARPENTER_VERSION_EXCLUSIVE}",
                    )
                )
        if msg := check_range(self.replicas, 1, 10):
            out.append((("replicas",), msg))
        for name in ("cpu", "memory"):
            if msg := check_pattern(
                getattr(self, name), QUANTITY, "a Kubernetes quantity such as '1', '500m', '1Gi'"
            ):
                out.append(((name,), msg))
        return out


# ---------------------------------------------------------------------------------------------
# The whole stack
# ---------------------------------------------------------------------------------------------

TAG_KEY_PATTERN = r"^[\w .:/=+@-]{1,128}$"
# Tag keys Karpenter sets and the EC2NodeClass CRD refuses (with kubernetes.io/cluster*).
KARPENTER_RESERVED_TAGS = (
    "eks:eks-cluster-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
)
# Node labels the platform sets from pool fields: <labelDomain>/<suffix>, and the operator's.
PLATFORM_LABEL_SUFFIXES = ("pool", "preemptible", "efa", "system")
OPERATOR_LABELS = ("nvidia.com/mig.config", "nvidia.com/device-plugin.config")


@dataclass(frozen=True, kw_only=True)
class PlatformConfig(Spec):
    """Every configuration key of a stack, validated together."""

    region: str = doc(text="AWS region (`aws:region`).")
    cluster: ClusterSpec = doc(text="EKS control plane.")
    vpc: VpcSpec = doc(VpcSpec(), "Network: a new VPC or an existing one.")
    system_node_group: SystemNodeGroupSpec = doc(
        SystemNodeGroupSpec(), "Managed node group for controllers."
    )
    karpenter: KarpenterSpec = doc(KarpenterSpec(), "Karpenter controller.")
    node_pools: tuple[NodePoolSpec, ...] = doc(
        (), "Karpenter capacity: gpu, efa and cpu pools (see Node pools)."
    )
    gpu_operator: GpuOperatorSpec = doc(GpuOperatorSpec(), "NVIDIA GPU Operator.")
    scheduler: SchedulerSpec = doc(
        SchedulerSpec(enabled=False),
        "KAI scheduler and queues; off unless configured (then enabled: true by default).",
    )
    tags: Mapping[str, str] = doc(
        text="Tags on every AWS resource (and on Karpenter's instances).", default_factory=dict
    )

    @property
    def pools(self) -> tuple[NodePoolSpec, ...]:
        """The configured pools, plus the default general-purpose pool when none is cpu."""
        if any(p.kind == "cpu" for p in self.node_pools):
            return self.node_pools
        return (*self.node_pools, default_cpu_pool(spot=self.karpenter.interruption_handling))

    @property
    def efa_pools(self) -> tuple[NodePoolSpec, ...]:
        return tuple(p for p in self.node_pools if p.kind == "efa")

    @property
    def gpu_pools(self) -> tuple[NodePoolSpec, ...]:
        return tuple(p for p in self.node_pools if p.is_gpu)

    @property
    def drivers_preinstalled(self) -> bool:
        """Whether every GPU node boots an AMI that ships the NVIDIA driver and toolkit."""
        return all(AMI_SHIPS_NVIDIA_DRIVER[p.ami.family] for p in self.gpu_pools)

    def slices_per_gpu(self, pool: NodePoolSpec) -> int:
        """``nvidia.com/gpu`` each physical GPU of the pool advertises: time-slicing replicas,
        or MIG devices under strategy ``single`` (the smallest count over the pool's GPU
        families, so the pool is never sized too small). Queues count these; Karpenter counts
        physical GPUs."""
        if pool.time_slicing:
            return self.gpu_operator.time_slicing.get(pool.time_slicing, 1)
        if pool.mig_profile and self.gpu_operator.mig_strategy == "single":
            families = sorted({t.family for t in pool.catalog_types})
            try:
                return min(mig_devices_per_gpu(pool.mig_profile, f) for f in families)
            except ValueError:
                return 1  # reported by _gpu_operator_problems
        return 1

    def _routing(self) -> dict[str, PoolRouting]:
        return {
            p.name: PoolRouting(
                preemptible=p.preemptible,
                gpu_cap=p.limits.gpus,
                gpu=p.is_gpu,
                slices_per_gpu=self.slices_per_gpu(p),
            )
            for p in self.pools
        }

    @property
    def gpu_limits(self) -> dict[str, int | None]:
        """Each GPU pool's ``nvidia.com/gpu`` limit: from the queues routed to it when the
        scheduler is on (friction point 1), else the pool's own cap."""
        if self.scheduler.enabled:
            return dict(pool_gpu_limits(self.scheduler.queues, self._routing()))
        return {p.name: p.limits.gpus for p in self.gpu_pools}

    @property
    def partition(self) -> str:
        return partition_for_region(self.region)

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_pattern(self.region, REGION_PATTERN, "an AWS region such as 'us-west-2'"):
            out.append((("region",), msg))
        for key, value in self.tags.items():
            if key in KARPENTER_RESERVED_TAGS or key.startswith("kubernetes.io/cluster"):
                out.append(
                    (
                        ("tags",),
                        f"{show(key)} is a tag Karpenter sets on its nodes itself; EC2NodeClass "
                        "tags may not include it",
                    )
                )
            elif not re.fullmatch(TAG_KEY_PATTERN, key) or key.lower().startswith("aws:"):
                out.append(
                    (
                        ("tags",),
                        f"{show(key)} is not a valid tag key; expected 1-128 letters, digits, "
                        "spaces or _.:/=+-@, not starting with 'aws:'",
                    )
                )
            elif len(value) > 256:
                out.append((("tags",), f"the value of {show(key)} is longer than 256 characters"))
        kube = self.cluster.kubernetes_version
        minimum = versions.KARPENTER_MIN_VERSION_FOR_KUBERNETES.get(kube)
        if minimum and version_tuple(self.karpenter.version) < version_tuple(minimum):
            out.append(
                (
                    ("karpenter", "chart_version"),
                    f"{show(self.karpenter.version)} does not support Kubernetes {kube}; "
                    f"it needs Karpenter {minimum} or newer",
                )
            )
        if self.karpenter.replicas > self.system_node_group.min_size:
            out.append(
                (
                    ("karpenter", "replicas"),
                    f"{self.karpenter.replicas} replicas need {self.karpenter.replicas} system "
                    f"nodes (one per node), but systemNodeGroup.minSize is "
                    f"{self.system_node_group.min_size}",
                )
            )
        out += self._pool_problems()
        for i, admin in enumerate(self.cluster.admins):
            if is_output(admin):
                continue  # known at deployment only; IAM checks the principal then
            arn_partition = admin.split(":")[1] if admin.startswith("arn:") else None
            if arn_partition and arn_partition != self.partition:
                out.append(
                    (
                        ("cluster", "admins", i),
                        f"{show(admin)} is in partition {arn_partition!r}, but region "
                        f"{self.region} is in {self.partition!r}",
                    )
                )
        return out

    def _pool_problems(self) -> list[Problem]:
        out: list[Problem] = []
        seen: dict[str, int] = {}
        if not any(p.kind == "cpu" for p in self.node_pools):
            for i, pool in enumerate(self.node_pools):
                if pool.name == DEFAULT_CPU_POOL_NAME:
                    out.append(
                        (
                            ("node_pools", i, "name"),
                            f"{show(pool.name)} is the default cpu pool's name (added because "
                            "no pool is kind: cpu); rename this pool or define a cpu pool",
                        )
                    )
        platform_labels = {
            f"{self.cluster.label_domain}/{suffix}" for suffix in PLATFORM_LABEL_SUFFIXES
        } | set(OPERATOR_LABELS)
        for i, pool in enumerate(self.node_pools):
            names = [pool.name]
            if pool.kind == "efa":
                names += [f"{pool.name}-{t.replace('.', '-')}" for t in pool.efa_types]
            for name in names:
                if name in seen:
                    out.append(
                        (
                            ("node_pools", i, "name"),
                            f"{show(pool.name)} collides with nodePools[{seen[name]}] "
                            f"(Karpenter object {show(name)})",
                        )
                    )
                seen.setdefault(name, i)
            for key in sorted(set(pool.labels) & platform_labels):
                out.append(
                    (
                        ("node_pools", i, "labels"),
                        f"{show(key)} is set by the platform itself (pool name, preemptible, efa, "
                        "migProfile, timeSlicing); remove it",
                    )
                )
            if pool.zone is not None and not pool.zone.startswith(self.region):
                out.append(
                    (
                        ("node_pools", i, "zone"),
                        f"{show(pool.zone)} is not in region {self.region}",
                    )
                )
            uses_interruptible = {"spot", "reserved"} & set(pool.capacity_types)
            if uses_interruptible and not self.karpenter.interruption_handling:
                out.append(
                    (
                        ("karpenter", "interruption_handling"),
                        f"is false but nodePools[{i}] ({pool.name}) uses "
                        f"{' and '.join(sorted(uses_interruptible))} capacity; Karpenter needs "
                        "the interruption queue to drain those nodes before EC2 reclaims them",
                    )
                )
            if pool.is_gpu and pool.limits.gpus is None and not self.scheduler.enabled:
                out.append(
                    (
                        ("node_pools", i, "limits", "gpus"),
                        f"is not set; GPU pool {show(pool.name)} needs a GPU cap (or scheduler "
                        "queues routed to it, which size it)",
                    )
                )
            out += self._gpu_operator_problems(i, pool)
        if self.scheduler.enabled:
            if not self.gpu_operator.enabled:
                out.append(
                    (
                        ("gpu_operator", "enabled"),
                        "is false but the KAI scheduler is on; KAI needs the GPU Operator "
                        "(RuntimeClass nvidia, GPU feature discovery labels)",
                    )
                )
            routing = routing_problems(self.scheduler.queues, self._routing())
            out += [(("scheduler", *p), m) for p, m in routing]
            if not routing:
                limits = self.gpu_limits
                for i, pool in enumerate(self.node_pools):
                    limit = limits.get(pool.name)
                    if limit is not None and (short := pool.gpu_limit_shortfall(limit)):
                        out.append(
                            (
                                ("node_pools", i),
                                f"the GPU limit its queues allow ({limit}) {short}; raise the "
                                "routed queues' gpu quota/limit or select fewer types",
                            )
                        )
        return out

    def _gpu_operator_problems(self, i: int, pool: NodePoolSpec) -> list[Problem]:
        out: list[Problem] = []
        if pool.mig_profile is not None:
            if not self.gpu_operator.enabled or self.gpu_operator.mig_strategy == "none":
                out.append(
                    (
                        ("node_pools", i, "mig_profile"),
                        "needs the GPU Operator with migStrategy single or mixed",
                    )
                )
            for family in sorted({t.family for t in pool.catalog_types}):
                allowed = mig_profiles_for_family(family)
                if (
                    pool.mig_profile in allowed
                    and self.gpu_operator.mig_strategy == "single"
                    and pool.mig_profile != "all-disabled"
                ):
                    try:
                        mig_devices_per_gpu(pool.mig_profile, family)
                    except ValueError as err:
                        out.append((("node_pools", i, "mig_profile"), str(err)))
                if pool.mig_profile not in allowed:
                    out.append(
                        (
                            ("node_pools", i, "mig_profile"),
                            f"{show(pool.mig_profile)} does not apply to {family} GPUs; "
                            + (
                                f"expected one of {', '.join(allowed)}"
                                if allowed
                                else "they do not support MIG"
                            ),
                        )
                    )
        if pool.time_slicing is not None:
            names = sorted(self.gpu_operator.time_slicing)
            if not self.gpu_operator.enabled or pool.time_slicing not in names:
                out.append(
                    (
                        ("node_pools", i, "time_slicing"),
                        f"{show(pool.time_slicing)} is not a gpuOperator.timeSlicing "
                        f"configuration; expected one of {', '.join(names) or '(none defined)'}",
                    )
                )
        return out

    @classmethod
    def load(cls, values: Mapping[str, Any], region: str | None) -> PlatformConfig:
        """Build the config from the project namespace's values (keys without the prefix)."""
        problems: list[str] = []
        sections: dict[str, Any] = {}
        hints = typing.get_type_hints(cls)
        known = {camel(f.name): f for f in fields(cls) if f.name != "region"}
        for key in values:
            if key not in known:
                problems.append(
                    f"{PROJECT}:{key}: unknown configuration key"
                    + did_you_mean(key, known)
                    + f"; allowed keys are {', '.join(sorted(known))}"
                )
        if not region:
            problems.append("aws:region: is required; set it with `pulumi config set aws:region`")
        elif msg := check_pattern(region, REGION_PATTERN, "an AWS region such as 'us-west-2'"):
            problems.append(f"aws:region: {msg}")
        for key, f in known.items():
            if key not in values:
                if key == "cluster":
                    problems.append("cluster: is required; set at least cluster.name")
                continue
            try:
                sections[f.name] = load_value(hints[f.name], values[key], key)
            except SpecError as err:
                problems.extend(err.lines)
        if problems:
            raise SpecError.from_lines(problems)
        try:
            return cls(region=region or "", **sections)
        except SpecError as err:
            raise SpecError("", err.problems, config=True) from None
