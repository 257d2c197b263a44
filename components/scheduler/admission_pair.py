"""One do-not-disrupt admission policy and its binding, shared by the built-in owners' policies
(``manifests``) and the MPIJob policy (``owner_templates``): on Kubernetes 1.36 a
MutatingAdmissionPolicy that applies ``mutation`` where ``annotated`` is false, before it a
ValidatingAdmissionPolicy that denies with ``message`` unless ``annotated``."""

from .constants import ADMISSION_API


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
    binding_spec: dict = {
        "policyName": name,
        "matchResources": {"namespaceSelector": namespace_selector},
    }
    if mutating:
        return [
            {
                "apiVersion": ADMISSION_API,
                "kind": "MutatingAdmissionPolicy",
                "metadata": {"name": name},
                "spec": {
                    "failurePolicy": "Fail",
                    "reinvocationPolicy": "Never",
                    "matchConstraints": rules,
                    "matchConditions": [
                        *conditions,
                        {"name": "not-annotated", "expression": f"!({annotated})"},
                    ],
                    "mutations": [mutation],
                },
            },
            {
                "apiVersion": ADMISSION_API,
                "kind": "MutatingAdmissionPolicyBinding",
                "metadata": {"name": name},
                "spec": binding_spec,
            },
        ]
    return [
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": rules,
                "matchConditions": conditions,
                "validations": [{"expression": annotated, "message": message, "reason": "Invalid"}],
            },
        },
        {
            "apiVersion": ADMISSION_API,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {**binding_spec, "validationActions": ["Deny"]},
        },
    ]
