"""Writing the desired state of a recording: ``resources.json``, ``manifests/``, ``helm/``,
``iam/``, ``examples/`` and ``outputs.json`` (``write_state``, atomically), and the readers it
uses (``kubernetes_objects``, ``helm_releases``, ``iam_documents``; ``example_workloads`` comes
from ``examples`` and ``template_text`` writes each).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from ..scheduler import WorkloadTemplate
from . import mocks
from .examples import example_workloads  # noqa: F401  (re-exported: render imports it from here)
from .run import SECRET_PLACEHOLDER
from .write_json import dumps_indented

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_").lower()


def _mask(value: Any) -> Any:
    """Replace secret wrappers with a placeholder, and whole-number floats with ints.

    Numbers cross the mock engine as protobuf doubles (``replicas: 2.0``); the real engine
    hands providers ``2``.
    """
    if isinstance(value, dict):
        if value.get("4dabf18193072939515e22adb298388d") == "1b47061264138c4ac30d75fd1eb44270":
            return SECRET_PLACEHOLDER
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _sorted(value: Any) -> Any:
    """Sort mapping keys at every level: the engine's maps arrive in no stable order, and a
    stable file is what makes the render diffable in a pull request."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


HEAD_KEYS = ("apiVersion", "kind", "metadata")


def kubernetes_objects(recording: mocks.Recording, kind: str | None = None) -> list[dict[str, Any]]:
    """Every Kubernetes object the program registers (CustomResources and typed kinds), or only
    those of ``kind``."""
    objects = []
    for r in recording.resources:
        if not r.type.startswith("kubernetes:") or r.type == HELM_RELEASE:
            continue
        inputs = r.inputs
        if "apiVersion" not in inputs or "kind" not in inputs:
            continue
        if kind is not None and inputs["kind"] != kind:
            continue
        obj = {key: _sorted(inputs[key]) for key in HEAD_KEYS if key in inputs}
        for key in sorted(inputs):
            if key not in HEAD_KEYS:
                obj[key] = _sorted(inputs[key])
        objects.append(obj)
    return objects


def helm_releases(recording: mocks.Recording) -> list[dict[str, Any]]:
    """Every Helm release: where the chart comes from, its version, namespace and values."""
    releases = []
    for r in sorted(recording.of_type(HELM_RELEASE), key=lambda r: r.name):
        chart = r.inputs.get("chart", "")
        repo_opts = r.inputs.get("repositoryOpts") or {}
        if chart.startswith("oci://"):
            repository, _, chart_name = chart.rpartition("/")
        else:
            repository, chart_name = repo_opts.get("repo", ""), chart
        releases.append(
            {
                "name": r.inputs.get("name", r.name),
                "resource": r.name,
                "repository": repository,
                "chart": chart_name,
                "version": r.inputs.get("version"),
                "namespace": r.inputs.get("namespace"),
                "createNamespace": r.inputs.get("createNamespace", False),
                "skipCrds": r.inputs.get("skipCrds", False),
                "values": _sorted(r.inputs.get("values", {})),
            }
        )
    return releases


IAM_DOCUMENT_INPUTS = {
    "aws:iam/policy:Policy": ("policy", ""),
    "aws:iam/rolePolicy:RolePolicy": ("policy", ""),
    "aws:iam/role:Role": ("assumeRolePolicy", "-trust"),
    "aws:sqs/queuePolicy:QueuePolicy": ("policy", "-queue-policy"),
}


def iam_documents(recording: mocks.Recording) -> dict[str, dict[str, Any]]:
    """Every IAM policy document, keyed by the resource's logical name (roles: ``-trust``)."""
    documents = {}
    for r in recording.resources:
        spec = IAM_DOCUMENT_INPUTS.get(r.type)
        if spec is None or spec[0] not in r.inputs:
            continue
        key, suffix = spec
        documents[f"{r.name}{suffix}"] = json.loads(r.inputs[key])
    return documents


