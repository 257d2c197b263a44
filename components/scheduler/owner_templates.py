"""The do-not-disrupt policy for owners beyond the built-in kinds (issue 30 point 7): the
Kubeflow ``MPIJob`` the platform's NCCL test and validation create (``efa.MPIJOB_API``,
``kubeflow.org/v2beta1``; KAI registers ``v1`` and ``v2beta1``, kai-scheduler v0.16.8
``pkg/podgrouper/podgrouper/hub/hub.go`` L162-171, unchanged in v0.17.0).

KAI groups an MPIJob's pods (launcher and workers) with the MPI grouper, which calls the default
grouper with the MPIJob alone as owner (``plugins/kubeflow/mpi/mpi-grouper.go`` L46-47,
``plugins/kubeflow/distributed_common.go`` L29-31): the MPIJob's labels come first, then the pod's,
then the fallback ``train`` (``defaultgrouper/default_grouper.go`` L66, L191-284); a launcher
Job's labels are never read. A pod policy cannot see the MPIJob's labels, so the pod policy
leaves MPIJob pods (``MPIJOB_POD_EXPRESSION``) to this one, which judges each KAI-scheduled
replica template (``spec.mpiReplicaSpecs.<name>.template``) with the MPIJob's labels
(``kai_owners.owner_first_expression``) and marks it (Kubernetes 1.36: a JSONPatch) or requires
the annotation (before: a denial) when KAI treats its pods as non-preemptible.
"""

from collections.abc import Mapping

from .admission_pair import policy_pair
from .constants import DO_NOT_DISRUPT_ANNOTATION, SCHEDULER_NAME
from .kai_owners import owner_first_expression

# mpi-operator v0.6.0 labels every pod of an MPIJob, launcher and workers, with its name
# (pkg/controller/mpi_job_controller.go L1412-1422 newWorker, L1495-1504 newLauncherPodTemplate,
# L1661-1667 defaultLabels; pkg/apis/kubeflow/v2beta1/constants.go L25, L39).
MPI_OPERATOR_LABEL = "training.kubeflow.org/operator-name"
MPI_OPERATOR_NAME = "mpi-operator"
MPIJOB_POD_EXPRESSION = (
    f"has(object.metadata.labels) && '{MPI_OPERATOR_LABEL}' in object.metadata.labels && "
    f"object.metadata.labels['{MPI_OPERATOR_LABEL}'] == '{MPI_OPERATOR_NAME}'"
)

MPIJOB_RULES = {
    "resourceRules": [
        {
            "apiGroups": ["kubeflow.org"],
            "apiVersions": ["v2beta1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["mpijobs"],
        }
    ]
}
SPECS = "object.spec.mpiReplicaSpecs"


def _template(key: str) -> str:
    return f"{SPECS}[{key}].template"


def kai_replica_expression(key: str = "k") -> str:
    """CEL: the replica template ``key`` is scheduled by KAI."""
    spec = f"{_template(key)}.spec"
    return f"has({spec}.schedulerName) && {spec}.schedulerName == '{SCHEDULER_NAME}'"


def annotated_replica_expression(key: str = "k") -> str:
    """CEL: the replica template ``key`` carries the do-not-disrupt annotation (any value)."""
    meta = f"{_template(key)}.metadata"
    return (
        f"has({meta}) && has({meta}.annotations) && "
        f"'{DO_NOT_DISRUPT_ANNOTATION}' in {meta}.annotations"
    )


SCHEDULED_EXPRESSION = f"has({SPECS}) && {SPECS}.exists(k, {kai_replica_expression()})"


def marked_replica_expression(table: Mapping[str, int], key: str = "k") -> str:
    """CEL: the replica template ``key`` is KAI's and KAI treats its pods as non-preemptible."""
    verdict = owner_first_expression(_template(key), table, "false")
    return f"({kai_replica_expression(key)}) && {verdict}"


def json_patch_expression(table: Mapping[str, int]) -> str:
    """CEL: the JSONPatch operations adding ``karpenter.sh/do-not-disrupt: "true"`` to each
    marked replica template without it, creating a missing ``metadata`` or ``annotations``
    (RFC 6902 ``add`` needs the parent to exist)."""
    escaped = DO_NOT_DISRUPT_ANNOTATION.replace("~", "~0").replace("/", "~1")
    base = "'/spec/mpiReplicaSpecs/' + k + '/template/metadata'"
    meta = f"{_template('k')}.metadata"
    return (
        f"{SPECS}.filter(k, ({marked_replica_expression(table)}) && "
        f"!({annotated_replica_expression()}))"
        f".map(k, !has({meta}) "
        f'? JSONPatch{{op: "add", path: {base}, '
        f'value: {{"annotations": {{"{DO_NOT_DISRUPT_ANNOTATION}": "true"}}}}}} '
        f": !has({meta}.annotations) "
        f"? JSONPatch{{op: \"add\", path: {base} + '/annotations', "
        f'value: {{"{DO_NOT_DISRUPT_ANNOTATION}": "true"}}}} '
        f': JSONPatch{{op: "add", path: {base} + \'/annotations/{escaped}\', value: "true"}})'
    )


def mpijob_policy(
    *,
    name: str,
    mutating: bool,
    changed: str,
    table: Mapping[str, int],
    message: str,
    namespace_selector: dict,
) -> list[dict]:
    """The MPIJob policy and its binding, mutating (JSONPatch) or validating (Deny); ``changed``
    is the UPDATE ratchet (``kai_owners.template_changed_expression``)."""
    marked = marked_replica_expression(table)
    annotated = f"{SPECS}.all(k, !({marked}) || ({annotated_replica_expression()}))"
    match = [
        {"name": "kai-scheduled", "expression": SCHEDULED_EXPRESSION},
        {"name": "template-changed", "expression": changed},
        {"name": "non-preemptible", "expression": f"{SPECS}.exists(k, {marked})"},
    ]
    return policy_pair(
        name=name,
        mutating=mutating,
        rules=MPIJOB_RULES,
        conditions=match,
        annotated=annotated,
        mutation={
            "patchType": "JSONPatch",
            "jsonPatch": {"expression": json_patch_expression(table)},
        },
        message=message,
        namespace_selector=namespace_selector,
    )
