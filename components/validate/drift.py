"""Drift between a rendered object and the live one, for the ``deployment`` phase's
``objects-match-render/<Kind>`` checks: only the fields the render sets are compared, so the
defaults and status the server adds are not drift, and a secret the render masks is not
compared. Pure: plain data in, report lines out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

# What the render writes for a secret value (offline/write.py ``_mask``, offline/stackfile.py
# ``SECRET_PLACEHOLDER``): the value is not in the render, so it is not compared.
SECRET_PLACEHOLDER = "[secret]"

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key(path: str, key: str) -> str:
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _show(value: Any) -> str:
    return "missing" if value is _MISSING else json.dumps(value, sort_keys=True)


_MISSING = object()


def _scalar_equal(rendered: Any, live: Any) -> bool:
    # int-or-string fields (NodePool limits, resource quantities the server keeps as given)
    # come back as the type they were sent in; 8 and "8" are the same value.
    if isinstance(rendered, bool) or isinstance(live, bool):
        return rendered == live
    if isinstance(rendered, int | float | str) and isinstance(live, int | float | str):
        return str(rendered) == str(live)
    return rendered == live


def _named(items: list) -> bool:
    return bool(items) and all(isinstance(i, Mapping) and "name" in i for i in items)


def drift(rendered: Any, live: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """The differences between what the render sets and the live object, as (path, rendered,
    live): only the fields ``rendered`` sets are compared (the server's defaults and status are
    not drift), recursively; lists of named items (every item a mapping with ``name``) by name,
    other lists by index and length; a secret the render masks is not compared. A field missing
    from the live object is ``_MISSING``."""
    if rendered is None or rendered == SECRET_PLACEHOLDER:
        return []
    if isinstance(rendered, Mapping):
        if not isinstance(live, Mapping):
            return [(path, rendered, live)]
        out: list[tuple[str, Any, Any]] = []
        for key, value in rendered.items():
            out.extend(drift(value, live.get(key, _MISSING), _key(path, str(key))))
        return out
    if isinstance(rendered, list):
        if not isinstance(live, list):
            return [(path, rendered, live)]
        if _named(rendered) and _named(live):
            by_name = {item["name"]: item for item in live}
            out = []
            for item in rendered:
                out.extend(
                    drift(item, by_name.get(item["name"], _MISSING), f"{path}[name={item['name']}]")
                )
            return out
        if len(rendered) != len(live):
            return [(path, rendered, live)]
        out = []
        for index, (r, lv) in enumerate(zip(rendered, live, strict=True)):
            out.extend(drift(r, lv, f"{path}[{index}]"))
        return out
    if live is _MISSING or not _scalar_equal(rendered, live):
        return [(path, rendered, live)]
    return []


def object_ref(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata", {})
    where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name")
    return f"{obj.get('kind')} {where}"


def object_drift(rendered: Mapping[str, Any], live: Mapping[str, Any] | None) -> list[str]:
    """Report lines for one rendered object: ``NodePool gpu-spot: missing from the cluster``, or
    one line per drifted field, ``NodePool gpu-spot: spec.limits["nvidia.com/gpu"]: rendered 8,
    live 16``. Empty when the live object matches."""
    if live is None:
        return [f"{object_ref(rendered)}: missing from the cluster"]
    body = {k: v for k, v in rendered.items() if k not in ("apiVersion", "kind", "status")}
    return [
        f"{object_ref(rendered)}: {path}: rendered {_show(r)}, live {_show(lv)}"
        for path, r, lv in drift(body, live)
    ]
