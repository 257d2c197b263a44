"""What a rule is: metadata, default enforcement level, config schema and a pure check.

Rules never import Pulumi. Resource checks take the resource's props (camelCase inputs in
the engine, a read-only ``Mapping`` proxy there) and the policy config; stack checks take every
resource of the stack. Both return messages; an empty list means compliant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ...config import DEFAULT_LABEL_DOMAIN
from ...errors import one_line

MANDATORY = "mandatory"
ADVISORY = "advisory"
ENFORCEMENT_LEVELS = (MANDATORY, ADVISORY)
SEVERITIES = ("low", "medium", "high", "critical")
STACK = "stack"

LABEL_DOMAIN_SCHEMA: Mapping[str, Mapping[str, Any]] = {
    "labelDomain": {
        "type": "string",
        "default": DEFAULT_LABEL_DOMAIN,
        "description": (
            "Domain of the platform's node labels and annotations: '<domain>/pool', "
            "'<domain>/preemptible', '<domain>/node-pools'."
        ),
    }
}


class Finding(str):
    """A stack-rule message that also names the resource it is about (``urn``).

    It *is* the message string, so ``check_stack(...) == ["..."]`` compares messages, while the
    pack and the offline runner can attach the violation to the resource instead of the stack.
    """

    urn: str | None

    def __new__(cls, message: str, urn: str | None = None) -> Finding:
        obj = super().__new__(cls, message)
        obj.urn = urn or None
        return obj


class StackResource(NamedTuple):
    """One resource as a stack check sees it (engine: outputs; offline: inputs)."""

    type: str
    name: str
    urn: str
    props: Mapping[str, Any]


ResourceCheck = Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]]
StackCheck = Callable[[Sequence[StackResource], Mapping[str, Any]], list[str]]


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One policy.

    ``resource_checks`` maps each resource type token the rule validates to its check;
    a stack rule has ``check_stack`` instead. ``description`` says *why* the rule exists (the
    engine prints it above every violation). ``config_schema`` holds JSON-schema properties
    with defaults; ``config()`` merges the defaults with what the user configured.
    """

    name: str
    description: str
    enforcement_level: str
    category: str
    severity: str = "high"
    resource_checks: Mapping[str, ResourceCheck] = field(default_factory=dict)
    check_stack: StackCheck | None = None
    config_schema: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.enforcement_level not in ENFORCEMENT_LEVELS:
            raise ValueError(
                f"Rule {self.name}: enforcement_level {self.enforcement_level!r}; "
                f"expected one of {', '.join(ENFORCEMENT_LEVELS)}"
            )
        if self.severity not in SEVERITIES:
            raise ValueError(
                f"Rule {self.name}: severity {self.severity!r}; "
                f"expected one of {', '.join(SEVERITIES)}"
            )
        if bool(self.resource_checks) == (self.check_stack is not None):
            raise ValueError(
                f"Rule {self.name}: give either resource_checks or check_stack, not both or neither"
            )
        if "enforcementLevel" in self.config_schema:
            raise ValueError(f"Rule {self.name}: 'enforcementLevel' is not a config property")

    @property
    def is_stack(self) -> bool:
        return self.check_stack is not None

    @property
    def resource_types(self) -> tuple[str, ...] | str:
        """The type tokens this rule validates, or ``"stack"``."""
        return STACK if self.is_stack else tuple(self.resource_checks)

    def defaults(self) -> dict[str, Any]:
        return {
            key: prop["default"] for key, prop in self.config_schema.items() if "default" in prop
        }

    def config(self, configured: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Schema defaults overlaid with the configured properties, minus ``enforcementLevel``."""
        merged = self.defaults()
        for key, value in (configured or {}).items():
            if key != "enforcementLevel":
                merged[key] = value
        return merged

    def check(
        self, resource_type: str, props: Mapping[str, Any], config: Mapping[str, Any]
    ) -> list[str]:
        """Run the resource check for ``resource_type``; ``[]`` for types the rule ignores."""
        check = self.resource_checks.get(resource_type)
        return [] if check is None else [escaped(m) for m in check(props, config)]

    def stack_messages(
        self, resources: Sequence[StackResource], config: Mapping[str, Any]
    ) -> list[str]:
        """Run the stack check (``[]`` for a resource rule), each message ``escaped``."""
        if self.check_stack is None:
            return []
        return [escaped(m) for m in self.check_stack(resources, config)]


def escaped(message: str) -> str:
    """A rule's message on one line (``errors.one_line``): the one place every message of the
    pack passes (``Rule.check``, ``Rule.stack_messages``; the engine pack and the offline runner
    call only these), so a name or value holding a newline (``NodePool "a\\nb"``) can never
    split a violation into lines. A ``Finding`` keeps its URN."""
    return Finding(one_line(str(message)), getattr(message, "urn", None))
