"""Every shipped workload template (the dev and prod renders' ``examples/``) is valid as written:

- built-in kinds against the Kubernetes OpenAPI schema of the stacks' Kubernetes version
  (``kubernetes-validate``, which ships the upstream schemas per minor version, strict: unknown
  fields are errors, as with ``kubectl``'s default ``fieldValidation=Strict``);
- custom kinds (MPIJob) against the project's schema of their CRD
  (``tests/upstream_facts/crds/mpi-operator.yaml``, see ``tests/crd_validation.py``), and their
  pod templates, which that schema leaves open, against Kubernetes' own PodTemplate schema;
- the pods against the Pod Security level the template declares in its header
  (``tests/pod_security.py``), "restricted" unless the header says why not;
- every container with CPU and memory requests and a memory limit, no pod with an API token,
  each template's Namespace first, labelled to enforce its level.
"""

import re
from pathlib import Path

import kubernetes_validate
import pytest
from crd_validation import validate as validate_custom
from pod_security import pod_templates, violations
from stack_files import fixture_stack

from eks_gpu_platform import versions
from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.offline.render import validate as validate_stack
from eks_gpu_platform.scheduler import WorkloadTemplate, queue_namespace_manifests

REPO = Path(__file__).resolve().parents[2]
STACKS = ("dev", "prod")
CUSTOM_KINDS = {"MPIJob"}
HEADER = re.compile(r"^# pod-security: (restricted|baseline - \S.*)$")


def shipped() -> list[tuple[str, str, WorkloadTemplate, str]]:
    out = []
    for stack in STACKS:
        config = validate_stack(fixture_stack(stack))
        for name, template in example_workloads(config).items():
            out.append((stack, name, template, config.cluster.kubernetes_version))
    return out


SHIPPED = shipped()
IDS = [f"{stack}-{name}" for stack, name, _, _ in SHIPPED]


def test_the_renders_ship_these_templates():
    assert [(stack, name) for stack, name, _, _ in SHIPPED] == [
        # By each queue's workload kind (issue 23, point 6): the notebooks queue gets the
        # notebook, on its time-sliced pool; no queue gets Triton unless it serves.
        ("dev", "training-research-batch"),
        ("dev", "inference-research-serving"),
        ("dev", "notebook-research-notebooks"),
        ("prod", "nccl-allreduce-train-efa"),
        ("prod", "training-llm-training"),
        ("prod", "training-research"),
        ("prod", "inference-serving"),
    ]


def test_kubernetes_validate_ships_the_stacks_kubernetes_version():
    """The schemas are those of the stacks' version, not an older fallback."""
    versions_used = {version for _, _, _, version in SHIPPED}
    assert versions_used == {versions.DEFAULT_KUBERNETES_VERSION} == {"1.36"}
    assert "1.36.0" in kubernetes_validate.utils.all_versions()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    # validate() returns the minor version of the schemas it used (the newest not newer).
    assert kubernetes_validate.validate(namespace, "1.36", strict=True) == "1.36"


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_built_in_kinds_match_the_kubernetes_schema(stack, name, template, version):
    built_in = [d for d in template.documents if d["kind"] not in CUSTOM_KINDS]
    assert built_in
    for document in built_in:
        assert kubernetes_validate.validate(document, version, strict=True) == version


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_custom_kinds_match_their_crds(stack, name, template, version):
    for document in template.documents:
        if document["kind"] in CUSTOM_KINDS:
            assert validate_custom(document) == [], document["kind"]


def replica_pod_templates(mpijob: dict) -> list[dict]:
    """Each MPIJob replica's pod template as a v1 PodTemplate object."""
    return [
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": f"{mpijob['metadata']['name']}-{replica.lower()}"},
            "template": spec["template"],
        }
        for replica, spec in mpijob["spec"]["mpiReplicaSpecs"].items()
    ]


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_mpijob_pod_templates_match_the_kubernetes_schema(stack, name, template, version):
    """The MPIJob schema keeps a replica's pod spec open (the file says why): the pod spec is
    checked here as what mpi-operator turns it into, a pod template."""
    mpijobs = [d for d in template.documents if d["kind"] == "MPIJob"]
    for mpijob in mpijobs:
        pod_templates = replica_pod_templates(mpijob)
        assert [t["metadata"]["name"] for t in pod_templates] == [
            f"{mpijob['metadata']['name']}-launcher",
            f"{mpijob['metadata']['name']}-worker",
        ]
        for document in pod_templates:
            assert kubernetes_validate.validate(document, version, strict=True) == version


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_pods_meet_the_declared_pod_security_level(stack, name, template, version):
    assert HEADER.match(template.header[0]), template.header[0]
    assert template.header[0].startswith(f"# pod-security: {template.pod_security}")
    for document in template.documents:
        assert violations(document, template.pod_security) == [], document["kind"]


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_a_template_below_restricted_needs_it(stack, name, template, version):
    """A baseline header is not a shortcut: the template really fails "restricted"."""
    restricted = [line for d in template.documents for line in violations(d, "restricted")]
    assert bool(restricted) == (template.pod_security != "restricted")


