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
import base64
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import resource_pb2

from ..config import partition_for_region
from ..spec import SpecError

PLACEHOLDER_ACCOUNT_ID = "123456789012"
AWS_PROVIDER = "pulumi:providers:aws"
# The same line PlatformConfig.load gives when neither the stack nor the code names a region.
MISSING_REGION = "aws:region: is required; set it with `pulumi config set aws:region`"


DIRECTIONS = {
    "east": "e",
    "west": "w",
    "north": "n",
    "south": "s",
    "central": "c",
    "northeast": "ne",
    "northwest": "nw",
    "southeast": "se",
    "southwest": "sw",
}


def region_short_code(region: str) -> str:
    """How AWS abbreviates a region in zone ids: us-west-2 -> usw2, ap-northeast-1 -> apne1."""
    *parts, number = region.split("-")
    head, rest = parts[0], parts[1:]
    if rest[:1] == ["gov"]:
        head, rest = head + "g", rest[1:]
    return head + "".join(DIRECTIONS.get(p, p[:1]) for p in rest) + number


def _hex(seed: str, length: int) -> str:
    """A stable hex string derived from ``seed``: the same program gives the same ids."""
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


def _uuid(seed: str) -> str:
    h = _hex(seed, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass
class Registration:
    """One resource as the engine saw it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    id: str
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    provider: str
    protect: bool
    ignore_changes: list[str]
    replace_on_changes: list[str]
    delete_before_replace: bool
    version: str
    aliases: list[dict[str, Any]]
    registered_outputs: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "urn": self.urn,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": self.inputs,
            "dependencies": self.dependencies,
            "provider": self.provider,
            "protect": self.protect,
            "ignoreChanges": self.ignore_changes,
            "replaceOnChanges": self.replace_on_changes,
            "deleteBeforeReplace": self.delete_before_replace,
            "aliases": self.aliases,
            "registeredOutputs": self.registered_outputs,
        }


@dataclass(frozen=True)
class Scope:
    """Where an AWS resource or invoke lives: its provider's region, partition and account."""

    region: str
    partition: str
    account_id: str

    @property
    def dns_suffix(self) -> str:
        return "amazonaws.com.cn" if self.partition == "aws-cn" else "amazonaws.com"

    def arn(self, service: str, resource: str, *, region: bool = True) -> str:
        reg = self.region if region else ""
        return f"arn:{self.partition}:{service}:{reg}:{self.account_id}:{resource}"


def _kebab(member: str) -> str:
    """``transitGateway`` -> ``transit-gateway``: how most ARNs spell a resource kind."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", member).lower()


# ARN shapes of common AWS types the project does not use, where they differ from the generic
# ``arn:<partition>:<service>:<region>:<account>:<kind>/<name>`` (AWS Service Authorization
# Reference, "Resource types defined by ..."; S3: docs.aws.amazon.com/AmazonS3/latest/userguide/
# s3-arn-format.html). Value: (ARN template, input holding the physical name, id is the ARN).
KNOWN_ARNS: dict[str, tuple[str, str, bool]] = {
    "aws:s3/bucket:Bucket": ("arn:{p}:s3:::{n}", "bucket", False),
    "aws:s3/bucketV2:BucketV2": ("arn:{p}:s3:::{n}", "bucket", False),
    "aws:cloudwatch/logGroup:LogGroup": ("arn:{p}:logs:{r}:{a}:log-group:{n}", "name", False),
    "aws:sns/topic:Topic": ("arn:{p}:sns:{r}:{a}:{n}", "name", True),
    "aws:lambda/function:Function": ("arn:{p}:lambda:{r}:{a}:function:{n}", "name", False),
}
# Global services: their ARNs carry no region.
GLOBAL_SERVICES = ("iam",)


class RecordingMocks(pulumi.runtime.Mocks):
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
        self._builder_cache: dict[Scope, dict[str, Callable]] = {}

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
                    "arn": scope.arn("iam", "user/offline-render", region=False),
                    "userId": "AIDAOFFLINERENDER0000",
                    "id": scope.account_id,
                }
            if token == "aws:index/getPartition:getPartition":
                return {
                    "partition": scope.partition,
                    "dnsSuffix": scope.dns_suffix,
                    "reverseDnsPrefix": ".".join(reversed(scope.dns_suffix.split("."))),
                    "id": scope.partition,
                }
            if token == "aws:index/getRegion:getRegion":
                return {"name": scope.region, "region": scope.region, "id": scope.region}
            if token == "aws:index/getAvailabilityZones:getAvailabilityZones":
                letters = "abcdef"
                short = region_short_code(scope.region)
                return {
                    "names": [f"{scope.region}{c}" for c in letters],
                    "zoneIds": [f"{short}-az{i + 1}" for i in range(len(letters))],
                    "state": "available",
                    "id": scope.region,
                }
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
        typ, name, inputs = args.typ, args.name, dict(args.inputs)
        if not args.custom:
            return self._component(typ, name, inputs, args.provider)
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

    def _generic_aws(
        self, scope: Scope, typ: str, name: str, inputs: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """Generic state for an AWS type: the inputs, a physical name, an ARN of its shape."""
        module, _, member = typ.split(":")[1].partition("/")
        template, key, id_is_arn = KNOWN_ARNS.get(typ, ("", "name", False))
        physical = inputs.get(key) or f"{name}-{_hex(name, 7)}"
        if template:
            arn = template.format(p=scope.partition, r=scope.region, a=scope.account_id, n=physical)
        else:
            regional = module not in GLOBAL_SERVICES
            arn = scope.arn(module, f"{_kebab(member)}/{physical}", region=regional)
        state = {**inputs, "arn": arn}
        if template:
            state[key] = physical
        return (arn if id_is_arn else physical), state

    def _physical(self, name: str, inputs: dict[str, Any], key: str = "name") -> str:
        """Pulumi auto-naming: the logical name plus a random suffix, unless a name is given."""
        return inputs.get(key) or f"{name}-{_hex(name, 7)}"

    def _builders(
        self, scope: Scope
    ) -> dict[str, Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]]]:
        cached = self._builder_cache.get(scope)
        if cached is None:
            cached = self._builder_cache[scope] = self._make_builders(scope)
        return cached

    def _make_builders(
        self, scope: Scope
    ) -> dict[str, Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]]]:
        def with_id(prefix: str, service: str = "ec2", kind: str = "") -> Callable:
            def build(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
                rid = f"{prefix}-{_hex(name, 17)}"
                state = {**inputs, "arn": scope.arn(service, f"{kind or prefix}/{rid}")}
                return rid, state

            return build

        def kms_key(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            key_id = _uuid(name)
            return key_id, {**inputs, "keyId": key_id, "arn": scope.arn("kms", f"key/{key_id}")}

        def kms_alias(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            alias = inputs["name"]
            return alias, {**inputs, "arn": scope.arn("kms", alias)}

        def iam_role(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            role = self._physical(name, inputs)
            path = inputs.get("path", "/")
            arn = scope.arn("iam", f"role{path}{role}", region=False)
            return role, {**inputs, "name": role, "arn": arn, "uniqueId": "AROA" + _hex(name, 17)}

        def iam_policy(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            policy = self._physical(name, inputs)
            path = inputs.get("path", "/")
            arn = scope.arn("iam", f"policy{path}{policy}", region=False)
            return arn, {**inputs, "name": policy, "arn": arn, "policyId": "ANPA" + _hex(name, 17)}

        def attachment(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return f"{name}-{_hex(name, 8)}", inputs

        def slr(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            service = inputs["awsServiceName"]
            role = "AWSServiceRoleForEC2Spot"
            arn = scope.arn("iam", f"role/aws-service-role/{service}/{role}", region=False)
            return arn, {**inputs, "name": role, "arn": arn}

        def queue(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            qname = self._physical(name, inputs)
            url = f"https://sqs.{scope.region}.{scope.dns_suffix}/{scope.account_id}/{qname}"
            return url, {**inputs, "name": qname, "arn": scope.arn("sqs", qname), "url": url}

        def queue_policy(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return inputs["queueUrl"], inputs

        def event_rule(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            rule = self._physical(name, inputs)
            return rule, {**inputs, "name": rule, "arn": scope.arn("events", f"rule/{rule}")}

        def event_target(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return f"{inputs['rule']}-{inputs['targetId']}", inputs

        def placement_group(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            pg_name = self._physical(name, inputs)
            pg_id = f"pg-{_hex(name, 17)}"
            arn = scope.arn("ec2", f"placement-group/{pg_name}")
            return pg_name, {**inputs, "name": pg_name, "placementGroupId": pg_id, "arn": arn}

        def eks_child(kind: str, key: str) -> Callable:
            def build(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
                cluster = inputs["clusterName"]
                rid = f"{cluster}:{_hex(name, 8)}"
                arn = scope.arn("eks", f"{kind}/{cluster}/{_hex(name, 12)}")
                return rid, {**inputs, key: arn}

            return build

        def tag(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return f"{inputs['resourceId']},{inputs['key']}", inputs

        def eip(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            alloc = f"eipalloc-{_hex(name, 17)}"
            octets = [int(_hex(name + str(i), 2), 16) for i in range(2)]
            ip = f"52.10.{octets[0]}.{octets[1]}"
            return alloc, {**inputs, "allocationId": alloc, "publicIp": ip}

        def launch_template(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            lt_id = f"lt-{_hex(name, 17)}"
            arn = scope.arn("ec2", f"launch-template/{lt_id}")
            return lt_id, {**inputs, "arn": arn, "latestVersion": 1, "defaultVersion": 1}

        def sg_rule(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            rid = f"sgr-{_hex(name, 17)}"
            return rid, {**inputs, "securityGroupRuleId": rid}

        def route(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return f"r-{inputs['routeTableId']}1080289494", inputs

        def association(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return f"rtbassoc-{_hex(name, 17)}", inputs

        return {
            "aws:kms/key:Key": kms_key,
            "aws:kms/alias:Alias": kms_alias,
            "aws:iam/role:Role": iam_role,
            "aws:iam/policy:Policy": iam_policy,
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment": attachment,
            "aws:iam/serviceLinkedRole:ServiceLinkedRole": slr,
            "aws:sqs/queue:Queue": queue,
            "aws:sqs/queuePolicy:QueuePolicy": queue_policy,
            "aws:cloudwatch/eventRule:EventRule": event_rule,
            "aws:cloudwatch/eventTarget:EventTarget": event_target,
            "aws:ec2/vpc:Vpc": with_id("vpc"),
            "aws:ec2/subnet:Subnet": with_id("subnet"),
            "aws:ec2/internetGateway:InternetGateway": with_id("igw", kind="internet-gateway"),
            "aws:ec2/natGateway:NatGateway": with_id("nat", kind="natgateway"),
            "aws:ec2/eip:Eip": eip,
            "aws:ec2/routeTable:RouteTable": with_id("rtb", kind="route-table"),
            "aws:ec2/route:Route": route,
            "aws:ec2/routeTableAssociation:RouteTableAssociation": association,
            "aws:ec2/securityGroup:SecurityGroup": with_id("sg", kind="security-group"),
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": sg_rule,
            "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": sg_rule,
            "aws:ec2/placementGroup:PlacementGroup": placement_group,
            "aws:ec2/tag:Tag": tag,
            "aws:ec2/launchTemplate:LaunchTemplate": launch_template,
            "aws:eks/accessEntry:AccessEntry": eks_child("access-entry", "accessEntryArn"),
            "aws:eks/podIdentityAssociation:PodIdentityAssociation": eks_child(
                "podidentityassociation", "associationArn"
            ),
            "aws:eks/addon:Addon": eks_child("addon", "arn"),
            "aws:eks/nodeGroup:NodeGroup": eks_child("nodegroup", "arn"),
        }

    # -- remote components ------------------------------------------------------------------

    def _component(
        self, typ: str, name: str, inputs: dict[str, Any], provider: str | None
    ) -> tuple[str, dict]:
        if typ == "eks:index:Cluster":
            # pulumi-eks creates the cluster with the AWS provider it is given (the monitor
            # passes it in as ``provider``) and writes the kubeconfig's --region from the
            # cluster's ARN (nodejs/eks/cluster/cluster.ts, getRegionFromArn).
            return "", self._eks_cluster(name, inputs, self.scope(provider))
        return "", {}

    def _eks_cluster(self, name: str, inputs: dict[str, Any], scope: Scope) -> dict[str, Any]:
        cluster = inputs.get("name") or f"{name}-eksCluster-{_hex(name, 7)}"
        oidc_id = _hex(name, 32).upper()
        issuer = f"https://oidc.eks.{scope.region}.{scope.dns_suffix}/id/{oidc_id}"
        endpoint = f"https://{oidc_id}.gr7.{scope.region}.eks.{scope.dns_suffix}"
        ca = base64.b64encode(
            b"-----BEGIN CERTIFICATE-----\nOFFLINE-RENDER\n-----END CERTIFICATE-----\n"
        ).decode()
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": cluster, "cluster": {"server": endpoint, "certificate-authority-data": ca}}
            ],
            "contexts": [{"name": "aws", "context": {"cluster": cluster, "user": "aws"}}],
            "current-context": "aws",
            "users": [
                {
                    "name": "aws",
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": [
                                "eks",
                                "get-token",
                                "--cluster-name",
                                cluster,
                                "--region",
                                scope.region,
                            ],
                        }
                    },
                }
            ],
        }
        primary_sg = f"sg-{_hex(name + '/primary', 17)}"
        return {
            "kubeconfig": kubeconfig,
            "kubeconfigJson": json.dumps(kubeconfig),
            "clusterSecurityGroupId": primary_sg,
            "nodeSecurityGroupId": primary_sg,
            "oidcProviderArn": scope.arn(
                "iam", f"oidc-provider/{issuer.removeprefix('https://')}", region=False
            ),
            "oidcProviderUrl": issuer,
            "oidcIssuer": issuer.removeprefix("https://"),
            "core": {"endpoint": endpoint, "vpcId": inputs.get("vpcId")},
        }


class RecordingMonitor(_mocks.MockMonitor):
    """The stock mock monitor, plus a record of resource options and registered outputs.

    It also leaves resource references out of the features it offers, so a remote component
    passed as an input serialises as its URN instead of being rehydrated on a worker thread
    (the flaky "attached to a different loop" hang; see FACTS §9.2).
    """

    def __init__(self, mocks: RecordingMocks):
        super().__init__(mocks)
        self.registrations: dict[str, Registration] = {}

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
        response = super().RegisterResource(answered)
        if request.type == "pulumi:pulumi:Stack":
            return response
        registered = self.resources[response.urn]
        if request.type == AWS_PROVIDER:
            self.mocks.register_provider(
                f"{response.urn}::{response.id}", rpc.deserialize_properties(request.object)
            )
        self.registrations[response.urn] = Registration(
            type=request.type,
            name=request.name,
            urn=response.urn,
            parent=request.parent,
            custom=bool(request.custom),
            inputs=rpc.deserialize_properties(request.object),
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
) -> Recording:
    """Run ``program`` under fresh recording mocks and return what it registered.

    ``config`` maps full keys (``"<project>:cluster"``, ``"aws:region"``) to values; structured
    values are passed as JSON, as the Pulumi CLI does. ``region``: the default AWS provider's
    (the stack's ``aws:region``; None when it has none). ``strict``: see ``RecordingMocks``.
    """
    settings.reset_options()
    mocks = RecordingMocks(region=region, partition=partition, account_id=account_id, strict=strict)
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False, monitor=monitor)
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

    try:
        execute()
    finally:
        # Leave no state for the next run in this process (tests run many programs).
        settings.reset_options()
        _drain_loop()
    return Recording(
        resources=list(monitor.registrations.values()),
        outputs=outputs,
        secret_outputs=secret,
        calls=mocks.calls,
        unmodelled=dict(mocks.unmodelled),
    )


def _drain_loop() -> None:
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:
        return
    if not loop.is_closed() and not loop.is_running():
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
