"""``eks_gpu_platform.catalog`` against AWS's own DescribeInstanceTypes answers.

The ``moto`` wheel (5.2.5, pinned in requirements-dev.txt) carries a copy of EC2's
DescribeInstanceTypes output (``moto/ec2/resources/instance_types.json.gz``, AWS's PascalCase
shape); it is read as a file, through ``importlib.util.find_spec`` (moto is never imported). The
catalog cites Karpenter's generated instance-type docs and the VPC CNI's limits table; this is an
independent source for the same figures, compared the way Karpenter v1.15.0 derives them from that
shape (aws/karpenter-provider-aws v1.15.0 ``pkg/providers/instancetype/types.go``):

- GPU count: ``nvidia.com/gpu`` is the sum of ``GpuInfo.Gpus[].Count`` of NVIDIA GPUs (L576-586);
- GPU name and memory: the labels ``instance-gpu-name`` = ``lowerKabobCase(Gpus[0].Name)``
  (L433, L753-755) and ``instance-gpu-memory`` = ``Gpus[0].MemoryInfo.SizeInMiB`` (L436), set when
  the type has exactly one GPU entry;
- EFA: ``vpc.amazonaws.com/efa`` = ``NetworkInfo.EfaInfo.MaximumEfaInterfaces``;
- network cards: ``NetworkInfo.MaximumNetworkCards``.

The tests are skipped only when moto is not installed (it is, by requirements-dev.txt), with the
reason said.
"""

import gzip
import importlib.util
import json
import sys
from pathlib import Path

import pytest

try:
    from eks_gpu_platform import catalog
except ImportError:  # package not installed: import the module from the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "components"))
    import catalog


def _moto_types() -> dict | None:
    spec = importlib.util.find_spec("moto")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = (
        Path(next(iter(spec.submodule_search_locations))) / "ec2/resources/instance_types.json.gz"
    )
    with gzip.open(path, "rt") as f:
        return json.load(f)


MOTO = _moto_types()
pytestmark = pytest.mark.skipif(MOTO is None, reason="moto (requirements-dev.txt) is not installed")
NAMES = sorted(catalog.INSTANCE_TYPES)


def _kabob(s: str) -> str:
    return s.replace(" ", "-").lower()


def aws_view(name: str) -> dict:
    """The figures Karpenter v1.15.0 derives from AWS's answer for one type."""
    info = MOTO[name]
    gpus = info.get("GpuInfo", {}).get("Gpus", [])
    network = info["NetworkInfo"]
    view = {
        "gpu_count": sum(g["Count"] for g in gpus if g["Manufacturer"] == "NVIDIA"),
        "efa_interfaces": network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0),
        "network_cards": network["MaximumNetworkCards"],
        # EC2's flag; instanceStorePolicy RAID0 has nothing to stripe without it.
        "instance_store": info["InstanceStorageSupported"],
    }
    if len(gpus) == 1:
        view["gpu_name"] = _kabob(gpus[0]["Name"])
        view["gpu_memory_mib"] = gpus[0]["MemoryInfo"]["SizeInMiB"]
    return view


def catalog_view(name: str) -> dict:
    t = catalog.INSTANCE_TYPES[name]
    return {
        "gpu_count": t.gpu_count,
        "efa_interfaces": t.efa_interfaces,
        "network_cards": t.network_cards,
        "instance_store": t.instance_store,
        "gpu_name": t.gpu_name,
        "gpu_memory_mib": t.gpu_memory_mib,
    }


def test_every_catalog_type_is_in_aws_data():
    assert [n for n in NAMES if n not in MOTO] == []


@pytest.mark.parametrize("name", NAMES)
def test_catalog_type_matches_aws(name):
    want = aws_view(name)
    got = {k: v for k, v in catalog_view(name).items() if k in want}
    if catalog.INSTANCE_TYPES[name].fractional_gpu:
        # g6f: AWS lists one L4 partition (GpuPartitionSize < 1); Karpenter's instance-type docs
        # give instance-gpu-count 0 and no nvidia.com/gpu, which the catalog follows.
        want["gpu_count"] = 0
    assert got == want


def test_fractional_types_are_partitions_in_aws_data():
    fractional = [n for n in NAMES if catalog.INSTANCE_TYPES[n].fractional_gpu]
    assert fractional  # g6f
    for name in fractional:
        (gpu,) = MOTO[name]["GpuInfo"]["Gpus"]
        assert gpu.get("GpuPartitionSize", 1) < 1, name


def test_g7e_gpu_name_spelling():
    # AWS spells the g7e GPU "RTX PRO Server 6000"; Karpenter's label is its lowerKabobCase.
    assert MOTO["g7e.48xlarge"]["GpuInfo"]["Gpus"][0]["Name"] == "RTX PRO Server 6000"
    assert catalog.INSTANCE_TYPES["g7e.48xlarge"].gpu_name == "rtx-pro-server-6000"


def test_only_g5g_lacks_instance_store_in_aws_data():
    # The root-volume defaults (nodepool.spec.root_volume_settings) read this flag.
    assert sorted({n.split(".")[0] for n in NAMES if not MOTO[n]["InstanceStorageSupported"]}) == [
        "g5g"
    ]
