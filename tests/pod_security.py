"""A Pod Security Standards checker: the "baseline" and "restricted" controls of
https://kubernetes.io/docs/concepts/security/pod-security-standards/ (Kubernetes v1.36), applied
to a Pod or to every pod template of a workload (Deployment, Job, MPIJob, ...), with the
documented exceptions:

- a container-level ``runAsNonRoot`` or ``seccompProfile`` may be unset when the pod level sets
  it ("Container fields may be undefined/nil if the pod-level ... is set");
- pods with ``spec.os.name: windows`` are exempt from the restricted controls Privilege
  Escalation, Seccomp and Capabilities ("Pod OS field" / Linux-only controls);
- ``*.runAsUser`` and ``supplementalGroups`` may be unset.

The control names and the allowed values follow the page's tables; the implementation follows
Pod Security Admission's checks (kubernetes/kubernetes
staging/src/k8s.io/pod-security-admission/policy/check_*.go).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

BASELINE = "baseline"
RESTRICTED = "restricted"

BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)
SELINUX_TYPES = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
RESTRICTED_VOLUME_SOURCES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
POD_TEMPLATE_WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")


def pod_templates(obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, pod template) for every pod ``obj`` creates: a Pod itself, ``spec.template`` of
    the built-in workloads, the replica templates of MPIJob / PyTorchJob, JobSet's jobs."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Pod":
        yield "", {"metadata": obj.get("metadata") or {}, "spec": spec}
    elif kind in POD_TEMPLATE_WORKLOADS:
        yield "spec.template.", spec["template"]
    elif kind == "CronJob":
        yield "spec.jobTemplate.spec.template.", spec["jobTemplate"]["spec"]["template"]
    elif kind in ("MPIJob", "PyTorchJob"):
        field = "mpiReplicaSpecs" if kind == "MPIJob" else "pytorchReplicaSpecs"
        for role, replica in spec[field].items():
            yield f"spec.{field}.{role}.template.", replica["template"]
    elif kind == "JobSet":
        for i, job in enumerate(spec["replicatedJobs"]):
            yield (
                f"spec.replicatedJobs[{i}].template.spec.template.",
                job["template"]["spec"]["template"],
            )


def _containers(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for field in CONTAINER_LISTS:
        for i, container in enumerate(spec.get(field) or []):
            yield f"spec.{field}[{i}]", container


def _host_set(action: dict[str, Any] | None) -> bool:
    action = action or {}
    return any((action.get(k) or {}).get("host") for k in ("httpGet", "tcpSocket"))


def _baseline(template: dict[str, Any]) -> list[str]:
    meta, spec = template.get("metadata") or {}, template.get("spec") or {}
    pod_sc = spec.get("securityContext") or {}
    out = []
    if (pod_sc.get("windowsOptions") or {}).get("hostProcess"):
        out.append("spec.securityContext.windowsOptions.hostProcess: HostProcess is forbidden")
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            out.append(f"spec.{field}: Host Namespaces: must be unset or false")
    for i, volume in enumerate(spec.get("volumes") or []):
        if "hostPath" in volume:
            out.append(f"spec.volumes[{i}].hostPath: HostPath Volumes are forbidden")
    for key, value in (meta.get("annotations") or {}).items():
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and not (
            value == "runtime/default" or value.startswith("localhost/")
        ):
            out.append(f"metadata.annotations[{key}]: AppArmor: {value!r} is not allowed")
    for sysctl in pod_sc.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            out.append(f"spec.securityContext.sysctls: Sysctls: {sysctl.get('name')!r} is unsafe")
    scopes = [("spec.securityContext", pod_sc)] + [
        (f"{where}.securityContext", c.get("securityContext") or {})
        for where, c in _containers(spec)
    ]
    for where, sc in scopes:
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            out.append(f"{where}.seccompProfile.type: Seccomp: Unconfined is forbidden")
        apparmor = (sc.get("appArmorProfile") or {}).get("type")
        if apparmor not in (None, "RuntimeDefault", "Localhost"):
            out.append(f"{where}.appArmorProfile.type: AppArmor: {apparmor!r} is not allowed")
        selinux = sc.get("seLinuxOptions") or {}
        if selinux.get("type", "") not in SELINUX_TYPES:
            out.append(f"{where}.seLinuxOptions.type: SELinux: {selinux['type']!r} is forbidden")
        for field in ("user", "role"):
            if selinux.get(field):
                out.append(f"{where}.seLinuxOptions.{field}: SELinux: must be unset")
    for where, c in _containers(spec):
        sc = c.get("securityContext") or {}
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            out.append(
                f"{where}.securityContext.windowsOptions.hostProcess: HostProcess is forbidden"
            )
        if sc.get("privileged"):
            out.append(f"{where}.securityContext.privileged: Privileged Containers are forbidden")
        added = sorted(set((sc.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES)
        if added:
            out.append(
                f"{where}.securityContext.capabilities.add: Capabilities: "
                f"{', '.join(added)} not allowed"
            )
        if sc.get("procMount", "Default") != "Default":
            out.append(f"{where}.securityContext.procMount: /proc Mount Type: must be Default")
        for j, port in enumerate(c.get("ports") or []):
            if port.get("hostPort"):
                out.append(f"{where}.ports[{j}].hostPort: Host Ports: must be unset or 0")
        for probe in PROBES:
            if _host_set(c.get(probe)):
                out.append(f"{where}.{probe}: Host Probes: host must be unset")
        for hook, action in (c.get("lifecycle") or {}).items():
            if _host_set(action):
                out.append(f"{where}.lifecycle.{hook}: Host Lifecycle Hooks: host must be unset")
    return out


def _restricted(template: dict[str, Any]) -> list[str]:
    spec = template.get("spec") or {}
    pod_sc = spec.get("securityContext") or {}
    windows = (spec.get("os") or {}).get("name") == "windows"
    out = []
    for i, volume in enumerate(spec.get("volumes") or []):
        sources = sorted(set(volume) - {"name"} - RESTRICTED_VOLUME_SOURCES)
        if sources:
            out.append(f"spec.volumes[{i}]: Volume Types: {', '.join(sources)} not allowed")
    pod_non_root = pod_sc.get("runAsNonRoot") is True
    if pod_sc.get("runAsNonRoot") is False:
        out.append("spec.securityContext.runAsNonRoot: Running as Non-root: must be true")
    if pod_sc.get("runAsUser") == 0:
        out.append("spec.securityContext.runAsUser: Running as Non-root user: must not be 0")
    pod_seccomp = (pod_sc.get("seccompProfile") or {}).get("type")
    if pod_seccomp not in (None, "RuntimeDefault", "Localhost") and not windows:
        out.append(f"spec.securityContext.seccompProfile.type: Seccomp: {pod_seccomp!r}")
    for where, c in _containers(spec):
        sc = c.get("securityContext") or {}
        if sc.get("runAsNonRoot") is False or (sc.get("runAsNonRoot") is None and not pod_non_root):
            out.append(f"{where}.securityContext.runAsNonRoot: Running as Non-root: must be true")
        if sc.get("runAsUser") == 0:
            out.append(
                f"{where}.securityContext.runAsUser: Running as Non-root user: must not be 0"
            )
        if windows:
            continue
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(
                f"{where}.securityContext.allowPrivilegeEscalation: Privilege Escalation: "
                "must be false"
            )
        seccomp = (sc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost") and not (
            seccomp is None and pod_seccomp in ("RuntimeDefault", "Localhost")
        ):
            out.append(
                f"{where}.securityContext.seccompProfile.type: Seccomp: must be RuntimeDefault "
                "or Localhost"
            )
        capabilities = sc.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            out.append(f"{where}.securityContext.capabilities.drop: Capabilities: must include ALL")
        added = sorted(set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"})
        if added:
            out.append(
                f"{where}.securityContext.capabilities.add: Capabilities: "
                f"{', '.join(added)} not allowed"
            )
    return out


def violations(obj: dict[str, Any], level: str) -> list[str]:
    """The controls of ``level`` (``baseline`` or ``restricted``, which includes baseline) that
    the pods of ``obj`` violate, one ``<path>: <control>: <detail>`` line each (empty: none).
    Objects without pods (Namespace, Service, ...) have none."""
    if level not in (BASELINE, RESTRICTED):
        raise ValueError(f"unknown Pod Security level {level!r}")
    out = []
    for prefix, template in pod_templates(obj):
        found = _baseline(template)
        if level == RESTRICTED:
            found += _restricted(template)
        out += [f"{prefix}{line}" for line in found]
    return out


# The security contexts the platform's builders write on non-root pods and their containers
# (components/scheduler/podsecurity.py), written out here as the tests' expected values: they
# meet the "restricted" controls above (non-root, seccomp RuntimeDefault, no privilege
# escalation, every capability dropped).
RESTRICTED_POD = {
    "runAsNonRoot": True,
    "runAsUser": 1000,
    "runAsGroup": 1000,
    "fsGroup": 1000,
    "seccompProfile": {"type": "RuntimeDefault"},
}
RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}
