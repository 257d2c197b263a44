"""The SSM parameters Karpenter reads to resolve a pool's AMI alias, and the `pulumi up` check
that each one exists for the cluster's Kubernetes minor (issue 21, point 4).

Karpenter resolves an ``amiSelectorTerms`` alias with the cluster's current Kubernetes version
(aws/karpenter-provider-aws v1.15.0 ``pkg/providers/amifamily/ami.go`` L83-104) through one SSM
parameter per architecture and variant:

- AL2023: ``/aws/service/eks/optimized-ami/<minor>/amazon-linux-2023/<arch>/<variant>/
  amazon-eks-node-al2023-<arch>-<variant>-<minor>-<version>/image_id`` (``al2023.go`` L48-89,
  ``resolvePath``; variants ``standard``, ``nvidia``, ``neuron``);
- Bottlerocket: ``/aws/service/bottlerocket/aws-k8s-<minor>[-nvidia]/<arch>/<version without
  the v>/image_id`` (``bottlerocket.go`` L44-52).

A parameter that does not exist is skipped; when none does, the alias fails ("failed to discover
any AMIs for alias", al2023.go L68) and the EC2NodeClass goes ``AMIsReady=False``: no capacity.
A pinned release that does not publish the cluster's minor therefore leaves the pools without
nodes, so ``pulumi up`` looks the parameter each pool needs (its architectures; ``nvidia`` for a
GPU pool, ``standard`` otherwise) up first and refuses a missing one, naming it. Pure, except
``check_ami_parameters``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
from pulumi_aws._utilities import get_invoke_opts_defaults as aws_invoke_defaults

from .errors import refused_by_up
from .nodepool.manifests import pool_requirements
from .nodepool.spec import NodePoolSpec
from .spec import SpecError

SSM_GET_PARAMETER = "aws:ssm/getParameter:getParameter"
# kubernetes.io/arch -> the architecture in the AMI's SSM path.
AMI_ARCH = {"amd64": "x86_64", "arm64": "arm64"}


def alias_parameter(alias: str, minor: str, arch: str, gpu: bool) -> str:
    """The SSM parameter Karpenter reads for ``alias`` (``al2023@v20260903``) on ``minor`` for
    one ``kubernetes.io/arch`` and a GPU (``nvidia``) or standard variant."""
    family, _, version = alias.partition("@")
    ami_arch = AMI_ARCH[arch]
    if family == "bottlerocket":
        flavour = f"aws-k8s-{minor}-nvidia" if gpu else f"aws-k8s-{minor}"
        return f"/aws/service/bottlerocket/{flavour}/{ami_arch}/{version.lstrip('v')}/image_id"
    variant = "nvidia" if gpu else "standard"
    name = f"amazon-eks-node-al2023-{ami_arch}-{variant}-{minor}-{version}"
    return (
        f"/aws/service/eks/optimized-ami/{minor}/amazon-linux-2023/{ami_arch}/{variant}/"
        f"{name}/image_id"
    )


def pool_arches(spec: NodePoolSpec) -> list[str]:
    """The ``kubernetes.io/arch`` values the pool's NodePool allows."""
    for req in pool_requirements(spec):
        if req["key"] == "kubernetes.io/arch":
            return list(req["values"])
    return ["amd64"]


def pool_parameters(pools: Sequence[NodePoolSpec], minor: str) -> dict[str, list[str]]:
    """Each SSM parameter the pools need on ``minor`` -> the pools needing it, in order."""
    out: dict[str, list[str]] = {}
    for pool in pools:
        for arch in pool_arches(pool):
            name = alias_parameter(pool.ami.alias, minor, arch, pool.is_gpu)
            out.setdefault(name, []).append(pool.name)
    return out


def parameter_missing(error: Exception) -> bool:
    """Whether a failed ``aws:ssm/getParameter`` invoke means that the parameter does not exist.

    The data source reads with ``findParameterByName``, which turns SSM's ``ParameterNotFound``
    into a ``retry.NotFoundError`` without a message, whose text is "couldn't find resource"
    (hashicorp/terraform-provider-aws internal/service/ssm/parameter.go ``findParameterByName``:
    ``&retry.NotFoundError{LastError: err, LastRequest: input}``; terraform-plugin-sdk
    helper/retry error.go ``NotFoundError.Error``), and fails with "reading SSM Parameter
    (NAME): couldn't find resource" (parameter_data_source.go ``dataParameterRead``); the
    bridge and the SDK pass it on as ``cluster.access.cluster_missing`` says. SSM's own
    ``ParameterNotFound`` code is accepted too. Anything else is not a missing parameter."""
    text = str(error)
    return "reading SSM Parameter" in text and (
        "couldn't find resource" in text or "ParameterNotFound" in text
    )


def missing_parameter_line(name: str, pools: Sequence[str], alias: str, minor: str) -> str:
    return (
        f"nodePools ({', '.join(pools)}): the AMI alias {alias} has no image for Kubernetes "
        f"{minor} (SSM parameter {name} does not exist), so Karpenter would launch no node "
        "(EC2NodeClass AMIsReady=False); set the pools' ami.version to a release that "
        f"publishes {minor}"
    )


def check_ami_parameters(
    component: pulumi.Resource,
    pools: Sequence[NodePoolSpec],
    minor: str,
    provider: pulumi.ProviderResource | None = None,
) -> None:
    """In ``pulumi up``, a ``SpecError`` listing every pool AMI parameter missing for
    ``minor`` (``aws:ssm/getParameter`` through the component's AWS provider); a preview only
    warns. The provider's "not found" is told apart from other failures
    (``parameter_missing``); any other failure (access denied, throttling) is a ``SpecError``
    naming the parameter, never a traceback. ``provider``:
    the AWS provider the platform's resources use when it is not the component's (a region
    given in code); synchronous, so it runs before any AWS resource is declared."""
    opts = pulumi.InvokeOptions.merge(
        aws_invoke_defaults(), pulumi.InvokeOptions(parent=component, provider=provider)
    )
    aliases = {
        alias_parameter(p.ami.alias, minor, a, p.is_gpu): p.ami.alias
        for p in pools
        for a in pool_arches(p)
    }
    lines, failures = [], []
    for name, names in pool_parameters(pools, minor).items():
        try:
            pulumi.runtime.invoke(SSM_GET_PARAMETER, {"name": name}, opts=opts)
        except Exception as error:  # the provider's "not found" only: parameter_missing
            if parameter_missing(error):
                lines.append(missing_parameter_line(name, names, aliases[name], minor))
            else:
                failures.append(
                    f"nodePools ({', '.join(names)}): looking up the SSM parameter {name} "
                    f"(the image of AMI alias {aliases[name]} for Kubernetes {minor}) failed "
                    f"({str(error).strip()}); the deploying identity needs ssm:GetParameter "
                    "on the public /aws/service/ parameters"
                )
    if failures:
        raise SpecError.from_lines(failures + lines)
    if lines and not pulumi.runtime.is_dry_run():
        raise SpecError.from_lines(lines)
    for line in lines:
        pulumi.log.warn(refused_by_up(line), component)
