"""Tests for the GPU/EFA instance-type catalog (``eks_gpu_platform.catalog``)."""

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

try:
    from eks_gpu_platform import catalog
except ImportError:  # package not installed: import the module from the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "components"))
    import catalog

ENA_PRIMARY = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}


def efa_only(card: int) -> dict:
    return {"networkCardIndex": card, "deviceIndex": 1, "interfaceType": "efa-only"}


EFA_CAPABLE = (
    "g4dn.8xlarge, g4dn.12xlarge, g4dn.16xlarge, g4dn.metal, "
    "g5.8xlarge, g5.12xlarge, g5.16xlarge, g5.24xlarge, g5.48xlarge, "
    "g6.8xlarge, g6.12xlarge, g6.16xlarge, g6.24xlarge, g6.48xlarge, "
    "g6e.8xlarge, g6e.12xlarge, g6e.16xlarge, g6e.24xlarge, g6e.48xlarge, "
    "gr6.8xlarge, "
    "g7e.8xlarge, g7e.12xlarge, g7e.24xlarge, g7e.48xlarge, "
    "p4d.24xlarge, p4de.24xlarge, p5.4xlarge, p5.48xlarge, p5e.48xlarge, p5en.48xlarge, "
    "p6-b200.48xlarge, p6-b300.48xlarge"
)


# --- EFA layouts ---------------------------------------------------------------------------


def test_p5_48xlarge_layout():
    layout = catalog.efa_network_interfaces("p5.48xlarge")
    assert len(layout) == 33
    assert layout == [ENA_PRIMARY] + [efa_only(card) for card in range(32)]


def test_p5e_48xlarge_layout_matches_p5():
    assert catalog.efa_network_interfaces("p5e.48xlarge") == catalog.efa_network_interfaces(
        "p5.48xlarge"
    )


def test_p5en_48xlarge_layout():
    layout = catalog.efa_network_interfaces("p5en.48xlarge")
    assert len(layout) == 17
    assert layout == [ENA_PRIMARY] + [efa_only(card) for card in range(16)]


def test_p6_b200_48xlarge_layout():
    layout = catalog.efa_network_interfaces("p6-b200.48xlarge")
    assert layout == [
        ENA_PRIMARY,
        efa_only(0),
        efa_only(1),
        efa_only(2),
        efa_only(3),
        efa_only(4),
        efa_only(5),
        efa_only(6),
        efa_only(7),
    ]


def test_p6_b300_48xlarge_layout_skips_ena_only_card_zero():
    layout = catalog.efa_network_interfaces("p6-b300.48xlarge")
    assert len(layout) == 17
    assert layout == [ENA_PRIMARY] + [efa_only(card) for card in range(1, 17)]


def test_g6e_48xlarge_layout_uses_its_four_cards():
    assert catalog.INSTANCE_TYPES["g6e.48xlarge"].network_cards == 4
    assert catalog.efa_network_interfaces("g6e.48xlarge") == [
        ENA_PRIMARY,
        efa_only(0),
        efa_only(1),
        efa_only(2),
        efa_only(3),
    ]


def test_g6e_24xlarge_layout_uses_its_two_cards():
    assert catalog.efa_network_interfaces("g6e.24xlarge") == [ENA_PRIMARY, efa_only(0), efa_only(1)]


def test_p4d_24xlarge_layout():
    assert catalog.efa_network_interfaces("p4d.24xlarge") == [ENA_PRIMARY] + [
        efa_only(card) for card in range(4)
    ]


@pytest.mark.parametrize("name", ["g6.48xlarge", "g5.48xlarge", "p5.4xlarge", "g4dn.8xlarge"])
def test_single_efa_layout(name):
    assert catalog.efa_network_interfaces(name) == [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
    ]


def test_layout_is_a_fresh_list_each_call():
    first = catalog.efa_network_interfaces("p5.48xlarge")
    first[0]["interfaceType"] = "mutated"
    first.append({})
    assert catalog.efa_network_interfaces("p5.48xlarge")[0] == ENA_PRIMARY
    assert len(catalog.efa_network_interfaces("p5.48xlarge")) == 33


