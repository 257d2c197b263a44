"""Issue 13, class 3: instance types and families outside GPU pools (CPU pools, the system node
group) exist in the catalogue (``catalog_cpu.py``: CPU families with architecture and sizes, from
Karpenter v1.14's instance-type reference)."""

from typing import Any

import pytest

from eks_gpu_platform import catalog
from eks_gpu_platform.catalog_cpu import CPU_FAMILIES, cpu_arch, cpu_type_problem
from eks_gpu_platform.cluster.spec import SystemNodeGroupSpec
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.nodepool.manifests import family_arch
from eks_gpu_platform.spec import SpecError


def errors(**sections: Any) -> list[str]:
    with pytest.raises(SpecError) as err:
        PlatformConfig.load({"cluster": {"name": "gpu-dev"}, **sections}, "us-west-2")
    return err.value.lines


def cpu_pool(**changes: Any) -> dict[str, Any]:
    return {"nodePools": [{"name": "cpu", "kind": "cpu", **changes}]}


def test_catalogue_shape():
    assert len(CPU_FAMILIES) == 152
    assert CPU_FAMILIES["m7i"] == (
        "amd64",
        (
            "large",
            "xlarge",
            "2xlarge",
            "4xlarge",
            "8xlarge",
            "12xlarge",
            "16xlarge",
            "24xlarge",
            "metal-24xl",
            "48xlarge",
            "metal-48xl",
        ),
    )
    assert not set(CPU_FAMILIES) & set(catalog.GPU_FAMILIES)
    assert {cpu_arch(f) for f in ("m7g", "c7gn", "r8g", "a1", "x2gd")} == {"arm64"}
    assert {cpu_arch(f) for f in ("m7i", "c7a", "r7iz", "t3")} == {"amd64"}
    assert cpu_arch("p5") is None


@pytest.mark.parametrize(
    ("family", "arch"), [("a1", "arm64"), ("m7g", "arm64"), ("m7i", "amd64"), ("zz9g", "arm64")]
)
def test_nodepool_arch_comes_from_the_catalogue(family, arch):
    # a1 (Graviton 1) is arm64 though its name lacks the 'g' the name rule looks for.
    assert family_arch(family) == arch


BAD = [
    pytest.param(
        cpu_pool(instanceFamilies=["m7x"]),
        [
            "nodePools[0](cpu).instanceFamilies[0]: 'm7x' is not an instance family Karpenter "
            "knows; did you mean 'm7i'?"
        ],
        id="pool-family-typo",
    ),
    pytest.param(
        cpu_pool(instanceFamilies=["q9"]),
        ["nodePools[0](cpu).instanceFamilies[0]: 'q9' is not an instance family Karpenter knows"],
        id="pool-family-unknown",
    ),
    pytest.param(
        cpu_pool(instanceTypes=["m7i.huge"]),
        [
            "nodePools[0](cpu).instanceTypes[0]: 'm7i.huge' is not a known instance type: m7i "
            "comes in large, xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, "
            "metal-24xl, 48xlarge, metal-48xl"
        ],
        id="pool-size-unknown",
    ),
    pytest.param(
        cpu_pool(instanceTypes=["zz1.large"]),
        [
            "nodePools[0](cpu).instanceTypes[0]: 'zz1.large' is not a known instance type: no CPU "
            "instance family 'zz1'"
        ],
        id="pool-type-unknown",
    ),
    pytest.param(
        {"systemNodeGroup": {"instanceTypes": ["m7i.gigantic"]}},
        [
            "systemNodeGroup.instanceTypes[0]: 'm7i.gigantic' is not a known instance type: m7i "
            "comes in large, xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, "
            "metal-24xl, 48xlarge, metal-48xl"
        ],
        id="system-size-unknown",
    ),
    pytest.param(
        {"systemNodeGroup": {"instanceTypes": ["g6.xlarge"]}},
        [
            "systemNodeGroup.instanceTypes[0]: 'g6.xlarge' has GPUs; the system node group runs "
            "controllers, GPU capacity belongs in a gpu pool"
        ],
        id="system-gpu-type",
    ),
    pytest.param(
        {"systemNodeGroup": {"instanceTypes": ["a1.large", "m7i.large"]}},
        [
            "systemNodeGroup.instanceTypes: ['a1.large', 'm7i.large'] mixes arm64 and x86_64; one "
            "node group runs one AMI architecture"
        ],
        id="system-mixed-arch-by-catalogue",
    ),
]


@pytest.mark.parametrize(("sections", "lines"), BAD)
def test_unknown_cpu_types_and_families(sections, lines):
    assert errors(**sections) == lines


def test_known_cpu_types_and_families_pass():
    values = {
        "cluster": {"name": "gpu-dev"},
        "systemNodeGroup": {"instanceTypes": ["a1.xlarge", "m7g.large"]},
        **cpu_pool(instanceFamilies=["m7i", "c7g", "r8g"]),
    }
    config = PlatformConfig.load(values, "us-west-2")
    assert config.system_node_group.arch == "arm64"
    assert config.system_node_group.ami_type == "AL2023_ARM_64_STANDARD"
    assert SystemNodeGroupSpec(instance_types=("m7i.large",)).arch == "x86_64"


def test_cpu_type_problem_is_none_for_every_catalogued_type():
    assert [
        f"{f}.{s}"
        for f, (_, sizes) in CPU_FAMILIES.items()
        for s in sizes
        if cpu_type_problem(f"{f}.{s}")
    ] == []
