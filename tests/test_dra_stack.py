"""A stack with a DRA pool (issue 31 point 4), rendered: the dev fixture stack plus a DRA pool
``train-dra`` (g6.48xlarge: 8 L4 GPUs, 192 vCPUs) and a queue ``dra-team`` routed to it with a
GPU limit of 16. Karpenter is pinned at 1.15.1 for the test (DRA needs 1.15; this branch's pin
moves with the Karpenter 1.15 bump). Every expected value is written out by hand."""

import copy
import dataclasses

import pytest
import yaml
from stack_files import REPO, fixture_stack

from eks_gpu_platform import versions
from eks_gpu_platform.offline.render import (
    example_workloads,
    helm_releases,
    kubernetes_objects,
    render,
    validate,
)
from eks_gpu_platform.policies.offline import evaluate, report

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def dra_stack():
    stack = fixture_stack("dev")
    config = copy.deepcopy(stack.config)
    config["eks-gpu-platform:nodePools"].append(
        {"name": "train-dra", "kind": "gpu", "instanceTypes": ["g6.48xlarge"], "dra": True}
    )
    config["eks-gpu-platform:scheduler"]["queues"].append(
        {
            "name": "dra-team",
            "gpu": {"quota": 16, "limit": 16, "overQuotaWeight": 1},
            "cpu": {"quota": 64, "limit": 128, "overQuotaWeight": 1},
            "memory": {"quota": 256, "limit": 512, "overQuotaWeight": 1},
            "nodePools": ["train-dra"],
            "workloadKind": "training",
        }
    )
    return dataclasses.replace(stack, config=config)


@pytest.fixture(scope="module")
def recording():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(versions, "KARPENTER_VERSION", "1.15.1")
        yield render(REPO, dra_stack())


def test_the_dra_pool_budget_is_a_cpu_limit_and_its_nodes_run_no_operator_operand(recording):
    (pool,) = [
        o
        for o in kubernetes_objects(recording)
        if o["kind"] == "NodePool" and o["metadata"]["name"] == "train-dra"
    ]
    # The queue's 16 GPUs = two g6.48xlarge = 2 x 192 vCPUs.
    assert pool["spec"]["limits"] == {"cpu": "384"}
    assert pool["spec"]["template"]["metadata"]["labels"] == {
        "eks-gpu-platform.io/pool": "train-dra",
        "eks-gpu-platform.io/preemptible": "false",
        "eks-gpu-platform.io/dra": "true",
        "nvidia.com/gpu.deploy.operands": "false",
    }


def test_karpenter_turns_on_nvidia_dra_and_the_driver_runs_on_dra_nodes_only(recording):
    releases = {r["name"]: r for r in helm_releases(recording)}
    assert releases["karpenter"]["values"]["settings"]["awsFeatureGates"] == {"draNVIDIAGPU": True}
    driver = releases["dra-driver-nvidia-gpu"]
    assert (driver["repository"], driver["chart"], driver["version"], driver["namespace"]) == (
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
        "dra-driver-nvidia-gpu",
        "0.4.0",
        "dra-driver-nvidia-gpu",
    )
    assert driver["values"] == {
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "nvidiaDriverRoot": "/",
        "resourceApiVersion": "resource.k8s.io/v1",
        "kubeletPlugin": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "eks-gpu-platform.io/dra",
                                        "operator": "In",
                                        "values": ["true"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [GPU_TOLERATION],
        },
    }


def test_the_dra_stack_passes_every_mandatory_policy(recording):
    lines, has_mandatory = report(evaluate(list(recording.resources)))
    assert not has_mandatory, "\n".join(lines)


def test_a_stack_without_a_dra_pool_has_no_driver_and_no_dra_gate(render_stack):
    releases = {r["name"]: r for r in helm_releases(render_stack("dev"))}
    assert "dra-driver-nvidia-gpu" not in releases
    assert "awsFeatureGates" not in releases["karpenter"]["values"]["settings"]


