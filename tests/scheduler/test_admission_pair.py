"""``scheduler.admission_pair``: the one builder of each admission policy and its binding (exact
objects, written out here)."""

from eks_gpu_platform.scheduler.admission_pair import mutating_pair, policy_pair, validating_pair

SELECTOR = {"matchExpressions": [{"key": "example.io/queue", "operator": "Exists"}]}
RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    ]
}
CONDITIONS = [{"name": "c", "expression": "true"}]
VALIDATIONS = [{"expression": "false", "message": "no", "reason": "Forbidden"}]
DENY_BINDING = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicyBinding",
    "metadata": {"name": "p"},
    "spec": {
        "policyName": "p",
        "matchResources": {"namespaceSelector": SELECTOR},
        "validationActions": ["Deny"],
    },
}


def test_validating_pair_without_conditions_or_variables_has_neither_key():
    assert validating_pair(
        name="p", match_constraints=RULES, validations=VALIDATIONS, namespace_selector=SELECTOR
    ) == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "p"},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": RULES,
                "validations": VALIDATIONS,
            },
        },
        DENY_BINDING,
    ]


def test_validating_pair_with_conditions_and_variables():
    variables = [{"name": "v", "expression": "1"}]
    policy, binding = validating_pair(
        name="p",
        match_constraints=RULES,
        validations=VALIDATIONS,
        namespace_selector=SELECTOR,
        conditions=CONDITIONS,
        variables=variables,
    )
    assert policy["spec"] == {
        "failurePolicy": "Fail",
        "matchConstraints": RULES,
        "matchConditions": CONDITIONS,
        "variables": variables,
        "validations": VALIDATIONS,
    }
    assert list(policy["spec"]) == [
        "failurePolicy",
        "matchConstraints",
        "matchConditions",
        "variables",
        "validations",
    ]
    assert binding == DENY_BINDING


def test_mutating_pair():
    mutations = [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "x"}}]
    assert mutating_pair(
        name="p",
        match_constraints=RULES,
        conditions=CONDITIONS,
        mutations=mutations,
        namespace_selector=SELECTOR,
    ) == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "p"},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": RULES,
                "matchConditions": CONDITIONS,
                "mutations": mutations,
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "p"},
            "spec": {"policyName": "p", "matchResources": {"namespaceSelector": SELECTOR}},
        },
    ]


def test_policy_pair_adds_the_not_annotated_condition_or_denies_unless_annotated():
    common = {
        "name": "p",
        "rules": RULES,
        "conditions": CONDITIONS,
        "annotated": "a",
        "mutation": {"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}},
        "message": "m",
        "namespace_selector": SELECTOR,
    }
    mutating = policy_pair(mutating=True, **common)
    assert mutating[0]["spec"]["matchConditions"] == [
        {"name": "c", "expression": "true"},
        {"name": "not-annotated", "expression": "!(a)"},
    ]
    assert mutating[0]["spec"]["mutations"] == [common["mutation"]]
    validating = policy_pair(mutating=False, **common)
    assert validating[0]["spec"] == {
        "failurePolicy": "Fail",
        "matchConstraints": RULES,
        "matchConditions": CONDITIONS,
        "validations": [{"expression": "a", "message": "m", "reason": "Invalid"}],
    }
    assert validating[1] == DENY_BINDING
