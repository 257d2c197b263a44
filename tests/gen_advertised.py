"""Generate tests/data/advertised.yaml: what Karpenter and a node see per NVIDIA GPU instance type,
from upstream data only (never from components/).

Sources, each at a pinned version:

- EC2 DescribeInstanceTypes and DescribeInstanceTypeOfferings, as shipped in the ``moto`` wheel
  (``moto==5.2.5``: ``moto/ec2/resources/instance_types.json.gz`` and
  ``instance_type_offerings/availability-zone/<region>.json.gz``): vCPUs, memory, GPUs, EFA,
  network cards, zones.
- Karpenter's static on-demand prices (aws/karpenter-provider-aws v1.14.1
  ``pkg/providers/pricing/zz_generated.pricing_aws.go``, generated 2026-07-06): what Karpenter
  orders by until the pricing API answers; spot starts at the same prices (``pricing.go``
  ``Reset`` L452-464), and a type with no price has no available offering
  (``offering/base_resolver.go`` L120-135).
- The GPU Operator v26.7.0 default mig-parted config (NVIDIA/gpu-operator
  ``assets/state-mig-manager/0400_configmap.yaml``): MIG devices per GPU and profile, by PCI
  device id; the ids of the GPUs AWS sells are the ones that file's comments name.

Usage (the committed table is the output; tests/test_karpenter_model.py re-extracts its EC2 rows
from moto, pinned in requirements-dev.txt, its MIG table from the vendored mig-parted config, and
checks its prices against the pinned Karpenter's, v1.15.0's file fetched by
tests/upstream_modules.py: the same for every type the table prices; v1.15.0 adds the g7 family,
which the table, from v1.14.1's file, leaves unpriced):

    python tests/gen_advertised.py [--moto-wheel PATH] [--pricing PATH] [--mig-parted PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "advertised.yaml"
REGIONS = ("us-east-1", "us-west-2")
MOTO = "moto==5.2.5"
PRICING = Path(
    "/root/go/pkg/mod/github.com/aws/karpenter-provider-aws@v1.14.1/pkg/providers/pricing/"
    "zz_generated.pricing_aws.go"
)
# The MIG layouts come from this upstream file, which the project does not vendor: pass a copy of
# it read at the tag (``--mig-parted``) when regenerating the table.
MIG_PARTED = "NVIDIA/gpu-operator v26.7.0 assets/state-mig-manager/0400_configmap.yaml"

# PCI device ids of the NVIDIA GPUs EC2 sells with MIG, as the mig-parted config's comments name
# them (0400_configmap.yaml L111-121, L141, L357-457): (EC2 GPU name, GPU memory MiB) -> id.
PCI_IDS = {
    ("a100", 40960): "0x20B010DE",  # A100-SXM4-40GB (p4d)
    ("a100", 81920): "0x20B210DE",  # A100-SXM4-80GB (p4de)
    ("h100", 81920): "0x233010DE",  # H100-80GB HBM3 SXM5 (p5, p5.4xlarge)
    ("h200", 144384): "0x233510DE",  # H200-141GB (p5e, p5en)
    ("b200", 183359): "0x290110DE",  # B200 (p6-b200)
    ("b300", 275040): "0x318210DE",  # B300 (p6-b300)
}


def lower_kabob(text: str) -> str:
    """karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go L593-595."""
    return text.replace(" ", "-").lower()


def moto_data(wheel: Path | None) -> tuple[dict, dict[str, dict[str, list[str]]]]:
    def read(name: str) -> Any:
        if wheel is not None:
            with zipfile.ZipFile(wheel) as z:
                return json.loads(gzip.decompress(z.read(f"moto/{name}")))
        import importlib.resources

        blob = importlib.resources.files("moto").joinpath(name).read_bytes()
        return json.loads(gzip.decompress(blob))

    types = read("ec2/resources/instance_types.json.gz")
    zones: dict[str, dict[str, list[str]]] = {}
    for region in REGIONS:
        offers = read(f"ec2/resources/instance_type_offerings/availability-zone/{region}.json.gz")
        for o in offers:
            zones.setdefault(o["InstanceType"], {}).setdefault(region, []).append(o["Location"])
    return types, zones


def eni_limited_pods(info: dict) -> int:
    """``ENILimitedPods`` with no reserved ENI and no efa-only interface (types.go L485-505):
    the default network card's interfaces x (IPv4 addresses per interface - 1) + 2."""
    net = info["NetworkInfo"]
    card = next(
        c for c in net["NetworkCards"] if c["NetworkCardIndex"] == net["DefaultNetworkCardIndex"]
    )
    return card["MaximumNetworkInterfaces"] * (net["Ipv4AddressesPerInterface"] - 1) + 2


