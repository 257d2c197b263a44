"""Evaluate the tenancy admission policies as the API server does (cel-python, with the
Kubernetes string library of ``tests/crd_validation.py``): the binding's namespace selector, the
policy's rules (resource, operation, scope), its ``matchConditions``, its ``variables`` (all
evaluated up front, which the API server does lazily: each must then evaluate on every object),
then every validation, with its ``messageExpression`` (kubernetes v1.36.3
staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go: a message
expression with a line break falls back to ``message``). The mutating policy is applied as its
ApplyConfiguration merges labels.

Evaluated once per test process: each request's CEL values are built once (not per expression),
and the result of an expression is kept by the exact inputs of its activation (the request as
JSON, and the policy variables defined before it, by name and expression): a CEL expression is a
pure function of its activation (https://github.com/google/cel-spec/blob/master/doc/langdef.md
"Evaluation": no side effects), so a request judged again, by another test or under another
stack's policies with the same expression, gets the value the interpreter gave the first time."""

import copy
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import cel_programs
import celpy
from crd_validation import _KUBERNETES_FUNCTIONS

from .test_admission_fixtures import _selected

_PROGRAMS: dict[str, object] = {}
# (expression, activation key) -> the value: see the module docstring.
_RESULTS: dict[tuple, object] = {}

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


def cel(expression: str, activation: dict, key: tuple | None = None):
    """``expression`` on ``activation``; ``key``, when given, names the activation's inputs
    exactly (``_prepared`` and the variables defined so far), and a value already computed for
    the same expression and key is returned instead of evaluating again."""
    if key is not None and (expression, key) in _RESULTS:
        return _RESULTS[(expression, key)]
    program = _PROGRAMS.get(expression)
    if program is None:
        env = cel_programs.environment()
        program = env.program(env.compile(expression), _KUBERNETES_FUNCTIONS)
        _PROGRAMS[expression] = program
    result = program.evaluate(activation)
    if isinstance(result, celpy.CELEvalError):
        raise AssertionError(f"CEL error {result} in {expression[:200]}")
    if key is not None:
        _RESULTS[(expression, key)] = result
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
        return _with_variables(self._activation(), variables)

    def _activation(self) -> dict:
        """The activation without ``variables``, built afresh from the fields."""
        return {
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

    def key(self) -> str:
        """Everything ``_activation`` is built from, as JSON (keys sorted): equal keys, equal
        activations."""
        return json.dumps(
            [self.obj, self.old, self.namespace, self.operation, self.user, self.subresource],
            sort_keys=True,
        )


def _with_variables(activation: dict, variables: dict | None) -> dict:
    return {
        **activation,
        "variables": celpy.celtypes.MapType(
            {celpy.celtypes.StringType(k): v for k, v in (variables or {}).items()}
        ),
    }


def _prepared(req: Request) -> Callable[[], tuple[dict, str]]:
    """``req``'s activation without variables and its key, built on the first call (a request
    no policy matches needs neither), then the same for every expression evaluated on it."""
    return functools.cache(lambda: (req._activation(), req.key()))


def _matches(
    policy: dict, binding: dict, req: Request, prepared: Callable[[], tuple[dict, str]]
) -> bool:
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
            activation, key = prepared()
            no_variables = _with_variables(activation, None)
            return all(
                cel(c["expression"], no_variables, (key, ()))
                for c in policy["spec"].get("matchConditions", [])
            )
    return False


def denials(manifests: list[dict], req: Request) -> list[str]:
    """The messages of every validation of every matching ValidatingAdmissionPolicy that fails
    on ``req`` (after the MutatingAdmissionPolicies applied), in policy order."""
    req = replace(req, obj=mutate(manifests, req))  # the caller's request is left as it was
    prepared = _prepared(req)
    bindings = {m["spec"]["policyName"]: m for m in manifests if m["kind"].endswith("Binding")}
    out = []
    for policy in manifests:
        if policy["kind"] != "ValidatingAdmissionPolicy":
            continue
        if not _matches(policy, bindings[policy["metadata"]["name"]], req, prepared):
            continue
        activation, key = prepared()
        variables: dict = {}
        # The variables' values follow from the request and the variables before them: the
        # (name, expression) pairs defined so far complete the key.
        defined: tuple = ()
        for var in policy["spec"].get("variables", []):
            variables[var["name"]] = cel(
                var["expression"], _with_variables(activation, variables), (key, defined)
            )
            defined += ((var["name"], var["expression"]),)
        act = _with_variables(activation, variables)
        for validation in policy["spec"]["validations"]:
            if cel(validation["expression"], act, (key, defined)):
                continue
            if "messageExpression" not in validation:
                out.append(validation["message"])
                continue
            message = str(cel(validation["messageExpression"], act, (key, defined)))
            out.append(validation["message"] if "\n" in message else message)
    return out


def mutate(manifests: list[dict], req: Request) -> dict:
    """``req.obj`` after the queue-label MutatingAdmissionPolicy (the only mutation it makes:
    the label kai.scheduler/queue, with the namespace's queue)."""
    obj = copy.deepcopy(req.obj)
    prepared = _prepared(req)
    bindings = {m["spec"]["policyName"]: m for m in manifests if m["kind"].endswith("Binding")}
    for policy in manifests:
        if policy["kind"] != "MutatingAdmissionPolicy":
            continue
        if not _matches(policy, bindings[policy["metadata"]["name"]], req, prepared):
            continue
        expression = policy["spec"]["mutations"][0]["applyConfiguration"]["expression"]
        assert expression.startswith('Object{metadata: Object.metadata{labels: {"')
        key = expression.split('"')[1]
        value_expression = expression.split(": ", 3)[3].rstrip("}")
        activation, inputs = prepared()
        value = str(cel(value_expression, _with_variables(activation, None), (inputs, ())))
        obj.setdefault("metadata", {}).setdefault("labels", {})[key] = value
    return obj
