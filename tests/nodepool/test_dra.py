"""DRA GPU pools (issue 31 point 4): the pool option's refusals, its NodePool (labels, the GPU
budget as a cpu limit), the Karpenter chart setting and the ResourceClaimTemplate, each written
out by hand. Expected values come from the upstream files cited in ``nodepool/dra.py`` and
``budget/dra.py``, not from the code under test."""

import pytest
import yaml
from stack_files import fixture_stack_path

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.karpenter.spec import KarpenterSpec
from eks_gpu_platform.karpenter.values import karpenter_values
from eks_gpu_platform.nodepool.dra import (
    karpenter_dra_settings,
    pod_claim,
    resource_claim_template,
)
from eks_gpu_platform.platform import stack_config_values
from eks_gpu_platform.spec import SpecError

from .pools import DOMAIN, spec

H100 = {"name": "h100-dra", "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"], "dra": True}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {**H100, "kind": "efa", "zone": "us-east-1a"},
            "nodePools[0].dra: only applies to gpu pools; 'h100-dra' is an efa pool: Karpenter's "
            "EFA DRA gate (draEFA) models the dranet driver's dra.net devices, which this "
            "project does not deploy",
        ),
        (
            {**H100, "timeSlicing": "shared-4"},
            "nodePools[0].timeSlicing: cannot be combined with dra on DRA pool 'h100-dra': "
            "time-slicing is a device plugin setting, and a DRA pool's nodes do not run the "
            "device plugin",
        ),
        (
            {**H100, "migProfile": "all-1g.10gb"},
            "nodePools[0].migProfile: cannot be combined with dra on DRA pool 'h100-dra': MIG "
            "devices reach pods through the device plugin, which a DRA pool's nodes do not run",
        ),
        (
            {**H100, "ami": {"family": "bottlerocket"}},
            "nodePools[0].ami.family: 'bottlerocket' cannot serve DRA pool 'h100-dra': its "
            "NVIDIA variants run their own device plugin (bottlerocket-os/bottlerocket#4309) and "
            "the GPU Operator deploys nothing there; use al2023",
        ),
        (
            {"name": "g7e", "instanceTypes": ["g7e.48xlarge"], "dra": True},
            "nodePools[0].dra: pool 'g7e' selects g7e.48xlarge, for which Karpenter 1.15 models "
            "no DRA GPU devices (karpenter-provider-aws v1.15.1 drametadata): it could not size "
            "a node for a GPU claim; select other types",
        ),
        (
            # p4d: 96 vCPUs / 8 GPUs = 12; p5: 192 / 8 = 24.
            {"name": "mixed", "instanceTypes": ["p4d.24xlarge", "p5.48xlarge"], "dra": True},
            "nodePools[0].dra: pool 'mixed' mixes vCPUs per GPU (p4d.24xlarge: 12, p5.48xlarge: "
            "24): a DRA pool's GPU budget is a NodePool cpu limit (its nodes advertise no "
            "nvidia.com/gpu for Karpenter to count), exact only for one ratio; select types with "
            "the same ratio (one pool per ratio)",
        ),
        (
            {**H100, "limits": {"gpus": 16, "cpu": "384"}},
            "nodePools[0].limits.cpu: cannot be set on DRA pool 'h100-dra': its GPU budget is "
            "written as the NodePool's cpu limit (GPUs x vCPUs per GPU); remove limits.cpu",
        ),
        (
            {"name": "c", "kind": "cpu", "dra": True},
            "nodePools[0].dra: only applies to gpu pools; 'c' is a cpu pool, which has no GPUs",
        ),
        (
            # g6f: GPU partitions (EC2 GPU count 0), no whole GPU to budget.
            {"name": "frac", "instanceFamilies": ["g6f"], "dra": True},
            "nodePools[0].dra: pool 'frac' selects no instance type with whole GPUs; a DRA "
            "pool's budget is counted in whole GPUs (g6f and gr6f carry GPU partitions)",
        ),
        (
            # An unknown GPU is reported once, by the selection check, without a traceback.
            {"name": "x", "gpus": ["h1000"], "dra": True},
            "nodePools[0].gpus[0]: 'h1000' is not a known NVIDIA GPU; expected one of a100, a10g, "
            "b200, b300, h100, h200, l4, l40s, rtx-pro-server-6000, t4, t4g; did you mean 'h100'?",
        ),
    ],
    ids=[
        "efa",
        "time-slicing",
        "mig",
        "bottlerocket",
        "no-dra-metadata",
        "mixed-ratio",
        "cpu-limit",
        "cpu-pool",
        "partitions",
        "unknown-gpu",
    ],
)
def test_a_dra_pool_refuses_what_it_cannot_serve(raw, message):
    with pytest.raises(SpecError) as err:
        spec(raw)
    assert err.value.lines == [message]


