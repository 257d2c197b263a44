"""Compliant baselines, one per resource type, and a compliant stack for the stack rules.

Every builder returns fresh plain data, so a test can change one field and assert the exact
message. Shapes follow what the engine hands a policy: camelCase inputs (Kubernetes objects as
``apiVersion``/``kind``/``metadata``/``spec``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from eks_gpu_platform.policies.rules import StackResource

DOMAIN = "eks-gpu-platform.io"
PROJECT_URN = "urn:pulumi:test::eks-gpu-platform::"
EFA_SG = "sg-0123456789abcdef0"
PLACEMENT_GROUP = "gpu-test-train-efa"

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
EC2NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
KMS_KEY = "aws:kms/key:Key"
SQS_QUEUE = "aws:sqs/queue:Queue"
SQS_QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
IAM_POLICY = "aws:iam/policy:Policy"
IAM_ROLE = "aws:iam/role:Role"
SG_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def _requirement(key: str, operator: str, values: Sequence[str]) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def gpu_nodepool(
    name: str = "inference",
    *,
    pool: str | None = None,
    preemptible: bool = False,
    capacity_types: Sequence[str] = ("on-demand",),
    gpu_limit: int = 16,
    node_class: str | None = None,
    zone: str | None = None,
) -> dict[str, Any]:
    """A compliant NVIDIA GPU NodePool (non-preemptible: WhenEmpty)."""
    requirements = [
        _requirement("karpenter.k8s.aws/instance-gpu-manufacturer", "In", ["nvidia"]),
        _requirement("karpenter.k8s.aws/instance-gpu-name", "In", ["l40s"]),
        _requirement("kubernetes.io/arch", "In", ["amd64"]),
        _requirement("karpenter.sh/capacity-type", "In", capacity_types),
    ]
    if zone is not None:
        requirements.append(_requirement("topology.kubernetes.io/zone", "In", [zone]))
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "disruption": {
                "budgets": [{"nodes": "1"}],
                "consolidateAfter": "5m",
                "consolidationPolicy": ("WhenEmptyOrUnderutilized" if preemptible else "WhenEmpty"),
            },
            "limits": {"nvidia.com/gpu": str(gpu_limit)},
            "template": {
                "metadata": {
                    "labels": {
                        f"{DOMAIN}/pool": pool or name,
                        f"{DOMAIN}/preemptible": "true" if preemptible else "false",
                    }
                },
                "spec": {
                    "expireAfter": "168h" if preemptible else "720h",
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": node_class or name,
                    },
                    "requirements": requirements,
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                    "terminationGracePeriod": "4h" if preemptible else "48h",
                },
            },
        },
    }


def cpu_nodepool(name: str = "general") -> dict[str, Any]:
    """A compliant preemptible CPU NodePool on spot and on-demand."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "disruption": {
                "consolidateAfter": "5m",
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
            },
            "limits": {"cpu": "64", "memory": "256Gi"},
            "template": {
                "metadata": {"labels": {f"{DOMAIN}/pool": name, f"{DOMAIN}/preemptible": "true"}},
                "spec": {
                    "expireAfter": "168h",
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": name,
                    },
                    "requirements": [
                        _requirement("karpenter.k8s.aws/instance-category", "In", ["c", "m"]),
                        _requirement("karpenter.sh/capacity-type", "In", ["spot", "on-demand"]),
                    ],
                    "terminationGracePeriod": "4h",
                },
            },
        },
    }


def ec2nodeclass(name: str = "inference") -> dict[str, Any]:
    """A compliant EC2NodeClass: AL2023 pinned alias, IMDSv2 hop 1, encrypted gp3 root."""
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@v20260903"}],
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "rootVolume": True,
                    "ebs": {
                        "volumeSize": "500Gi",
                        "volumeType": "gp3",
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                }
            ],
            "instanceStorePolicy": "RAID0",
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "role": "KarpenterNodeRole-gpu-test",
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpu-test"}}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpu-test"}}],
        },
    }


def efa_nodeclass(name: str = "train-efa-p5-48xlarge", cards: int = 4) -> dict[str, Any]:
    """A compliant EFA EC2NodeClass: efa-only interfaces, placement group, self-open SG."""
    nodeclass = ec2nodeclass(name)
    spec = nodeclass["spec"]
    spec["associatePublicIPAddress"] = False
    spec["networkInterfaces"] = [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        *(
            {"networkCardIndex": card, "deviceIndex": 1, "interfaceType": "efa-only"}
            for card in range(cards)
        ),
    ]
    spec["placementGroupSelector"] = {"name": PLACEMENT_GROUP}
    spec["securityGroupSelectorTerms"].append({"id": EFA_SG})
    return nodeclass


def launch_template() -> dict[str, Any]:
    """A compliant launch template (pulumi-aws carries ``encrypted`` as a string)."""
    return {
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "ebs": {"encrypted": "true", "volumeSize": 50, "volumeType": "gp3"},
            }
        ],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
    }