def instance_row(info: dict, zones: dict[str, list[str]]) -> dict[str, Any]:
    (gpu,) = info["GpuInfo"]["Gpus"]
    net = info["NetworkInfo"]
    card = next(
        c for c in net["NetworkCards"] if c["NetworkCardIndex"] == net["DefaultNetworkCardIndex"]
    )
    arch = info["ProcessorInfo"]["SupportedArchitectures"][0]
    name = lower_kabob(gpu["Name"])
    row: dict[str, Any] = {
        "vcpu": info["VCpuInfo"]["DefaultVCpus"],
        "memoryMiB": info["MemoryInfo"]["SizeInMiB"],
        "arch": {"x86_64": "amd64", "arm64": "arm64"}[arch],
        "gpu": {
            "name": name,
            "manufacturer": lower_kabob(gpu["Manufacturer"]),
            "count": gpu["Count"],
            "memoryMiB": gpu["MemoryInfo"]["SizeInMiB"],
        },
        "efa": net.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0),
        "defaultCardInterfaces": card["MaximumNetworkInterfaces"],
        "ipv4PerInterface": net["Ipv4AddressesPerInterface"],
        "maxPods": eni_limited_pods(info),
        "zones": {r: sorted(zones.get(r, [])) for r in REGIONS},
    }
    pci = PCI_IDS.get((name, gpu["MemoryInfo"]["SizeInMiB"]))
    if pci:
        row["gpu"]["pciId"] = pci
    return row


def prices(path: Path) -> dict[str, float]:
    """The static on-demand prices from Karpenter's generated Go map. It holds us-east-1 only,
    and ``Reset`` uses those for every region without its own (``pricing.go`` L452-459)."""
    text = path.read_text()
    start = text.index('\t"us-east-1": {')
    end = text.index("\n\t},", start)
    return {k: float(v) for k, v in re.findall(r'"([a-z0-9.-]+)": ([0-9.]+)', text[start:end])}


def mig_table(path: Path) -> dict[str, list[dict[str, Any]]]:
    """profile -> [{deviceFilter: [ids] or None (every GPU), devices: {profile: count}}]."""
    cm = yaml.safe_load(path.read_text())
    config = yaml.safe_load(cm["data"]["config.yaml"])
    out: dict[str, list[dict[str, Any]]] = {}
    for profile, entries in config["mig-configs"].items():
        rows = []
        for e in entries:
            if not e.get("mig-enabled"):
                continue
            f = e.get("device-filter")
            rows.append(
                {
                    "deviceFilter": [f] if isinstance(f, str) else f,
                    "devices": dict(e.get("mig-devices") or {}),
                }
            )
        if rows:
            out[profile] = rows
    return out


def ec2_rows(wheel: Path | None) -> dict[str, dict[str, Any]]:
    """The row of every instance type with one NVIDIA GPU model, from EC2's data (moto)."""
    types, zones = moto_data(wheel)
    table = {}
    for name in sorted(types):
        info = types[name]
        gpus = info.get("GpuInfo", {}).get("Gpus", [])
        if len(gpus) == 1 and gpus[0]["Manufacturer"] == "NVIDIA":
            table[name] = instance_row(info, zones.get(name, {}))
    return table


def build(wheel: Path | None, pricing: Path, mig_parted: Path) -> dict[str, Any]:
    table = ec2_rows(wheel)
    price = prices(pricing)
    for name, row in table.items():
        if name in price:
            row["onDemandPrice"] = price[name]
    return {
        "sources": {
            "instanceTypes": f"{MOTO} moto/ec2/resources/instance_types.json.gz",
            "prices": "aws/karpenter-provider-aws v1.14.1 "
            "pkg/providers/pricing/zz_generated.pricing_aws.go",
            "migParted": MIG_PARTED,
        },
        "vmMemoryOverheadPercent": 0.075,
        "instanceTypes": table,
        "migParted": mig_table(mig_parted),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moto-wheel", type=Path)
    parser.add_argument("--pricing", type=Path, default=PRICING)
    parser.add_argument("--mig-parted", type=Path, required=True, help=f"a copy of {MIG_PARTED}")
    args = parser.parse_args(argv)
    data = build(args.moto_wheel, args.pricing, args.mig_parted)
    OUT.write_text(
        "# Generated by tests/gen_advertised.py from upstream data; do not edit.\n"
        + yaml.safe_dump(data, sort_keys=True, width=100)
    )
    print(f"wrote {OUT} ({len(data['instanceTypes'])} instance types)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
