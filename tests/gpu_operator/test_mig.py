"""Tests for ``eks_gpu_platform.gpu_operator.mig``: profiles, the mig-parted configuration."""

import re

import pytest

from eks_gpu_platform.gpu_operator.mig import (
    MIG_PROFILE_NAMES,
    mig_devices_per_gpu,
    mig_layout,
    mig_parted_config,
    mig_profiles_for_family,
)

A100_40 = ["0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"]
GPUS_80 = [
    "0x20B210DE",
    "0x20B510DE",
    "0x20F310DE",
    "0x20F510DE",
    "0x233010DE",
    "0x233110DE",
    "0x232210DE",
    "0x232410DE",
]
H200 = ["0x233510DE", "0x233B10DE"]
# NVIDIA/gpu-operator v26.7.0 assets/state-mig-manager/0400_configmap.yaml: B200 0x2901, B300
# 0x3182.
B200 = ["0x290110DE"]
B300 = ["0x318210DE"]


def entry(device_filter: list[str], devices: dict) -> dict:
    return {
        "device-filter": device_filter,
        "devices": "all",
        "mig-enabled": True,
        "mig-devices": devices,
    }


def test_mig_profile_names():
    assert MIG_PROFILE_NAMES == (
        "all-disabled",
        "all-balanced",
        "all-1g.5gb",
        "all-1g.10gb",
        "all-1g.18gb",
        "all-1g.20gb",
        "all-1g.23gb",
        "all-1g.34gb",
        "all-1g.35gb",
        "all-1g.45gb",
        "all-1g.67gb",
        "all-2g.10gb",
        "all-2g.20gb",
        "all-2g.35gb",
        "all-2g.45gb",
        "all-2g.67gb",
        "all-3g.20gb",
        "all-3g.40gb",
        "all-3g.71gb",
        "all-3g.90gb",
        "all-3g.135gb",
        "all-4g.20gb",
        "all-4g.40gb",
        "all-4g.71gb",
        "all-4g.90gb",
        "all-4g.135gb",
        "all-7g.40gb",
        "all-7g.80gb",
        "all-7g.141gb",
        "all-7g.180gb",
        "all-7g.269gb",
    )


def test_mig_parted_config_entries():
    config = mig_parted_config()
    assert config["version"] == "v1"
    configs = config["mig-configs"]
    assert configs["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    # Same layouts and device ids as NVIDIA/gpu-operator's default mig-parted config.
    assert configs["all-balanced"] == [
        entry(A100_40, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}),
        entry(GPUS_80, {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
        entry(H200, {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}),
        entry(B200, {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}),
        entry(B300, {"1g.34gb": 2, "2g.67gb": 1, "3g.135gb": 1}),
    ]
    assert configs["all-1g.10gb"] == [
        entry(A100_40, {"1g.10gb": 4}),
        entry(GPUS_80, {"1g.10gb": 7}),
    ]
    assert configs["all-3g.40gb"] == [entry(GPUS_80, {"3g.40gb": 2})]
    assert configs["all-7g.141gb"] == [entry(H200, {"7g.141gb": 1})]
    assert configs["all-1g.5gb"] == [entry(A100_40, {"1g.5gb": 7})]
    assert configs["all-1g.23gb"] == [entry(B200, {"1g.23gb": 7})]
    assert configs["all-7g.180gb"] == [entry(B200, {"7g.180gb": 1})]
    assert configs["all-1g.67gb"] == [entry(B300, {"1g.67gb": 4})]
    assert configs["all-3g.135gb"] == [entry(B300, {"3g.135gb": 2})]


def test_every_mig_layout_fits_on_seven_slices():
    for name, entries in mig_parted_config()["mig-configs"].items():
        for item in entries:
            slices = sum(
                int(profile.split("g.")[0]) * count
                for profile, count in item.get("mig-devices", {}).items()
            )
            assert slices <= 7, name


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        (
            "p4d",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.5gb",
                "all-1g.10gb",
                "all-2g.10gb",
                "all-3g.20gb",
                "all-4g.20gb",
                "all-7g.40gb",
            ),
        ),
        (
            "p5",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.10gb",
                "all-1g.20gb",
                "all-2g.20gb",
                "all-3g.40gb",
                "all-4g.40gb",
                "all-7g.80gb",
            ),
        ),
        (
            "p5en",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.18gb",
                "all-1g.35gb",
                "all-2g.35gb",
                "all-3g.71gb",
                "all-4g.71gb",
                "all-7g.141gb",
            ),
        ),
        (
            "p6-b200",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.23gb",
                "all-1g.45gb",
                "all-2g.45gb",
                "all-3g.90gb",
                "all-4g.90gb",
                "all-7g.180gb",
            ),
        ),
        (
            "p6-b300",
            (
                "all-disabled",
                "all-balanced",
                "all-1g.34gb",
                "all-1g.67gb",
                "all-2g.67gb",
                "all-3g.135gb",
                "all-4g.135gb",
                "all-7g.269gb",
            ),
        ),
        ("g6e", ()),
    ],
)
def test_mig_profiles_for_family(family, expected):
    assert mig_profiles_for_family(family) == expected


def test_p4de_and_p5_share_the_80gb_profiles():
    assert mig_profiles_for_family("p4de") == mig_profiles_for_family("p5")


@pytest.mark.parametrize(
    ("profile", "family", "devices"),
    [
        ("all-disabled", "p5", 1),
        ("all-1g.10gb", "p5", 7),
        ("all-1g.10gb", "p4d", 4),
        ("all-1g.18gb", "p5en", 7),
        ("all-7g.80gb", "p4de", 1),
    ],
)
def test_mig_devices_per_gpu(profile, family, devices):
    assert mig_devices_per_gpu(profile, family) == devices


@pytest.mark.parametrize(
    ("profile", "family", "message"),
    [
        (
            "all-balanced",
            "p4d",
            "MIG profile 'all-balanced' mixes 1g.5gb, 2g.10gb, 3g.20gb; migStrategy single "
            "advertises one size only, so it needs migStrategy mixed",
        ),
        ("all-1g.18gb", "p5", "MIG profile 'all-1g.18gb' does not apply to p5 GPUs"),
        ("all-1g.10gb", "g6", "MIG profile 'all-1g.10gb' does not apply to g6 GPUs"),
    ],
)
def test_mig_devices_per_gpu_errors(profile, family, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        mig_devices_per_gpu(profile, family)


@pytest.mark.parametrize(
    ("profile", "family", "expected"),
    [
        ("all-1g.23gb", "p6-b200", {"1g.23gb": 7}),
        ("all-balanced", "p6-b300", {"1g.34gb": 2, "2g.67gb": 1, "3g.135gb": 1}),
        ("all-2g.20gb", "p5", {"2g.20gb": 3}),
        ("all-disabled", "p5", {}),
        ("all-1g.23gb", "p5", {}),
    ],
)
def test_mig_layout(profile, family, expected):
    assert mig_layout(profile, family) == expected
