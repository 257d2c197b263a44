"""The Karpenter chart supports the cluster's Kubernetes version."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ... import versions
from ._base import MANDATORY, Finding, Rule, StackResource
from ._kube import KARPENTER_CHART, release_name, releases_of_chart
from ._props import dig, show
from ._versions import minor_version, version_tuple

EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"


def _cluster_versions(resources: Sequence[StackResource]) -> list[tuple[StackResource, Any]]:
    """(cluster, version) pairs. Offline, ``eks:index:Cluster`` inputs carry ``version``; in the
    engine, the component's outputs do not, but its ``aws:eks/cluster:Cluster`` child's do."""
    out = []
    for r in resources:
        if r.type == AWS_EKS_CLUSTER or r.type == EKS_CLUSTER:
            version = r.props.get("version")
            if version is None and r.type == EKS_CLUSTER:
                version = dig(r.props, "eksCluster", "version")
            if version is not None:
                out.append((r, version))
    return out


def _cluster_name(cluster: StackResource) -> str:
    name = cluster.props.get("name")
    return name if isinstance(name, str) and name else cluster.name


def check_stack(resources: Sequence[StackResource], config: Mapping[str, Any]) -> list[str]:
    table = versions.KARPENTER_MIN_VERSION_FOR_KUBERNETES
    out: list[str] = []
    releases = releases_of_chart(resources, KARPENTER_CHART)
    if not releases:
        return out
    for cluster, raw in _cluster_versions(resources):
        kubernetes = minor_version(raw)
        if kubernetes in versions.KUBERNETES_NOT_ON_EKS:
            out.append(
                Finding(
                    f'EKS cluster "{_cluster_name(cluster)}" runs Kubernetes {show(raw)}: '
                    f"{versions.KUBERNETES_NOT_ON_EKS[kubernetes]} (supported: "
                    f"{', '.join(versions.SUPPORTED_KUBERNETES_VERSIONS)})",
                    cluster.urn,
                )
            )
            continue
        if kubernetes not in table:
            out.append(
                Finding(
                    f'EKS cluster "{_cluster_name(cluster)}" runs Kubernetes {show(raw)}, which '
                    "is not in the Karpenter compatibility table (supported: "
                    f"{', '.join(versions.SUPPORTED_KUBERNETES_VERSIONS)})",
                    cluster.urn,
                )
            )
            continue
        needed = table[kubernetes]
        for release in releases:
            chart = release.props.get("version")
            parsed = version_tuple(chart)
            if parsed is None:
                out.append(
                    Finding(
                        f'Karpenter release "{release_name(release)}" has chart version '
                        f"{show(chart)}, not a version this policy can compare",
                        release.urn,
                    )
                )
            elif parsed < version_tuple(needed):
                out.append(
                    Finding(
                        f'Karpenter release "{release_name(release)}" pins chart {show(chart)}, '
                        f'but EKS cluster "{_cluster_name(cluster)}" runs Kubernetes '
                        f"{kubernetes}, which needs Karpenter {needed} or newer",
                        release.urn,
                    )
                )
    # A cluster seen twice (the eks:index:Cluster component and its aws:eks/cluster:Cluster
    # child) gives the same finding twice: report it once.
    return list(dict.fromkeys(out))


RULE = Rule(
    name="karpenter-supports-kubernetes-version",
    description=(
        "The Karpenter chart must be at least the minimum version that supports the EKS "
        "cluster's Kubernetes version (aws/karpenter-provider-aws compatibility matrix): an "
        "older controller mis-schedules or fails against a newer API server."
    ),
    enforcement_level=MANDATORY,
    category="correctness",
    severity="high",
    check_stack=check_stack,
)
