"""The ``EksCluster`` component (``eks_gpu_platform.cluster.component``): its children and their
inputs under the recording mocks."""

import dataclasses
import json

import pytest
from addon_pins import ADDON_VERSIONS

from eks_gpu_platform.cluster.args import EksClusterArgs
from eks_gpu_platform.cluster.component import EksCluster
from eks_gpu_platform.cluster.spec import ClusterSpec, SystemNodeGroupSpec
from eks_gpu_platform.iam import ec2_trust_policy

COMPONENT = "eks-gpu-platform:index:EksCluster"
ACCOUNT = "111122223333"
KMS_ARN = "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
# No AmazonEKS_CNI_Policy (the vpc-cni add-on's own role) and no SSM (opt-in): issue 22, point 3.
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
)


def eks_cluster(
    run_program,
    spec: ClusterSpec,
    system: SystemNodeGroupSpec | None = None,
    *,
    region: str = "us-west-2",
    partition: str = "aws",
):
    # Pinned, so these tests ask EKS nothing about add-ons (tests/cluster/test_addon_versions.py
    # covers the lookups).
    if not spec.addon_versions:
        spec = dataclasses.replace(spec, addon_versions=ADDON_VERSIONS)

    def program():
        EksCluster(
            "c",
            EksClusterArgs(
                spec=spec,
                system_node_group=system or SystemNodeGroupSpec(),
                vpc_id="vpc-0123456789abcdef0",
                private_subnet_ids=SUBNETS,
                tags={"team": "ml"},
            ),
        )

    return run_program(program, region=region, partition=partition, account_id=ACCOUNT)


def find(recording, typ: str, name: str):
    matches = [r for r in recording.resources if r.type == typ and r.name == name]
    assert len(matches) == 1, (typ, name, len(matches))
    return matches[0]


PUBLIC = ClusterSpec(
    name="gpu-dev",
    endpoint_public_access=True,
    public_access_cidrs=("52.94.76.0/22",),
    # The deploying identity (the mocks' caller) is an admin: with EKS's bootstrap entry off,
    # nothing else lets its Kubernetes steps in (tests/cluster/test_admins.py).
    admins=("role/PlatformAdmin", "user/offline-render", "arn:aws:iam::444455556666:user/alice"),
)


def expected_children(*, kms: bool) -> list[tuple[str, str]]:
    out = [
        ("eks:index:Cluster", "c-eks"),
        ("aws:ec2/tag:Tag", "c-primary-sg-discovery"),
        ("pulumi:providers:kubernetes", "c-k8s"),
        ("aws:eks/addon:Addon", "c-vpc-cni"),
        ("aws:eks/addon:Addon", "c-kube-proxy"),
        ("aws:eks/addon:Addon", "c-eks-pod-identity-agent"),
        ("aws:eks/addon:Addon", "c-coredns"),
        ("aws:iam/role:Role", "c-system-node"),
        ("aws:iam/role:Role", "c-vpc-cni"),
        ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "c-vpc-cni-AmazonEKS_CNI_Policy"),
        *[
            ("aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"c-system-node-{p}")
            for p in NODE_POLICIES
        ],
        ("aws:ec2/launchTemplate:LaunchTemplate", "c-system"),
        ("aws:eks/nodeGroup:NodeGroup", "c-system"),
    ]
    if kms:
        out += [("aws:kms/key:Key", "c-secrets"), ("aws:kms/alias:Alias", "c-secrets")]
    return sorted(out)


@pytest.mark.parametrize("given_key", [False, True], ids=["key-created", "key-given"])
def test_children(run_program, given_key):
    spec = ClusterSpec(name="gpu-dev", kms_key_arn=KMS_ARN if given_key else None)
    rec = eks_cluster(run_program, spec)
    (component,) = rec.of_type(COMPONENT)
    children = rec.children_of(component.urn)
    assert sorted((c.type, c.name) for c in children) == expected_children(kms=not given_key)
    assert len(rec.resources) == len(children) + 1


