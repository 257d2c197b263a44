"""The Karpenter conformance scenarios' known-bad renders
(tests/conformance/karpenter_mutations.py): each mutation changes exactly what it names, on a
small render of the shapes the project writes."""

import importlib.util
import sys
from pathlib import Path

import yaml

CONF = Path(__file__).resolve().parent / "conformance"


def _mutations():
    sys.path.insert(0, str(CONF))
    spec = importlib.util.spec_from_file_location(
        "karpenter_mutations", CONF / "karpenter_mutations.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nodepool(name, types=None, limit="64", labels=None):
    requirements = [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}
    ]
    if types:
        requirements.insert(
            0, {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types}
        )
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "limits": {"nvidia.com/gpu": limit},
            "template": {
                "metadata": {"labels": labels or {"eks-gpu-platform.io/pool": name}},
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": name,
                    },
                    "requirements": requirements,
                },
            },
        },
    }


def nodeclass(name):
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {"role": "r"},
    }


def overlay(name, capacity):
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": name},
        "spec": {"capacity": capacity, "requirements": []},
    }


def write(render: Path, docs: dict[str, dict]) -> None:
    (render / "manifests").mkdir(parents=True)
    for name, doc in docs.items():
        (render / "manifests" / name).write_text(yaml.safe_dump(doc, sort_keys=False))


def tree(render: Path) -> dict[str, dict]:
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted((render / "manifests").glob("*"))}


EFA_LABELS = {"eks-gpu-platform.io/pool": "train-efa", "eks-gpu-platform.io/efa": "true"}


def test_efa_split_deals_the_budget_round_robin_per_type(tmp_path):
    types = ["p5.48xlarge", "p5e.48xlarge"]
    write(tmp_path, {
        "nodepool-train-efa.yaml": nodepool("train-efa", types, "64", EFA_LABELS),
        "ec2nodeclass-train-efa.yaml": nodeclass("train-efa"),
        "nodepool-general.yaml": nodepool("general"),
    })  # fmt: skip
    assert _mutations().efa_split(tmp_path) is True
    out = tree(tmp_path)
    assert sorted(out) == [
        "ec2nodeclass-train-efa-p5-48xlarge.yaml",
        "ec2nodeclass-train-efa-p5e-48xlarge.yaml",
        "nodepool-general.yaml",
        "nodepool-train-efa-p5-48xlarge.yaml",
        "nodepool-train-efa-p5e-48xlarge.yaml",
    ]
    for t, slug in (("p5.48xlarge", "p5-48xlarge"), ("p5e.48xlarge", "p5e-48xlarge")):
        expected = nodepool(f"train-efa-{slug}", [t], "32", EFA_LABELS)
        assert out[f"nodepool-train-efa-{slug}.yaml"] == expected
        assert out[f"ec2nodeclass-train-efa-{slug}.yaml"] == nodeclass(f"train-efa-{slug}")
    assert out["nodepool-general.yaml"] == nodepool("general")


def test_efa_split_keeps_an_already_split_pool_and_skips_renders_without_efa(tmp_path):
    split = {
        f"nodepool-train-efa-{s}.yaml": nodepool(f"train-efa-{s}", [t], "32", EFA_LABELS)
        for t, s in (("p5.48xlarge", "p5-48xlarge"), ("p5e.48xlarge", "p5e-48xlarge"))
    }
    write(tmp_path / "a", split)
    before = tree(tmp_path / "a")
    assert _mutations().efa_split(tmp_path / "a") is True
    assert tree(tmp_path / "a") == before
    write(tmp_path / "b", {"nodepool-general.yaml": nodepool("general")})
    assert _mutations().efa_split(tmp_path / "b") is False


def test_nodepool_limit_raised_doubles_the_first_gpu_limit_only(tmp_path):
    write(
        tmp_path,
        {"nodepool-a.yaml": nodepool("a", limit="8"), "nodepool-b.yaml": nodepool("b", limit="4")},
    )
    assert _mutations().nodepool_limit_raised(tmp_path) is True
    out = tree(tmp_path)
    assert out["nodepool-a.yaml"] == nodepool("a", limit="16")
    assert out["nodepool-b.yaml"] == nodepool("b", limit="4")


def test_overlay_missing_removes_only_gpu_overlays(tmp_path):
    write(tmp_path, {
        "nodeoverlay-notebooks-g6-xlarge-gpus.yaml": overlay("n", {"nvidia.com/gpu": "4"}),
        "nodeoverlay-train-efa-hugepages.yaml": overlay("h", {"hugepages-2Mi": "5120Mi"}),
    })  # fmt: skip
    assert _mutations().overlay_missing(tmp_path) is True
    assert sorted(tree(tmp_path)) == ["nodeoverlay-train-efa-hugepages.yaml"]
    assert _mutations().overlay_missing(tmp_path) is False