def test_a_dra_pool_renders_its_gpu_budget_as_a_cpu_limit_and_turns_the_operands_off():
    from eks_gpu_platform.nodepool.manifests import nodepool_manifest

    pool = spec({**H100, "limits": {"gpus": 16}})
    manifest = nodepool_manifest(
        pool, name="h100-dra", node_class="h100-dra", label_domain=DOMAIN, gpu_limit=16
    )
    # 16 GPUs = two p5.48xlarge = 2 x 192 vCPUs; no nvidia.com/gpu limit.
    assert manifest["spec"]["limits"] == {"cpu": "384"}
    assert manifest["spec"]["template"]["metadata"]["labels"] == {
        "example.com/pool": "h100-dra",
        "example.com/preemptible": "false",
        "example.com/dra": "true",
        "nvidia.com/gpu.deploy.operands": "false",
    }


def test_a_pool_without_dra_keeps_its_gpu_limit():
    from eks_gpu_platform.nodepool.manifests import nodepool_manifest

    pool = spec({"name": "h100", "instanceTypes": ["p5.48xlarge"], "limits": {"gpus": 16}})
    manifest = nodepool_manifest(
        pool, name="h100", node_class="h100", label_domain=DOMAIN, gpu_limit=16
    )
    assert manifest["spec"]["limits"] == {"nvidia.com/gpu": "16"}


def test_karpenter_gets_the_nvidia_dra_gate_only_with_a_dra_pool():
    dra = spec({**H100, "limits": {"gpus": 16}})
    plain = spec({"name": "h100", "instanceTypes": ["p5.48xlarge"]})
    assert karpenter_dra_settings([plain]) == {}
    assert karpenter_dra_settings([plain, dra]) == {"awsFeatureGates": {"draNVIDIAGPU": True}}
    values = karpenter_values(
        cluster_name="c",
        queue_name=None,
        spec=KarpenterSpec(),
        node_selector={},
        tolerations=(),
        settings=karpenter_dra_settings([dra]),
    )
    assert values["settings"] == {
        "clusterName": "c",
        "interruptionQueue": "",
        "featureGates": {
            "nodeRepair": False,
            "nodeOverlay": False,
            "reservedCapacity": True,
            "spotToSpotConsolidation": False,
            "staticCapacity": False,
            "capacityBuffer": False,
        },
        "awsFeatureGates": {"draNVIDIAGPU": True},
    }


def test_the_resource_claim_template_asks_the_nvidia_driver_for_whole_gpus():
    assert resource_claim_template(name="gpus-8", namespace="team-a", gpus=8) == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpus-8", "namespace": "team-a"},
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
    assert pod_claim("gpus-8") == {"name": "gpus", "resourceClaimTemplateName": "gpus-8"}


def _dev_with_dra_pool(**cluster) -> dict:
    config = yaml.safe_load(fixture_stack_path("dev").read_text())["config"]
    config["eks-gpu-platform:nodePools"].append(
        {"name": "h100-dra", "kind": "gpu", "instanceTypes": ["p5.48xlarge"], "dra": True}
    )
    config["eks-gpu-platform:cluster"].update(cluster)
    return config


def test_a_dra_pool_is_refused_on_karpenter_1_14_and_kubernetes_1_33():
    config = _dev_with_dra_pool(kubernetesVersion="1.33")
    config["eks-gpu-platform:karpenter"]["chartVersion"] = "1.14.1"
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(stack_config_values(config), config["aws:region"], config)
    dra_lines = [line for line in err.value.lines if ".dra:" in line]
    assert dra_lines == [
        "nodePools[4](h100-dra).dra: DRA pool 'h100-dra' needs Karpenter 1.15.0 or newer "
        "(settings.awsFeatureGates.draNVIDIAGPU); this stack deploys Karpenter 1.14.1, which "
        "ignores pods' DRA claims when it sizes nodes",
        "nodePools[4](h100-dra).dra: DRA pool 'h100-dra' needs Kubernetes 1.34 or newer "
        "(resource.k8s.io/v1, which Karpenter 1.15 reads); cluster.kubernetesVersion is 1.33",
    ]
