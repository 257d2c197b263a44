"""Issue 13, items 7 and 8: the compliant baseline of the intent cases, and every mandatory
policy covered by several violating mutations and compliant controls."""

import pytest
import test_policy_intents_correctness
import test_policy_intents_cost
import test_policy_intents_security
from intent_cases import V, entries, full_stack

from eks_gpu_platform.policies.offline import evaluate
from eks_gpu_platform.policies.rules import MANDATORY, RULES
from eks_gpu_platform.policies.rules._iam import is_wildcard_action

ALL_CASES = [
    *test_policy_intents_security.CASES,
    *test_policy_intents_correctness.CASES,
    *test_policy_intents_cost.CASES,
]


def test_the_full_stack_is_compliant():
    assert evaluate(entries(full_stack())) == []


def test_every_mandatory_policy_has_violating_mutations_and_controls():
    counts = {r.name: [0, 0] for r in RULES if r.enforcement_level == MANDATORY}
    for policy, _, _, expected in ALL_CASES:
        counts[policy][0 if expected is V else 1] += 1
    assert {name: c for name, c in counts.items() if c[0] < 3 or c[1] < 1} == {}


@pytest.mark.parametrize(
    ("action", "wildcard"),
    [
        ("ec2:*", True),
        ("EC2:*", True),
        ("*:*", True),
        ("s3:?*", True),
        (" s3 : ** ", True),
        ("e*:*", True),
        ("*", True),
        ("ec2:Describe*", False),
        ("ec2:???", False),
        ("iam:Pass?ole", False),
    ],
)
def test_whole_service_wildcards(action, wildcard):
    assert is_wildcard_action(action) is wildcard
