"""Check Helm values against a chart's defaults: every key we set must exist upstream.

Helm silently ignores unknown keys, so a typo (``nodeSelectors``) or a key from another chart
version renders a chart that does not do what the values say. ``unknown_keys`` walks our values
alongside the chart's ``values.yaml`` and lists the keys the chart does not declare.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

# Maps whose keys are the user's own (label keys, selector keys, annotations, ConfigMap keys):
# any key is accepted below them, even when the chart's default is not empty.
FREE_FORM_KEYS = frozenset(
    {
        "nodeSelector",
        "labels",
        "annotations",
        "additionalLabels",
        "podLabels",
        "podAnnotations",
        "namespaceLabels",
        "data",
    }
)


def unknown_keys(
    values: Mapping[str, Any], defaults: Mapping[str, Any], _prefix: str = ""
) -> list[str]:
    """Dotted paths of the keys in ``values`` that ``defaults`` does not have.

    Below a key whose default is an empty map (``{}``), ``null``, or a free-form map
    (``FREE_FORM_KEYS``: nodeSelector, labels, annotations, ...), any key is accepted. Lists and
    scalars are leaves: their contents are not compared.
    """
    out: list[str] = []
    for key, value in values.items():
        path = f"{_prefix}.{key}" if _prefix else str(key)
        if key not in defaults:
            out.append(path)
            continue
        default = defaults[key]
        if not isinstance(value, Mapping) or not isinstance(default, Mapping):
            continue
        if not default or key in FREE_FORM_KEYS:
            continue
        out.extend(unknown_keys(value, default, path))
    return out


def load_defaults(path: Path) -> dict[str, Any]:
    """A chart's ``values.yaml`` as a dict."""
    # libyaml's parser under the safe constructor (the same data as yaml.safe_load, faster).
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
