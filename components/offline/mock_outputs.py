"""What the recording mocks answer per resource type: realistic outputs for the AWS types this
project uses (ids shaped like AWS ids, ARNs from the partition, region and account), generic
outputs with an ARN of the real shape for the others, and the ``eks:index:Cluster`` remote
component (its kubeconfig and OIDC issuer). ``RecordingMocks`` (mocks.py) mixes them in.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any

from .mock_types import Scope, _hex, _uuid


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


class MockOutputs:
    """The per-type outputs of ``RecordingMocks``: the AWS builders, the generic AWS outputs and
    the remote components (a mixin; ``RecordingMocks`` holds the state they read)."""

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

        def policy_association(name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            # The provider's id: cluster#principal#policy (terraform-provider-aws
            # internal/service/eks/access_policy_association.go, accessPolicyAssociationCreate).
            rid = f"{inputs['clusterName']}#{inputs['principalArn']}#{inputs['policyArn']}"
            return rid, {**inputs, "associatedAt": "2026-01-01T00:00:00Z"}

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
            "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": policy_association,
            "aws:eks/addon:Addon": eks_child("addon", "arn"),
            "aws:eks/nodeGroup:NodeGroup": eks_child("nodegroup", "arn"),
        }

    # -- remote components ------------------------------------------------------------------

    def _component(
        self,
        typ: str,
        name: str,
        inputs: dict[str, Any],
        provider: str | None,
        transforms: list[Any] = (),  # type: ignore[assignment]
    ) -> tuple[str, dict]:
        if typ == "eks:index:Cluster":
            self._eks_cluster_child(name, inputs, list(transforms or ()))
            # pulumi-eks creates the cluster with the AWS provider it is given (the monitor
            # passes it in as ``provider``) and writes the kubeconfig's --region from the
            # cluster's ARN (nodejs/eks/cluster/cluster.ts, getRegionFromArn).
            return "", self._eks_cluster(name, inputs, self.scope(provider))
        return "", {}

    def _eks_cluster_child(self, name: str, inputs: dict[str, Any], transforms: list[Any]) -> None:
        """pulumi-eks's child ``aws:eks/cluster:Cluster`` (``<name>-eksCluster``) as far as
        access goes: the ``accessConfig`` it hard-codes (pulumi/pulumi-eks
        nodejs/eks/cluster/cluster.ts L733-741, v4.3.0), after the component's own transforms,
        which the engine runs on every child the plugin registers (pulumi/pulumi
        pkg/resource/deploy/source_eval.go L2474-2489, HEAD 1b59498). Recorded in
        ``remote_children``; the SDK's mock monitor hands the transforms over as callables
        (pulumi/runtime/mocks.py ``_resolve_callbacks``) but runs none."""
        from pulumi import ResourceOptions, ResourceTransformArgs

        props: dict[str, Any] = {"name": inputs.get("name")}
        if inputs.get("authenticationMode"):
            props["accessConfig"] = {
                "authenticationMode": inputs["authenticationMode"],
                "bootstrapClusterCreatorAdminPermissions": True,
            }
        child = f"{name}-eksCluster"
        for transform in transforms:
            result = transform(
                ResourceTransformArgs(
                    custom=True,
                    type_="aws:eks/cluster:Cluster",
                    name=child,
                    props=props,
                    opts=ResourceOptions(),
                )
            )
            if result is not None:
                props = dict(result.props)
        self.remote_children.append(("aws:eks/cluster:Cluster", child, props))

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
