"""Pod Security for the workload templates (pure builders, dicts out): the security contexts
that meet the Pod Security Standards' "restricted" level, a namespace per queue whose labels make
Pod Security Admission enforce a level, and ``WorkloadTemplate``, the documents of one template
file with the level it meets and why.

Pod Security Standards (the controls of each level):
https://kubernetes.io/docs/concepts/security/pod-security-standards/
Pod Security Admission labels (``pod-security.kubernetes.io/<mode>`` and ``<mode>-version``):
https://kubernetes.io/docs/concepts/security/pod-security-admission/
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

PRIVILEGED = "privileged"
BASELINE = "baseline"
RESTRICTED = "restricted"
LEVELS = (BASELINE, RESTRICTED)  # a workload template's levels, most permissive first
# Every level Pod Security Admission enforces; "privileged" only for system namespaces whose
# operands need it (``guardrails``), never for a template or a queue namespace.
ENFORCE_LEVELS = (PRIVILEGED, *LEVELS)
POD_SECURITY_LABEL_PREFIX = "pod-security.kubernetes.io/"
# ``enforce`` rejects violating pods; ``audit`` and ``warn`` stay at "restricted", so a baseline
# namespace still reports (warn: to the user, audit: in the audit log) what "restricted" forbids.
AUDIT_AND_WARN_LEVEL = RESTRICTED
# A non-root user for the templates' containers. Triton's own Helm chart runs its image as 1000
# (triton-inference-server/server deploy/k8s-onprem/templates/deployment.yaml:
# ``securityContext: {runAsUser: 1000, fsGroup: 1000}``); the PyTorch image runs as any user.
NON_ROOT_UID = 1000
RUNTIME_DEFAULT_SECCOMP = {"type": "RuntimeDefault"}
# A home directory a non-root user can write to: the images' own home is root's.
WRITABLE_HOME = {"name": "HOME", "value": "/tmp"}


def restricted_pod_security_context(uid: int = NON_ROOT_UID) -> dict:
    """Pod-level settings of the "restricted" level: a non-root user and group (also the group
    of the pod's volumes, ``fsGroup``) and the runtime's default seccomp profile."""
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": uid,
        "fsGroup": uid,
        "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
    }


def restricted_container_security_context() -> dict:
    """Container-level settings of the "restricted" level, set on every container even where the
    pod level already covers them (``runAsNonRoot``, seccomp), so a copied container keeps them."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
    }


def pod_security_labels(level: str, kubernetes_version: str) -> dict[str, str]:
    """Pod Security Admission labels: enforce ``level``, audit and warn at "restricted", each
    pinned to the cluster's Kubernetes version (``v1.36``) so an upgrade does not change them."""
    if level not in ENFORCE_LEVELS:
        raise ValueError(
            f"pod_security_labels: level {level!r} is not one of {', '.join(ENFORCE_LEVELS)}"
        )
    version = f"v{kubernetes_version}"
    labels = {}
    for mode, mode_level in (
        ("enforce", level),
        ("audit", AUDIT_AND_WARN_LEVEL),
        ("warn", AUDIT_AND_WARN_LEVEL),
    ):
        labels[f"{POD_SECURITY_LABEL_PREFIX}{mode}"] = mode_level
        labels[f"{POD_SECURITY_LABEL_PREFIX}{mode}-version"] = version
    return labels


def namespace_manifest(name: str, level: str, kubernetes_version: str) -> dict:
    """A ``v1`` Namespace whose labels make Pod Security Admission enforce ``level``."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": pod_security_labels(level, kubernetes_version)},
    }


def weakest_level(levels: Sequence[str]) -> str:
    """The most permissive of ``levels`` (a namespace must admit every template it holds)."""
    return min(levels, key=LEVELS.index)


@dataclass(frozen=True)
class WorkloadTemplate:
    """The documents of one template file, the Pod Security level its pods meet and why a level
    below "restricted" is needed; ``notes`` are further header comment lines (what it needs
    installed, how to run it)."""

    documents: tuple[dict, ...]
    pod_security: str = RESTRICTED
    reason: str | None = None
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.pod_security not in LEVELS:
            raise ValueError(
                f"WorkloadTemplate: pod_security {self.pod_security!r} is not one of "
                f"{', '.join(LEVELS)}"
            )
        if (self.pod_security == RESTRICTED) != (self.reason is None):
            raise ValueError(
                "WorkloadTemplate: a reason is required below restricted, and only there"
            )

    @property
    def header(self) -> tuple[str, ...]:
        """Comment lines for the top of the file, the Pod Security line first."""
        first = f"# pod-security: {self.pod_security}"
        if self.reason is not None:
            first += f" - {self.reason}"
        return (first, *(f"# {note}" if note else "#" for note in self.notes))

    def kind(self, kind: str) -> dict:
        """The one document of ``kind``."""
        (found,) = [d for d in self.documents if d["kind"] == kind]
        return found
