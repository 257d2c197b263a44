"""Real EC2 instance-type data for the Karpenter conformance test (tests/conformance/karpenter).

Reads the ``moto`` wheel's copy of AWS's DescribeInstanceTypes and DescribeInstanceTypeOfferings
answers (moto 5.2.5, pinned in requirements-dev.txt) as plain files, found through
``importlib.util.find_spec("moto")``; moto itself is never imported:

- ``moto/ec2/resources/instance_types.json.gz``: ``{type: InstanceTypeInfo}``, AWS's PascalCase
  shape, so Go's encoding/json decodes each value into ``ec2types.InstanceTypeInfo``;
- ``moto/ec2/resources/instance_type_offerings/availability-zone/<region>.json.gz``:
  ``[{"InstanceType", "Location"}]``, the zones that offer each type;
- ``moto/ec2/models/availability_zones_and_regions.py``: the zone name -> zone id table
  (``Zone(region_name=..., name=..., zone_id=...)``), read as text.

Writes one JSON document (default ``build/conformance/instance-types.json``, the Go test's
``CONFORMANCE_INSTANCE_DATA`` default):

    {"source": ..., "instanceTypes": [InstanceTypeInfo...],
     "regions": {region: {"offerings": [{"InstanceType", "Location", "LocationType"}],
                          "zoneIds": {zone: zone-id}}}}

The types written: every instance type with a GPU, and every type of the c, m and r families of
generations 5 to 7 (``c5``, ``m6i``, ``r7a``...), enough for the general pool's requirements
(category c/m/r, generation > 5) to choose from real types and to exclude some. The regions: the
availability zones of the renders' subnets (``resources.json``), or ``--region``.

Usage: python tests/conformance/instance_data.py [--out FILE] [--region R ...] [RENDER_DIR ...]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "build" / "conformance" / "instance-types.json"
CPU_FAMILY = re.compile(r"^(c|m|r)([5-7])[a-z]*$")
ZONE = re.compile(r'Zone\(\s*region_name="([^"]+)",\s*name="([^"]+)",\s*zone_id="([^"]+)"\s*\)')


def moto_dir() -> Path:
    """moto's package directory, without importing moto."""
    spec = importlib.util.find_spec("moto")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "instance_data.py: the moto package is not installed (pinned in requirements-dev.txt: "
            "run `make venv`)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def load_instance_types(moto: Path) -> dict[str, dict]:
    with gzip.open(moto / "ec2" / "resources" / "instance_types.json.gz", "rt") as f:
        return json.load(f)


def load_offerings(moto: Path, region: str) -> list[dict]:
    path = moto / "ec2" / "resources" / "instance_type_offerings" / "availability-zone"
    with gzip.open(path / f"{region}.json.gz", "rt") as f:
        return json.load(f)


def zone_ids(moto: Path, region: str) -> dict[str, str]:
    text = (moto / "ec2" / "models" / "availability_zones_and_regions.py").read_text()
    return {name: zid for r, name, zid in ZONE.findall(text) if r == region}


def wanted(name: str, info: dict) -> bool:
    if info.get("GpuInfo"):
        return True
    family = name.split(".", 1)[0]
    return bool(CPU_FAMILY.match(family))


def render_regions(render_dirs: list[Path]) -> list[str]:
    """The regions of the renders' subnets (``aws:ec2/subnet:Subnet`` availabilityZone)."""
    regions: set[str] = set()
    for render in render_dirs:
        resources = json.loads((render / "resources.json").read_text())
        for r in resources:
            if r["type"] == "aws:ec2/subnet:Subnet":
                zone = r["inputs"]["availabilityZone"]
                regions.add(zone[:-1])
    return sorted(regions)


def build(regions: list[str]) -> dict:
    moto = moto_dir()
    types = load_instance_types(moto)
    chosen = sorted(n for n, info in types.items() if wanted(n, info))
    document: dict = {
        "source": "moto 5.2.5 moto/ec2/resources (AWS DescribeInstanceTypes and "
        "DescribeInstanceTypeOfferings answers)",
        "instanceTypes": [types[n] for n in chosen],
        "regions": {},
    }
    names = set(chosen)
    for region in regions:
        offerings = [
            {
                "InstanceType": o["InstanceType"],
                "Location": o["Location"],
                "LocationType": "availability-zone",
            }
            for o in load_offerings(moto, region)
            if o["InstanceType"] in names
        ]
        document["regions"][region] = {"offerings": offerings, "zoneIds": zone_ids(moto, region)}
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("renders", nargs="*", type=Path, help="render directories (build/<stack>)")
    parser.add_argument("--region", action="append", default=[])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    regions = sorted(set(args.region) | set(render_regions(args.renders)))
    if not regions:
        parser.error("no region: pass render directories or --region")
    document = build(regions)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(
        f"instance_data.py: {len(document['instanceTypes'])} instance types, "
        f"regions {', '.join(regions)} -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
