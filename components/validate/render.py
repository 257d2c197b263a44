"""Loading a stack's render (``make render STACK=<stack>`` writes ``build/<stack>/``) into a
``core.Render``: what the validation compares the live cluster with.

- ``manifests/*.yaml``: every YAML document, files in name order (the render writes one object
  per file, named ``<kind>-<name>.yaml``);
- ``capacity.json``: the capacity plan (pools, queues);
- ``helm/<release>.yaml``: each Helm release (name, chart, version, namespace, values), keyed by
  the release name;
- ``outputs.json``: the stack outputs (secrets masked), where ``Render.region`` and
  ``Render.cluster_name`` come from.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .core import Render

# libyaml's loader where PyYAML has it (the same documents as the pure-Python SafeLoader for
# what the render writes, tests/validate/test_render_load.py; ten times faster), else that one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RenderError(Exception):
    """The render is missing or unreadable; the message says what to do."""


def default_dir(stack: str) -> Path:
    return Path("build") / stack


def load(stack: str, directory: str | Path | None = None) -> Render:
    """Read the render of ``stack`` from ``directory`` (default ``build/<stack>``)."""
    where = Path(directory) if directory is not None else default_dir(stack)
    if not (where / "manifests").is_dir():
        raise RenderError(f"no render at {where}: run `make render STACK={stack}` first")
    try:
        manifests: list[dict] = []
        for path in sorted((where / "manifests").glob("*.yaml")):
            manifests.extend(doc for doc in yaml.load_all(path.read_text(), Loader=_LOADER) if doc)
        helm: dict[str, dict] = {}
        for path in sorted((where / "helm").glob("*.yaml")):
            doc = yaml.load(path.read_text(), Loader=_LOADER) or {}
            helm[str(doc.get("name", path.stem))] = doc
        capacity = _json(where / "capacity.json")
        outputs = _json(where / "outputs.json")
    except (OSError, yaml.YAMLError, json.JSONDecodeError) as exc:
        raise RenderError(f"cannot read the render at {where}: {exc}") from exc
    return Render(
        dir=where, manifests=tuple(manifests), capacity=capacity, helm=helm, outputs=outputs
    )


def _json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}
