"""Recording Pulumi mocks: the engine stand-in behind the offline render and the test suite.

``RecordingMocks`` answers resource registrations and invokes with realistic values (ARNs built
from the partition, region and a placeholder account; ids shaped like AWS ids; a kubeconfig).

The region is the one the real engine would use: an explicit ``aws.Provider``'s ``region`` for
the resources and invokes it serves, else the stack's ``aws:region`` (the default provider's). No
region at all is a ``SpecError`` naming ``aws:region``.

Strict mocks (the default; the test suite's) raise on resource types and invokes they do not
model: a silent ``{}`` would turn into ``arn:None:...`` far away. The render runs non-strict: an
unmodelled type gets generic outputs (its inputs, an id, an ARN of the real shape where known)
and is recorded in ``Recording.unmodelled``, which the render prints one notice line per type.
``RecordingMonitor`` also records what the stock monitor drops: parent, dependencies, protect,
provider and the outputs each component registers.

``run(program, ...)`` runs a Pulumi program under fresh mocks and returns a ``Recording``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
import pulumi
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import resource as _sdk_resource
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import resource_pb2, source_pb2

from ..cluster import access_wait
from ..config import partition_for_region
from ..regions import modelled_zone_names
from ..spec import SpecError
from .mock_account import MockAccount
from .mock_outputs import GLOBAL_SERVICES, KNOWN_ARNS, MockOutputs
from .mock_types import DIRECTIONS, Registration, Scope, _hex, region_short_code

__all__ = [
    "AWS_PROVIDER",
    "DIRECTIONS",
    "GLOBAL_SERVICES",
    "KNOWN_ARNS",
    "MISSING_REGION",
    "PLACEHOLDER_ACCOUNT_ID",
    "RESOLVED_AT_DEPLOY",
    "MockOutputs",
    "Recording",
    "RecordingMocks",
    "RecordingMonitor",
    "Registration",
    "Scope",
    "region_short_code",
    "run",
]


PLACEHOLDER_ACCOUNT_ID = "123456789012"
# What the offline mocks answer for an add-on version looked up at deploy time.
RESOLVED_AT_DEPLOY = "resolved at deploy"
AWS_PROVIDER = "pulumi:providers:aws"
# The same line PlatformConfig.load gives when neither the stack nor the code names a region.
MISSING_REGION = "aws:region: is required; set it with `pulumi config set aws:region`"


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


class RecordingMocks(MockOutputs, MockAccount, pulumi.runtime.Mocks):
    """Realistic answers for every resource type and invoke this project uses.

    ``region``/``partition``: the default provider's (the stack's ``aws:region``), or None when
    the stack sets none. ``strict``: raise on unmodelled types and invokes (the test suite), or
    answer them generically and record them in ``unmodelled`` (the render).
    """

    def __init__(
        self,
        *,
        region: str | None,
        partition: str | None = None,
        account_id: str = PLACEHOLDER_ACCOUNT_ID,
        strict: bool = True,
    ):
        self.region = region or None
        self.partition = partition or (partition_for_region(region) if region else None)
        self.account_id = account_id
        self.strict = strict
        self.calls: list[tuple[str, dict[str, Any]]] = []
        # Explicit AWS providers ("<urn>::<id>" -> their region input), filled by the monitor.
        self.provider_regions: dict[str, str | None] = {}
        # Unmodelled type or invoke token -> "resource" or "invoke", in first-seen order.
        self.unmodelled: dict[str, str] = {}
        # The children of remote components the mocks model (type, name, inputs after the
        # component's transforms ran on them, as the engine runs them): mock_outputs.py.
        self.remote_children: list[tuple[str, str, dict[str, Any]]] = []
        self._builder_cache: dict[Scope, dict[str, Callable]] = {}
        # The inputs the SDK's MockMonitor deserialized for the registration this thread is
        # answering (RecordingMonitor records them instead of deserializing them again).
        self.answering = threading.local()

    # -- regions ----------------------------------------------------------------------------

    def register_provider(self, ref: str, inputs: Mapping[str, Any]) -> None:
        """An explicit ``aws.Provider`` registered as ``ref``: remember its region."""
        region = inputs.get("region")
        self.provider_regions[ref] = region if isinstance(region, str) and region else None

    def scope(self, provider: str | None, region: Any = None) -> Scope:
        """The scope of a resource or invoke served by ``provider`` (a ``<urn>::<id>`` ref).

        As pulumi-aws resolves it: the resource's or invoke's own ``region`` argument (v7,
        "Defaults to the Region set in the provider configuration": pulumi_aws/get_region.py),
        else its explicit provider's ``region``, else the default provider's, which reads the
        stack's ``aws:region`` (pulumi_aws/config/vars.py ``region``). Explicit providers do not
        read stack configuration (pulumi_aws/provider.py builds their inputs from arguments).
        """
        if not (isinstance(region, str) and region):
            if provider and provider in self.provider_regions:
                region = self.provider_regions[provider]
                if region is None:
                    provider_name = provider.split("::")[3] if provider.count("::") >= 4 else ""
                    raise SpecError.from_lines(
                        [f"{provider_name}: this AWS provider has no region; pass region=..."]
                    )
            else:
                region = self.region
        if not region:
            raise SpecError.from_lines([MISSING_REGION])
        if region == self.region and self.partition:
            return Scope(region, self.partition, self.account_id)
        return Scope(region, partition_for_region(region), self.account_id)

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

    def _unmodelled(self, token: str, kind: str, message: str) -> None:
        if self.strict:
            raise NotImplementedError(message)
        self.unmodelled.setdefault(token, kind)

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

    # -- resources --------------------------------------------------------------------------

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.answering.inputs = args.inputs
        typ, name, inputs = args.typ, args.name, dict(args.inputs)
        if not args.custom:
            return self._component(typ, name, inputs, args.provider, args.transforms)
        if typ.startswith("kubernetes:") or typ.startswith("pulumi:providers:"):
            return f"{name}-id", inputs
        scope = self.scope(args.provider, inputs.get("region")) if typ.startswith("aws:") else None
        builder = self._builders(scope).get(typ) if scope else None
        if builder is not None:
            return builder(name, inputs)
        self._unmodelled(
            typ,
            "resource",
            f"offline mocks: resource type {typ!r} ({name!r}) is not modelled (strict mode); "
            "RecordingMocks(strict=False) renders it with generic outputs",
        )
        if scope is not None:
            rid, state = self._generic_aws(scope, typ, name, inputs)
            return args.resource_id or rid, state
        return args.resource_id or f"{name}-{_hex(name, 7)}", inputs


class RecordingMonitor(_mocks.MockMonitor):
    """The stock mock monitor, plus a record of resource options and registered outputs.

    It also leaves resource references out of the features it offers, so a remote component
    passed as an input serialises as its URN instead of being rehydrated on a worker thread
    (the flaky "attached to a different loop" hang; see FACTS §9.2).
    """

    def __init__(self, mocks: RecordingMocks):
        super().__init__(mocks)
        self.registrations: dict[str, Registration] = {}
        # Resources the program reads (``Resource.get``): (type, name, id), in order.
        self.reads: list[tuple[str, str, str]] = []

    def ReadResource(self, request):
        self.reads.append((request.type, request.name, request.id))
        return super().ReadResource(request)

    def Invoke(self, request):
        """As the stock monitor, except that an identity lookup with no caller set is answered
        unknown, as the engine answers an invoke of a provider whose configuration is unknown
        (``resp.unknown``: pulumi/runtime/invoke.py L368-369, 3.272.0)."""
        if (
            request.tok == "aws:index/getCallerIdentity:getCallerIdentity"
            and getattr(self.mocks, "caller", "") is None
        ):
            self.mocks.calls.append((request.tok, {}))
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        return super().Invoke(request)

    def GetDeploymentInfo(self, request):
        info = super().GetDeploymentInfo(request)
        features = [
            f
            for f in info.supportedFeatures
            if f != resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES
        ]
        return resource_pb2.DeploymentInfo(supportedFeatures=features)

    def SupportsFeature(self, request):
        if request.id == "resourceReferences":
            return type("SupportsFeatureResponse", (object,), {"hasSupport": False})
        return super().SupportsFeature(request)

    def RegisterResource(self, request):
        answered = request
        if not request.custom and request.providers.get("aws"):
            # A component's AWS provider travels in its providers map (the SDK sends it for
            # remote components, pulumi/runtime/resource.py): hand it to the mocks as the
            # provider, so a remote component such as eks:index:Cluster is answered in its
            # provider's region. The recording keeps the request as sent.
            answered = type(request)()
            answered.CopyFrom(request)
            answered.provider = request.providers["aws"]
        answering = getattr(self.mocks, "answering", None)
        if answering is not None:
            answering.inputs = None
        response = super().RegisterResource(answered)
        if request.type == "pulumi:pulumi:Stack":
            return response
        registered = self.resources[response.urn]
        # The SDK's MockMonitor deserialized request.object for the mocks (pulumi/runtime/
        # mocks.py ``RegisterResource``: ``rpc.deserialize_properties(request.object)`` into
        # ``MockResourceArgs.inputs``); the mocks copy it before building outputs.
        inputs = getattr(answering, "inputs", None)
        if inputs is None:
            inputs = rpc.deserialize_properties(request.object)
        if request.type == AWS_PROVIDER:
            self.mocks.register_provider(f"{response.urn}::{response.id}", inputs)
        self.registrations[response.urn] = Registration(
            type=request.type,
            name=request.name,
            urn=response.urn,
            parent=request.parent,
            custom=bool(request.custom),
            inputs=inputs,
            outputs=dict(registered.state),
            id=registered.id or "",
            dependencies=list(request.dependencies),
            property_dependencies={
                k: list(v.urns) for k, v in request.propertyDependencies.items()
            },
            provider=request.provider,
            protect=bool(request.protect),
            ignore_changes=list(request.ignoreChanges),
            replace_on_changes=list(request.replaceOnChanges),
            delete_before_replace=bool(request.deleteBeforeReplace),
            version=request.version,
            aliases=[_alias(a) for a in request.aliases],
            custom_timeouts={
                k: getattr(request.customTimeouts, k)
                for k in ("create", "update", "delete")
                if getattr(request.customTimeouts, k)
            }
            or None,
            retain_on_delete=bool(request.retainOnDelete),
        )
        return response

    def RegisterResourceOutputs(self, request):
        reg = self.registrations.get(request.urn)
        if reg is not None:
            reg.registered_outputs = rpc.deserialize_properties(request.outputs)
        return super().RegisterResourceOutputs(request)


def _alias(alias: Any) -> dict[str, Any]:
    """An alias as the SDK sent it: a full URN, or a spec of what changed (empty = unchanged)."""
    if alias.urn:
        return {"urn": alias.urn}
    spec = alias.spec
    out = {k: getattr(spec, k) for k in ("name", "type", "stack", "project") if getattr(spec, k)}
    if spec.parentUrn:
        out["parentUrn"] = spec.parentUrn
    if spec.noParent:
        out["noParent"] = True
    return out


@dataclass
class Recording:
    """Everything a program registered, in registration order, plus its stack outputs."""

    resources: list[Registration]
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Resource types and invoke tokens the mocks answered generically (non-strict runs only).
    unmodelled: dict[str, str] = field(default_factory=dict)
    # Modelled children of remote components: (type, name, inputs after transforms).
    remote_children: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    # What the program logged as warnings (``pulumi.log.warn``), sorted, each once.
    warnings: list[str] = field(default_factory=list)
    # The server of each access review the program's access wait made (cluster/access_wait.py).
    api_probes: list[str] = field(default_factory=list)
    # Existing resources the program read (``Resource.get``): (type, name, id).
    reads: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def notices(self) -> list[str]:
        """One line per unmodelled resource type or invoke, sorted."""
        how = {"resource": "rendered with generic outputs", "invoke": "answered with its arguments"}
        return [
            f"notice: {token} is not modelled by the offline mocks; {how[kind]}"
            for token, kind in sorted(self.unmodelled.items())
        ]

    def of_type(self, typ: str) -> list[Registration]:
        return [r for r in self.resources if r.type == typ]

    def named(self, name: str) -> Registration:
        matches = [r for r in self.resources if r.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources named {name!r}")
        return matches[0]

    def children_of(self, urn: str) -> list[Registration]:
        return [r for r in self.resources if r.parent == urn]


def run(
    program: Callable[[], Any],
    *,
    project: str,
    stack: str,
    config: Mapping[str, Any],
    region: str | None,
    partition: str | None = None,
    account_id: str = PLACEHOLDER_ACCOUNT_ID,
    secret_keys: list[str] | None = None,
    strict: bool = True,
    preview: bool = False,
) -> Recording:
    """Run ``program`` under fresh recording mocks and return what it registered.

    ``config`` maps full keys (``"<project>:cluster"``, ``"aws:region"``) to values; structured
    values are passed as JSON, as the Pulumi CLI does. ``region``: the default AWS provider's
    (the stack's ``aws:region``; None when it has none). ``strict``: see ``RecordingMocks``.
    ``preview``: what ``pulumi.runtime.is_dry_run()`` answers (the render runs as a preview).
    """
    settings.reset_options()
    mocks = RecordingMocks(region=region, partition=partition, account_id=account_id, strict=strict)
    monitor = RecordingMonitor(mocks)
    # The mock engine hands every log request to a ``logging.Logger``, warnings as
    # ``logger.warning(message)`` (pulumi/runtime/mocks.py ``MockEngine.Log``, 3.272.0): this
    # one keeps them for the summary and passes them on to the root logger, as before.
    logger = logging.getLogger(f"{__name__}.program")
    kept = _KeptWarnings()
    logger.addHandler(kept)
    pulumi.runtime.set_mocks(
        mocks, project=project, stack=stack, preview=preview, monitor=monitor, logger=logger
    )
    pulumi.runtime.set_all_config(
        {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()},
        secret_keys or [],
    )
    outputs: dict[str, Any] = {}
    secret: set[str] = set()

    @pulumi.runtime.test
    def execute() -> Any:
        program()
        root = settings.get_root_resource()
        exported = dict(getattr(root, "outputs", {}) or {})

        async def collect(name: str, value: Any) -> None:
            output = pulumi.Output.from_input(value)
            if await output.is_secret():
                secret.add(name)
            outputs[name] = await output.future()

        return pulumi.Output.all(
            *[
                pulumi.Output.from_input(asyncio.ensure_future(collect(n, v)))
                for n, v in exported.items()
            ]
        )

    # Every registration walks the whole Python stack for the request's source position and
    # stack trace (pulumi/runtime/resource.py ``_get_stack_trace``, called from
    # ``register_resource`` and ``read_resource``), which only the real engine reads: the mock
    # monitor (pulumi/runtime/mocks.py ``MockMonitor.RegisterResource``) and the recording use
    # neither. For the run, the SDK gets an empty trace, as it does itself when it finds no
    # user frame; ``_get_source_position`` then answers None.
    saved_stack_trace = getattr(_sdk_resource, "_get_stack_trace", None)
    if saved_stack_trace is not None:
        _sdk_resource._get_stack_trace = _empty_stack_trace
    # The mocks stand in for the API server the access wait calls (cluster/access_wait.py).
    saved_transport, access_wait.TRANSPORT = access_wait.TRANSPORT, mocks.access_transport()
    try:
        execute()
    finally:
        access_wait.TRANSPORT = saved_transport
        logger.removeHandler(kept)
        if saved_stack_trace is not None:
            _sdk_resource._get_stack_trace = saved_stack_trace
        # Leave no state for the next run in this process (tests run many programs).
        settings.reset_options()
        _drain_loop()
    return Recording(
        resources=list(monitor.registrations.values()),
        outputs=outputs,
        secret_outputs=secret,
        calls=mocks.calls,
        unmodelled=dict(mocks.unmodelled),
        remote_children=list(mocks.remote_children),
        warnings=sorted(set(kept.messages)),
        api_probes=list(getattr(mocks, "api_probes", [])),
        reads=list(monitor.reads),
    )


class _KeptWarnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno == logging.WARNING:
            self.messages.append(record.getMessage())


def _empty_stack_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()


def _drain_loop() -> None:
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:
        return
    if not loop.is_closed() and not loop.is_running():
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