class _PlainDumper(yaml.SafeDumper):
    """Writes shared objects out in full: no ``&id001`` anchors in manifests people read."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# The same dumper on libyaml (PyYAML's C emitter, about ten times faster; a render writes
# thousands of YAML nodes per pool). It writes the same bytes as the pure-Python emitter except
# in two cases (found by comparing both on every rendered file and on fuzzed documents): a long
# double-quoted scalar is folded at other points, and an empty-string key is written `'': v`
# instead of `? ''\n: v`. Documents with either keep the pure-Python emitter. Which scalars the
# pure-Python emitter double-quotes is its own analysis: ``Emitter.analyze_scalar`` then
# ``choose_scalar_style`` (yaml/emitter.py), which double-quotes a value exactly when it cannot
# be single-quoted, and a key also when it spans lines.
_CPlainDumper: type | None = None
if getattr(yaml, "__with_libyaml__", False):

    class _CPlainDumper(yaml.CSafeDumper):  # type: ignore[no-redef]
        def ignore_aliases(self, data: Any) -> bool:
            return True


# The emitter's analysis walks a scalar one character at a time in Python (PyYAML 6.0.3
# yaml/emitter.py 626-784, ``analyze_scalar``), and a render analyses some 60,000 characters
# (CEL expressions, scripts). The two of its findings these writers use are each one regular
# expression here, with the same answer (tests/offline/test_fast_paths.py compares the two on
# fuzzed text):
# - ``allow_single_quoted`` is false exactly for a special character (anything but a line feed
#   and printable ASCII: the emitter's ``allow_unicode`` is off), a space right after a line
#   break or a space right before one (its other breaks, U+0085, U+2028, U+2029, are special);
#   ``multiline`` is a line break (a line feed, or one of those);
# - ``allow_block`` is false for a special character, a space before a line break, a trailing
#   space, or an empty text.
_NOT_SINGLE_QUOTED = re.compile(r"[^\n\x20-\x7e]|\n | \n")
_NOT_BLOCK = re.compile(r"[^\n\x20-\x7e]| \n| \Z")
_LINE_BREAK = re.compile("[\n\x85\u2028\u2029]")


def _double_quoted(text: str, *, key: bool = False) -> bool:
    return _NOT_SINGLE_QUOTED.search(text) is not None or (key and "\n" in text)


def _allow_block(text: str) -> bool:
    return bool(text) and _NOT_BLOCK.search(text) is None


def _libyaml_safe(value: Any, *, literal: bool = False) -> bool:
    """No scalar that libyaml writes differently (see above): libyaml writes all of it.
    ``literal``: multi-line string values (not the document itself) are written as literal
    blocks (``_TemplateDumper``), not double-quoted: the caller checks them
    (``_template_libyaml_safe``)."""
    found: list[tuple] = []
    return _holes(value, (), found, literal=literal) and not found


def _holes(value: Any, path: tuple, found: list[tuple], *, literal: bool = False) -> bool:
    """Collect in ``found`` the paths of the string values the pure-Python emitter
    double-quotes; False when such a scalar is not a mapping value reached through string keys
    from the root (a key, an empty key, a list item), which the splice below cannot place.
    ``literal``: as for ``_libyaml_safe``."""
    if isinstance(value, str):
        if literal and path and "\n" in value:
            return True
        if _double_quoted(value):
            if not path or not all(isinstance(p, str) for p in path):
                return False
            found.append(path)
        return True
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and (k == "" or _double_quoted(k, key=True)):
                return False
            if not _holes(v, (*path, k), found, literal=literal):
                return False
        return True
    if isinstance(value, list):
        return all(_holes(v, (*path, i), found, literal=literal) for i, v in enumerate(value))
    return True


# The pure-Python emitter with the two loops it runs per character over a scalar it
# double-quotes done with regular expressions: ``analyze_scalar`` (above) and
# ``write_double_quoted`` (PyYAML 6.0.3 yaml/emitter.py 926-976), which writes each character,
# escapes the special ones, and folds the line at a space (or after an escape) past the width.
# Only the characters where it does something are visited here: a space, a special character
# and the one after it, and the end; the same writes in the same order, so the same bytes
# (tests/offline/test_fast_paths.py compares the two on fuzzed documents). For the values the
# splice below writes on their own; ``_PlainDumper`` stays the reference.
_DQ_STOP = re.compile(r'[ "\\]|[^\x20-\x7e]')


class _QuotedDumper(_PlainDumper):
    def analyze_scalar(self, scalar: str) -> Any:
        if not _double_quoted(scalar) or self.allow_unicode:
            return super().analyze_scalar(scalar)
        return yaml.emitter.ScalarAnalysis(
            scalar=scalar,
            empty=False,
            multiline=_LINE_BREAK.search(scalar) is not None,
            allow_flow_plain=False,
            allow_block_plain=False,
            allow_single_quoted=False,
            allow_double_quoted=True,
            allow_block=_allow_block(scalar),
        )

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if self.allow_unicode or self.encoding:
            super().write_double_quoted(text, split)
            return
        self.write_indicator('"', True)
        write, size = self.stream.write, len(text)
        start = end = 0
        after_special = False
        while end <= size:
            if not after_special:
                found = _DQ_STOP.search(text, end)
                end = found.start() if found else size
            ch = text[end] if end < size else None
            special = ch is not None and (ch in '"\\' or not "\x20" <= ch <= "\x7e")
            if special or ch is None:
                if start < end:
                    self.column += end - start
                    write(text[start:end])
                    start = end
                if ch is not None:
                    if ch in self.ESCAPE_REPLACEMENTS:
                        data = "\\" + self.ESCAPE_REPLACEMENTS[ch]
                    elif ch <= "\xff":
                        data = f"\\x{ord(ch):02X}"
                    elif ch <= "\uffff":
                        data = f"\\u{ord(ch):04X}"
                    else:
                        data = f"\\U{ord(ch):08X}"
                    self.column += len(data)
                    write(data)
                    start = end + 1
            if (
                0 < end < size - 1
                and (ch == " " or start >= end)
                and self.column + (end - start) > self.best_width
                and split
            ):
                data = text[start:end] + "\\"
                if start < end:
                    start = end
                self.column += len(data)
                write(data)
                self.write_indent()
                self.whitespace = False
                self.indention = False
                if text[start] == " ":
                    self.column += 1
                    write("\\")
            after_special = special
            end += 1
        self.write_indicator('"', False)


def _dump(data: Any, dumper: type) -> str:
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, width=100)


def _nested(path: tuple, value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _replaced(data: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    return {**data, path[0]: _replaced(data[path[0]], path[1:], value)}


def _dump_yaml(data: Any) -> str:
    """``data`` as YAML, byte for byte what ``_PlainDumper`` writes, on libyaml where possible.

    A document whose only libyaml-incompatible scalars are double-quoted mapping values (an
    EC2NodeClass's ``userData``, a ConfigMap's script) is written by libyaml with a plain token in
    each such value's place; each token's line is then replaced by the pure-Python emitter's
    lines for that value alone, nested under the same keys: the emitter folds a scalar by its
    column and indentation, which depend only on the keys above it (two spaces per level in a
    block mapping), so the lines are the ones it writes in the whole document.
    """
    paths: list[tuple] = []
    if _CPlainDumper is None or not _holes(data, (), paths):
        return _dump(data, _PlainDumper)
    if not paths:
        return _dump(data, _CPlainDumper)
    tokens = [f"eksgpuplatformyamlhole{i}" for i in range(len(paths))]
    patched = data
    for path, token in zip(paths, tokens, strict=True):
        patched = _replaced(patched, path, token)
    text = _dump(patched, _CPlainDumper)
    for path, token in zip(paths, tokens, strict=True):
        value = data
        for key in path:
            value = value[key]
        depth = len(path) - 1
        # The token's whole line, and the value's lines, each from its start.
        placeholder = "\n" + _dump(_nested(path, token), _CPlainDumper).split("\n", depth)[depth]
        lines = "\n" + _dump(_nested(path, value), _QuotedDumper).split("\n", depth)[depth]
        if text.count(token) != 1 or ("\n" + text).count(placeholder) != 1:
            return _dump(data, _PlainDumper)
        text = ("\n" + text).replace(placeholder, lines)[1:]
    return text


class _TemplateDumper(_PlainDumper):
    """Also writes multi-line strings (a ConfigMap's script) as literal blocks."""


def _literal_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_TemplateDumper.add_representer(str, _literal_str)

# The same on libyaml, for a document libyaml writes byte for byte as the pure-Python emitter
# does (``_template_libyaml_safe``; a render writes a few templates per EFA pool, each about
# five times faster this way).
_CTemplateDumper: type | None = None
if _CPlainDumper is not None:

    class _CTemplateDumper(_CPlainDumper):  # type: ignore[no-redef]
        pass

    _CTemplateDumper.add_representer(str, _literal_str)


def _template_libyaml_safe(document: Any) -> bool:
    """No scalar libyaml writes differently (``_libyaml_safe``), and every multi-line string a
    literal block both write alike: one the pure-Python emitter cannot write as a block
    (trailing spaces, say) falls back to a double-quoted scalar, which libyaml folds elsewhere;
    and after a block that keeps its final line breaks (``|+``: a text ending in two) libyaml
    ends the document with ``...`` even when another value follows it, the pure-Python emitter
    only when it is the last (found by comparing both on fuzzed documents,
    tests/offline/test_fast_paths.py). A multi-line value that would be double-quoted without
    the literal style (a script with indented lines) is a literal block here: both emitters
    choose the block for a value whenever ``allow_block`` (``Emitter.choose_scalar_style``,
    PyYAML 6.0.3 yaml/emitter.py 505-508), so it is no hole."""
    return _libyaml_safe(document, literal=True) and all(
        text != "\n" and not text.endswith("\n\n") and _allow_block(text)
        for text in _multi_line(document)
    )


def _multi_line(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if "\n" in value:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _multi_line(v)
    elif isinstance(value, list):
        for v in value:
            yield from _multi_line(v)


def template_text(template: WorkloadTemplate) -> str:
    """A template file: its header comments, then each document after a ``---`` line."""
    parts = [line + "\n" for line in template.header]
    for document in template.documents:
        parts.append("---\n")
        safe = _CTemplateDumper is not None and _template_libyaml_safe(document)
        parts.append(
            yaml.dump(
                document,
                Dumper=_CTemplateDumper if safe else _TemplateDumper,
                sort_keys=False,
                default_flow_style=False,
                width=100,
            )
        )
    return "".join(parts)


def write_state(
    recording: mocks.Recording, out: Path, examples: dict[str, WorkloadTemplate] | None = None
) -> dict[str, int]:
    """Write the desired state to ``out`` atomically: a failed run leaves nothing partial."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        # Registration order varies from run to run (the engine is asynchronous): sort.
        resources = [_mask(r.to_json()) for r in sorted(recording.resources, key=lambda r: r.urn)]
        for resource in resources:
            resource["dependencies"] = sorted(resource["dependencies"])
        (staging / "resources.json").write_text(dumps_indented(resources) + "\n")
        outputs = {
            k: SECRET_PLACEHOLDER if k in recording.secret_outputs else _mask(v)
            for k, v in recording.outputs.items()
        }
        (staging / "outputs.json").write_text(
            json.dumps(outputs, indent=2, default=str, sort_keys=True) + "\n"
        )
        objects = kubernetes_objects(recording)
        (staging / "manifests").mkdir()
        for obj in objects:
            meta = obj.get("metadata") or {}
            parts = [obj["kind"], meta.get("namespace", ""), meta.get("name", "")]
            path = staging / "manifests" / (_slug("-".join(p for p in parts if p)) + ".yaml")
            if path.exists():
                raise ValueError(f"two Kubernetes objects render to {path.name}")
            path.write_text(_dump_yaml(_mask(obj)))
        releases = helm_releases(recording)
        (staging / "helm").mkdir()
        for release in releases:
            (staging / "helm" / f"{_slug(release['name'])}.yaml").write_text(
                _dump_yaml(_mask(release))
            )
        documents = iam_documents(recording)
        (staging / "iam").mkdir()
        for name, document in documents.items():
            path = staging / "iam" / f"{_slug(name)}.json"
            if path.exists():
                raise ValueError(f"two IAM documents render to {path.name}; rename one resource")
            path.write_text(dumps_indented(document) + "\n")
        (staging / "examples").mkdir()
        for name, template in (examples or {}).items():
            (staging / "examples" / f"{name}.yaml").write_text(template_text(template))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {
        "resources": len(resources),
        "manifests": len(objects),
        "helm": len(releases),
        "iam": len(documents),
    }