def test_the_dra_queue_template_claims_its_gpus():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(versions, "KARPENTER_VERSION", "1.15.1")
        template = example_workloads(validate(dra_stack()))["training-dra-team"]
    documents = list(template.documents)
    assert documents[0] == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "train-dra-team-gpus", "namespace": "dra-team"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "ExactCount",
                                "count": 8,
                            },
                        }
                    ]
                }
            }
        },
    }
    (job,) = [d for d in documents if d["kind"] == "Job"]
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [
        {"name": "gpus", "resourceClaimTemplateName": "train-dra-team-gpus"}
    ]
    assert pod["tolerations"] == [GPU_TOLERATION]
    assert pod["containers"][0]["resources"] == {
        "requests": {"cpu": "16", "memory": "64Gi"},
        "limits": {"memory": "64Gi"},
        "claims": [{"name": "gpus"}],
    }
    # No pod of the template asks for the device plugin's resource.
    for document in documents:
        assert "nvidia.com/gpu:" not in yaml.safe_dump(document.get("spec", {}))


def test_the_dra_queue_namespace_quota_caps_its_gpu_claims(recording):
    (quota,) = [
        o
        for o in kubernetes_objects(recording)
        if o["kind"] == "ResourceQuota" and o["metadata"]["namespace"] == "dra-team"
    ]
    # The queue's gpu.limit 16: in nvidia.com/gpu requests (none on a DRA pool) and in devices
    # its ResourceClaims request from the gpu.nvidia.com class.
    assert quota["spec"]["hard"] == {
        "requests.nvidia.com/gpu": "16",
        "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "16",
    }


def test_capacity_json_shows_the_dra_pool_in_cpu_and_dra_devices():
    from capacity_cases import report_args, stack_specs

    from eks_gpu_platform.budget import capacity_document

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(versions, "KARPENTER_VERSION", "1.15.1")
        config = validate(dra_stack())
        document = capacity_document(*stack_specs(config), **report_args(config))
    (entry,) = [p for p in document["pools"] if p["name"] == "train-dra"]
    assert entry == {
        "name": "train-dra",
        "instanceTypes": ["g6.48xlarge"],
        "gpusPerNode": {"g6.48xlarge": 8},
        "advertisedPerNode": {"g6.48xlarge": {}},
        "draDevicesPerNode": {"g6.48xlarge": {"gpu.nvidia.com": 8}},
        "limit": {"train-dra": {"cpu": 384}},
        "nodePools": [
            {"name": "train-dra", "instanceTypes": ["g6.48xlarge"], "gpus": 16, "largestGang": 16}
        ],
        "maxNodes": 2,
        "maxGpus": 16,
    }
    (plan,) = [q for q in document["queues"] if q["name"] == "dra-team"]
    assert (plan["purchasableMax"], plan["limitReachable"]) == (16, True)


def test_a_dra_pool_tells_karpenter_its_nodes_have_no_device_plugin_gpus(recording):
    """Karpenter's instance types count nvidia.com/gpu whatever the node runs: without the
    overlay a pod requesting nvidia.com/gpu would launch a DRA node it can never run on (the
    conformance suite's overlay-units scenario launched one)."""
    overlays = [
        o
        for o in kubernetes_objects(recording)
        if o["kind"] == "NodeOverlay" and o["metadata"]["name"].startswith("train-dra")
    ]
    assert overlays == [
        {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": "train-dra-g6-48xlarge-gpus"},
            "spec": {
                "weight": 100,
                "requirements": [
                    {"key": "eks-gpu-platform.io/pool", "operator": "In", "values": ["train-dra"]},
                    {
                        "key": "node.kubernetes.io/instance-type",
                        "operator": "In",
                        "values": ["g6.48xlarge"],
                    },
                ],
                "capacity": {"nvidia.com/gpu": "0"},
            },
        }
    ]
    releases = {r["name"]: r for r in helm_releases(recording)}
    assert releases["karpenter"]["values"]["settings"]["featureGates"]["nodeOverlay"] is True
