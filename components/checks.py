"""Field checks shared by the section specs: durations with a floor, Kubernetes quantities,
label and taint keys and values, cron schedules. Each returns a message, or ``None`` when the
value is fine (the style of ``spec.py``'s ``check_*``). Pure functions, no Pulumi.
"""

from __future__ import annotations

import re

from .errors import is_output, show

# --- durations (Go time.ParseDuration units Karpenter accepts in NodePools: s, m, h) -----------

_DURATION_PART = re.compile(r"([0-9]+)(h|m|s)")
_UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1}


def duration_seconds(value: str) -> int | None:
    """``"1h30m"`` -> 5400; ``None`` when ``value`` is not such a duration."""
    if not re.fullmatch(r"(?:[0-9]+(?:h|m|s))+", value):
        return None
    return sum(int(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(value))


def _human(seconds: int) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def check_duration(value: str, minimum: int, *, never: bool = False, why: str = "") -> str | None:
    """A duration such as ``'4h'`` of at least ``minimum`` seconds (``'Never'`` too when
    ``never``). ``why``: what a shorter value would do."""
    if is_output(value):
        return None
    if never and value == "Never":
        return None
    seconds = duration_seconds(value)
    expected = "a duration such as '4h' or '1h30m'" + (" or 'Never'" if never else "")
    if seconds is None:
        return f"{show(value)} is not {expected}"
    if seconds < minimum:
        return f"{show(value)} is shorter than {_human(minimum)}" + (f"; {why}" if why else "")
    return None


# --- Kubernetes quantities ----------------------------------------------------------------------

QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$")


def check_positive_quantity(value: str, example: str) -> str | None:
    """A Kubernetes quantity greater than zero (``'0'`` and ``'0Gi'`` are refused)."""
    if is_output(value):
        return None
    match = QUANTITY.fullmatch(value)
    if match is None:
        return f"{show(value)} is not a Kubernetes quantity such as {example!r}"
    if float(match.group(1)) == 0:
        return f"{show(value)} is zero; expected a quantity greater than zero such as {example!r}"
    return None


# --- label and taint keys and values ------------------------------------------------------------
# Kubernetes "Syntax and character set" of labels
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set):
# a key is an optional prefix, a DNS subdomain of at most 253 characters, and a name of at most
# 63 characters; a value is at most 63 characters. Taint keys and values follow the same rules
# (https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#concepts).

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
# Label domains Kubernetes and Karpenter keep for themselves (Karpenter v1.14
# website/content/en/v1.14/concepts/nodepools.md, "Well-Known Labels": karpenter.sh,
# kubernetes.io and k8s.io are restricted; karpenter-provider-aws adds karpenter.k8s.aws).
RESERVED_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws", "kubernetes.io", "k8s.io")
# KAI Scheduler shards the cluster by this node label (kai-scheduler pkg/common/constants/
# constants.go line 26, DefaultNodePoolLabelKey; scheduler.constants.KAI_SHARD_LABEL_KEY): a pool
# label with this key would move nodes between shards.
KAI_SHARD_LABEL = "kai.scheduler/node-pool"


def check_qualified_key(key: str, what: str) -> str | None:
    """A label or taint key: ``[prefix/]name``, prefix a DNS subdomain (at most 253), name at
    most 63 characters; never in a reserved domain."""
    prefix, _, name = key.rpartition("/")
    if "/" in key:
        if not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix):
            return (
                f"{show(key)} is not a valid {what}: its prefix {show(prefix)} must be a DNS "
                "subdomain of at most 253 lowercase letters, digits, '-' and '.'"
            )
        if any(prefix == d or prefix.endswith("." + d) for d in RESERVED_DOMAINS):
            return (
                f"{show(key)} is in a domain Kubernetes or Karpenter reserves "
                f"({', '.join(RESERVED_DOMAINS)}); use your own domain"
            )
    if not name or len(name) > 63 or not _NAME.fullmatch(name):
        return (
            f"{show(key)} is not a valid {what}: the name "
            + (f"{show(name)} " if name else "")
            + "must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter "
            "or digit"
        )
    return None


