"""Issue 13, items 7 and 8: the correctness policies detect their intent (several
violating mutations of the compliant stack each, and compliant controls); see intent_cases.py."""

from typing import Any

import pytest
from intent_cases import (
    EFA_NC,
    EFA_NP,
    LABELS,
    NP,
    SPOT_NC,
    TEMPLATE,
    TYPE,
    V,
    add,
    at,
    both,
    drop,
    found_messages,
    gpu_pool_by,
    params,
    req,
)
from policy_baselines import EC2NODECLASS, NODEPOOL, cpu_nodepool, efa_nodeclass, gpu_nodepool

CASES: list[Any] = [
    # gpu-nodepool-taint-and-pool-label
    ("gpu-nodepool-taint-and-pool-label", "no-taint", at(NP, *TEMPLATE, "taints", value=[]), V),
    (
        "gpu-nodepool-taint-and-pool-label",
        "prefer-no-schedule",
        at(
            NP, *TEMPLATE, "taints", value=[{"key": "nvidia.com/gpu", "effect": "PreferNoSchedule"}]
        ),
        V,
    ),
    (
        "gpu-nodepool-taint-and-pool-label",
        "no-pool-label",
        at(NP, *LABELS, "eks-gpu-platform.io/pool", delete=True),
        V,
    ),
    (
        "gpu-nodepool-taint-and-pool-label",
        "gpu-by-instance-type-only",
        gpu_pool_by(req(TYPE, "In", "p5.48xlarge")),
        V,
    ),
    (
        "gpu-nodepool-taint-and-pool-label",
        "gpu-by-category",
        gpu_pool_by(req("karpenter.k8s.aws/instance-category", "In", "g")),
        V,
    ),
    (
        "gpu-nodepool-taint-and-pool-label",
        "control-cpu-pool",
        add(NODEPOOL, "platform-pool-y", cpu_nodepool("y")),
        [],
    ),
    (
        "gpu-nodepool-taint-and-pool-label",
        "control-amd-gpu-only",
        gpu_pool_by(req("karpenter.k8s.aws/instance-gpu-manufacturer", "In", "amd")),
        [],
    ),
    # nodepool-nodeclass-exists
    (
        "nodepool-nodeclass-exists",
        "dangling-name",
        at(NP, *TEMPLATE, "nodeClassRef", "name", value="nope"),
        V,
    ),
    (
        "nodepool-nodeclass-exists",
        "wrong-group",
        at(NP, *TEMPLATE, "nodeClassRef", "group", value="karpenter.sh"),
        V,
    ),
    ("nodepool-nodeclass-exists", "class-removed", drop(SPOT_NC), V),
    (
        "nodepool-nodeclass-exists",
        "control-second-pool-on-a-defined-class",
        add(NODEPOOL, "platform-pool-z", gpu_nodepool("z", node_class="train-spot")),
        [],
    ),
    # efa-nodepool-topology
    (
        "efa-nodepool-topology",
        "no-placement-group",
        at(EFA_NC, "spec", "placementGroupSelector", delete=True),
        V,
    ),
    (
        "efa-nodepool-topology",
        "spread-placement-group",
        at("platform-pool-train-efa-pg", "strategy", value="spread"),
        V,
    ),
    (
        "efa-nodepool-topology",
        "partition-group-by-id",
        both(
            at(EFA_NC, "spec", "placementGroupSelector", value={"id": "pg-0123456789"}),
            at("platform-pool-train-efa-pg", "strategy", value="partition"),
        ),
        V,
    ),
    (
        "efa-nodepool-topology",
        "two-zones",
        at(EFA_NP, *TEMPLATE, "requirements", -1, "values", value=["us-west-2a", "us-west-2b"]),
        V,
    ),
    ("efa-nodepool-topology", "no-self-egress", drop("platform-pool-train-efa-efa-self-out"), V),
    (
        "efa-nodepool-topology",
        "control-group-outside-the-stack",
        drop("platform-pool-train-efa-pg"),
        [],
    ),
    # efa-nodeclass-no-public-ip
    (
        "efa-nodeclass-no-public-ip",
        "public-ip",
        at(EFA_NC, "spec", "associatePublicIPAddress", value=True),
        V,
    ),
    (
        "efa-nodeclass-no-public-ip",
        "public-ip-as-string",
        at(
            "platform-pool-train-efa-p5e-48xlarge-class",
            "spec",
            "associatePublicIPAddress",
            value="true",
        ),
        V,
    ),
    (
        "efa-nodeclass-no-public-ip",
        "control-non-efa-class",
        at(SPOT_NC, "spec", "associatePublicIPAddress", value=True),
        [],
    ),
    (
        "efa-nodeclass-no-public-ip",
        "new-single-efa-class-with-public-ip",
        add(
            EC2NODECLASS,
            "platform-pool-extra-class",
            {
                **efa_nodeclass("extra", cards=1),
                "spec": {
                    **efa_nodeclass("extra", cards=1)["spec"],
                    "associatePublicIPAddress": True,
                },
            },
        ),
        V,
    ),
    # interruption-queue-for-spot-or-reserved
    (
        "interruption-queue-for-spot-or-reserved",
        "no-queue-setting",
        at("platform-karpenter-chart", "values", "settings", "interruptionQueue", delete=True),
        V,
    ),
    (
        "interruption-queue-for-spot-or-reserved",
        "queue-not-in-the-stack",
        at(
            "platform-karpenter-chart",
            "values",
            "settings",
            "interruptionQueue",
            value="Karpenter-other",
        ),
        V,
    ),
    (
        "interruption-queue-for-spot-or-reserved",
        "queue-removed",
        drop("platform-karpenter-interruption-queue"),
        V,
    ),
    (
        "interruption-queue-for-spot-or-reserved",
        "blank-queue",
        at("platform-karpenter-chart", "values", "settings", "interruptionQueue", value=" "),
        V,
    ),
    (
        "interruption-queue-for-spot-or-reserved",
        "control-queue-known-by-url",
        both(
            at("platform-karpenter-interruption-queue", "name", delete=True),
            at(
                "platform-karpenter-interruption-queue",
                "url",
                value="https://sqs.us-west-2.amazonaws.com/123456789012/Karpenter-gpu-test",
            ),
        ),
        [],
    ),
    # karpenter-supports-kubernetes-version
    (
        "karpenter-supports-kubernetes-version",
        "chart-too-old",
        at("platform-karpenter-chart", "version", value="1.11.0"),
        V,
    ),
    (
        "karpenter-supports-kubernetes-version",
        "unknown-kubernetes",
        at("platform-cluster-eks-cluster", "version", value="1.99"),
        V,
    ),
    (
        "karpenter-supports-kubernetes-version",
        "chart-not-a-version",
        at("platform-karpenter-chart", "version", value="latest"),
        V,
    ),
    (
        "karpenter-supports-kubernetes-version",
        "control-older-kubernetes",
        both(
            at("platform-cluster-eks", "version", value="1.30"),
            at("platform-cluster-eks-cluster", "version", value="1.30"),
        ),
        [],
    ),
    # karpenter-crd-matches-controller
    (
        "karpenter-crd-matches-controller",
        "crd-older",
        at("platform-karpenter-crd", "version", value="1.13.0"),
        V,
    ),
    (
        "karpenter-crd-matches-controller",
        "crd-release-missing-while-skipping",
        both(
            drop("platform-karpenter-crd"), at("platform-karpenter-chart", "skipCrds", value=True)
        ),
        V,
    ),
    (
        "karpenter-crd-matches-controller",
        "controller-unversioned",
        at("platform-karpenter-chart", "version", delete=True),
        V,
    ),
    (
        "karpenter-crd-matches-controller",
        "control-chart-installs-its-crds",
        drop("platform-karpenter-crd"),
        [],
    ),
    # gpu-operator-preinstalled-driver
    (
        "gpu-operator-preinstalled-driver",
        "driver-on",
        at("platform-gpu-operator-chart", "values", "driver", "enabled", value=True),
        V,
    ),
    (
        "gpu-operator-preinstalled-driver",
        "toolkit-default",
        at("platform-gpu-operator-chart", "values", "toolkit", delete=True),
        V,
    ),
    (
        "gpu-operator-preinstalled-driver",
        "bottlerocket-and-driver-default",
        both(
            at("platform-gpu-operator-chart", "values", "driver", delete=True),
            at(SPOT_NC, "spec", "amiSelectorTerms", value=[{"alias": "bottlerocket@v1.65.0"}]),
        ),
        V,
    ),
    (
        "gpu-operator-preinstalled-driver",
        "control-custom-ami",
        both(
            at("platform-gpu-operator-chart", "values", "driver", "enabled", value=True),
            at(SPOT_NC, "spec", "amiSelectorTerms", value=[{"id": "ami-0123"}]),
        ),
        [],
    ),
]
EXPECTED: dict[str, list[str]] = {
    "efa-nodeclass-no-public-ip/new-single-efa-class-with-public-ip": [
        'EC2NodeClass "extra" has 1 efa-only interfaces and associatePublicIPAddress: true; EC2 '
        "rejects such launches (InvalidParameterCombination), so set it to false and use private "
        "subnets",
    ],
    "gpu-operator-preinstalled-driver/bottlerocket-and-driver-default": [
        'GPU Operator release "gpu-operator" has values.driver.enabled not set (the chart '
        'defaults to true), but every GPU EC2NodeClass ("train-efa-p5-48xlarge", '
        '"train-efa-p5e-48xlarge", "train-spot") uses an AL2023 or Bottlerocket AMI alias whose '
        "NVIDIA AMI already ships the NVIDIA driver; set driver.enabled: false",
    ],
    "gpu-nodepool-taint-and-pool-label/no-taint": [
        'NodePool "train-spot" launches NVIDIA GPU nodes without the nvidia.com/gpu:NoSchedule '
        "taint in spec.template.spec.taints; pods that need no GPU would land on (and keep "
        "alive) GPU nodes",
    ],
    "gpu-nodepool-taint-and-pool-label/prefer-no-schedule": [
        'NodePool "train-spot" launches NVIDIA GPU nodes without the nvidia.com/gpu:NoSchedule '
        "taint in spec.template.spec.taints; pods that need no GPU would land on (and keep "
        "alive) GPU nodes",
    ],
    "gpu-nodepool-taint-and-pool-label/no-pool-label": [
        'NodePool "train-spot" has no "eks-gpu-platform.io/pool" label in '
        "spec.template.metadata.labels; workloads and queues cannot target the pool before it "
        "has nodes",
    ],
    "gpu-nodepool-taint-and-pool-label/gpu-by-instance-type-only": [
        'NodePool "x" launches NVIDIA GPU nodes without the nvidia.com/gpu:NoSchedule taint in '
        "spec.template.spec.taints; pods that need no GPU would land on (and keep alive) GPU "
        "nodes",
    ],
    "gpu-nodepool-taint-and-pool-label/gpu-by-category": [
        'NodePool "x" launches NVIDIA GPU nodes without the nvidia.com/gpu:NoSchedule taint in '
        "spec.template.spec.taints; pods that need no GPU would land on (and keep alive) GPU "
        "nodes",
    ],
    "nodepool-nodeclass-exists/dangling-name": [
        'NodePool "train-spot" references EC2NodeClass "nope", which this stack does not '
        "define; Karpenter never launches nodes for it",
    ],
    "nodepool-nodeclass-exists/wrong-group": [
        'NodePool "train-spot": nodeClassRef is group "karpenter.sh", kind "EC2NodeClass"; '
        'expected group "karpenter.k8s.aws", kind "EC2NodeClass"',
    ],
    "nodepool-nodeclass-exists/class-removed": [
        'NodePool "train-spot" references EC2NodeClass "train-spot", which this stack does '
        "not define; Karpenter never launches nodes for it",
    ],
    "efa-nodepool-topology/no-placement-group": [
        'EC2NodeClass "train-efa-p5-48xlarge" has 4 efa-only interfaces but no '
        "placementGroupSelector (name or id); EFA nodes must share a cluster placement group",
    ],
    "efa-nodepool-topology/spread-placement-group": [
        'EC2NodeClass "train-efa-p5-48xlarge" has efa-only interfaces but its placement group '
        '"platform-pool-train-efa-pg" has strategy "spread", not "cluster"; only a cluster '
        "group keeps EFA nodes on one low-latency network spine",
        'EC2NodeClass "train-efa-p5e-48xlarge" has efa-only interfaces but its placement group '
        '"platform-pool-train-efa-pg" has strategy "spread", not "cluster"; only a cluster '
        "group keeps EFA nodes on one low-latency network spine",
    ],
    "efa-nodepool-topology/partition-group-by-id": [
        'EC2NodeClass "train-efa-p5-48xlarge" has efa-only interfaces but its placement group '
        '"platform-pool-train-efa-pg" has strategy "partition", not "cluster"; only a '
        "cluster group keeps EFA nodes on one low-latency network spine",
        'EC2NodeClass "train-efa-p5e-48xlarge" has efa-only interfaces but its placement group '
        '"platform-pool-train-efa-pg" has strategy "partition", not "cluster"; only a '
        "cluster group keeps EFA nodes on one low-latency network spine",
    ],
    "efa-nodepool-topology/two-zones": [
        'NodePool "train-efa-p5-48xlarge" uses EFA EC2NodeClass "train-efa-p5-48xlarge" but '
        'pins 2 zones ("us-west-2a", "us-west-2b"); require exactly one '
        "topology.kubernetes.io/zone so its nodes can join one cluster placement group",
    ],
    "efa-nodepool-topology/no-self-egress": [
        'EC2NodeClass "train-efa-p5-48xlarge" has efa-only interfaces but selects security '
        'groups "sg-0123456789abcdef0" with both an all-traffic self-referencing ingress and '
        "egress rule in this stack; EFA traffic between its nodes is dropped",
        'EC2NodeClass "train-efa-p5e-48xlarge" has efa-only interfaces but selects security '
        'groups "sg-0123456789abcdef0" with both an all-traffic self-referencing ingress and '
        "egress rule in this stack; EFA traffic between its nodes is dropped",
    ],
    "efa-nodeclass-no-public-ip/public-ip": [
        'EC2NodeClass "train-efa-p5-48xlarge" has 4 efa-only interfaces and '
        "associatePublicIPAddress: true; EC2 rejects such launches "
        "(InvalidParameterCombination), so set it to false and use private subnets",
    ],
    "efa-nodeclass-no-public-ip/public-ip-as-string": [
        'EC2NodeClass "train-efa-p5e-48xlarge" has 4 efa-only interfaces and '
        "associatePublicIPAddress: true; EC2 rejects such launches "
        "(InvalidParameterCombination), so set it to false and use private subnets",
    ],
    "interruption-queue-for-spot-or-reserved/no-queue-setting": [
        'Karpenter release "karpenter" sets no values.settings.interruptionQueue, but '
        'NodePools "train-efa-p5-48xlarge", "train-efa-p5e-48xlarge", "train-spot" allow '
        "spot or reserved capacity; their interruptions and reservation expiries would not be "
        "drained ahead of time",
    ],
    "interruption-queue-for-spot-or-reserved/queue-not-in-the-stack": [
        'Karpenter release "karpenter" names interruption queue "Karpenter-other", but no '
        'SQS queue of that name is in this stack (its queues: "Karpenter-gpu-test"); NodePools '
        '"train-efa-p5-48xlarge", "train-efa-p5e-48xlarge", "train-spot" allow spot or '
        "reserved capacity, and Karpenter would read interruptions from a queue nothing delivers "
        "them to",
    ],
    "interruption-queue-for-spot-or-reserved/queue-removed": [
        'Karpenter release "karpenter" names interruption queue "Karpenter-gpu-test", but no '
        'SQS queue of that name is in this stack; NodePools "train-efa-p5-48xlarge", '
        '"train-efa-p5e-48xlarge", "train-spot" allow spot or reserved capacity, and '
        "Karpenter would read interruptions from a queue nothing delivers them to",
    ],
    "interruption-queue-for-spot-or-reserved/blank-queue": [
        'Karpenter release "karpenter" sets no values.settings.interruptionQueue, but '
        'NodePools "train-efa-p5-48xlarge", "train-efa-p5e-48xlarge", "train-spot" allow '
        "spot or reserved capacity; their interruptions and reservation expiries would not be "
        "drained ahead of time",
    ],
    "karpenter-supports-kubernetes-version/chart-too-old": [
        'Karpenter release "karpenter" pins chart "1.11.0", but EKS cluster "gpu-test" '
        "runs Kubernetes 1.36, which needs Karpenter 1.13.0 or newer",
    ],
    "karpenter-supports-kubernetes-version/unknown-kubernetes": [
        'EKS cluster "gpu-test" runs Kubernetes "1.99", which is not in the Karpenter '
        "compatibility table (supported: 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)",
    ],
    "karpenter-supports-kubernetes-version/chart-not-a-version": [
        'Karpenter release "karpenter" has chart version "latest", not a version this policy '
        "can compare",
    ],
    "karpenter-crd-matches-controller/crd-older": [
        'karpenter-crd release "karpenter-crd" pins chart "1.13.0" but Karpenter release '
        '"karpenter" pins "1.14.1"; install and upgrade both at the same version',
    ],
    "karpenter-crd-matches-controller/crd-release-missing-while-skipping": [
        'Karpenter release "karpenter" sets skipCrds, but this stack has no karpenter-crd '
        "release: NodePool, EC2NodeClass and NodeClaim would not exist (or keep an older "
        "version's schema)",
    ],
    "karpenter-crd-matches-controller/controller-unversioned": [
        'karpenter-crd release "karpenter-crd" pins chart "1.14.1" but Karpenter release '
        '"karpenter" pins not set; install and upgrade both at the same version',
    ],
    "gpu-operator-preinstalled-driver/driver-on": [
        'GPU Operator release "gpu-operator" has values.driver.enabled true, but every GPU '
        'EC2NodeClass ("train-efa-p5-48xlarge", "train-efa-p5e-48xlarge", "train-spot") '
        "uses an AL2023 or Bottlerocket AMI alias whose NVIDIA AMI already ships the NVIDIA "
        "driver; set driver.enabled: false",
    ],
    "gpu-operator-preinstalled-driver/toolkit-default": [
        'GPU Operator release "gpu-operator" has values.toolkit.enabled not set (the chart '
        'defaults to true), but every GPU EC2NodeClass ("train-efa-p5-48xlarge", '
        '"train-efa-p5e-48xlarge", "train-spot") uses an AL2023 or Bottlerocket AMI alias '
        "whose NVIDIA AMI already ships the NVIDIA container toolkit; set toolkit.enabled: false",
    ],
}


@pytest.mark.parametrize(("policy", "mutate", "expected"), params(CASES, EXPECTED))
def test_policy_intent(policy, mutate, expected):
    assert found_messages(policy, mutate) == expected
