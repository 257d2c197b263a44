"""DRA GPU pools (``nodePools[].dra``, alpha): GPUs handed out through Dynamic Resource
Allocation (the NVIDIA DRA driver's ``gpu.nvidia.com`` devices) instead of the device plugin's
``nvidia.com/gpu``, with Karpenter 1.15 sizing nodes for the claims.

Pure: specs in, problems and dicts out; no Pulumi. How it fits together (docs/dra-pools.md):

- Karpenter: ``settings.awsFeatureGates.draNVIDIAGPU`` (karpenter-provider-aws v1.15.1
  ``charts/karpenter/values.yaml`` L277-281), which the chart's ``karpenter.dra`` helper
  resolves into ``AWS_FEATURE_GATES`` ``DRANVIDIAGPU=true`` and ``IGNORE_DRA_REQUESTS=false``
  (``templates/_helpers.tpl`` L147-174, ``templates/deployment.yaml`` L132, L184-186). With both,
  the cloud provider gives each instance type the ResourceSlices the driver will publish
  (``pkg/cloudprovider/dynamicresources.go`` L29-61, called from ``GetInstanceTypes``
  ``cloudprovider.go`` L250-251): one ``gpu.nvidia.com`` device per GPU, named ``gpu-<i>``,
  from a table scraped per instance type (``pkg/providers/nvidiadra/nvidiadra.go`` L67-100,
  ``pkg/providers/drametadata/zz_generated_gpu_metadata.go``). Karpenter 1.14 has neither gate.
- Kubernetes: Karpenter 1.15 reads ``resource.k8s.io/v1`` (``pkg/cloudprovider/
  dynamicresources.go`` L22; ``pkg/controllers/provisioning/dra.go`` L45), GA in Kubernetes 1.34
  (KEP-4381; kubernetes v1.34.0 CHANGELOG); before, the API is beta and off by default.
- The node: the GPU Operator deploys none of its operands there
  (``nvidia.com/gpu.deploy.operands=false``, set from the NodePool so the node registers with
  it): the operator strips the per-operand ``nvidia.com/gpu.deploy.<operand>`` labels from a node
  not yet labelled ``nvidia.com/gpu.present`` and then sets them to its defaults (gpu-operator
  v26.7.0 ``controllers/nodelabeling_controller.go`` L258-261, ``state_manager.go`` L428-443,
  L476-485), so ``device-plugin=false`` would not survive, while the operands label is not among
  those it strips and turns everything off (``state_manager.go`` L43, L372-378, L457-462). The
  AL2023 NVIDIA AMI brings the driver and the container toolkit; the NVIDIA DRA driver's kubelet
  plugin, selected onto the pool's nodes by ``<domain>/dra=true``, publishes the GPUs. The
  operator's own DRA stack (``gpuCluster.deployCR``) is refused with ``clusterPolicy.deployCR``
  in one cluster (``deployments/gpu-operator/values.yaml`` L565-576), so it would take the device
  plugin off every pool: the project does not use it.
"""

import math
from typing import Any

from ..budget.dra import dra_budget_problems

# The first Karpenter with DRA provisioning for NVIDIA GPUs (module sigs.k8s.io/karpenter
# v1.15.0, github.com/aws/karpenter-provider-aws v1.15.1; see the module docstring).
DRA_MIN_KARPENTER = "1.15.0"
# resource.k8s.io/v1 is GA (served by default) from Kubernetes 1.34.
DRA_MIN_KUBERNETES = "1.34"
# The Karpenter chart setting that turns it on, and the value.
DRA_KARPENTER_SETTING = ("awsFeatureGates", "draNVIDIAGPU")

# The NVIDIA DRA driver's driver and DeviceClass name for whole GPUs (NVIDIA/k8s-dra-driver-gpu
# v0.4.0 deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml; gpu-operator
# v26.7.0 manifests/state-dra-driver/0400_deviceclass-gpu.yaml; karpenter-provider-aws v1.15.1
# pkg/providers/nvidiadra/nvidiadra.go L30).
DRA_GPU_DEVICE_CLASS = "gpu.nvidia.com"
RESOURCE_API = "resource.k8s.io/v1"
# The claim's name in the pod (``resources.claims[].name``) and in ``spec.resourceClaims``.
DRA_CLAIM_NAME = "gpus"
# The GPU Operator's switch for all of its operands on a node (manifests.OPERANDS_LABEL).
OPERANDS_OFF = ("nvidia.com/gpu.deploy.operands", "false")


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.lstrip("v").split("."))


