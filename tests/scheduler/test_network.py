"""Tests for ``eks_gpu_platform.scheduler.network`` (issue 22 point 6): exact NetworkPolicies."""

from eks_gpu_platform.scheduler.network import (
    allow_dns_policy,
    default_deny_policy,
    inference_network_policy_template,
    isolated_pod_network_policy_template,
    queue_network_policies,
    training_network_policy_template,
)

DNS_RULE = {
    "to": [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ],
    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
}


def test_default_deny():
    assert default_deny_policy("research") == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "default-deny", "namespace": "research"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
    }


def test_allow_dns():
    assert allow_dns_policy("research") == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "allow-dns", "namespace": "research"},
        "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [DNS_RULE]},
    }


def test_queue_network_policies_in_namespace_order():
    assert [
        (p["metadata"]["namespace"], p["metadata"]["name"])
        for p in queue_network_policies(["a", "b"])
    ] == [("a", "default-deny"), ("a", "allow-dns"), ("b", "default-deny"), ("b", "allow-dns")]


def test_training_pods_talk_only_to_their_job():
    job = {"podSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "train-x"}}}
    assert training_network_policy_template(name="train-x", namespace="ns", queue="x") == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": "train-x",
            "namespace": "ns",
            "labels": {"kai.scheduler/queue": "x"},
        },
        "spec": {
            "podSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "train-x"}},
            "policyTypes": ["Ingress", "Egress"],
            # Every port: the rendezvous (29400) and NCCL's ephemeral ports.
            "ingress": [{"from": [job]}],
            "egress": [{"to": [job]}],
        },
    }


def _inference(sources: list[dict]) -> dict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "serve-x", "namespace": "ns", "labels": {"kai.scheduler/queue": "x"}},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "serve-x"}},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [
                {
                    "from": sources,
                    "ports": [
                        {"protocol": "TCP", "port": 8000},
                        {"protocol": "TCP", "port": 8001},
                        {"protocol": "TCP", "port": 8002},
                    ],
                }
            ],
            "egress": [
                {
                    "to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}],
                    "ports": [{"protocol": "TCP", "port": 443}],
                },
                {
                    "to": [
                        {"ipBlock": {"cidr": "169.254.170.23/32"}},
                        {"ipBlock": {"cidr": "fd00:ec2::23/128"}},
                    ],
                    "ports": [{"protocol": "TCP", "port": 80}],
                },
            ],
        },
    }


def test_inference_default_clients_are_its_own_namespace():
    assert inference_network_policy_template(
        name="serve-x", namespace="ns", queue="x", ports=[8000, 8001, 8002]
    ) == _inference([{"podSelector": {}}])


def test_inference_declared_clients():
    assert inference_network_policy_template(
        name="serve-x",
        namespace="ns",
        queue="x",
        ports=[8000, 8001, 8002],
        client_namespaces=["gateway", "ns", "apps"],
    ) == _inference(
        [
            {"podSelector": {}},
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gateway"}}},
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "apps"}}},
        ]
    )


def test_isolated_pod():
    assert isolated_pod_network_policy_template(
        name="nb", namespace="ns", queue="x", pod_labels={"app.kubernetes.io/name": "nb"}
    ) == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "nb", "namespace": "ns", "labels": {"kai.scheduler/queue": "x"}},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "nb"}},
            "policyTypes": ["Ingress", "Egress"],
        },
    }