def eks_cluster(version: str = "1.36") -> dict[str, Any]:
    """A compliant ``eks:index:Cluster``: KMS-encrypted Secrets, allowlisted public endpoint."""
    return {
        "name": "gpu-test",
        "version": version,
        "authenticationMode": "API",
        "encryptionConfigKeyArn": "arn:aws:kms:us-west-2:123456789012:key/1111",
        "endpointPrivateAccess": True,
        "endpointPublicAccess": True,
        "publicAccessCidrs": ["203.0.113.0/24"],
        "enabledClusterLogTypes": ["api", "audit", "authenticator"],
    }


def aws_eks_cluster() -> dict[str, Any]:
    """A compliant ``aws:eks/cluster:Cluster`` (the resource pulumi-eks creates)."""
    return {
        "name": "gpu-test",
        "version": "1.36",
        "encryptionConfig": {
            "provider": {"keyArn": "arn:aws:kms:us-west-2:123456789012:key/1111"},
            "resources": ["secrets"],
        },
        "vpcConfig": {
            "endpointPrivateAccess": True,
            "endpointPublicAccess": True,
            "publicAccessCidrs": ["203.0.113.0/24"],
        },
        "enabledClusterLogTypes": ["audit", "authenticator"],
    }


def kms_key() -> dict[str, Any]:
    return {"description": "EKS secrets", "enableKeyRotation": True, "deletionWindowInDays": 30}


PLACEMENT_GROUP_TYPE = "aws:ec2/placementGroup:PlacementGroup"


def placement_group(strategy: str = "cluster") -> dict[str, Any]:
    """The EFA pool's placement group as the engine hands it to a stack policy (outputs)."""
    return {"name": PLACEMENT_GROUP, "strategy": strategy, "placementGroupId": "pg-0123456789"}


def sqs_queue() -> dict[str, Any]:
    return {
        "name": "Karpenter-gpu-test",
        "messageRetentionSeconds": 300,
        "sqsManagedSseEnabled": True,
    }


QUEUE_ARN = "arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-test"


def queue_policy_document() -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Sid": "SqsWrite",
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": QUEUE_ARN,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": QUEUE_ARN,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
        ],
    }


def queue_policy(document: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "queueUrl": "https://sqs.us-west-2.amazonaws.com/123456789012/Karpenter-gpu-test",
        "policy": json.dumps(document or queue_policy_document()),
    }


