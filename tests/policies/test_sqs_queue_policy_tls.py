import json

import pytest
from policy_baselines import change, queue_policy, queue_policy_document

from eks_gpu_platform.policies.rules.sqs_queue_policy_tls import RULE, check

CONFIG = RULE.config()
MISSING = (
    'no statement denies requests made without TLS; add {"Effect": "Deny", "Principal": "*", '
    '"Action": "sqs:*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}'
)
DENY = ("Statement", 1)


def test_baseline_is_compliant():
    assert check(queue_policy(), CONFIG) == []


def test_equivalent_deny_forms_are_accepted():
    document = queue_policy_document()
    change(document, (*DENY, "Principal"), {"AWS": "*"})
    change(document, (*DENY, "Action"), ["*"])
    change(document, (*DENY, "Condition"), {"BoolIfExists": {"aws:securetransport": False}})
    assert check(queue_policy(document), CONFIG) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ((*DENY, "Effect"), "Allow"),
        ((*DENY, "Principal"), {"Service": "events.amazonaws.com"}),
        ((*DENY, "Action"), "sqs:SendMessage"),
        ((*DENY, "Condition", "Bool", "aws:SecureTransport"), "true"),
    ],
    ids=["not-deny", "not-everyone", "not-all-actions", "wrong-condition"],
)
def test_missing_tls_deny(path, value):
    assert check(queue_policy(change(queue_policy_document(), path, value)), CONFIG) == [MISSING]


def test_policy_that_is_not_json():
    props = queue_policy()
    props["policy"] = "{not json"
    assert check(props, CONFIG) == [
        "policy is not valid JSON (Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1))"
    ]


def test_policy_as_a_mapping():
    props = queue_policy()
    props["policy"] = json.loads(props["policy"])
    assert check(props, CONFIG) == []