def test_only_the_nccl_test_is_baseline():
    levels = {(stack, name): t.pod_security for stack, name, t, _ in SHIPPED}
    assert {key for key, level in levels.items() if level != "restricted"} == {
        ("prod", "nccl-allreduce-train-efa")
    }
    nccl = next(t for _, name, t, _ in SHIPPED if name == "nccl-allreduce-train-efa")
    assert nccl.header[0] == (
        "# pod-security: baseline - mpi-operator v0.6.0 runs sshd as root on the workers (keys "
        "in /root/.ssh) and mpirun as root on the launcher; sshd adds AUDIT_WRITE, KILL, SETGID, "
        "SETUID, SYS_CHROOT"
    )


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_queue_templates_use_the_scheduler_namespaces(stack, name, template, version):
    """A queue's template runs in the namespace the scheduler component creates for the queue
    (issue 19); only an NCCL test brings its own Namespace, first, enforcing its level."""
    config = validate_stack(fixture_stack(stack))
    created = {
        m["metadata"]["name"]
        for m in queue_namespace_manifests(
            config.scheduler.queues,
            label_domain=config.cluster.label_domain,
            kubernetes_version=version,
        )
    }
    namespaces = {
        d["metadata"]["namespace"] for d in template.documents if d["kind"] != "Namespace"
    }
    if name.startswith("nccl-"):
        namespace, *_ = template.documents
        assert namespace["kind"] == "Namespace"
        assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == (
            template.pod_security
        )
        assert namespaces == {namespace["metadata"]["name"]} and not namespaces & created
    else:
        assert [d for d in template.documents if d["kind"] == "Namespace"] == []
        assert len(namespaces) == 1 and namespaces <= created


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_every_container_requests_cpu_and_memory_and_limits_memory(stack, name, template, version):
    containers = [
        container
        for document in template.documents
        for _, pod in pod_templates(document)
        for field in ("initContainers", "containers")
        for container in pod["spec"].get(field, [])
    ]
    assert containers
    for container in containers:
        resources = container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]), container["name"]
        assert resources["limits"]["memory"] == resources["requests"]["memory"], container["name"]


@pytest.mark.parametrize(("stack", "name", "template", "version"), SHIPPED, ids=IDS)
def test_no_pod_mounts_an_api_token(stack, name, template, version):
    pods = [pod for d in template.documents for _, pod in pod_templates(d)]
    assert pods
    for pod in pods:
        assert pod["spec"]["automountServiceAccountToken"] is False


# --- the validators fail where they should -----------------------------------------------------


def job_document(**spec_fields) -> dict:
    _, _, template, _ = next(s for s in SHIPPED if s[1] == "training-research")
    job = template.kind("Job")
    return {**job, "spec": {**job["spec"], **spec_fields}}


def test_schema_validation_rejects_an_unknown_field():
    with pytest.raises(kubernetes_validate.utils.ValidationError) as err:
        kubernetes_validate.validate(job_document(completionsMode="Indexed"), "1.36", strict=True)
    assert "completionsMode" in err.value.message


def test_schema_validation_rejects_a_wrong_type():
    with pytest.raises(kubernetes_validate.utils.ValidationError) as err:
        kubernetes_validate.validate(job_document(parallelism="two"), "1.36", strict=True)
    assert list(err.value.path) == ["spec", "parallelism"]


def test_crd_validation_rejects_a_bad_mpijob():
    _, _, template, _ = next(s for s in SHIPPED if s[1] == "nccl-allreduce-train-efa")
    mpijob = template.kind("MPIJob")
    bad = {**mpijob, "spec": {**mpijob["spec"], "slotsPerWorker": "eight"}}
    assert validate_custom(bad) == ["spec.slotsPerWorker: 'eight' is not of type 'integer'"]


def test_pod_template_validation_rejects_a_bad_mpijob_pod_spec():
    _, _, template, version = next(s for s in SHIPPED if s[1] == "nccl-allreduce-train-efa")
    mpijob = template.kind("MPIJob")
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    container = {**worker["spec"]["containers"][0], "volumeMount": []}  # volumeMounts misspelt
    spec = {**worker["spec"], "containers": [container]}
    bad = {
        **mpijob,
        "spec": {
            **mpijob["spec"],
            "mpiReplicaSpecs": {
                "Worker": {
                    **mpijob["spec"]["mpiReplicaSpecs"]["Worker"],
                    "template": {**worker, "spec": spec},
                }
            },
        },
    }
    assert validate_custom(bad) == []  # open in the MPIJob schema
    [document] = replica_pod_templates(bad)
    with pytest.raises(kubernetes_validate.utils.ValidationError) as err:
        kubernetes_validate.validate(document, version, strict=True)
    assert "volumeMount" in err.value.message
