"""NetworkPolicies (issue 22 point 6; pure builders, dicts out): a default-deny and a DNS allow
in every queue namespace, and the allow rules each workload template needs.

Enforced by the VPC CNI's network policy agent, which the cluster turns on through the vpc-cni
add-on's ``enableNetworkPolicy`` (``cluster.addons.vpc_cni_configuration``). Policies are
additive: a pod selected by any policy of a type gets only what some policy allows
(https://kubernetes.io/docs/concepts/services-networking/network-policies/, "The two sorts of
pod isolation"); the namespace's default-deny selects every pod, so a template's own policy is
what opens its traffic. Which pods they must never touch: they live in queue namespaces only,
never a system namespace (``SYSTEM_NAMESPACES`` are refused as queue namespaces,
``constants.RESERVED_NAMESPACES``), and a NetworkPolicy selects pods of its own namespace only.
"""

from collections.abc import Sequence

from .constants import APP_LABEL, JOB_NAME_LABEL, NAMESPACE_NAME_LABEL, QUEUE_LABEL

NETWORK_POLICY_API = "networking.k8s.io/v1"
DEFAULT_DENY_POLICY = "default-deny"
ALLOW_DNS_POLICY = "allow-dns"
# CoreDNS of the EKS add-on: kube-system pods labelled ``k8s-app: kube-dns`` (the add-on's
# Deployment; tests/fixtures/system-pods/coredns.yaml), on port 53 over UDP and TCP.
DNS_NAMESPACE = "kube-system"
DNS_POD_LABELS = {"k8s-app": "kube-dns"}
DNS_PORT = 53
# Egress to S3 for the model fetch. Without a VPC endpoint whose prefix list could be named, a
# NetworkPolicy cannot name S3: its ``ipBlock`` takes CIDRs only, and S3's public ranges are
# hundreds and change (https://ip-ranges.amazonaws.com/ip-ranges.json). So the inference pods
# alone may open HTTPS (TCP 443) to any address; nothing else leaves the namespace.
HTTPS_PORT = 443
ANY_IPV4 = "0.0.0.0/0"
# EKS Pod Identity: the SDK fetches the pod's credentials from the agent DaemonSet on the node
# (hostNetwork) at 169.254.170.23 port 80 (IPv6 [fd00:ec2::23]) (EKS user guide, "Understand
# how EKS Pod Identity works"; aws/eks-pod-identity-agent README). A default-deny egress blocks
# it like any other address, so the model fetch needs it opened; IMDS (169.254.169.254) stays
# closed.
POD_IDENTITY_AGENT_CIDRS = ("169.254.170.23/32", "fd00:ec2::23/128")
POD_IDENTITY_AGENT_PORT = 80


def _policy(name: str, namespace: str, queue: str | None, spec: dict) -> dict:
    metadata: dict = {"name": name, "namespace": namespace}
    if queue is not None:
        metadata["labels"] = {QUEUE_LABEL: queue}
    return {
        "apiVersion": NETWORK_POLICY_API,
        "kind": "NetworkPolicy",
        "metadata": metadata,
        "spec": spec,
    }