def test_non_efa_type_is_rejected_with_the_efa_list():
    msg = (
        "instance type 'g6.xlarge' has no EFA (Karpenter vpc.amazonaws.com/efa capacity 0); "
        f"EFA-capable types: {EFA_CAPABLE}"
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        catalog.efa_network_interfaces("g6.xlarge")


def test_unknown_type_is_rejected_with_the_efa_list():
    msg = f"instance type 'm5.large' is not in the GPU catalog; EFA-capable types: {EFA_CAPABLE}"
    with pytest.raises(ValueError, match=re.escape(msg)):
        catalog.efa_network_interfaces("m5.large")


def test_efa_instance_types():
    assert catalog.efa_instance_types() == tuple(EFA_CAPABLE.split(", "))


@pytest.mark.parametrize("name", catalog.efa_instance_types())
def test_efa_layout_invariants(name):
    it = catalog.INSTANCE_TYPES[name]
    layout = catalog.efa_network_interfaces(name)
    # Every entry has exactly the three required fields, with valid values.
    for entry in layout:
        assert set(entry) == {"networkCardIndex", "deviceIndex", "interfaceType"}
        assert entry["networkCardIndex"] >= 0
        assert entry["deviceIndex"] >= 0
        assert entry["interfaceType"] in ("interface", "efa-only")
        assert entry["networkCardIndex"] < it.network_cards
    # CEL: the primary interface is present.
    assert ENA_PRIMARY in layout
    # CEL: no duplicate (networkCardIndex, deviceIndex).
    pairs = [(e["networkCardIndex"], e["deviceIndex"]) for e in layout]
    assert len(pairs) == len(set(pairs))
    # CEL: at most one efa-only per network card.
    per_card = Counter(e["networkCardIndex"] for e in layout if e["interfaceType"] == "efa-only")
    assert max(per_card.values()) == 1
    # The EFA count Karpenter models equals the efa-only entries.
    assert sum(per_card.values()) == it.efa_interfaces
    # IP-optimized: the primary ENA is the only IP-consuming interface.
    assert [e for e in layout if e["interfaceType"] == "interface"] == [ENA_PRIMARY]
    # Sorted by (card, device).
    assert pairs == sorted(pairs)
    # maxItems 150 on spec.networkInterfaces.
    assert len(layout) <= 150


# --- Hugepages -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "g6.48xlarge"]
)
def test_hugepages_for_efa_types(name):
    assert catalog.hugepages_2mi_for(name) == "5120Mi"


def test_hugepages_rejects_non_efa_type():
    msg = "instance type 'g5g.metal' has no EFA (Karpenter vpc.amazonaws.com/efa capacity 0)"
    with pytest.raises(ValueError, match=re.escape(msg)):
        catalog.hugepages_2mi_for("g5g.metal")


# --- Catalog data --------------------------------------------------------------------------


def test_catalogued_families():
    assert tuple(catalog.GPU_FAMILIES) == (
        "g4dn",
        "g5",
        "g5g",
        "g6",
        "g6e",
        "g6f",
        "gr6",
        "g7e",
        "p4d",
        "p4de",
        "p5",
        "p5e",
        "p5en",
        "p6-b200",
        "p6-b300",
    )
    assert "p6e-gb200" not in catalog.GPU_FAMILIES  # not in Karpenter v1.14's instance types


def test_gpu_names():
    assert (
        frozenset(
            {
                "t4",
                "a10g",
                "t4g",
                "l4",
                "l40s",
                "rtx-pro-server-6000",
                "a100",
                "h100",
                "h200",
                "b200",
                "b300",
            }
        )
        == catalog.GPU_NAMES
    )


