"""The validation run's own least-privilege ClusterRole (issue 29, point 8), instead of
cluster-admin. Pure: the render in, manifests out; ``python -m eks_gpu_platform.validate.rbac
--stack dev`` (``make validate-rbac STACK=dev``) prints them as YAML for ``kubectl apply -f -``.
A stack that sets ``validation.principal`` deploys them itself, from the kinds its config
renders, with the principal's access entry in ``GROUP`` (``validation_access``).

Every API call of ``components/validate/`` goes through ``core.Kube`` (``get``, ``list``,
``create``, ``delete``, ``logs``; ``served`` reads discovery, which every authenticated user may:
the ``system:discovery`` ClusterRole bound to ``system:authenticated``, kubernetes v1.36.3
``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go``). ``PHASE_RULES`` lists, per phase,
the (API group, resource, verbs) its calls need, audited call by call (docs/validation.md,
"Least-privilege RBAC", has the table); ``deployment`` also reads every kind the render holds
(``rendered_rules``). A server-side dry run (``dryRun=All``) is authorized as the verb it dry-runs
(``create``).

RBAC cannot restrict ``create`` by name or a namespace by label: the role may create and delete
any Namespace, Pod, Job... What the run *does* delete is bounded by the code: only what it
created, and ``--delete-leftovers`` only older runs' ``validate-<run>`` namespaces
(``leftovers.py``). The one object it deletes without having created it is the NodeClaim
Karpenter launched for its own capacity pod when the pool's ``consolidateAfter`` is ``Never``
(``capacity.py``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ROLE_NAME = "eks-gpu-platform-validate"
GROUP = "eks-gpu-platform-validate"
MANAGED_BY = {"app.kubernetes.io/managed-by": "eks-gpu-platform"}

Rule = tuple[str, str, tuple[str, ...]]  # (API group, resource, verbs)

# The run's own objects: created through Context.create, deleted by Context.cleanup (or by the
# check that made them once it is done), in the run's namespaces.
_OWN = (
    ("", "namespaces", ("create", "delete")),
    ("", "serviceaccounts", ("create", "delete")),
    ("", "pods", ("create", "delete")),
    ("batch", "jobs", ("create", "delete")),
)

PHASE_RULES: Mapping[str, tuple[Rule, ...]] = {
    # runner.py: the pre-flight lists older runs' namespaces and deletes them
    # (--delete-leftovers), creates the run namespace; core.py cleanup deletes what was created.
    "preflight": (("", "namespaces", ("list", "create", "delete")),),
    # deployment.py: the controllers' Deployments and DaemonSets, every rendered object
    # (rendered_rules), the Karpenter objects' status (rendered kinds too).
    # daemonsets.py: the nodes a DaemonSet with no pod should run on (a 0-desired DaemonSet on
    # a cluster with such nodes is not ready).
    "deployment": (
        ("apps", "deployments", ("get",)),
        ("apps", "daemonsets", ("get",)),
        ("", "nodes", ("list",)),
    ),
    # capacity.py: a queue namespace, a Job, its pod's log, the NodeClaims of the pool's
    # NodePools, the Node, then the pod, the Job and (consolidateAfter Never) the NodeClaim.
    "capacity": (
        *_OWN,
        ("", "pods", ("list",)),
        ("", "pods/log", ("get",)),
        ("", "nodes", ("get",)),
        ("karpenter.sh", "nodeclaims", ("get", "list", "delete")),
    ),
    # scheduling.py, gangs.py and over_limit.py: dry-run pods, every pod and its template owner
    # annotations), a gang's PodGroup and pods, their Nodes and NodeClaims, the pods' Events.
    "scheduling": (
        *_OWN,
        ("", "pods", ("get", "list")),
        ("", "nodes", ("get",)),
        ("", "events", ("list",)),
        ("apps", "daemonsets", ("get",)),
        ("apps", "replicasets", ("get",)),
        ("apps", "statefulsets", ("get",)),
        ("batch", "jobs", ("get",)),
        ("scheduling.run.ai", "podgroups", ("get", "create", "delete")),
        ("karpenter.sh", "nodeclaims", ("list",)),
    ),
    # performance.py: the NCCL namespace and MPIJob, its launcher pod and log.
    "performance": (
        ("", "namespaces", ("create", "delete")),
        ("", "pods", ("list",)),
        ("", "pods/log", ("get",)),
        ("kubeflow.org", "mpijobs", ("create", "delete")),
    ),
    # security.py: dry-run pods in queue namespaces, the queue namespaces' labels.
    "security": (*_OWN, ("", "namespaces", ("get",))),
}


def resource_of(kind: str) -> str:
    """The plural resource of ``kind``: lower case, then ``-s`` -> ``-ses``, consonant + ``y`` ->
    ``-ies``, else ``+s``. apimachinery's guess (k8s.io/apimachinery v0.36.3
    ``pkg/api/meta/restmapper.go`` ``UnsafeGuessKindToResource`` L126-148) turns every final
    ``y`` into ``ies``, which is wrong for Karpenter's ``NodeOverlay``: its CRD declares
    ``plural: nodeoverlays`` (karpenter-provider-aws v1.15.0
    ``pkg/apis/crds/karpenter.sh_nodeoverlays.yaml`` L15). The served plurals of the render's
    kinds follow this rule; tests/validate/test_rbac.py holds them in a table of its own."""
    name = kind.lower()
    if name.endswith("s"):
        return name + "es"
    if name.endswith("y") and name[-2:-1] not in tuple("aeiou"):
        return name[:-1] + "ies"
    return name + "s"


def rendered_rules(manifests: Iterable[Mapping[str, Any]]) -> tuple[Rule, ...]:
    """``get`` on every kind of the render (deployment's objects-match-render checks)."""
    seen: dict[tuple[str, str], None] = {}
    for manifest in manifests:
        api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
        if isinstance(api_version, str) and isinstance(kind, str):
            group = api_version.rpartition("/")[0]
            seen[(group, resource_of(kind))] = None
    return tuple((group, resource, ("get",)) for group, resource in seen)


VERB_ORDER = ("get", "list", "create", "delete")


def cluster_role(manifests: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ClusterRole: the union of ``PHASE_RULES`` and ``rendered_rules``, one rule per API
    group and verb set, resources and groups sorted."""
    verbs: dict[tuple[str, str], set[str]] = {}
    for rules in [*PHASE_RULES.values(), rendered_rules(manifests)]:
        for group, resource, these in rules:
            verbs.setdefault((group, resource), set()).update(these)
    merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (group, resource), these in sorted(verbs.items()):
        ordered = tuple(v for v in VERB_ORDER if v in these)
        merged.setdefault((group, ordered), []).append(resource)
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": ROLE_NAME, "labels": dict(MANAGED_BY)},
        "rules": [
            {"apiGroups": [group], "resources": resources, "verbs": list(ordered)}
            for (group, ordered), resources in sorted(
                merged.items(), key=lambda kv: (kv[0][0], kv[1][0])
            )
        ],
    }


def cluster_role_binding(group: str = GROUP) -> dict[str, Any]:
    """Binds the role to a Kubernetes group, which an EKS access entry gives the validating IAM
    principal (``kubernetesGroups``, docs/validation.md)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": ROLE_NAME, "labels": dict(MANAGED_BY)},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": ROLE_NAME,
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
    }


def allows(role: Mapping[str, Any], verb: str, group: str, resource: str) -> bool:
    """Whether ``role``'s rules allow ``verb`` on ``group``/``resource`` (RBAC's rule match,
    without wildcards: the role holds none)."""
    return any(
        group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]
        for rule in role["rules"]
    )


def main(argv: Sequence[str] | None = None) -> int:
    import yaml

    from .render import RenderError, load

    parser = argparse.ArgumentParser(
        prog="python -m eks_gpu_platform.validate.rbac",
        description="Print the validation run's ClusterRole and its binding for a stack's render.",
    )
    parser.add_argument("--stack", required=True, help="the stack (its render is build/<stack>/)")
    parser.add_argument("--render", help="the render's folder (default build/<stack>)")
    parser.add_argument("--group", default=GROUP, help=f"the Kubernetes group (default {GROUP})")
    args = parser.parse_args(argv)
    try:
        render = load(args.stack, args.render)
    except RenderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    docs = [cluster_role(render.manifests), cluster_role_binding(args.group)]
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