def check_label_value(value: str) -> str | None:
    """A label or taint value: at most 63 characters of the label alphabet (may be empty)."""
    if len(value) > 63 or not _VALUE.fullmatch(value):
        return (
            f"{show(value)} is not a label value; expected at most 63 letters, digits, '-', '_' "
            "or '.', starting and ending with a letter or digit"
        )
    return None


# --- cron ---------------------------------------------------------------------------------------
# Karpenter parses a disruption budget's schedule with robfig/cron v3 ``ParseStandard`` in UTC
# (kubernetes-sigs/karpenter v1.15.0 pkg/apis/v1/nodepool.go line 420): 5 fields, minute 0-59,
# hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, day of week 0-6 or SUN-SAT (names in any
# case), each '*', '?', a value, a range 'a-b', a step '/n', or a comma-separated list of those;
# or a macro (@yearly ... @hourly). robfig also parses '@every <duration>', but the API server
# refuses it first: the NodePool CRD pattern on spec.disruption.budgets[].schedule (nodepool.go
# line 144, aws/karpenter-provider-aws v1.15.0 pkg/apis/crds/karpenter.sh_nodepools.yaml
# line 135) is
#   ^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$
# which '@every 6h' matches neither way (no listed macro, fewer than five fields).

CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
CRON_FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {name: i + 1 for i, name in enumerate(_MONTHS)}),
    ("day of week", 0, 6, {name: i for i, name in enumerate(_DAYS)}),
)


def _cron_value(text: str, low: int, high: int, names: dict[str, int]) -> int | None:
    if text.upper() in names:
        return names[text.upper()]
    if text.isdigit() and low <= int(text) <= high:
        return int(text)
    return None


def _cron_field_problem(text: str, field: tuple[str, int, int, dict[str, int]]) -> str | None:
    label, low, high, names = field
    allowed = f"{low}-{high}" + (
        f" or {min(names, key=names.get)}-{max(names, key=names.get)}" if names else ""
    )
    for part in text.split(","):
        base, _, step = part.partition("/")
        if step and (not step.isdigit() or int(step) == 0):
            return f"the {label} step {show(step)} is not a positive number"
        if base in ("*", "?"):
            continue
        lo_text, dash, hi_text = base.partition("-")
        lo = _cron_value(lo_text, low, high, names)
        hi = _cron_value(hi_text, low, high, names) if dash else lo
        if lo is None or hi is None:
            return f"the {label} field {show(part)} is outside {allowed}"
        if hi < lo:
            return f"the {label} range {show(base)} runs backwards"
    return None


def check_cron(schedule: str) -> str | None:
    """A 5-field cron schedule (UTC) or one of the CRD's macros (no @every), each field in range."""
    if is_output(schedule):
        return None
    if schedule.startswith("@every"):
        return (
            f"{show(schedule)}: '@every <duration>' is refused by the NodePool CRD's schedule "
            f"pattern (Karpenter v1.15.0); use one of {', '.join(CRON_MACROS)} or a 5-field cron "
            "schedule such as '0 */6 * * *'"
        )
    if schedule.startswith("@"):
        if schedule in CRON_MACROS:
            return None
        return (
            f"{show(schedule)} is not a cron macro; expected one of {', '.join(CRON_MACROS)} "
            "or a 5-field cron schedule"
        )
    parts = schedule.split()
    if len(parts) != 5:
        return (
            f"{show(schedule)} is not a 5-field cron schedule (minute hour day-of-month month "
            "day-of-week) or an @daily macro"
        )
    for text, field in zip(parts, CRON_FIELDS, strict=True):
        if problem := _cron_field_problem(text, field):
            return f"{show(schedule)}: {problem}"
    return None
