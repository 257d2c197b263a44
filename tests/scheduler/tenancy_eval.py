"""Evaluate the tenancy admission policies as the API server does (cel-python, with the
Kubernetes string library of ``tests/crd_validation.py``): the binding's namespace selector, the
policy's rules (resource, operation, scope), its ``matchConditions``, its ``variables`` (all
evaluated up front, which the API server does lazily: each must then evaluate on every object),
then every validation, with its ``messageExpression`` (kubernetes v1.36.3
staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go: a message
expression with a line break falls back to ``message``). The mutating policy is applied as its
ApplyConfiguration merges labels."""

import copy
from dataclasses import dataclass, field

import cel_programs
import celpy
from crd_validation import _KUBERNETES_FUNCTIONS

from .test_admission_fixtures import _selected

_PROGRAMS: dict[str, object] = {}

PLURALS = {
    "Pod": "pods",
    "Deployment": "deployments",
    "StatefulSet": "statefulsets",
    "ReplicaSet": "replicasets",
    "Job": "jobs",
    "CronJob": "cronjobs",
    "PodGroup": "podgroups",
    "MPIJob": "mpijobs",
    "ConfigMap": "configmaps",
    "Service": "services",
    "NetworkPolicy": "networkpolicies",
    "ServiceAccount": "serviceaccounts",
    "Secret": "secrets",
    "Namespace": "namespaces",
}
GROUPS = {
    "Deployment": "apps",
    "StatefulSet": "apps",
    "ReplicaSet": "apps",
    "Job": "batch",
    "CronJob": "batch",
    "PodGroup": "scheduling.run.ai",
    "MPIJob": "kubeflow.org",
    "NetworkPolicy": "networking.k8s.io",
}
ADMIN = {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}


def cel(expression: str, activation: dict):
    program = _PROGRAMS.get(expression)
    if program is None:
        env = cel_programs.environment()
        program = env.program(env.compile(expression), _KUBERNETES_FUNCTIONS)
        _PROGRAMS[expression] = program
    result = program.evaluate(activation)
    if isinstance(result, celpy.CELEvalError):
        raise AssertionError(f"CEL error {result} in {expression[:200]}")
    return result


@dataclass
class Request:
    obj: dict
    namespace: dict  # the Namespace object (labels with kubernetes.io/metadata.name)
    operation: str = "CREATE"
    old: dict | None = None
    user: dict = field(default_factory=lambda: dict(ADMIN))
    subresource: str = ""

    @property
    def kind(self) -> str:
        return self.obj["kind"]

    def activation(self, variables: dict | None = None) -> dict:
        act = {
            "object": celpy.json_to_cel(self.obj),
            "oldObject": celpy.json_to_cel(self.old) if self.old is not None else None,
            "namespaceObject": celpy.json_to_cel(self.namespace),
            "request": celpy.json_to_cel(
                {
                    "kind": {
                        "group": GROUPS.get(self.kind, ""),
                        "version": "v1",
                        "kind": self.kind,
                    },
                    "operation": self.operation,
                    "userInfo": self.user,
                    "namespace": self.namespace["metadata"]["name"],
                }
            ),
        }
        act["variables"] = celpy.celtypes.MapType(
            {celpy.celtypes.StringType(k): v for k, v in (variables or {}).items()}
        )
        return act


def _matches(policy: dict, binding: dict, req: Request) -> bool:
    labels = req.namespace["metadata"].get("labels", {})
    if not _selected(binding["spec"]["matchResources"]["namespaceSelector"], labels):
        return False
    if not _selected(policy["spec"]["matchConstraints"]["namespaceSelector"], labels):
        return False
    resource = PLURALS[req.kind] + (f"/{req.subresource}" if req.subresource else "")
    group = GROUPS.get(req.kind, "")
    for rule in policy["spec"]["matchConstraints"]["resourceRules"]:
        if req.operation not in rule["operations"]:
            continue
        if "*" not in rule["apiGroups"] and group not in rule["apiGroups"]:
            continue
        if ("*" in rule["resources"] and not req.subresource) or resource in rule["resources"]:
            return all(
                cel(c["expression"], req.activation())
                for c in policy["spec"].get("matchConditions", [])
            )
    return False


def denials(manifests: list[dict], req: Request) -> list[str]:
    """The messages of every validation of every matching ValidatingAdmissionPolicy that fails
    on ``req`` (after the MutatingAdmissionPolicies applied), in policy order."""
    req = copy.deepcopy(req)
    req.obj = mutate(manifests, req)
    bindings = {m["spec"]["policyName"]: m for m in manifests if m["kind"].endswith("Binding")}
    out = []
    for policy in manifests:
        if policy["kind"] != "ValidatingAdmissionPolicy":
            continue
        if not _matches(policy, bindings[policy["metadata"]["name"]], req):
            continue
        variables: dict = {}
        for var in policy["spec"].get("variables", []):
            variables[var["name"]] = cel(var["expression"], req.activation(variables))
        act = req.activation(variables)
        for validation in policy["spec"]["validations"]:
            if cel(validation["expression"], act):
                continue
            if "messageExpression" not in validation:
                out.append(validation["message"])
                continue
            message = str(cel(validation["messageExpression"], act))
            out.append(validation["message"] if "\n" in message else message)
    return out


def mutate(manifests: list[dict], req: Request) -> dict:
    """``req.obj`` after the queue-label MutatingAdmissionPolicy (the only mutation it makes:
    the label kai.scheduler/queue, with the namespace's queue)."""
    obj = copy.deepcopy(req.obj)
    bindings = {m["spec"]["policyName"]: m for m in manifests if m["kind"].endswith("Binding")}
    for policy in manifests:
        if policy["kind"] != "MutatingAdmissionPolicy":
            continue
        if not _matches(policy, bindings[policy["metadata"]["name"]], req):
            continue
        expression = policy["spec"]["mutations"][0]["applyConfiguration"]["expression"]
        assert expression.startswith('Object{metadata: Object.metadata{labels: {"')
        key = expression.split('"')[1]
        value_expression = expression.split(": ", 3)[3].rstrip("}")
        value = str(cel(value_expression, req.activation()))
        obj.setdefault("metadata", {}).setdefault("labels", {})[key] = value
    return obj
