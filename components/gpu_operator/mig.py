"""MIG for the GPU Operator: the built-in mig-parted configuration with its named profiles
(``MIG_PROFILE_NAMES``), from the MIG geometry in ``catalog_mig`` (re-exported here).

Pure: plain data in, dict out.
"""

from ..catalog_mig import MIG_80GB_BALANCED as MIG_80GB_BALANCED
from ..catalog_mig import MIG_80GB_PROFILES as MIG_80GB_PROFILES
from ..catalog_mig import MIG_GPU_CLASSES as MIG_GPU_CLASSES
from ..catalog_mig import MigGpuClass as MigGpuClass
from ..catalog_mig import _mig_layouts
from ..catalog_mig import mig_layout as mig_layout
from .spec import MIG_DISABLED


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
