import pytest
from policy_baselines import DELETE, DOMAIN, change, cpu_nodepool, gpu_nodepool

from eks_gpu_platform.policies.rules.gpu_nodepool_taint_and_pool_label import RULE, check

CONFIG = RULE.config()
TEMPLATE = ("spec", "template", "spec")
LABELS = ("spec", "template", "metadata", "labels")
NO_TAINT = (
    'NodePool "inference" launches NVIDIA GPU nodes without the nvidia.com/gpu:NoSchedule taint '
    "in spec.template.spec.taints; pods that need no GPU would land on (and keep alive) GPU nodes"
)
NO_LABEL = (
    f'NodePool "inference" has no "{DOMAIN}/pool" label in spec.template.metadata.labels; '
    "workloads and queues cannot target the pool before it has nodes"
)


def test_baselines_are_compliant():
    assert check(gpu_nodepool(), CONFIG) == []
    assert check(cpu_nodepool(), CONFIG) == []


def test_label_domain_defaults_to_the_platforms():
    assert CONFIG == {"labelDomain": "eks-gpu-platform.io"}


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ((*TEMPLATE, "taints"), DELETE, NO_TAINT),
        ((*TEMPLATE, "taints", 0, "effect"), "PreferNoSchedule", NO_TAINT),
        ((*TEMPLATE, "taints", 0, "key"), "gpu", NO_TAINT),
        ((*LABELS, f"{DOMAIN}/pool"), DELETE, NO_LABEL),
        ((*LABELS, f"{DOMAIN}/pool"), "", NO_LABEL),
    ],
    ids=["no-taints", "prefer-no-schedule", "other-key", "no-pool-label", "empty-pool-label"],
)
def test_violations(path, value, expected):
    assert check(change(gpu_nodepool(), path, value), CONFIG) == [expected]


def test_label_domain_is_configurable():
    config = RULE.config({"labelDomain": "example.com"})
    assert check(gpu_nodepool(), config) == [
        'NodePool "inference" has no "example.com/pool" label in spec.template.metadata.labels; '
        "workloads and queues cannot target the pool before it has nodes"
    ]


@pytest.mark.parametrize(
    "requirements",
    [
        [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]}],
        [{"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["h100"]}],
        [{"key": "karpenter.k8s.aws/instance-gpu-manufacturer", "operator": "Exists"}],
    ],
    ids=["gpu-count", "gpu-name", "manufacturer-exists"],
)
def test_gpu_pools_recognised_by_requirements(requirements):
    props = change(cpu_nodepool("inference"), (*TEMPLATE, "requirements"), requirements)
    assert check(props, CONFIG) == [NO_TAINT]


def test_gpu_pools_recognised_by_gpu_limit():
    props = change(cpu_nodepool("inference"), ("spec", "limits", "nvidia.com/gpu"), "8")
    assert check(props, CONFIG) == [NO_TAINT]


def test_amd_gpu_pools_are_not_nvidia_pools():
    requirements = [
        {"key": "karpenter.k8s.aws/instance-gpu-manufacturer", "operator": "In", "values": ["amd"]},
        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["v520"]},
    ]
    props = change(gpu_nodepool(), (*TEMPLATE, "requirements"), requirements)
    props["spec"]["limits"] = {}
    assert check(change(props, (*TEMPLATE, "taints"), []), CONFIG) == []
