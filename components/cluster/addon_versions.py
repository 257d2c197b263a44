"""The EKS managed add-ons' versions, resolved when the program runs, before anything is registered.

For each add-on (``versions.EKS_ADDONS``), in this order (``decide``, a pure function):

1. ``pin``: ``cluster.addonVersions.<addon>`` when set.
2. ``installed``: the version on the existing cluster (``aws:eks/getAddon``) when the cluster's
   current minor (``aws:eks/getCluster`` ``version``) is the configured one and the add-on was
   resolved for that minor (its ``ADDON_MINOR_TAG``; an add-on without the tag was installed by
   an older release of this program, which pinned one version per minor). So an ``up`` that
   changes something else never moves an add-on, nor pushes a hand-raised one down.
3. ``lookup``: otherwise (a new cluster, a new add-on, a minor upgrade, or an upgrade that
   stopped after the control plane moved): ``aws:eks/getAddonVersion`` for the configured minor
   with ``mostRecent: true``, EKS's most recent version of the add-on for that minor.

Why the most recent and not EKS's default (``mostRecent: false``, what CreateAddon installs
without a version): it is what both anchors do, pulumi/pulumi-eks v4.3.0
``nodejs/eks/cluster/cluster.ts`` L766-776 (kube-proxy) and L1186-1196 (coredns),
``nodejs/eks/addons/cni-addon.ts`` L272-283, and terraform-aws-modules/terraform-aws-eks v21.19.0
``main.tf`` L758-766 (``data "aws_eks_addon_version"`` with ``most_recent``), L777 and L822
(``coalesce(each.value.addon_version, data...version)``), ``variables.tf`` L643 (``most_recent
= optional(bool, true)``, the default since v21: ``docs/UPGRADE-21.0.md`` L32); and it is what
the EKS user guide tells you to install ("Replace v1.20.1-eksbuild.3 with the latest version
listed in the latest version table for your cluster version": awsdocs/amazon-eks-user-guide
latest/ug/networking/vpc-add-on-create.adoc, and vpc-add-on-update.adoc likewise; the per-minor
pins this replaces were rows of those tables). EKS's default is one of the versions listed,
not necessarily the first. The reason an earlier release of this program refused lookups,
versions moving at every ``up`` (issue 21, point 5), is what the ``installed`` rule removes:
the lookup only runs when the add-on has to move anyway. ``mostRecent: true`` returns the first
version ``DescribeAddonVersions`` lists for the minor, ``false`` the one marked ``DefaultVersion``;
nothing published for the minor fails the invoke (hashicorp/terraform-provider-aws
internal/service/eks/addon_version_data_source.go ``findAddonVersionByTwoPartKey``, at
b8a258ef16300c792e393843eb7712b55bc26ab1).

The versions are plain values, so ``pulumi preview`` shows them in the add-ons' diff and
``pulumi up`` installs what the preview showed. Every failure of a lookup is a ``SpecError``
in preview as in ``up``; only an answer the engine cannot give in a preview (an AWS provider
configured from other resources' outputs) is a warning in preview, and a ``SpecError`` in
``up``. A resolved version below a floor (``versions.VPC_CNI_EFA_MIN_VERSION`` when a pool
uses EFA) is refused with the reason.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
from pulumi_aws._utilities import get_invoke_opts_defaults as aws_invoke_defaults

from .. import versions
from ..spec import SpecError
from .access import cluster_missing

PIN, INSTALLED, LOOKUP = "pin", "installed", "lookup"
# Whether the lookup asks for the most recent version (True) or EKS's default (module docstring).
MOST_RECENT = True
# On every add-on: the Kubernetes minor its version was resolved for (rule 2 above).
ADDON_MINOR_TAG = "eks-gpu-platform/addon-minor"
GET_CLUSTER = "aws:eks/getCluster:getCluster"
GET_ADDON = "aws:eks/getAddon:getAddon"
GET_ADDON_VERSION = "aws:eks/getAddonVersion:getAddonVersion"
_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)(?:-eksbuild\.(\d+))?$")


@dataclass(frozen=True)
class AddonVersion:
    """One add-on's resolved version (None: unknown, in a preview only), where it came from
    (``PIN``, ``INSTALLED``, ``LOOKUP``) and the Kubernetes minor it is for."""

    version: str | None
    source: str
    minor: str

    def describe(self, addon: str) -> str:
        """The line ``pulumi up`` and ``pulumi preview`` log for this add-on."""
        where = {
            PIN: f"cluster.addonVersions.{addon}",
            INSTALLED: f"installed on the cluster (Kubernetes {self.minor}), kept",
            LOOKUP: f"EKS's most recent {addon} for Kubernetes {self.minor}, looked up",
        }[self.source]
        return f"EKS add-on {addon}: {self.version or 'unknown in this preview'} ({where})"


@dataclass(frozen=True)
class Floor:
    """The lowest version of an add-on a configuration needs, and why."""

    addon: str
    version: str
    reason: str


def decide(
    *,
    pin: str | None,
    target_minor: str,
    cluster_minor: str | None,
    installed: str | None,
    installed_for: str | None,
) -> tuple[str, str | None]:
    """``(source, version)`` for one add-on: ``(PIN, pin)``, ``(INSTALLED, installed)``, or
    ``(LOOKUP, None)`` when EKS must be asked (module docstring). ``cluster_minor``: the
    existing cluster's current minor (None: no cluster); ``installed``: the add-on's version on
    it (None: not installed); ``installed_for``: its ``ADDON_MINOR_TAG`` (None: untagged)."""
    if pin:
        return PIN, pin
    if installed and cluster_minor == target_minor and installed_for in (None, target_minor):
        return INSTALLED, installed
    return LOOKUP, None


def version_key(version: str) -> tuple[int, ...] | None:
    """``v1.20.1-eksbuild.3`` -> ``(1, 20, 1, 3)``; None when it is not an add-on version."""
    m = _VERSION.match(version)
    return tuple(int(g or 0) for g in m.groups()) if m else None


def efa_floors(efa_pools: Sequence[str]) -> list[Floor]:
    """The vpc-cni floor of a stack whose pools use EFA (``efa-only`` interfaces)."""
    if not efa_pools:
        return []
    return [
        Floor(
            "vpc-cni",
            versions.VPC_CNI_EFA_MIN_VERSION,
            f"nodePools ({', '.join(efa_pools)}) use efa-only interfaces, which need vpc-cni "
            f"{versions.VPC_CNI_EFA_MIN_VERSION} or later",
        )
    ]


def floor_lines(
    resolved: Mapping[str, AddonVersion], floors: Sequence[Floor]
) -> tuple[list[str], list[str]]:
    """``(refused, unchecked)``: a line per add-on below its floor, and per add-on whose version
    cannot be compared with it (unknown in a preview, or not shaped like an EKS version)."""
    refused, unchecked = [], []
    for floor in floors:
        got = resolved.get(floor.addon)
        if got is None:
            continue
        key = version_key(got.version) if got.version else None
        if key is None:
            unchecked.append(
                f"cluster.addonVersions.{floor.addon}: {got.version or 'the version'} cannot be "
                f"compared with {floor.version} here ({floor.reason}); `pulumi up` checks the "
                "version it resolves"
            )
        elif key < version_key(floor.version):
            how = {
                PIN: "is pinned",
                INSTALLED: "is installed",
                LOOKUP: f"is EKS's most recent for Kubernetes {got.minor}",
            }[got.source]
            refused.append(
                f"cluster.addonVersions.{floor.addon}: {got.version} {how}, below "
                f"{floor.version}: {floor.reason}; set cluster.addonVersions.{floor.addon} to "
                f"{floor.version} or later"
            )
    return refused, unchecked


def _unknown() -> pulumi.Output[str]:
    """A version the engine could not give in this preview: the diff shows it as computed."""

    async def value() -> None:
        return None

    async def known() -> bool:
        return False

    return pulumi.Output(set(), asyncio.ensure_future(value()), asyncio.ensure_future(known()))


def addon_version_input(resolved: AddonVersion) -> pulumi.Input[str]:
    """The ``addonVersion`` an ``aws.eks.Addon`` takes: the plain version, or unknown."""
    return resolved.version if resolved.version else _unknown()


class _Unknown(Exception):
    """The engine answered an invoke unknown (a preview with an unconfigured provider)."""


def _invoke(
    component: pulumi.Resource,
    provider: pulumi.ProviderResource | None,
    token: str,
    args: dict[str, object],
) -> dict:
    """A synchronous invoke through the component's AWS provider (or ``provider``), as
    identity.plain_invoke does it (its docstring says why synchronous and raw); raises
    ``_Unknown`` when the engine answers unknown."""
    opts = pulumi.InvokeOptions.merge(
        aws_invoke_defaults(), pulumi.InvokeOptions(parent=component, provider=provider)
    )
    result = pulumi.runtime.invoke(token, args, opts=opts)
    if not result.is_known or not result.value:
        raise _Unknown(token)
    return dict(result.value)


def addon_missing(error: Exception) -> bool:
    """Whether a failed ``aws:eks/getAddon`` invoke means that the add-on is not installed.

    The data source reads with ``findAddonByTwoPartKey``, whose ``ResourceNotFoundException``
    becomes a ``retry.NotFoundError`` ("couldn't find resource"), and fails with "reading EKS
    Add-On (CLUSTER:ADDON): ..." (hashicorp/terraform-provider-aws internal/service/eks/
    addon_data_source.go ``dataSourceAddonRead``); the bridge and the SDK pass it on as
    ``access.cluster_missing`` says. Anything else (access denied, throttling) is not."""
    text = str(error)
    return "reading EKS Add-On" in text and (
        "couldn't find resource" in text or "ResourceNotFoundException" in text
    )


def resolve_addon_versions(
    component: pulumi.Resource,
    cluster_name: str,
    minor: str,
    pins: Mapping[str, str],
    *,
    provider: pulumi.ProviderResource | None = None,
    floors: Sequence[Floor] = (),
) -> dict[str, AddonVersion]:
    """Every add-on's version (``versions.EKS_ADDONS`` order), logged with its source; every
    problem of the run in one ``SpecError`` (module docstring). ``provider``: the AWS provider
    the cluster's resources use when it is not the component's (a region given in code)."""
    up = not pulumi.runtime.is_dry_run()
    failures: list[str] = []
    unknown: list[str] = []

    def ask(token: str, args: dict[str, object], what: str, missing=None) -> dict | None:
        try:
            return _invoke(component, provider, token, args)
        except _Unknown:
            unknown.append(what)
            return {}
        except Exception as error:  # the provider's "not found" only, when asked to tell it
            if missing is not None and missing(error):
                return None
            failures.append(f"{what}: {str(error).strip()}")
            return {}

    need = [a for a in versions.EKS_ADDONS if not pins.get(a)]
    cluster: dict | None = None
    if need:
        cluster = ask(
            GET_CLUSTER,
            {"name": cluster_name},
            f"looking up cluster {cluster_name}",
            cluster_missing,
        )
    cluster_minor = (cluster or {}).get("version")
    resolved: dict[str, AddonVersion] = {}
    for addon in versions.EKS_ADDONS:
        installed = installed_for = None
        if addon in need and cluster_minor == minor:
            found = ask(
                GET_ADDON,
                {"addonName": addon, "clusterName": cluster_name},
                f"looking up the installed {addon} on cluster {cluster_name}",
                addon_missing,
            )
            installed = (found or {}).get("addonVersion")
            installed_for = ((found or {}).get("tags") or {}).get(ADDON_MINOR_TAG)
        source, version = decide(
            pin=pins.get(addon),
            target_minor=minor,
            cluster_minor=cluster_minor,
            installed=installed,
            installed_for=installed_for,
        )
        if source == LOOKUP:
            answer = ask(
                GET_ADDON_VERSION,
                {"addonName": addon, "kubernetesVersion": minor, "mostRecent": MOST_RECENT},
                f"looking up EKS's most recent {addon} for Kubernetes {minor}",
            )
            version = (answer or {}).get("version")
        resolved[addon] = AddonVersion(version, source, minor)
    lines = [
        f"cluster.addonVersions: {failure}; the deploying identity needs eks:DescribeCluster, "
        "eks:DescribeAddon and eks:DescribeAddonVersions, and EKS must publish the add-on for "
        f"Kubernetes {minor} (or pin a version in cluster.addonVersions)"
        for failure in failures
    ]
    refused, unchecked = floor_lines(resolved, floors)
    if unknown:
        message = (
            "cluster.addonVersions: the add-on versions are unknown in this preview (the AWS "
            "provider answered unknown, as it does when configured from other resources' "
            f"outputs: {', '.join(unknown)}); `pulumi up` resolves them and refuses if it cannot"
        )
        if up:
            lines.append(message.replace("in this preview", "in `pulumi up`"))
        else:
            pulumi.log.warn(message, component)
    if lines or refused:
        raise SpecError.from_lines(lines + refused)
    for line in unchecked:
        pulumi.log.warn(line, component)
    for addon, got in resolved.items():
        pulumi.log.info(got.describe(addon), component)
    return resolved