def default_deny_policy(namespace: str) -> dict:
    """Every pod of ``namespace`` isolated for ingress and egress: nothing in or out unless
    another policy allows it (EKS Best Practices, network security, "Create a default deny
    policy")."""
    return _policy(
        DEFAULT_DENY_POLICY,
        namespace,
        None,
        {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
    )


def dns_egress_rule() -> dict:
    """Egress to the cluster DNS (kube-system ``k8s-app: kube-dns``) on UDP and TCP 53."""
    return {
        "to": [
            {
                "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: DNS_NAMESPACE}},
                "podSelector": {"matchLabels": dict(DNS_POD_LABELS)},
            }
        ],
        "ports": [
            {"protocol": "UDP", "port": DNS_PORT},
            {"protocol": "TCP", "port": DNS_PORT},
        ],
    }


def allow_dns_policy(namespace: str) -> dict:
    """Every pod of ``namespace`` may query the cluster DNS (and nothing else, by this policy)."""
    return _policy(
        ALLOW_DNS_POLICY,
        namespace,
        None,
        {"podSelector": {}, "policyTypes": ["Egress"], "egress": [dns_egress_rule()]},
    )


def queue_network_policies(namespaces: Sequence[str]) -> list[dict]:
    """The default-deny and the DNS allow of every queue namespace, in order."""
    return [
        policy
        for namespace in namespaces
        for policy in (default_deny_policy(namespace), allow_dns_policy(namespace))
    ]


def namespace_internal_policy(namespace: str) -> dict:
    """Every pod of ``namespace`` may reach, and be reached by, every other pod of it, on any
    port, and nothing outside it (a namespace of its own for one job, such as the NCCL test's
    MPIJob: the launcher reaches the workers over SSH, the workers each other over NCCL)."""
    peers = [{"podSelector": {}}]
    return _policy(
        "allow-same-namespace",
        namespace,
        None,
        {
            "podSelector": {},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": peers}],
            "egress": [{"to": [dict(p) for p in peers]}],
        },
    )


def training_network_policy_template(*, name: str, namespace: str, queue: str) -> dict:
    """The training Job's pods talk to each other only, on every port: torchrun's c10d
    rendezvous (29400) and NCCL's bootstrap and socket transport, which listen on ephemeral
    ports (NCCL has no setting that fixes them), so a port list would break it. The peers are
    the pods of the same Job: the Job controller labels each with ``batch.kubernetes.io/job-name``
    (kubernetes v1.36.3 pkg/controller/job/job_controller.go; k8s.io/api batch/v1
    ``JobNameLabel``). EFA traffic bypasses the kernel network stack and is not subject to it."""
    peers = [{"podSelector": {"matchLabels": {JOB_NAME_LABEL: name}}}]
    return _policy(
        name,
        namespace,
        queue,
        {
            "podSelector": {"matchLabels": {JOB_NAME_LABEL: name}},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": peers}],
            "egress": [{"to": [dict(p) for p in peers]}],
        },
    )


def inference_network_policy_template(
    *,
    name: str,
    namespace: str,
    queue: str,
    ports: Sequence[int],
    client_namespaces: Sequence[str] = (),
) -> dict:
    """The inference pods (``app.kubernetes.io/name: <name>``): ingress on ``ports`` from the
    declared clients only, by default the pods of their own namespace, plus every pod of each
    namespace in ``client_namespaces``; egress HTTPS to any address (the S3 model fetch: see
    ``ANY_IPV4``) and the EKS Pod Identity agent (credentials), DNS through ``allow-dns``."""
    sources: list[dict] = [{"podSelector": {}}]
    for client in client_namespaces:
        if client != namespace:
            sources.append({"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: client}}})
    return _policy(
        name,
        namespace,
        queue,
        {
            "podSelector": {"matchLabels": {APP_LABEL: name}},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [
                {"from": sources, "ports": [{"protocol": "TCP", "port": p} for p in ports]}
            ],
            "egress": [
                {
                    "to": [{"ipBlock": {"cidr": ANY_IPV4}}],
                    "ports": [{"protocol": "TCP", "port": HTTPS_PORT}],
                },
                {
                    "to": [{"ipBlock": {"cidr": c}} for c in POD_IDENTITY_AGENT_CIDRS],
                    "ports": [{"protocol": "TCP", "port": POD_IDENTITY_AGENT_PORT}],
                },
            ],
        },
    )


def isolated_pod_network_policy_template(
    *, name: str, namespace: str, queue: str, pod_labels: dict
) -> dict:
    """A pod that needs no network beyond DNS (the fractional-GPU notebook, reached with
    ``kubectl exec`` through the API server and kubelet, not the pod network): isolated both
    ways, as the namespace's default-deny already does, named beside the pod in its file."""
    return _policy(
        name,
        namespace,
        queue,
        {"podSelector": {"matchLabels": dict(pod_labels)}, "policyTypes": ["Ingress", "Egress"]},
    )