def dra_pool_problems(pool: Any, *, selection_ok: bool = True) -> list[tuple[tuple, str]]:
    """What a DRA pool cannot combine with, read from the pool alone (its types only when its
    selection is valid: ``selection_ok``)."""
    if not getattr(pool, "dra", False):
        return []
    out: list[tuple[tuple, str]] = []
    where = f"DRA pool {pool.name!r}"
    if pool.kind != "gpu":
        what = (
            "an efa pool: Karpenter's EFA DRA gate (draEFA) models the dranet driver's dra.net "
            "devices, which this project does not deploy"
            if pool.kind == "efa"
            else "a cpu pool, which has no GPUs"
        )
        out.append((("dra",), f"only applies to gpu pools; {pool.name!r} is {what}"))
        return out
    if pool.mig_profile is not None:
        out.append(
            (
                ("mig_profile",),
                f"cannot be combined with dra on {where}: MIG devices reach pods through the "
                "device plugin, which a DRA pool's nodes do not run",
            )
        )
    if pool.time_slicing is not None:
        out.append(
            (
                ("time_slicing",),
                f"cannot be combined with dra on {where}: time-slicing is a device plugin "
                "setting, and a DRA pool's nodes do not run the device plugin",
            )
        )
    if pool.ami.family == "bottlerocket":
        out.append(
            (
                ("ami", "family"),
                f"'bottlerocket' cannot serve {where}: its NVIDIA variants run their own device "
                "plugin (bottlerocket-os/bottlerocket#4309) and the GPU Operator deploys nothing "
                "there; use al2023",
            )
        )
    if selection_ok:
        out += dra_budget_problems(pool)
    return out


def dra_platform_problems(
    index: int, pool: Any, *, karpenter_version: str, kubernetes_version: str
) -> list[tuple[tuple, str]]:
    """A DRA pool against the Karpenter and Kubernetes versions the stack deploys."""
    if not getattr(pool, "dra", False):
        return []
    out: list[tuple[tuple, str]] = []
    key = ("node_pools", index, "dra")
    if _version_tuple(karpenter_version) < _version_tuple(DRA_MIN_KARPENTER):
        out.append(
            (
                key,
                f"DRA pool {pool.name!r} needs Karpenter {DRA_MIN_KARPENTER} or newer "
                f"(settings.{'.'.join(DRA_KARPENTER_SETTING)}); this stack deploys Karpenter "
                f"{karpenter_version}, which ignores pods' DRA claims when it sizes nodes",
            )
        )
    if _version_tuple(kubernetes_version) < _version_tuple(DRA_MIN_KUBERNETES):
        out.append(
            (
                key,
                f"DRA pool {pool.name!r} needs Kubernetes {DRA_MIN_KUBERNETES} or newer "
                f"(resource.k8s.io/v1, which Karpenter 1.15 reads); cluster.kubernetesVersion "
                f"is {kubernetes_version}",
            )
        )
    return out


def dra_labels(pool: Any, label_domain: str) -> dict[str, str]:
    """Labels of a DRA pool's nodes: the pool marked DRA (the DRA driver's kubelet plugin
    selects them), and no GPU Operator operand (the module docstring says why)."""
    if not getattr(pool, "dra", False):
        return {}
    key, value = OPERANDS_OFF
    return {f"{label_domain}/dra": "true", key: value}


def karpenter_dra_settings(pools: Any) -> dict[str, Any]:
    """The Karpenter chart ``settings`` a stack with a DRA pool adds (empty without one)."""
    if not any(getattr(p, "dra", False) for p in pools):
        return {}
    group, gate = DRA_KARPENTER_SETTING
    return {group: {gate: True}}


def resource_claim_template(*, name: str, namespace: str, gpus: int) -> dict[str, Any]:
    """A ``ResourceClaimTemplate`` for ``gpus`` whole GPUs of the NVIDIA DRA driver, the shape
    of NVIDIA/k8s-dra-driver-gpu v0.4.0 ``demo/specs/quickstart/v1/gpu-test1.yaml`` with an
    exact count (KAI charges the queue ``count`` GPUs: kai-scheduler v0.17.0
    ``pkg/common/resources/dra.go`` L188-195)."""
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": DRA_GPU_DEVICE_CLASS,
                                "allocationMode": "ExactCount",
                                "count": gpus,
                            },
                        }
                    ]
                }
            }
        },
    }


def dra_device_quota(routed_pools: Any, limit: float) -> dict[str, str]:
    """The ResourceQuota entry that caps a queue namespace's GPU claims when the queue routes to
    a DRA pool: ``gpu.nvidia.com.deviceclass.resource.k8s.io/devices``, the devices the
    namespace's ResourceClaims request from the class (kubernetes v1.36.3
    ``pkg/quota/v1/evaluator/core/resource_claims.go`` L49-53, L269-285: an ``ExactCount``
    request counts its ``count``), at the queue's limit in whole GPUs. A claim asks for no
    ``nvidia.com/gpu``, so the ``requests.nvidia.com/gpu`` entry would not bound it."""
    if not any(getattr(p, "dra", False) for p in routed_pools):
        return {}
    return {
        f"{DRA_GPU_DEVICE_CLASS}.deviceclass.resource.k8s.io/devices": str(math.floor(limit + 1e-9))
    }


def pod_claim(template_name: str) -> dict[str, Any]:
    """The pod's ``spec.resourceClaims`` entry for a claim made from ``template_name``; the
    container names it in ``resources.claims: [{name: DRA_CLAIM_NAME}]``."""
    return {"name": DRA_CLAIM_NAME, "resourceClaimTemplateName": template_name}
