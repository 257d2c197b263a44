"""Checks of ``PlatformConfig`` that read one or two sections: tags against EC2's limits and
Karpenter's reserved keys, admins against the region's partition, GPU pools against the device
plugin, a pool's MIG profile against its GPUs. ``config.py`` calls them over valid sections."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .aws import REGION_PATTERN, TAG_KEY_PATTERN, kms_region_problem
from .errors import Problem, did_you_mean, is_output, show
from .gpu_operator import mig_devices_per_gpu, mig_profiles_for_family
from .regions import REGIONS

# Tag keys Karpenter sets and the EC2NodeClass CRD refuses (with kubernetes.io/cluster*).
KARPENTER_RESERVED_TAGS = (
    "eks:eks-cluster-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
)
# EC2's tag limits (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html,
# "Tag restrictions"): 50 user tags per resource, keys up to 128 and values up to 256 characters
# of letters, digits, spaces and _.:/=+-@; 'aws:' keys are AWS's own. A Karpenter node carries
# the stack's tags plus the platform's two and Karpenter's six default tags (aws/karpenter-
# provider-aws website/content/en/v1.14/concepts/nodeclasses.md, "spec.tags"), so the stack
# may set at most 50 - 8.
EC2_MAX_TAGS = 50
TAG_VALUE_PATTERN = r"^[\w .:/=+@-]{0,256}$"
KARPENTER_NODE_TAGS = (
    "Name",
    "karpenter.sh/nodeclaim",
    "karpenter.sh/nodepool",
    "karpenter.k8s.aws/ec2nodeclass",
    "kubernetes.io/cluster/<cluster-name>",
    "eks:eks-cluster-name",
)
PLATFORM_NODE_TAGS = ("eks-gpu-platform/cluster", "eks-gpu-platform/pool")
MAX_USER_TAGS = EC2_MAX_TAGS - len(KARPENTER_NODE_TAGS) - len(PLATFORM_NODE_TAGS)


def tag_problems(tags: Mapping[str, str]) -> list[Problem]:
    out: list[Problem] = []
    for key, value in tags.items():
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
        elif not re.fullmatch(TAG_VALUE_PATTERN, value):
            out.append(
                (
                    ("tags",),
                    f"the value {show(value)} of {show(key)} has characters EC2 refuses; "
                    "expected letters, digits, spaces or _.:/=+-@",
                )
            )
    if len(tags) > MAX_USER_TAGS:
        out.append(
            (
                ("tags",),
                f"has {len(tags)} tags; at most {MAX_USER_TAGS}: EC2 allows "
                f"{EC2_MAX_TAGS} per resource, and Karpenter's nodes also carry "
                f"{len(KARPENTER_NODE_TAGS)} tags Karpenter adds and "
                f"{len(PLATFORM_NODE_TAGS)} the platform adds",
            )
        )
    return out


def admin_problems(
    admins: Sequence[Any], region: str, partition: str, key: str = "admins"
) -> list[Problem]:
    """Principals (``cluster.admins``, or ``cluster.viewers`` with ``key``) in another partition
    than the region's."""
    out: list[Problem] = []
    for i, admin in enumerate(admins):
        if is_output(admin):
            continue  # known at deployment only; IAM checks the principal then
        arn_partition = admin.split(":")[1] if admin.startswith("arn:") else None
        if arn_partition and arn_partition != partition:
            out.append(
                (
                    ("cluster", key, i),
                    f"{show(admin)} is in partition {arn_partition!r}, but region "
                    f"{region} is in {partition!r}",
                )
            )
    return out


def device_plugin_problems(operator: Any, gpu_pools: list[str]) -> list[Problem]:
    """GPU pools need a device plugin: the GPU Operator's, or one the user brings."""
    if operator.enabled or operator.external_device_plugin or not gpu_pools:
        return []
    return [
        (
            ("gpu_operator", "enabled"),
            f"is false but GPU pools {', '.join(gpu_pools)} need an NVIDIA device plugin "
            "(without one their nodes advertise no nvidia.com/gpu and GPU pods never "
            "schedule); keep the GPU Operator, or set gpuOperator.externalDevicePlugin: true "
            "if the cluster brings its own",
        )
    ]


def mig_problems(pool: Any, operator: Any) -> list[str]:
    """The pool's MIG profile against the GPUs it selects, in one message naming those GPUs
    (name and memory, as the user selects them), not the EC2 families behind them."""
    profile = pool.mig_profile
    groups: dict[str, tuple[str, ...]] = {}
    single: set[str] = set()
    sizes: dict[str, set[int]] = {}
    for t in pool.catalog_types:
        sizes.setdefault(t.gpu_name, set()).add(t.gpu_memory_mib // 1024)
    for t in pool.catalog_types:
        gpu = t.gpu_name
        if len(sizes[gpu]) > 1:  # a100: 40 GiB (p4d) and 80 GiB (p4de) take other profiles
            gpu += f" {t.gpu_memory_mib // 1024} GiB"
        allowed = groups.setdefault(gpu, mig_profiles_for_family(t.family))
        if profile in allowed and profile != "all-disabled" and operator.mig_strategy == "single":
            try:
                mig_devices_per_gpu(profile, t.family)
            except ValueError as err:
                single.add(str(err))
    no_mig = [g for g, allowed in sorted(groups.items()) if not allowed]
    other = [(g, allowed) for g, allowed in sorted(groups.items()) if allowed]
    wrong = [f"{g} takes {', '.join(a)}" for g, a in other if profile not in a]
    parts = []
    if no_mig:
        parts.append(f"{', '.join(no_mig)} {'has' if len(no_mig) == 1 else 'have'} no MIG")
    parts += wrong
    out = sorted(single)
    if parts:
        fits = len(groups) > len(no_mig) + len(wrong)
        out.append(
            f"{show(profile)} does not apply to "
            + ("every GPU the pool selects: " if fits else "the pool's GPUs: ")
            + "; ".join(parts)
            + ("; select only GPUs it fits" if fits else "")
        )
    return out


def kms_problems(keys: Sequence[tuple[Any, Any]], region: str, partition: str) -> list[Problem]:
    """KMS key ARNs (``cluster.kmsKeyArn``, each pool's ``rootVolume.kmsKeyId``: ``(path,
    value)`` pairs) in the stack's region and partition."""
    out: list[Problem] = []
    for path, key in keys:
        if isinstance(key, str) and (msg := kms_region_problem(key, region, partition)):
            out.append((path, msg))
    return out


def region_problem(region: Any) -> str | None:
    """Why ``region`` is not a region the AWS provider knows (``regions.REGIONS``)."""
    if is_output(region):
        return None
    if not isinstance(region, str) or not re.fullmatch(REGION_PATTERN, region):
        return f"{show(region)} is not an AWS region such as 'us-west-2'"
    if region not in REGIONS:
        return f"{show(region)} is not a region the AWS provider (pulumi-aws) knows" + did_you_mean(
            region, REGIONS
        )
    return None
