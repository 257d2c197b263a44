"""Loading a stack's configuration: the namespaces of its keys, the project's keys, ``aws:region``,
each section through its spec, then the cross-section checks over the sections that loaded
cleanly; every problem of one run in one ``SpecError``.

``ConfigLoader`` is mixed into ``config.PlatformConfig`` (``PlatformConfig.load``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import MISSING, fields
from typing import Any, Self

from .budget import unknown_pool_problems
from .cluster.spec import ClusterSpec
from .config_checks import region_problem
from .fields import field_hints
from .naming import PROJECT
from .nodepool import NodePoolSpec
from .scheduler.spec import QueueSpec
from .spec import SpecError, camel, did_you_mean, load_value, show

# The configuration namespaces something reads, besides the project's own (the program reads
# ``<project>:<key>``). The engine hands a provider of package ``pkg`` exactly the stack's keys of
# namespace ``pkg`` (pulumi/pulumi@1b5949891b3c, the 3.260 line; the mechanism is unchanged in the
# pinned 3.272: pkg/resource/deploy/target.go ``GetPackageConfig`` skips every key whose
# ``Namespace()`` is not the package; default_providers.go line 143 configures a default provider
# with it) and reads ``pulumi:`` keys itself (default_providers.go line 271,
# ``pulumi:disable-default-providers``). The program's providers are aws (pulumi_aws), eks
# (pulumi_eks) and kubernetes (pulumi_kubernetes): a key of any other namespace reaches nothing,
# so ``eks-gpu-platfrom:vpc`` would be dropped silently and the default VPC rendered.
PROVIDER_NAMESPACES = ("aws", "eks", "kubernetes", "pulumi")


def stack_config_values(raw: dict[str, Any], project: str = PROJECT) -> dict[str, Any]:
    """The project's keys (without the ``<project>:`` prefix), structured values decoded."""
    values: dict[str, Any] = {}
    prefix = f"{project}:"
    for key, value in raw.items():
        if not key.startswith(prefix):
            continue
        if isinstance(value, str) and value[:1] in ("{", "["):
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(value)
        values[key[len(prefix) :]] = value
    return values


def namespace_problems(keys: Iterable[str], project: str = PROJECT) -> list[str]:
    """One line per stack configuration key whose namespace (before the first ``:``) is neither
    the project's nor a provider's, with a did-you-mean for a near miss."""
    known = [project, *PROVIDER_NAMESPACES]
    problems = []
    for key in keys:
        namespace, colon, _ = key.partition(":")
        if not colon or namespace in known:
            continue
        problems.append(
            f"{key}: unknown configuration namespace {namespace!r}, which nothing reads"
            + did_you_mean(namespace, known)
            + f"; allowed namespaces are {project} (this program) and "
            + f"{', '.join(PROVIDER_NAMESPACES)} (its providers and the engine)"
        )
    return problems


# Configurations loaded already, each with the inputs it was loaded from: ``load`` returns one
# for exactly the same inputs while ``reusing`` it (the offline render validates the stack's
# configuration, then runs the program, which loads the same values again).
_LOADED: list[tuple[type, Any, Any, list[str], Any]] = []


@contextlib.contextmanager
def reusing(
    config: Any, values: Mapping[str, Any], region: Any, stack_keys: Iterable[str] = ()
) -> Iterator[None]:
    """While the block runs, ``type(config).load(values, region, stack_keys)`` (the same values:
    equal, and of the same types at every level) returns ``config`` instead of loading again."""
    entry = (type(config), values, region, sorted(stack_keys), config)
    _LOADED.append(entry)
    try:
        yield
    finally:
        _LOADED[:] = [e for e in _LOADED if e is not entry]


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types at every level (``1``, ``1.0`` and ``True`` are equal in
    Python, and load differently)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _loaded(cls: type, values: Mapping[str, Any], region: Any, stack_keys: list[str]) -> Any:
    for loaded_cls, loaded_values, loaded_region, keys, config in _LOADED:
        if (
            cls is loaded_cls
            and _same(region, loaded_region)
            and _same(values, loaded_values)
            and sorted(stack_keys) == keys
        ):
            return config
    return None


