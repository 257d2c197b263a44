"""Type tokens and readers for the Kubernetes objects and Helm releases the rules inspect.

All readers take a Kubernetes object's props (``apiVersion``, ``kind``, ``metadata``, ``spec``)
as the engine hands them to a policy, and return plain Python values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ...config import LABEL_DOMAIN_ANNOTATION
from ._base import StackResource
from ._gpu import is_nvidia_gpu_pool as is_nvidia_gpu_pool  # the one GPU-pool detector
from ._props import dig, mapping, sequence

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
EC2NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"

GPU_RESOURCE = "nvidia.com/gpu"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ALL_CAPACITY_TYPES = frozenset({"on-demand", "reserved", "spot"})
# Karpenter v1 defaults a NodePool without a capacity-type requirement to on-demand.
DEFAULT_CAPACITY_TYPES = frozenset({"on-demand"})
ZONE_KEYS = ("topology.kubernetes.io/zone", "topology.k8s.aws/zone-id")
GPU_MANUFACTURER = "karpenter.k8s.aws/instance-gpu-manufacturer"
GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
# karpenter.k8s.aws/instance-gpu-name values of non-NVIDIA GPUs.
NON_NVIDIA_GPU_NAMES = frozenset({"radeon-pro-v520"})
DEFAULT_CONSOLIDATION_POLICY = "WhenEmptyOrUnderutilized"
DEFAULT_EXPIRE_AFTER = "720h"

KARPENTER_CHART = "karpenter"
KARPENTER_CRD_CHART = "karpenter-crd"
GPU_OPERATOR_CHART = "gpu-operator"


class Requirement(NamedTuple):
    key: str
    operator: str
    values: tuple[str, ...]


def object_name(props: Mapping[str, Any]) -> str:
    name = dig(props, "metadata", "name")
    return name if isinstance(name, str) and name else "<unnamed>"


def template_spec(nodepool: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(dig(nodepool, "spec", "template", "spec"))


def template_labels(nodepool: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(dig(nodepool, "spec", "template", "metadata", "labels"))


def requirements(nodepool: Mapping[str, Any]) -> list[Requirement]:
    out = []
    for req in sequence(template_spec(nodepool).get("requirements")):
        req = mapping(req)
        key, operator = req.get("key"), req.get("operator")
        if isinstance(key, str) and isinstance(operator, str):
            values = tuple(str(v) for v in sequence(req.get("values")))
            out.append(Requirement(key, operator, values))
    return out


def allowed_values(
    reqs: Iterable[Requirement], key: str, universe: frozenset[str] | None = None
) -> frozenset[str] | None:
    """The values ``key`` may take under ``reqs``; ``None`` when unconstrained or unknowable.

    ``In`` allows its values, ``DoesNotExist`` none; ``NotIn`` and ``Exists`` are resolved
    against ``universe`` when one is given. Several requirements on one key intersect.
    """
    allowed: frozenset[str] | None = None
    for req in reqs:
        if req.key != key:
            continue
        if req.operator == "In":
            these: frozenset[str] | None = frozenset(req.values)
        elif req.operator == "DoesNotExist":
            these = frozenset()
        elif req.operator == "NotIn" and universe is not None:
            these = universe - frozenset(req.values)
        elif req.operator == "Exists" and universe is not None:
            these = universe
        else:
            these = None
        if these is not None:
            allowed = these if allowed is None else allowed & these
    return allowed


def capacity_types(nodepool: Mapping[str, Any]) -> frozenset[str]:
    """The capacity types a NodePool may launch (on-demand only when it does not say)."""
    allowed = allowed_values(requirements(nodepool), CAPACITY_TYPE, ALL_CAPACITY_TYPES)
    return DEFAULT_CAPACITY_TYPES if allowed is None else allowed


def gpu_limit(nodepool: Mapping[str, Any]) -> Any:
    """The raw ``spec.limits["nvidia.com/gpu"]`` (``None`` when absent)."""
    return mapping(dig(nodepool, "spec", "limits")).get(GPU_RESOURCE)


def label_domain(nodepool: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """The domain of a NodePool's platform labels (``<domain>/pool``, ``<domain>/preemptible``).

    The platform annotates its NodePools with the domain (``LABEL_DOMAIN_ANNOTATION``) when the
    stack's ``cluster.labelDomain`` is not the default, so both the render and ``pulumi preview
    --policy-pack`` check the labels the stack really sets, with no policy config; a NodePool
    without the annotation (the default domain, or one written by hand) uses the pack's
    ``labelDomain`` config.
    """
    value = mapping(dig(nodepool, "metadata", "annotations")).get(LABEL_DOMAIN_ANNOTATION)
    return value if isinstance(value, str) and value else config["labelDomain"]


def stack_label_domain(resources: Sequence[StackResource], config: Mapping[str, Any]) -> str:
    """The label domain of a stack: its NodePools' (``label_domain``) when they agree, else the
    pack's ``labelDomain`` config."""
    domains = {label_domain(r.props, config) for r in of_type(resources, NODEPOOL)}
    return domains.pop() if len(domains) == 1 else config["labelDomain"]


def label(nodepool: Mapping[str, Any], domain: str, name: str) -> Any:
    return template_labels(nodepool).get(f"{domain}/{name}")


def is_preemptible(nodepool: Mapping[str, Any], domain: str) -> bool:
    return label(nodepool, domain, "preemptible") == "true"


def pool_name(nodepool: Mapping[str, Any], domain: str) -> str | None:
    value = label(nodepool, domain, "pool")
    return value if isinstance(value, str) and value else None


def node_class_name(nodepool: Mapping[str, Any]) -> str | None:
    name = mapping(template_spec(nodepool).get("nodeClassRef")).get("name")
    return name if isinstance(name, str) and name else None


def pinned_zones(nodepool: Mapping[str, Any]) -> frozenset[str] | None:
    """The zones (or zone ids) a NodePool is restricted to; ``None`` when it does not say."""
    reqs = requirements(nodepool)
    for key in ZONE_KEYS:
        allowed = allowed_values(reqs, key)
        if allowed is not None:
            return allowed
    return None


def efa_only_interfaces(nodeclass: Mapping[str, Any]) -> int:
    return sum(
        1
        for nic in sequence(dig(nodeclass, "spec", "networkInterfaces"))
        if mapping(nic).get("interfaceType") == "efa-only"
    )


def ami_aliases(nodeclass: Mapping[str, Any]) -> list[str | None]:
    """Each ``amiSelectorTerms`` entry's alias (``None`` for terms selecting by id/name/tags)."""
    out: list[str | None] = []
    for term in sequence(dig(nodeclass, "spec", "amiSelectorTerms")):
        alias = mapping(term).get("alias")
        out.append(alias if isinstance(alias, str) and alias else None)
    return out


def chart_name(release: Mapping[str, Any]) -> str:
    """The chart's own name: ``oci://…/karpenter`` and ``nvidia/gpu-operator`` end the same."""
    chart = release.get("chart")
    return chart.rstrip("/").rsplit("/", 1)[-1] if isinstance(chart, str) else ""


def release_name(resource: StackResource) -> str:
    name = resource.props.get("name")
    return name if isinstance(name, str) and name else resource.name


def of_type(resources: Sequence[StackResource], type_: str) -> list[StackResource]:
    return [r for r in resources if r.type == type_]


def releases_of_chart(resources: Sequence[StackResource], chart: str) -> list[StackResource]:
    return [r for r in of_type(resources, HELM_RELEASE) if chart_name(r.props) == chart]
