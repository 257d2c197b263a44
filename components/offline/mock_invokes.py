"""The invokes the recording mocks answer (``RecordingMocks.call``): the AWS data sources this
project reads, the deploying identity, and the existing cluster, add-ons, access entries and
public SSM parameters they find (none by default: a new cluster; tests set the class
attributes). A lookup of something missing fails the way the provider fails it, with
``InvokeFailed``. The account's principals, quotas and prices: ``mock_account``.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import pulumi

from ..regions import modelled_zone_names
from .mock_types import Scope, _hex, region_short_code

# What the offline mocks answer for an add-on version looked up at deploy time.
RESOLVED_AT_DEPLOY = "resolved at deploy"


class InvokeFailed(grpc.RpcError):
    """An invoke the provider fails: the engine returns its error over gRPC, and the SDK raises
    ``Exception("invoke of <token> failed: <details>")`` (pulumi/runtime/invoke.py L340-356,
    3.272.0)."""

    def __init__(self, details: str):
        super().__init__(details)
        self._details = details

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


class MockInvokes:
    """A mixin of ``RecordingMocks``: the invokes it answers and the account state they read."""

    # The deploying identity getCallerIdentity answers with: an IAM path ("user/NAME",
    # "role/NAME") or an STS one ("assumed-role/NAME/SESSION"). Tests set it on the class; None:
    # the engine answers it unknown (a provider configured from unknown outputs in preview;
    # RecordingMonitor.Invoke).
    caller: str | None = "user/offline-render"
    # The tags of the EKS cluster getCluster finds (any name), or None: no cluster yet, and
    # getCluster fails the way the provider does for a missing one (a new cluster, the
    # render's default). Tests set it on the class.
    existing_cluster_tags: dict[str, str] | None = None
    # The access entries EKS holds on that existing cluster: principal ARN -> the entry's tags
    # (an untagged one: {}); any other principal has none, and getAccessEntry fails the way the
    # provider does. Tests set it on the class.
    existing_access_entries: dict[str, dict[str, str]] = {}
    # That existing cluster's current Kubernetes minor (getCluster ``version``; None: left out)
    # and its installed add-ons: name -> getAddon's answer (``addonVersion``, ``tags``); any
    # other add-on is not installed, and getAddon fails the way the provider does.
    existing_cluster_version: str | None = None
    installed_addons: dict[str, dict[str, Any]] = {}
    # What getAddonVersion answers per add-on (test data: a version EKS would publish). An add-on
    # not listed gets ``RESOLVED_AT_DEPLOY``: offline, EKS's version is unknown until deploy.
    published_addon_versions: dict[str, str] = {}
    # Public SSM parameters that do not exist (an AMI release without the cluster's minor).
    missing_ssm_parameters: frozenset[str] = frozenset()
    # Public SSM parameters the deploying identity may not read (AccessDeniedException).
    denied_ssm_parameters: frozenset[str] = frozenset()
    # Zones in another state than "available" right now (an impaired zone during an event).
    impaired_zones: frozenset[str] = frozenset()

    def caller_arn(self, scope: Scope) -> str:
        service = "sts" if self.caller.startswith("assumed-role/") else "iam"
        return scope.arn(service, self.caller, region=False)

    def _get_cluster(self, scope: Scope, name: str) -> dict[str, Any]:
        """An existing cluster's name, ARN and tags; a missing one fails as the provider's
        invoke does (a gRPC error carrying the data source's "couldn't find resource":
        cluster/access.py ``cluster_missing`` cites the chain)."""
        if self.existing_cluster_tags is None:
            raise InvokeFailed(
                f"invoking aws:eks/getCluster:getCluster: 1 error occurred:\n\t* reading EKS "
                f"Cluster ({name}): couldn't find resource\n\n"
            )
        arn = scope.arn("eks", f"cluster/{name}")
        out = {"name": name, "arn": arn, "tags": dict(self.existing_cluster_tags), "id": name}
        if self.existing_cluster_version:
            out["version"] = self.existing_cluster_version
        return out

    def _get_addon(self, cluster: str, addon: str) -> dict[str, Any]:
        """An installed add-on; a missing one fails as the provider's invoke does ("reading EKS
        Add-On (CLUSTER:ADDON): couldn't find resource": cluster/addon_versions.py
        ``addon_missing`` cites the chain)."""
        if self.existing_cluster_tags is None or addon not in self.installed_addons:
            raise InvokeFailed(
                f"invoking aws:eks/getAddon:getAddon: 1 error occurred:\n\t* reading EKS "
                f"Add-On ({cluster}:{addon}): couldn't find resource\n\n"
            )
        found = self.installed_addons[addon]
        return {
            "addonName": addon,
            "clusterName": cluster,
            "addonVersion": found["addonVersion"],
            "tags": dict(found.get("tags") or {}),
            "id": f"{cluster}:{addon}",
        }

    def _get_access_entry(self, scope: Scope, cluster: str, principal: str) -> dict[str, Any]:
        """An existing access entry (its ARN and tags); a missing one fails as the provider's
        invoke does ("reading EKS Access Entry (CLUSTER:PRINCIPAL): couldn't find resource":
        cluster/access.py ``entry_missing`` cites the chain)."""
        if principal not in self.existing_access_entries:
            raise InvokeFailed(
                f"invoking aws:eks/getAccessEntry:getAccessEntry: 1 error occurred:\n\t* "
                f"reading EKS Access Entry ({cluster}:{principal}): couldn't find resource\n\n"
            )
        arn = scope.arn("eks", f"access-entry/{cluster}/role/{_hex(principal, 12)}")
        return {
            "clusterName": cluster,
            "principalArn": principal,
            "accessEntryArn": arn,
            "type": "STANDARD",
            "tags": dict(self.existing_access_entries[principal]),
            "id": f"{cluster}:{principal}",
        }

    def _get_parameter(self, scope: Scope, name: str) -> dict[str, Any]:
        """A public SSM parameter (an AMI id); one in ``missing_ssm_parameters`` fails as the
        provider's invoke does for a missing parameter ("reading SSM Parameter (NAME):
        couldn't find resource": amis.py ``parameter_missing`` cites the chain)."""
        if name in self.missing_ssm_parameters:
            raise InvokeFailed(
                f"invoking aws:ssm/getParameter:getParameter: 1 error occurred:\n\t* reading "
                f"SSM Parameter ({name}): couldn't find resource\n\n"
            )
        if name in self.denied_ssm_parameters:
            raise InvokeFailed(
                f"invoking aws:ssm/getParameter:getParameter: 1 error occurred:\n\t* reading "
                f"SSM Parameter ({name}): operation error SSM: GetParameter, https response "
                "error StatusCode: 400, RequestID: 0, api error AccessDeniedException: not "
                "authorized to perform: ssm:GetParameter\n\n"
            )
        arn = scope.arn("ssm", f"parameter{name}")
        return {
            "name": name,
            "value": f"ami-{_hex(name, 17)}",
            "insecureValue": f"ami-{_hex(name, 17)}",
            "type": "String",
            "arn": arn,
            "version": 1,
            "withDecryption": True,
            "id": name,
        }

    # -- invokes ----------------------------------------------------------------------------

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        self.calls.append((args.token, dict(args.args)))
        token = args.token
        if token.startswith("aws:"):
            # Every AWS invoke needs a region, modelled or not.
            scope = self.scope(args.provider, args.args.get("region"))
            if token == "aws:index/getCallerIdentity:getCallerIdentity":
                return {
                    "accountId": scope.account_id,
                    "arn": self.caller_arn(scope),
                    "userId": "AIDAOFFLINERENDER0000",
                    "id": scope.account_id,
                }
            if token == "aws:iam/getSessionContext:getSessionContext":
                # An assumed-role session's role; any other ARN passes through
                # (pulumi_aws/iam/get_session_context.py, ``issuer_arn``).
                arn = args.args["arn"]
                issuer = arn
                if ":assumed-role/" in arn:
                    role = arn.split(":assumed-role/", 1)[1].split("/")[0]
                    path = self.iam_paths.get(role, "/")  # the role's IAM path (mock_account)
                    issuer = scope.arn("iam", f"role{path}{role}", region=False)
                return {"arn": arn, "issuerArn": issuer, "id": arn}
            if (answer := self.account_invoke(token, scope, dict(args.args))) is not None:
                return answer
            if token == "aws:eks/getCluster:getCluster":
                return self._get_cluster(scope, args.args["name"])
            if token == "aws:ssm/getParameter:getParameter":
                return self._get_parameter(scope, args.args["name"])
            if token == "aws:eks/getAccessEntry:getAccessEntry":
                return self._get_access_entry(
                    scope, args.args["clusterName"], args.args["principalArn"]
                )
            if token == "aws:eks/getAddon:getAddon":
                return self._get_addon(args.args["clusterName"], args.args["addonName"])
            if token == "aws:eks/getAddonVersion:getAddonVersion":
                # EKS's version for the minor is only known at deploy time: unless a test
                # publishes one, a marker that says so, naming the minor (the render and the
                # plan show it; a minor upgrade changes it).
                addon, minor = args.args["addonName"], args.args["kubernetesVersion"]
                version = self.published_addon_versions.get(addon) or (
                    f"{RESOLVED_AT_DEPLOY} for {minor}"
                )
                return {**args.args, "version": version, "id": addon}
            if token == "aws:index/getPartition:getPartition":
                return {
                    "partition": scope.partition,
                    "dnsSuffix": scope.dns_suffix,
                    "reverseDnsPrefix": ".".join(reversed(scope.dns_suffix.split("."))),
                    "id": scope.partition,
                }
            if token == "aws:index/getRegion:getRegion":
                return {"name": scope.region, "region": scope.region, "id": scope.region}
            if token == "aws:ec2/getSubnet:getSubnet":
                # An existing subnet's zone is the account's: not modelled (null), so offline
                # the EFA zone check (nodepool/zones.py) cannot test it against the VPC.
                return {**args.args, "availabilityZone": None}
            if token == "aws:index/getAvailabilityZones:getAvailabilityZones":
                # The region's real zone count where it is modelled (regions.py); a `state`
                # filter drops the zones in another state (``impaired_zones``), as the API does.
                names = [
                    name
                    for name in modelled_zone_names(scope.region)
                    if args.args.get("state") in (None, "available")
                    and not (args.args.get("state") and name in self.impaired_zones)
                ]
                short = region_short_code(scope.region)
                out = {
                    "names": names,
                    "zoneIds": [f"{short}-az{'abcdef'.index(name[-1]) + 1}" for name in names],
                    "id": scope.region,
                }
                if args.args.get("state"):
                    out["state"] = args.args["state"]
                return out
        self._unmodelled(
            token,
            "invoke",
            f"offline mocks: invoke {token!r} is not modelled (strict mode); "
            "RecordingMocks(strict=False) answers it with its arguments",
        )
        seed = token + json.dumps(args.args, sort_keys=True, default=str)
        return {**args.args, "id": args.args.get("id") or _hex(seed, 17)}
