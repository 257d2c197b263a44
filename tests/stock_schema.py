"""The package schema as the stock component provider builds it (tests/test_schema.py).

A module of its own, importing only what the schema needs: test_schema.py builds it in a fresh
interpreter (``python -c``), which then imports neither pytest nor the test module's gRPC stubs.
"""

from typing import Any

from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema

from eks_gpu_platform.platform import GpuPlatform

PKG = "eks-gpu-platform"


def stock_schema() -> dict[str, Any]:
    result = Analyzer(PKG).analyze([GpuPlatform])
    spec = generate_schema(
        PKG,
        "0.1.0",
        None,
        result["component_definitions"],
        result["type_definitions"],
        list(result["dependencies"]),
    )
    return spec.to_json()