def iam_document() -> dict[str, Any]:
    """Least-privilege statements in the shape of Karpenter's controller policy."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowPassingInstanceRole",
                "Effect": "Allow",
                "Action": "iam:PassRole",
                "Resource": "arn:aws:iam::123456789012:role/KarpenterNodeRole-gpu-test",
                "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com"]}},
            },
            {
                "Sid": "AllowRegionalReadActions",
                "Effect": "Allow",
                "Action": ["ec2:DescribeInstances", "ec2:DescribeSubnets"],
                "Resource": "*",
            },
            {
                "Sid": "DenyEverythingElse",
                "Effect": "Deny",
                "Action": "*",
                "Resource": "*",
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
        ],
    }


def iam_policy(document: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": "KarpenterControllerTestPolicy",
        "path": "/",
        "policy": json.dumps(document or iam_document()),
    }


def helm_release(chart: str, version: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {
        "name": chart.rsplit("/", 1)[-1],
        "chart": chart,
        "version": version,
        "namespace": "kube-system",
    }
    if values is not None:
        props["values"] = values
    return props


def karpenter_release(version: str = "1.14.1", queue: str = "Karpenter-gpu-test") -> dict:
    return helm_release(
        "oci://public.ecr.aws/karpenter/karpenter",
        version,
        {"settings": {"clusterName": "gpu-test", "interruptionQueue": queue}},
    )


def gpu_operator_release(driver: bool = False, toolkit: bool = False) -> dict[str, Any]:
    props = helm_release(
        "gpu-operator",
        "v26.7.0",
        {"driver": {"enabled": driver}, "toolkit": {"enabled": toolkit}},
    )
    props["repositoryOpts"] = {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    props["namespace"] = "gpu-operator"
    return props


def kai_queue(
    name: str,
    pools: str | None,
    *,
    quota: float = 0,
    limit: float = 0,
    parent: str | None = None,
) -> dict[str, Any]:
    """A KAI ``Queue`` routing to ``pools`` (the annotation's comma-separated value)."""
    metadata: dict[str, Any] = {"name": name}
    if pools is not None:
        metadata["annotations"] = {f"{DOMAIN}/node-pools": pools}
    spec: dict[str, Any] = {
        "resources": {
            "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
            "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
            "gpu": {"quota": quota, "limit": limit, "overQuotaWeight": 1},
        }
    }
    if parent is not None:
        spec["parentQueue"] = parent
    return {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": metadata,
        "spec": spec,
    }


def sg_rule(sg: str = EFA_SG, referenced: str = EFA_SG) -> dict[str, Any]:
    return {"securityGroupId": sg, "referencedSecurityGroupId": referenced, "ipProtocol": "-1"}


def resource(type_: str, name: str, props: dict[str, Any]) -> StackResource:
    """A stack resource with a URN shaped like the engine's."""
    return StackResource(type_, name, f"{PROJECT_URN}{type_}::{name}", props)


def compliant_stack() -> list[StackResource]:
    """A stack every stack rule accepts.

    An EKS 1.36 cluster; Karpenter 1.14.1 (and its CRDs) with an interruption queue (and the
    queue, and its TLS-only policy); a split EFA pool ``train-efa`` (two NodePools of 16 GPUs on
    reserved/on-demand, one zone, a cluster placement group, self-open SG); a preemptible spot
    pool ``train-spot`` (32 GPUs); the GPU Operator with driver and toolkit off; and KAI leaf
    queues under one parent admitting exactly that.
    """
    return [
        resource(EKS_CLUSTER, "platform-cluster-eks", eks_cluster()),
        resource(
            HELM_RELEASE,
            "platform-karpenter-crd",
            helm_release("oci://public.ecr.aws/karpenter/karpenter-crd", "1.14.1"),
        ),
        resource(HELM_RELEASE, "platform-karpenter-chart", karpenter_release()),
        resource(SQS_QUEUE, "platform-karpenter-interruption-queue", sqs_queue()),
        resource(SQS_QUEUE_POLICY, "platform-karpenter-interruption-queue-policy", queue_policy()),
        resource(PLACEMENT_GROUP_TYPE, "platform-pool-train-efa-pg", placement_group()),
        resource(HELM_RELEASE, "platform-gpu-operator-chart", gpu_operator_release()),
        resource(SG_INGRESS, "platform-pool-train-efa-efa-self-in", sg_rule()),
        resource(SG_EGRESS, "platform-pool-train-efa-efa-self-out", sg_rule()),
        resource(
            EC2NODECLASS,
            "platform-pool-train-efa-p5-48xlarge-class",
            efa_nodeclass("train-efa-p5-48xlarge"),
        ),
        resource(
            EC2NODECLASS,
            "platform-pool-train-efa-p5e-48xlarge-class",
            efa_nodeclass("train-efa-p5e-48xlarge"),
        ),
        resource(EC2NODECLASS, "platform-pool-train-spot-class", ec2nodeclass("train-spot")),
        resource(
            NODEPOOL,
            "platform-pool-train-efa-p5-48xlarge",
            gpu_nodepool(
                "train-efa-p5-48xlarge",
                pool="train-efa",
                capacity_types=("reserved", "on-demand"),
                gpu_limit=16,
                zone="us-west-2a",
            ),
        ),
        resource(
            NODEPOOL,
            "platform-pool-train-efa-p5e-48xlarge",
            gpu_nodepool(
                "train-efa-p5e-48xlarge",
                pool="train-efa",
                capacity_types=("reserved", "on-demand"),
                gpu_limit=16,
                zone="us-west-2a",
            ),
        ),
        resource(
            NODEPOOL,
            "platform-pool-train-spot",
            gpu_nodepool("train-spot", preemptible=True, capacity_types=("spot",), gpu_limit=32),
        ),
        # Unlimited parent: KAI reads a Queue's gpu.limit as is (0 would admit nothing to it or
        # its children: kai-scheduler v0.16.8 pkg/scheduler/plugins/proportion/proportion.go
        # L344-347, capacity_policy/max_allowed_check.go L19, L51-64); -1 is unlimited.
        resource(
            KAI_QUEUE, "platform-queue-research", kai_queue("research", None, quota=-1, limit=-1)
        ),
        resource(
            KAI_QUEUE,
            "platform-queue-llm",
            kai_queue("llm", "train-spot", quota=24, limit=32, parent="research"),
        ),
        resource(
            KAI_QUEUE,
            "platform-queue-vision",
            kai_queue("vision", "train-efa", quota=32, limit=32, parent="research"),
        ),
    ]


def props_of(stack: list[StackResource], name: str) -> dict[str, Any]:
    """The (mutable) props of the stack resource with logical name ``name``."""
    matches = [r for r in stack if r.name == name]
    assert len(matches) == 1, f"{len(matches)} resources named {name!r}"
    return matches[0].props  # type: ignore[return-value]


def without(stack: list[StackResource], name: str) -> list[StackResource]:
    return [r for r in stack if r.name != name]


def urn_of(stack: list[StackResource], name: str) -> str:
    return next(r.urn for r in stack if r.name == name)


DELETE = object()


def change(obj: Any, path: Sequence[Any], value: Any) -> Any:
    """Set (or, with ``DELETE``, remove) ``obj[path[0]][path[1]]...``; returns ``obj``."""
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj
