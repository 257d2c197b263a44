"""Every pinned chart, image, AMI and API version, with the repository it comes from.

This is the only place a version is written down. Components, the offline render, the
policy pack and the README's versions table all read from here. To bump Karpenter, change
``KARPENTER`` *and* review ``eks_gpu_platform.karpenter.controller_policies`` against the
new release's CloudFormation reference in the same change (see README, "Bumping Karpenter").
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Chart:
    """A Helm chart pinned to one version."""

    name: str
    repository: str
    version: str

    @property
    def reference(self) -> str:
        """The chart as `helm` takes it: an ``oci://`` reference or ``repo/chart``."""
        if self.repository.startswith("oci://"):
            return f"{self.repository}/{self.name}"
        return self.name


# 1.15.1 (aws/karpenter-provider-aws v1.15.1): the same provider code as v1.15.0 on the core
# sigs.k8s.io/karpenter v1.15.1 (the two module zips differ only in go.mod and release
# tooling). Upgrading from 1.14.1: docs/lifecycle.md, "Upgrading Karpenter 1.14 to 1.15".
KARPENTER_VERSION = "1.15.1"
KARPENTER = Chart(
    name="karpenter",
    repository="oci://public.ecr.aws/karpenter",
    version=KARPENTER_VERSION,
)
KARPENTER_CRD = Chart(
    name="karpenter-crd",
    repository="oci://public.ecr.aws/karpenter",
    version=KARPENTER_VERSION,
)
GPU_OPERATOR = Chart(
    name="gpu-operator",
    repository="https://helm.ngc.nvidia.com/nvidia",
    version="v26.7.0",
)
EFA_DEVICE_PLUGIN = Chart(
    name="aws-efa-k8s-device-plugin",
    repository="https://aws.github.io/eks-charts",
    version="0.5.30",
)
# The NVIDIA DRA driver for GPUs, installed only for DRA pools (nodePools[].dra). 0.4.0 is the
# newest release tag of NVIDIA/k8s-dra-driver-gpu (now kubernetes-sigs/dra-driver-nvidia-gpu,
# 2026-05-15); its docs/install.md installs this OCI chart with ``--version 0.4.0``. The GPU
# Operator v26.7.0 bundles the driver's image v0.5.0 for its own (cluster-wide) DRA stack, whose
# chart was not available to read here.
DRA_DRIVER = Chart(
    name="dra-driver-nvidia-gpu",
    repository="oci://registry.k8s.io/dra-driver-nvidia/charts",
    version="0.4.0",
)
# KAI v0.17.0 (2026-08-03, kai-scheduler/KAI-Scheduler CHANGELOG.md L7): adds the
# kai.scheduler/preemption-delay annotation the workload templates use (budget.preemption).
# Published as the OCI chart the README installs (README.md L87 at v0.17.0: ``helm upgrade -i
# kai-scheduler oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler --version <VERSION>``;
# on a tag push the workflow packages the chart with the tag, "v" included, as its version and
# pushes it to oci://ghcr.io/kai-scheduler/kai-scheduler: .github/workflows/push-artifacts.yaml
# L9-10, L17, L30, L60-66). What changed from v0.16.8: docs/kai-scheduler.md.
KAI_SCHEDULER = Chart(
    name="kai-scheduler",
    repository="oci://ghcr.io/kai-scheduler/kai-scheduler",
    version="v0.17.0",
)

# Karpenter's AL2023 alias resolves the EKS-optimized AMI for the node's Kubernetes version and
# picks the NVIDIA variant (driver and container toolkit preinstalled) for GPU instance types.
# Pinned: `@latest` drifts every node on each AMI release.
# amazon-eks-ami release v20260903 (used by Kubernetes 1.35/1.36 node images in the wild);
# verify: /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/x86_64/nvidia/
#         amazon-eks-node-al2023-x86_64-nvidia-<k8s>-v20260903/image_id
AL2023_AMI_ALIAS_VERSION = "v20260903"
BOTTLEROCKET_AMI_ALIAS_VERSION = "v1.65.0"  # bottlerocket-os/bottlerocket, 2026-09-03

# Kubernetes API versions of the objects this project writes.
NODEPOOL_API = "karpenter.sh/v1"
EC2NODECLASS_API = "karpenter.k8s.aws/v1"
NODEOVERLAY_API = "karpenter.sh/v1alpha1"
KAI_QUEUE_API = "scheduling.run.ai/v2"

# EKS versions this release supports, and the minimum Karpenter version each needs
# (aws/karpenter-provider-aws website/content/en/v1.14/upgrading/compatibility.md for 1.30; the
# v1.15 page, commit d77d1a3a5a44d7ce9c041bcc51da1e567de3f2ec, for 1.31 to 1.37: "1.37 | 1.15.x").
KARPENTER_MIN_VERSION_FOR_KUBERNETES = {
    "1.30": "0.37.0",
    "1.31": "1.0.5",
    "1.32": "1.2.0",
    "1.33": "1.5.0",
    "1.34": "1.6.0",
    "1.35": "1.9.0",
    "1.36": "1.13.0",
    "1.37": "1.15.0",
}
# Minors Karpenter supports that Amazon EKS does not offer (yet), with the reason the config and
# the policy pack give. 1.37: the EKS user guide's release notes for versions on standard support
# (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions-standard.html) have 1.36 as their
# newest version, and no EKS page found says 1.37 is available (checked 2026-11-27); only EKS
# Distro has published 1.37 (aws/eks-distro release v1-37-eks-2, 2026-09-02), which is not the
# managed control plane.
KUBERNETES_NOT_ON_EKS = {
    "1.37": "Amazon EKS does not offer Kubernetes 1.37 yet (its release notes end at 1.36, "
    "checked 2026-11-27); Karpenter 1.15 supports it, so it is allowed once EKS does",
}
SUPPORTED_KUBERNETES_VERSIONS = tuple(
    k for k in KARPENTER_MIN_VERSION_FOR_KUBERNETES if k not in KUBERNETES_NOT_ON_EKS
)
DEFAULT_KUBERNETES_VERSION = "1.36"

# The MIG startup remover's image (gpu_operator/mig_ready.py): the Docker Official Image for
# Python, tag 3.13.9-alpine3.22, built for amd64 and arm64v8 among others
# (docker-library/official-images library/python at 01732a42e52ea2aca4809bd272fc38002f19006a:
# "Tags: 3.13.9-alpine3.22, 3.13-alpine3.22, 3.13.9-alpine, 3.13-alpine"). The remover uses the
# standard library only. Pinned by digest (review M4: it holds node patch and NodeClaim delete
# rights, and a pull that fails leaves its node stalled). The digest is the tag's multi-platform
# index: independent public build files pin `python:3.13.9-alpine3.22`, `3.13-alpine3.22`,
# `3.13.9-alpine` and `3.13-alpine` to it, one an image lock that records it as
# `base_index_digest` of `docker.io/library/python:3.13.9-alpine3.22` beside its linux/amd64
# manifest `sha256:53739ace...` (found through the public code index; not pulled from here, there
# is no registry access: `docker buildx imagetools inspect` it before an upgrade). Docker Hub, not
# a registry the cluster already pulls from: mirror it with an ECR pull-through cache where
# anonymous Docker Hub pulls are rate-limited (docs/gpu-operator.md).
MIG_READY_IMAGE = (
    "docker.io/library/python:3.13.9-alpine3.22"
    "@sha256:e5fa639e49b85986c4481e28faa2564b45aa8021413f31026c3856e5911618b1"
)

# The EKS managed add-ons the cluster installs. Their versions are not written down here: each is
# resolved when the program runs (cluster/addon_versions.py: a `cluster.addonVersions` pin, else
# the version installed on the cluster for its minor, else EKS's most recent for the minor).
EKS_ADDONS = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent", "coredns")
# The lowest vpc-cni that supports efa-only network interfaces, which every EFA pool's
# EC2NodeClass uses (catalog.efa_network_interfaces): terraform-aws-modules/terraform-aws-eks
# v21.19.0 modules/eks-managed-node-group/variables.tf L341 ``enable_efa_only``: "requires
# vpc-cni version `v1.18.4` or later". A resolved or pinned vpc-cni below it is refused when a
# pool uses EFA.
VPC_CNI_EFA_MIN_VERSION = "v1.18.4"

# Images of the example workloads the render writes (not deployed by the stack), each a current
# release pinned by digest (``<repo>:<tag>@sha256:<digest>``: the runtime pulls the digest, the
# tag says what it is). No registry was reachable where these were pinned: each digest is the one
# public repositories pin for the same tag (found through a public code index; repository names
# in README, "Security model"), not read from the registry here. Check one before relying on it:
# `crane digest nvcr.io/nvidia/tritonserver:26.06-py3` (or `docker buildx imagetools inspect`).
# Advisories: NVIDIA Product Security (https://www.nvidia.com/en-us/security/) and each NGC
# container's release notes (Triton: https://docs.nvidia.com/deeplearning/triton-inference-server/
# release-notes/; PyTorch: https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/);
# AWS CLI: https://github.com/aws/aws-cli/blob/v2/CHANGELOG.rst and the AWS security bulletins.
# Triton: every release before 25.07 has unauthenticated remote code execution in its HTTP server
# (CVE-2025-23310, -23317, -23319 and others; CVE-2025-23316 before 25.08): never below 25.08.
EXAMPLE_TRAINING_IMAGE = (
    "nvcr.io/nvidia/pytorch:26.05-py3"
    "@sha256:222d8b18e671be5c3ef91cb41727a2572a0b23f59ded6c39f373a96946f6f2ba"
)
EXAMPLE_INFERENCE_IMAGE = (
    "nvcr.io/nvidia/tritonserver:26.06-py3"
    "@sha256:a40838bb4587d2aceb46b1e7fd144afb24c9016c219dd3eba31716e4e28dbfc7"
)
# The inference template's init container copies the model repository from S3 with the AWS CLI.
EXAMPLE_MODEL_FETCH_IMAGE = (
    "public.ecr.aws/aws-cli/aws-cli:2.35.11"
    "@sha256:749bfaf91d690b9a1768083822d620f96c19defdf9ca2dc227eb3695281fda5b"
)
