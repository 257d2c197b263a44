"""The scheduler's admission policy objects: a policy and its binding of the same name, bound to
the platform's queue namespaces. ``validating_pair`` (a ValidatingAdmissionPolicy whose binding
denies) and ``mutating_pair`` (a MutatingAdmissionPolicy, Kubernetes 1.36+) build every one of
them: the tenancy policies (``tenancy_policies``), the toleration guardrail (``guardrails``) and,
through ``policy_pair``, the do-not-disrupt policies (``disruption_policies``,
``owner_templates``)."""

import re

from .constants import ADMISSION_API


def _kubernetes_minor(version: str) -> tuple[int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"kubernetes_version {version!r} is not a version such as '1.36'")
    return int(match.group(1)), int(match.group(2))


def validating_pair(
    *,
    name: str,
    match_constraints: dict,
    validations: list[dict],
    namespace_selector: dict,
    conditions: list[dict] | None = None,
    variables: list[dict] | None = None,
) -> list[dict]:
    """A ``ValidatingAdmissionPolicy`` (``failurePolicy: Fail``: a CEL error denies rather than
    admits) and its binding, which denies (``validationActions: [Deny]``) in the namespaces of
    ``namespace_selector``; ``matchConditions`` and ``variables`` only when given."""
    spec: dict = {"failurePolicy": "Fail", "matchConstraints": match_constraints}
    if conditions is not None:
        spec["matchConditions"] = conditions
    if variables is not None:
        spec["variables"] = variables
    spec["validations"] = validations
    return [
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": spec,
        },
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "matchResources": {"namespaceSelector": namespace_selector},
                "validationActions": ["Deny"],
            },
        },
    ]


def mutating_pair(
    *,
    name: str,
    match_constraints: dict,
    conditions: list[dict],
    mutations: list[dict],
    namespace_selector: dict,
) -> list[dict]:
    """A ``MutatingAdmissionPolicy`` (``failurePolicy: Fail``, never reinvoked) and its binding
    in the namespaces of ``namespace_selector``."""
    return [
        {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": match_constraints,
                "matchConditions": conditions,
                "mutations": mutations,
            },
        },
        {
            "apiVersion": ADMISSION_API,
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "matchResources": {"namespaceSelector": namespace_selector},
            },
        },
    ]


def policy_pair(
    *,
    name: str,
    mutating: bool,
    rules: dict,
    conditions: list[dict],
    annotated: str,
    mutation: dict,
    message: str,
    namespace_selector: dict,
) -> list[dict]:
    """One do-not-disrupt policy and its binding, shared by the built-in owners' policies
    (``disruption_policies``) and the MPIJob policy (``owner_templates``): on Kubernetes 1.36 a
    MutatingAdmissionPolicy that applies ``mutation`` where ``annotated`` is false, before it a
    ValidatingAdmissionPolicy that denies with ``message`` unless ``annotated``."""
    if mutating:
        return mutating_pair(
            name=name,
            match_constraints=rules,
            conditions=[
                *conditions,
                {"name": "not-annotated", "expression": f"!({annotated})"},
            ],
            mutations=[mutation],
            namespace_selector=namespace_selector,
        )
    return validating_pair(
        name=name,
        match_constraints=rules,
        conditions=conditions,
        validations=[{"expression": annotated, "message": message, "reason": "Invalid"}],
        namespace_selector=namespace_selector,
    )
