"""The library as others consume it: install, package schema, generated docs.

The GitHub workflows are tested in test_workflows.py.
"""

import subprocess
import sys
import venv
from pathlib import Path

from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema
from ruamel.yaml import YAML

from eks_gpu_platform import docs
from eks_gpu_platform.platform import GpuPlatform, platform_config_from_args

REPO = Path(__file__).resolve().parents[1]


PUBLIC = (
    "GpuPlatform",
    "EksCluster",
    "Karpenter",
    "Network",
    "NodePool",
    "EfaDevicePlugin",
    "PlatformConfig",
    "SpecError",
)


def package_schema() -> dict:
    result = Analyzer("eks-gpu-platform").analyze([GpuPlatform])
    spec = generate_schema(
        "eks-gpu-platform",
        "0.1.0",
        None,
        result["component_definitions"],
        result["type_definitions"],
        list(result["dependencies"]),
    )
    return spec.to_json()


def test_package_schema_publishes_the_platform_component() -> None:
    schema = package_schema()
    resource = schema["resources"]["eks-gpu-platform:index:GpuPlatform"]
    assert resource["isComponent"] is True
    assert sorted(resource["inputProperties"]) == [
        "cluster",
        "gpuOperator",
        "karpenter",
        "nodePools",
        "region",
        "scheduler",
        "systemNodeGroup",
        "tags",
        "vpc",
    ]
    assert resource["requiredInputs"] == ["cluster", "region"]
    # Outputs, descriptions and enums in detail: tests/test_schema.py.
    assert len(resource["properties"]) == 11
    pool = schema["types"]["eks-gpu-platform:index:NodePoolInputs"]
    assert pool["required"] == ["name"]
    assert pool["properties"]["capacityTypes"]["items"] == {
        "description": pool["properties"]["capacityTypes"]["description"],
        "$ref": "#/types/eks-gpu-platform:index:NodePoolCapacityType",
    }
    assert pool["properties"]["limits"] == {
        "description": "Caps: gpus, cpu, memory.",
        "$ref": "#/types/eks-gpu-platform:index:LimitsInputs",
    }


def test_hosted_args_arrive_snake_case_and_parse_into_the_same_config() -> None:
    config = platform_config_from_args(
        {
            "region": "us-west-2",
            "cluster": {"name": "hosted", "kubernetes_version": "1.35"},
            "node_pools": [
                {
                    "name": "l4",
                    "gpus": ["l4"],
                    "limits": {"gpus": 4},
                    "labels": {"team_name": "research"},
                }
            ],
            "tags": {"cost_center": "ml"},
        }
    )
    assert config.cluster.kubernetes_version == "1.35"
    assert config.node_pools[0].labels == {"team_name": "research"}
    assert config.tags == {"cost_center": "ml"}


def test_readme_generated_sections_match_the_code() -> None:
    readme = (REPO / "README.md").read_text()
    assert docs.render_readme(readme) == readme, "README is stale: run `make docs`"


def test_fresh_virtualenv_installs_and_imports_the_library(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(REPO)],
        check=True,
        timeout=600,
    )
    probe = (
        "import eks_gpu_platform as e; "
        f"print(','.join(n for n in {PUBLIC!r} if hasattr(e, n))); "
        "import importlib.resources as r; "
        "print(r.files('eks_gpu_platform').joinpath('py.typed').is_file())"
    )
    out = subprocess.run(
        [str(python), "-c", probe], check=True, capture_output=True, text=True, timeout=120
    ).stdout.split()
    assert out == [",".join(PUBLIC), "True"]
    assert sys.prefix != str(env_dir)


def test_consumer_example_renders_offline(tmp_path: Path, capsys) -> None:
    from eks_gpu_platform.offline.render import main

    out = tmp_path / "consumer"
    code = main(
        ["--project-dir", str(REPO / "examples" / "consumer"), "--stack", "dev", "--out", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in (out / "manifests").iterdir()) == [
        "ec2nodeclass-l4.yaml",
        "nodepool-l4.yaml",
    ]
    pool = YAML(typ="safe").load((out / "manifests" / "nodepool-l4.yaml").read_text())
    assert pool["spec"]["limits"] == {"nvidia.com/gpu": "8"}
    assert pool["spec"]["template"]["metadata"]["labels"]["eks-gpu-platform.io/pool"] == "l4"
    resources = YAML(typ="safe").load((out / "resources.json").read_text())
    assert {r["type"] for r in resources if not r["custom"]} == {
        "eks-gpu-platform:index:Network",
        "eks-gpu-platform:index:EksCluster",
        "eks-gpu-platform:index:Karpenter",
        "eks-gpu-platform:index:NodePool",
        "eks:index:Cluster",
    }
    assert "Rendered 74 resources" in capsys.readouterr().out


def test_project_file_declares_only_config_types_pulumi_accepts() -> None:
    project = YAML(typ="safe").load((REPO / "Pulumi.yaml").read_text())
    assert project["name"] == "eks-gpu-platform"
    assert project["runtime"] == {
        "name": "python",
        "options": {"toolchain": "pip", "virtualenv": ".venv"},
    }
    for key, declaration in (project.get("config") or {}).items():
        if isinstance(declaration, dict) and "type" in declaration:
            assert declaration["type"] in ("string", "integer", "boolean", "array"), key