def test_eks_cluster_inputs(run_program):
    rec = eks_cluster(run_program, PUBLIC)
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    key = find(rec, "aws:kms/key:Key", "c-secrets")
    assert cluster.custom is False
    assert cluster.inputs == {
        "name": "gpu-dev",
        "version": "1.36",
        "vpcId": "vpc-0123456789abcdef0",
        "subnetIds": SUBNETS,
        "nodeAssociatePublicIpAddress": False,
        "endpointPrivateAccess": True,
        "endpointPublicAccess": True,
        "publicAccessCidrs": ["52.94.76.0/22"],
        "authenticationMode": "API",
        # The admins' entries are EksCluster children now (tests/cluster/test_admins.py).
        "accessEntries": {},
        "encryptionConfigKeyArn": key.outputs["arn"],
        "enabledClusterLogTypes": [
            "api",
            "audit",
            "authenticator",
            "controllerManager",
            "scheduler",
        ],
        "createOidcProvider": True,
        "skipDefaultNodeGroup": True,
        "skipDefaultSecurityGroups": True,
        "bootstrapSelfManagedAddons": False,
        "useDefaultVpcCni": True,
        "corednsAddonOptions": {"enabled": False},
        "kubeProxyAddonOptions": {"enabled": False},
        "deletionProtection": False,
        "tags": {"team": "ml"},
    }
    assert key.urn in cluster.dependencies