def test_p5_48xlarge_record():
    assert catalog.INSTANCE_TYPES["p5.48xlarge"] == catalog.InstanceType(
        name="p5.48xlarge",
        family="p5",
        gpu_name="h100",
        gpu_count=8,
        gpu_memory_mib=81920,
        efa_interfaces=32,
        network_cards=32,
        arch="x86_64",
    )


@pytest.mark.parametrize(
    ("name", "gpu_name", "gpus", "memory", "efa", "cards"),
    [
        ("p4d.24xlarge", "a100", 8, 40960, 4, 4),
        ("p4de.24xlarge", "a100", 8, 81920, 4, 4),
        ("p5.4xlarge", "h100", 1, 81920, 1, 1),
        ("p5e.48xlarge", "h200", 8, 144384, 32, 32),
        ("p5en.48xlarge", "h200", 8, 144384, 16, 16),
        ("p6-b200.48xlarge", "b200", 8, 183359, 8, 8),
        ("p6-b300.48xlarge", "b300", 8, 275040, 16, 17),
        ("g6e.48xlarge", "l40s", 8, 45776, 4, 4),
        ("g6e.24xlarge", "l40s", 4, 45776, 2, 2),
        ("g6e.12xlarge", "l40s", 4, 45776, 1, 1),
        ("g6e.4xlarge", "l40s", 1, 45776, 0, 1),
        ("g6.48xlarge", "l4", 8, 22888, 1, 1),
        ("g5.48xlarge", "a10g", 8, 22888, 1, 1),
        ("g4dn.metal", "t4", 8, 16384, 1, 1),
        ("g4dn.4xlarge", "t4", 1, 16384, 0, 1),
        ("gr6.8xlarge", "l4", 1, 22888, 1, 1),
        ("g7e.48xlarge", "rtx-pro-server-6000", 8, 98304, 4, 4),
        ("g7e.12xlarge", "rtx-pro-server-6000", 2, 98304, 1, 1),
    ],
)
def test_type_figures(name, gpu_name, gpus, memory, efa, cards):
    it = catalog.INSTANCE_TYPES[name]
    assert (it.gpu_name, it.gpu_count, it.gpu_memory_mib, it.efa_interfaces, it.network_cards) == (
        gpu_name,
        gpus,
        memory,
        efa,
        cards,
    )


def test_family_sizes():
    def sizes(family):
        return [it.size for it in catalog.INSTANCE_TYPES.values() if it.family == family]

    assert sizes("g4dn") == [
        "xlarge",
        "2xlarge",
        "4xlarge",
        "8xlarge",
        "12xlarge",
        "16xlarge",
        "metal",
    ]
    assert sizes("g5g") == ["xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge", "metal"]
    assert sizes("g6f") == ["large", "xlarge", "2xlarge", "4xlarge"]
    assert sizes("gr6") == ["4xlarge", "8xlarge"]
    assert sizes("p5") == ["4xlarge", "48xlarge"]
    assert len(catalog.INSTANCE_TYPES) == 57


def test_g5g_is_arm64_and_everything_else_x86_64():
    for it in catalog.INSTANCE_TYPES.values():
        expected = "arm64" if it.family == "g5g" else "x86_64"
        assert it.arch == expected, it.name
        assert it.kubernetes_arch == ("arm64" if expected == "arm64" else "amd64")


def test_g6f_is_fractional():
    g6f = catalog.INSTANCE_TYPES["g6f.2xlarge"]
    assert g6f.fractional_gpu
    assert (g6f.gpu_name, g6f.gpu_count, g6f.gpu_memory_mib) == ("l4", 0, 5722)
    assert not catalog.INSTANCE_TYPES["g6.2xlarge"].fractional_gpu


def test_catalog_consistency():
    for name, it in catalog.INSTANCE_TYPES.items():
        assert it.name == name
        assert name.split(".")[0] == it.family
        assert catalog.GPU_FAMILIES[it.family] == it.gpu_name
        assert it.gpu_memory_mib > 0
        assert it.network_cards >= 1
        assert it.efa_interfaces <= it.network_cards
        assert len(it.efa_network_card_indices) == it.efa_interfaces
        assert it.efa_capable == (it.efa_interfaces > 0)


