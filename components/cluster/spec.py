"""The EKS cluster's input specs: ``ClusterSpec`` (control plane: name, version, endpoint access,
admins, encryption, logs, label domain) and ``SystemNodeGroupSpec`` (the controllers' nodes)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .. import catalog, versions
from ..aws import IAM_PRINCIPAL_PATTERN, IAM_SHORTHAND_PATTERN, KMS_KEY_ARN_PATTERN
from ..catalog_cpu import cpu_type_problem, family_arch
from ..spec import (
    Problem,
    Spec,
    check_cidr,
    check_one_of,
    check_pattern,
    check_range,
    did_you_mean,
    doc,
    is_output,
    show,
)
from .access import duplicate_admins, short_identity

DEFAULT_LABEL_DOMAIN = "eks-gpu-platform.io"
# On the NodePools of a stack whose labelDomain is not the default: the domain their labels use,
# so the policy pack (render and `pulumi preview --policy-pack`) checks those labels unprompted.
LABEL_DOMAIN_ANNOTATION = f"{DEFAULT_LABEL_DOMAIN}/label-domain"
DEFAULT_LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
ADDON_VERSION_PATTERN = r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$"
# Control-plane logs that cannot be switched off: who did what (audit) and who authenticated
# as whom (authenticator). EKS Best Practices, Detective controls, "Enable audit logs"; CIS EKS
# 2.1.1 ("Enable audit Logs").
REQUIRED_LOG_TYPES = ("audit", "authenticator")
# The broadest public endpoint allowlist accepted without ``allowBroadPublicAccess``: at most a
# /16's worth of IPv4 addresses (65,536) and a /48's worth of IPv6, counted over the merged
# blocks, so a union of narrower blocks (0.0.0.0/2 + 64.0.0.0/2 ...) counts as what it covers.
PUBLIC_ACCESS_MAX_ADDRESSES = {4: 2 ** (32 - 16), 6: 2 ** (128 - 48)}
PUBLIC_ACCESS_BOUND = {4: "/16", 6: "/48"}
DEFAULT_SYSTEM_INSTANCE_TYPES = ("m7i.xlarge",)
DEFAULT_SYSTEM_MIN_SIZE = 2
DEFAULT_SYSTEM_MAX_SIZE = 4
DEFAULT_SYSTEM_DISK_GIB = 50
EKS_NAME_PATTERN = r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$"
LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
# Control-plane logs that cannot be switched off: who did what (audit) and who authenticated
# as whom (authenticator). EKS Best Practices, Detective controls, "Enable audit logs"; CIS EKS
# 2.1.1 ("Enable audit Logs").
REQUIRED_LOG_TYPES = ("audit", "authenticator")
# The broadest public endpoint allowlist accepted without ``allowBroadPublicAccess``: at most a
# /16's worth of IPv4 addresses (65,536) and a /48's worth of IPv6, counted over the merged
# blocks, so a union of narrower blocks (0.0.0.0/2 + 64.0.0.0/2 ...) counts as what it covers.
PUBLIC_ACCESS_MAX_ADDRESSES = {4: 2 ** (32 - 16), 6: 2 ** (128 - 48)}
PUBLIC_ACCESS_BOUND = {4: "/16", 6: "/48"}
LABEL_DOMAIN_PATTERN = (
    r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$"
)


def _node_arch(family: str) -> str:
    """The AMI architecture of a family (EC2's spelling: ``x86_64`` for ``amd64``)."""
    return "arm64" if family_arch(family) == "arm64" else "x86_64"


def _union_problems(cidrs: tuple[str, ...]) -> list[Problem]:
    """Blocks that together cover the whole address space (0.0.0.0/1 and 128.0.0.0/1) open
    the API server as much as 0.0.0.0/0 does (the policy pack checks the same)."""
    networks: dict[int, list[ipaddress.IPv4Network | ipaddress.IPv6Network]] = {4: [], 6: []}
    for cidr in cidrs:
        if is_output(cidr) or check_cidr(cidr) or cidr in ("0.0.0.0/0", "::/0"):
            continue  # reported one by one above
        network = ipaddress.ip_network(cidr)
        networks[network.version].append(network)
    out: list[Problem] = []
    for version, listed in networks.items():
        if any(n.prefixlen == 0 for n in ipaddress.collapse_addresses(listed)):
            out.append(
                (
                    ("public_access_cidrs",),
                    f"{show([str(n) for n in listed])} together cover "
                    f"{'0.0.0.0/0' if version == 4 else '::/0'}, which opens the API server to "
                    "the internet; list specific CIDRs",
                )
            )
    return out


def _breadth_problems(cidrs: tuple[str, ...]) -> list[Problem]:
    """Allowlists wider than ``PUBLIC_ACCESS_BOUND`` (merged, per address family); whole-space
    allowlists are reported by ``_union_problems`` and the per-entry check instead."""
    networks: dict[int, list[ipaddress.IPv4Network | ipaddress.IPv6Network]] = {4: [], 6: []}
    for cidr in cidrs:
        if is_output(cidr) or check_cidr(cidr) or cidr in ("0.0.0.0/0", "::/0"):
            continue
        network = ipaddress.ip_network(cidr)
        networks[network.version].append(network)
    out: list[Problem] = []
    for version, listed in networks.items():
        merged = list(ipaddress.collapse_addresses(listed))
        if any(n.prefixlen == 0 for n in merged):
            continue  # _union_problems
        total = sum(n.num_addresses for n in merged)
        if total > PUBLIC_ACCESS_MAX_ADDRESSES[version]:
            out.append(
                (
                    ("public_access_cidrs",),
                    f"{show([str(n) for n in listed])} allow {total:,} IPv{version} addresses, "
                    f"more than a {PUBLIC_ACCESS_BOUND[version]} "
                    f"({PUBLIC_ACCESS_MAX_ADDRESSES[version]:,}); list your egress ranges, keep "
                    "the endpoint private (runners inside the VPC), or set "
                    "allowBroadPublicAccess: true",
                )
            )
    return out


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
        (),
        "CIDR allowlist for the public endpoint; required when it is on; never 0.0.0.0/0; at "
        "most a /16's worth of IPv4 (a /48 of IPv6) addresses in all.",
    )
    allow_broad_public_access: bool = doc(
        False,
        "Accept a publicAccessCidrs list wider than a /16 (IPv6: /48) in all; never 0.0.0.0/0.",
    )
    admins: tuple[str, ...] = doc(
        (),
        "IAM principals granted cluster admin through access entries: full ARNs, or "
        "'role/NAME' / 'user/NAME' in the deploying account.",
        output=True,
    )
    break_glass_role: str | None = doc(
        None,
        "IAM role given a cluster-admin access entry for emergencies only (docs/security.md, "
        "break-glass): a role ARN or 'role/NAME'; no entry when unset.",
    )
    viewers: tuple[str, ...] = doc(
        (),
        "IAM principals granted read-only cluster access without Secrets (AmazonEKSViewPolicy) "
        "through access entries, e.g. the CI preview role: full ARNs, or 'role/NAME' / "
        "'user/NAME'.",
        output=True,
    )
    node_ssm_access: bool = doc(
        False,
        "Attach AmazonSSMManagedInstanceCore to the node roles (Session Manager on nodes).",
    )
    kms_key_arn: str | None = doc(
        None,
        "Existing KMS key for secrets encryption; by default a key is created (rotation on).",
        output=True,
    )
    log_types: tuple[str, ...] = doc(
        DEFAULT_LOG_TYPES,
        "Control-plane log types sent to CloudWatch; must include audit and authenticator.",
    )
    label_domain: str = doc(
        DEFAULT_LABEL_DOMAIN, "Domain of the project's own node labels, e.g. '<domain>/pool'."
    )
    addon_versions: Mapping[str, str] = doc(
        text="Optional pins of the EKS add-on versions by add-on (vpc-cni, kube-proxy, "
        "eks-pod-identity-agent, coredns). An add-on without one keeps the version installed "
        "for the cluster's minor, or gets EKS's most recent for the minor at deploy time (a "
        "new cluster, a new add-on, a minor upgrade); the addonVersions stack output shows "
        "what was resolved.",
        default_factory=dict,
    )
    protect: bool = doc(
        False,
        "Protect from deletion the cluster, its KMS key, the VPC with its subnets and NAT "
        "addresses, and every node pool's Karpenter objects and placement group.",
    )

    def _break_glass_problems(self) -> list[Problem]:
        """``break_glass_role``: an IAM role (assumed, so its trust policy can demand MFA and
        its sessions are named in CloudTrail; never a user's long-lived keys), not one of the
        standing ``admins``, nor one of the ``viewers`` (EKS takes one access entry per
        principal: a second ``CreateAccessEntry`` for it fails with ResourceInUseException)."""
        role = self.break_glass_role
        if role is None:
            return []
        if (
            not (
                re.fullmatch(IAM_PRINCIPAL_PATTERN, role)
                or re.fullmatch(IAM_SHORTHAND_PATTERN, role)
            )
            or short_identity(role) is None
            or short_identity(role)[1] != "role"
        ):
            return [
                (
                    ("break_glass_role",),
                    f"{show(role)} is not an IAM role; expected an ARN such as "
                    "'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME' (a role, so that "
                    "its trust policy can require MFA)",
                )
            ]
        for i, later in duplicate_admins([*self.admins, role]):
            if later != len(self.admins):
                continue  # two admins naming one principal: reported on admins
            return [
                (
                    ("break_glass_role",),
                    f"{show(role)} is also admins[{i}] {show(self.admins[i])}: a break-glass "
                    "role is not a standing admin; remove it from admins",
                )
            ]
        for i, later in duplicate_admins([*self.viewers, role]):
            if later != len(self.viewers):
                continue  # two viewers naming one principal: reported on viewers
            return [
                (
                    ("break_glass_role",),
                    f"{show(role)} is also viewers[{i}] {show(self.viewers[i])}: a principal has "
                    "one access entry; remove it from viewers",
                )
            ]
        return []

    def _problems(self) -> list[Problem]:
        out: list[Problem] = []
        if msg := check_pattern(
            self.name,
            EKS_NAME_PATTERN,
            "a valid EKS cluster name; expected 1-100 letters, digits, '-' or '_', "
            "starting with a letter or digit",
        ):
            out.append((("name",), msg))
        if self.kubernetes_version in versions.KUBERNETES_NOT_ON_EKS:
            out.append(
                (
                    ("kubernetes_version",),
                    f"{show(self.kubernetes_version)} is not supported: "
                    + versions.KUBERNETES_NOT_ON_EKS[self.kubernetes_version]
                    + "; expected one of "
                    + ", ".join(versions.SUPPORTED_KUBERNETES_VERSIONS),
                )
            )
        elif self.kubernetes_version not in versions.SUPPORTED_KUBERNETES_VERSIONS:
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
        out += _union_problems(self.public_access_cidrs)
        if not self.allow_broad_public_access:
            out += _breadth_problems(self.public_access_cidrs)
        for key in ("admins", "viewers"):
            for i, principal in enumerate(getattr(self, key)):
                if not is_output(principal) and not (
                    re.fullmatch(IAM_PRINCIPAL_PATTERN, principal)
                    or re.fullmatch(IAM_SHORTHAND_PATTERN, principal)
                ):
                    out.append(
                        (
                            (key, i),
                            f"{show(principal)} is not an IAM role or user; expected an ARN such "
                            "as 'arn:<partition>:iam::<account>:role/NAME' or 'role/NAME'",
                        )
                    )
        for first, later in duplicate_admins(self.viewers):
            out.append(
                (
                    ("viewers", later),
                    f"{show(self.viewers[later])} names the same IAM principal as "
                    f"viewers[{first}] {show(self.viewers[first])}; list it once",
                )
            )
        admin_names = {short_identity(a) for a in self.admins if isinstance(a, str)} - {None}
        for i, viewer in enumerate(self.viewers):
            if isinstance(viewer, str) and short_identity(viewer) in admin_names:
                out.append(
                    (
                        ("viewers", i),
                        f"{show(viewer)} is also in admins; a principal has one access entry, "
                        "list it in one of the two",
                    )
                )
        for first, later in duplicate_admins(self.admins):
            out.append(
                (
                    ("admins", later),
                    f"{show(self.admins[later])} names the same IAM principal as "
                    f"admins[{first}] {show(self.admins[first])} (IAM names are unique per "
                    "account whatever their path, and not distinguished by case); list it once",
                )
            )
        for addon, version in self.addon_versions.items():
            if msg := check_one_of(addon, versions.EKS_ADDONS):
                out.append(
                    (("addon_versions",), f"key {msg}" + did_you_mean(addon, versions.EKS_ADDONS))
                )
            elif msg := check_pattern(
                version, ADDON_VERSION_PATTERN, "an EKS add-on version such as 'v1.20.1-eksbuild.3'"
            ):
                out.append((("addon_versions", addon), msg))
        out += self._break_glass_problems()
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
        if missing := [t for t in REQUIRED_LOG_TYPES if t not in self.log_types]:
            out.append(
                (
                    ("log_types",),
                    f"{show(list(self.log_types))} leaves out {', '.join(missing)}; the "
                    "control plane's audit and authenticator logs are required (who did what, "
                    "and who authenticated as whom)",
                )
            )
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
        return _node_arch(family)

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
            elif catalog.is_gpu_family(itype.split(".")[0]):
                out.append(
                    (
                        ("instance_types", i),
                        f"{show(itype)} has GPUs; the system node group runs controllers, GPU "
                        "capacity belongs in a gpu pool",
                    )
                )
            elif msg := cpu_type_problem(itype):
                out.append((("instance_types", i), msg))
        arches = {_node_arch(t.split(".")[0]) for t in self.instance_types}
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