def test_private_endpoint_only(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    assert cluster.inputs["endpointPrivateAccess"] is True
    assert cluster.inputs["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in cluster.inputs
    assert cluster.inputs["accessEntries"] == {}


def test_kms_key_with_rotation(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    key = find(rec, "aws:kms/key:Key", "c-secrets")
    assert key.inputs == {
        "description": "EKS secrets encryption for cluster gpu-dev",
        "enableKeyRotation": True,
        "deletionWindowInDays": 30,
        "tags": {"team": "ml"},
    }
    alias = find(rec, "aws:kms/alias:Alias", "c-secrets")
    assert alias.inputs == {
        "name": "alias/eks/gpu-dev-secrets",
        "targetKeyId": key.outputs["keyId"],
    }
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    assert cluster.inputs["encryptionConfigKeyArn"] == key.outputs["arn"]
    assert key.outputs["arn"].startswith("arn:aws:kms:us-west-2:111122223333:key/")


def test_given_kms_key_creates_no_key(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev", kms_key_arn=KMS_ARN))
    assert rec.of_type("aws:kms/key:Key") == []
    assert rec.of_type("aws:kms/alias:Alias") == []
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    assert cluster.inputs["encryptionConfigKeyArn"] == KMS_ARN
    (component,) = rec.of_type(COMPONENT)
    assert component.registered_outputs["kms_key_arn"] == KMS_ARN


def test_addons_around_the_system_node_group(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    group = find(rec, "aws:eks/nodeGroup:NodeGroup", "c-system")
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    addons = {a.inputs["addonName"]: a for a in rec.of_type("aws:eks/addon:Addon")}
    assert sorted(addons) == ["coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni"]
    # Every add-on pinned (cluster.addonVersions): nothing is looked up.
    assert not [t for t, _ in rec.calls if t.startswith("aws:eks/getAddon")]
    expected = {
        "vpc-cni": "v1.20.1-eksbuild.3",
        "kube-proxy": "v1.36.0-eksbuild.14",
        "eks-pod-identity-agent": "v1.3.0-eksbuild.1",
        "coredns": "v1.13.2-eksbuild.4",
    }
    cni_role = find(rec, "aws:iam/role:Role", "c-vpc-cni")
    for name, addon in addons.items():
        # Only vpc-cni is configured: its network policy agent (issue 22, point 6).
        configuration = (
            {"configurationValues": '{"enableNetworkPolicy": "true"}'} if name == "vpc-cni" else {}
        )
        identity = (
            {
                "podIdentityAssociations": [
                    {"roleArn": cni_role.outputs["arn"], "serviceAccount": "aws-node"}
                ]
            }
            if name == "vpc-cni"
            else {}
        )
        assert addon.inputs == {
            "clusterName": "gpu-dev",
            "addonName": name,
            "addonVersion": expected[name],
            **configuration,
            "resolveConflictsOnCreate": "OVERWRITE",
            "resolveConflictsOnUpdate": "OVERWRITE",
            **identity,
            # The minor the version was resolved for (addon_versions.ADDON_MINOR_TAG).
            "tags": {"team": "ml", "eks-gpu-platform/addon-minor": "1.36"},
        }
        # DaemonSets roll every node 10% at a time (45 minutes); coredns keeps the provider's
        # default (20): cluster/timeouts.py. Create and delete keep the defaults.
        assert addon.custom_timeouts == {"update": "20m" if name == "coredns" else "45m"}
        # The cluster name resolves once the control plane exists.
        assert cluster.urn in addon.dependencies
    assert group.urn in addons["coredns"].dependencies
    for name in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent"):
        assert addons[name].urn in group.dependencies
        assert group.urn not in addons[name].dependencies
    assert addons["coredns"].urn not in group.dependencies


def test_system_node_group(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    group = find(rec, "aws:eks/nodeGroup:NodeGroup", "c-system")
    role = find(rec, "aws:iam/role:Role", "c-system-node")
    template = find(rec, "aws:ec2/launchTemplate:LaunchTemplate", "c-system")
    assert group.inputs == {
        "clusterName": "gpu-dev",
        # A prefix: a replacement creates the new group first (issue 11, item 4).
        "nodeGroupNamePrefix": "gpu-dev-system-",
        "version": "1.36",
        "nodeRoleArn": role.outputs["arn"],
        "subnetIds": SUBNETS,
        "amiType": "AL2023_x86_64_STANDARD",
        "capacityType": "ON_DEMAND",
        "instanceTypes": ["m7i.xlarge"],
        "scalingConfig": {"minSize": 2, "maxSize": 4, "desiredSize": 2},
        "updateConfig": {"maxUnavailable": 1},
        "launchTemplate": {"id": template.id, "version": "1"},
        "labels": {"eks-gpu-platform.io/system": "true"},
        "taints": [{"key": "CriticalAddonsOnly", "value": "true", "effect": "NO_SCHEDULE"}],
        "tags": {"team": "ml"},
    }
    assert group.ignore_changes == ["scalingConfig.desiredSize"]
    # A minor upgrade rolls up to maxSize 4 nodes one at a time, each drained for up to 15
    # minutes (EKS's PodEvictionFailure limit), cordoned 1 minute and replaced in 4 (ours),
    # plus 15 for the setup, scale-up and scale-down phases: 15 + 4 * 20 = 95 minutes.
    assert group.custom_timeouts == {"update": "95m"}
    # Neither the option nor an explicit autonamed name asks for delete-before-replace.
    assert group.delete_before_replace is False
    assert "nodeGroupName" not in group.inputs
    for policy in NODE_POLICIES:
        attachment = find(
            rec, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", f"c-system-node-{policy}"
        )
        assert attachment.inputs == {
            "role": "EKSSystemNodeRole-gpu-dev",
            "policyArn": f"arn:aws:iam::aws:policy/{policy}",
        }
        assert attachment.urn in group.dependencies
    assert role.inputs == {
        "name": "EKSSystemNodeRole-gpu-dev",
        "assumeRolePolicy": json.dumps(ec2_trust_policy("amazonaws.com")),
        "tags": {"team": "ml"},
    }
    assert template.inputs == {
        "description": "System nodes of EKS cluster gpu-dev",
        "updateDefaultVersion": True,
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 1,
        },
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": 50,
                    "volumeType": "gp3",
                    "encrypted": "true",
                    "deleteOnTermination": "true",
                },
            }
        ],
        "tagSpecifications": [
            # A stable minimum: a stack tag edit must not roll the system nodes (issue 11).
            {
                "resourceType": "instance",
                "tags": {"eks-gpu-platform/cluster": "gpu-dev", "Name": "gpu-dev-system"},
            },
            {"resourceType": "volume", "tags": {"eks-gpu-platform/cluster": "gpu-dev"}},
        ],
        "tags": {"team": "ml"},
    }


def test_arm64_system_node_group(run_program):
    system = SystemNodeGroupSpec(
        instance_types=("m7g.large",), min_size=3, max_size=5, desired_size=4, disk_size_gib=100
    )
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"), system)
    group = find(rec, "aws:eks/nodeGroup:NodeGroup", "c-system")
    assert group.inputs["amiType"] == "AL2023_ARM_64_STANDARD"
    assert group.inputs["instanceTypes"] == ["m7g.large"]
    assert group.inputs["scalingConfig"] == {"minSize": 3, "maxSize": 5, "desiredSize": 4}
    assert group.custom_timeouts == {"update": "115m"}  # 15 + 5 * 20
    template = find(rec, "aws:ec2/launchTemplate:LaunchTemplate", "c-system")
    assert template.inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 100


def test_primary_security_group_discovery_tag(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    tag = find(rec, "aws:ec2/tag:Tag", "c-primary-sg-discovery")
    assert tag.inputs == {
        "resourceId": cluster.outputs["clusterSecurityGroupId"],
        "key": "karpenter.sh/discovery",
        "value": "gpu-dev",
    }
    assert rec.of_type("aws:ec2/tag:Tag") == [tag]


def test_kubernetes_provider_uses_the_cluster_kubeconfig(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    provider = find(rec, "pulumi:providers:kubernetes", "c-k8s")
    assert provider.inputs["kubeconfig"] == cluster.outputs["kubeconfigJson"]
    assert provider.inputs["enableServerSideApply"] == "true"


@pytest.mark.parametrize("protect", [True, False], ids=["protect", "no-protect"])
def test_protect(run_program, protect):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev", protect=protect))
    protected = sorted((r.type, r.name) for r in rec.resources if r.protect)
    assert protected == (
        [("aws:kms/key:Key", "c-secrets"), ("eks:index:Cluster", "c-eks")] if protect else []
    )
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    assert cluster.inputs["deletionProtection"] is protect


def test_registered_outputs(run_program):
    rec = eks_cluster(run_program, ClusterSpec(name="gpu-dev"))
    (component,) = rec.of_type(COMPONENT)
    cluster = find(rec, "eks:index:Cluster", "c-eks")
    key = find(rec, "aws:kms/key:Key", "c-secrets")
    role = find(rec, "aws:iam/role:Role", "c-system-node")
    outputs = dict(component.registered_outputs)
    kubeconfig = outputs.pop("kubeconfig")
    assert outputs == {
        "addon_versions": {
            "vpc-cni": "v1.20.1-eksbuild.3",
            "kube-proxy": "v1.36.0-eksbuild.14",
            "eks-pod-identity-agent": "v1.3.0-eksbuild.1",
            "coredns": "v1.13.2-eksbuild.4",
        },
        "cluster_name": "gpu-dev",
        "endpoint": cluster.outputs["core"]["endpoint"],
        "oidc_provider_arn": cluster.outputs["oidcProviderArn"],
        "oidc_provider_url": cluster.outputs["oidcProviderUrl"],
        "cluster_security_group_id": cluster.outputs["clusterSecurityGroupId"],
        "node_security_group_id": cluster.outputs["nodeSecurityGroupId"],
        "system_node_role_arn": role.outputs["arn"],
        "kms_key_arn": key.outputs["arn"],
    }
    # The kubeconfig output is a secret: it crosses the wire wrapped.
    assert kubeconfig == {
        "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
        "value": cluster.outputs["kubeconfigJson"],
    }
