"""``validate.render.load`` reads the render with libyaml's loader where PyYAML has one (issue
33 point 6): every document of the fixture stacks' renders is the one PyYAML's pure-Python
``SafeLoader`` reads (the loader the validation CLI used before)."""

from __future__ import annotations

import pytest
import yaml

from eks_gpu_platform.validate import render as render_module
from eks_gpu_platform.validate.render import load


def test_the_loader_is_libyamls_where_pyyaml_has_it():
    assert yaml.__with_libyaml__
    assert render_module._LOADER is yaml.CSafeLoader


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_document_is_what_the_pure_python_loader_reads(render_dir, stack):
    where = render_dir(stack)
    loaded = load(stack, where)
    manifests = [
        doc
        for path in sorted((where / "manifests").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]
    assert list(loaded.manifests) == manifests
    assert len(manifests) > 40
    helm = {}
    for path in sorted((where / "helm").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        helm[str(doc.get("name", path.stem))] = doc
    assert loaded.helm == helm
    assert sorted(helm) == sorted(p.stem for p in (where / "helm").glob("*.yaml"))