def test_instance_type_is_frozen():
    with pytest.raises(AttributeError):
        catalog.INSTANCE_TYPES["p5.48xlarge"].efa_interfaces = 1  # type: ignore[misc]


# --- Lookups -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu", "families"),
    [
        ("h100", ("p5",)),
        ("h200", ("p5e", "p5en")),
        ("a100", ("p4d", "p4de")),
        ("b200", ("p6-b200",)),
        ("b300", ("p6-b300",)),
        ("l4", ("g6", "g6f", "gr6")),
        ("l40s", ("g6e",)),
        ("t4g", ("g5g",)),
        ("H100", ("p5",)),
    ],
)
def test_families_for_gpu(gpu, families):
    assert catalog.families_for_gpu(gpu) == families


def test_families_for_unknown_gpu():
    with pytest.raises(
        ValueError, match=re.escape("unknown GPU name 'v100'; known GPU names: a100,")
    ):
        catalog.families_for_gpu("v100")


def test_is_gpu_family():
    assert catalog.is_gpu_family("p5")
    assert catalog.is_gpu_family("p6-b200")
    assert catalog.is_gpu_family("g6e")
    assert not catalog.is_gpu_family("m5")
    assert not catalog.is_gpu_family("g4ad")  # AMD GPUs are not in the NVIDIA catalog
    assert not catalog.is_gpu_family("p6e-gb200")


def test_instance_types_for_gpu_names():
    names = [it.name for it in catalog.instance_types_for(gpu_names=("h100", "h200"))]
    assert names == ["p5.4xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"]


def test_instance_types_for_accepts_a_single_string():
    assert catalog.instance_types_for(gpu_names="h100") == catalog.instance_types_for(
        gpu_names=("h100",)
    )


def test_instance_types_for_filters_are_anded():
    names = [
        it.name for it in catalog.instance_types_for(gpu_names="l40s", types=("g6e.48xlarge",))
    ]
    assert names == ["g6e.48xlarge"]
    assert catalog.instance_types_for(gpu_names="h100", families="p5e") == ()


def test_instance_types_for_families_and_types():
    assert [it.name for it in catalog.instance_types_for(families=["p5en", "p6-b200"])] == [
        "p5en.48xlarge",
        "p6-b200.48xlarge",
    ]
    assert [it.name for it in catalog.instance_types_for(types=["p5.48xlarge"])] == ["p5.48xlarge"]


def test_instance_types_for_leaves_out_fractional_unless_asked():
    l4 = [it.name for it in catalog.instance_types_for(gpu_names="l4")]
    assert "g6.xlarge" in l4
    assert not [n for n in l4 if n.startswith("g6f.")]
    with_fractional = catalog.instance_types_for(gpu_names="l4", include_fractional=True)
    assert "g6f.large" in [it.name for it in with_fractional]
    assert len(catalog.instance_types_for(families="g6f")) == 4
    assert [it.name for it in catalog.instance_types_for(types="g6f.xlarge")] == ["g6f.xlarge"]


def test_instance_types_for_everything():
    everything = catalog.instance_types_for()
    assert len(everything) == len(catalog.INSTANCE_TYPES) - 4  # all but the four g6f sizes
    assert len(catalog.instance_types_for(include_fractional=True)) == len(catalog.INSTANCE_TYPES)


def test_instance_types_for_rejects_unknown_names():
    with pytest.raises(ValueError, match=re.escape("unknown GPU name v100; known: a100, a10g,")):
        catalog.instance_types_for(gpu_names="v100")
    with pytest.raises(ValueError, match=re.escape("unknown families c5, m5; known: g4dn, g5,")):
        catalog.instance_types_for(families=("m5", "c5"))
    with pytest.raises(ValueError, match=re.escape("unknown instance type p5.24xlarge; known:")):
        catalog.instance_types_for(types="p5.24xlarge")