class ConfigLoader:
    """``load``: a stack's configuration values to a ``PlatformConfig`` (a mixin)."""

    @classmethod
    def load(cls, values: Mapping[str, Any], region: Any, stack_keys: Iterable[str] = ()) -> Self:
        """Build the config from the project namespace's values (keys without the prefix) and
        ``aws:region``, or raise one ``SpecError`` with every problem: the namespaces of
        ``stack_keys`` (every key of the stack's configuration, when the caller has them), each
        section's own, then the cross-section checks over the sections that loaded cleanly."""
        stack_keys = list(stack_keys)
        if _LOADED and (config := _loaded(cls, values, region, stack_keys)) is not None:
            return config
        problems: list[str] = namespace_problems(stack_keys)
        sections: dict[str, Any] = {}
        hints = field_hints(cls)
        known = {camel(f.name): f for f in fields(cls) if f.name != "region"}
        for key in values:
            if key not in known:
                problems.append(
                    f"{PROJECT}:{key}: unknown configuration key"
                    + did_you_mean(key, known)
                    + f"; allowed keys are {', '.join(sorted(known))}"
                )
        valid = {f.name for f in fields(cls)}
        if region is None or region == "":
            problems.append("aws:region: is required; set it with `pulumi config set aws:region`")
            valid.discard("region")
        elif not isinstance(region, str):
            problems.append(f"aws:region: {show(region)} is not an AWS region such as 'us-west-2'")
            valid.discard("region")
        elif msg := region_problem(region):
            problems.append(f"aws:region: {msg}")
            valid.discard("region")
        for key, f in known.items():
            if key not in values:
                if key == "cluster":
                    problems.append("cluster: is required; set at least cluster.name")
                    valid.discard(f.name)
                continue
            try:
                sections[f.name] = load_value(hints[f.name], values[key], key)
            except SpecError as err:
                problems.extend(err.lines)
                valid.discard(f.name)
        # The cross-section checks, on a config whose invalid sections hold their defaults
        # (never read: every check names the sections it reads).
        partial = object.__new__(cls)
        for f in fields(cls):
            if f.name in sections:
                value = sections[f.name]
            elif f.name == "region":
                value = region if "region" in valid else ""
            elif f.name == "cluster":
                value = _PLACEHOLDER_CLUSTER
            else:
                value = f.default if f.default is not MISSING else f.default_factory()
            object.__setattr__(partial, f.name, value)
        cross = partial.cross_problems(frozenset(valid))
        if "node_pools" not in valid:
            # Pools that are valid on their own still meet the checks that read one pool and
            # the other sections (a zone outside the region, spot without the queue, ...).
            for i, pool in _valid_items(NodePoolSpec, values.get("nodePools")):
                cross += partial._one_pool_problems(i, pool, frozenset(valid))
        if "scheduler" not in valid and "node_pools" in valid:
            # Queues that are valid on their own still meet the routing check that reads one
            # queue: every pool it names exists (one bad queue does not hide another's typo).
            raw = values.get("scheduler")
            queues = raw.get("queues") if isinstance(raw, dict) else None
            names = [p.name for p in partial.pools]
            for i, queue in _valid_items(QueueSpec, queues):
                cross += [
                    (("scheduler", *path), msg)
                    for path, msg in unknown_pool_problems(i, queue, names)
                ]
        problems += SpecError("", cross, config=True, data=values).lines
        if problems:
            raise SpecError.from_lines(problems)
        return cls(region=region, **sections)


def _valid_items(tp: type, raw: Any) -> list[tuple[int, Any]]:
    """The items of a configuration list that load on their own, with their indexes."""
    out = []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        try:
            out.append((i, load_value(tp, item, "")))
        except SpecError:
            continue
    return out


# Stands in for an invalid or missing ``cluster`` section while the other sections are checked.
_PLACEHOLDER_CLUSTER = ClusterSpec(name="placeholder")
