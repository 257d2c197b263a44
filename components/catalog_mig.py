"""MIG geometry: the GPU classes MIG knows (device ids, EC2 families, profiles) and the devices
one GPU carries under each named profile (``mig_layout``).

A leaf data module like ``catalog`` (imports nothing of the project): the GPU budget
(``budget``) counts MIG devices with it, and ``gpu_operator.mig`` builds the mig-parted
configuration from it.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass

# The profile that turns MIG off (mig-parted config name; the operator default).
MIG_DISABLED = "all-disabled"


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
    # B200 and B300: NVIDIA/gpu-operator v26.7.0 assets/state-mig-manager/0400_configmap.yaml
    # ("# GB200, B200" all-1g.23gb ... L141-153, L235-343, balanced L376-383; B300 0x3182
    # L447-454, L547-588). Corroborated by aws/sagemaker-hyperpod-cli PR #403 (p6-b200 and
    # p6-b300 profile lists).
    "b200-180gb": MigGpuClass(
        description="B200 180GB",
        device_ids=("0x290110DE",),
        instance_families=("p6-b200",),
        profiles={
            "1g.23gb": 7,
            "1g.45gb": 4,
            "2g.45gb": 3,
            "3g.90gb": 2,
            "4g.90gb": 1,
            "7g.180gb": 1,
        },
        balanced={"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1},
    ),
    "b300-270gb": MigGpuClass(
        description="B300 270GB",
        device_ids=("0x318210DE",),
        instance_families=("p6-b300",),
        profiles={
            "1g.34gb": 7,
            "1g.67gb": 4,
            "2g.67gb": 3,
            "3g.135gb": 2,
            "4g.135gb": 1,
            "7g.269gb": 1,
        },
        balanced={"1g.34gb": 2, "2g.67gb": 1, "3g.135gb": 1},
    ),
}


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


def mig_layout(profile: str, instance_family: str) -> dict[str, int]:
    """The MIG devices one GPU of this family carries under ``profile`` (``{}`` for
    ``all-disabled``, or a profile that does not apply to the family)."""
    per_class = _mig_layouts().get(profile, {})
    for key, gpu in MIG_GPU_CLASSES.items():
        if instance_family in gpu.instance_families and key in per_class:
            return dict(per_class[key])
    return {}
