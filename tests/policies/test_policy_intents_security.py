"""Issue 13, items 7 and 8: the security policies detect their intent (several
violating mutations of the compliant stack each, and compliant controls); see intent_cases.py."""

import json
from typing import Any

import pytest
from intent_cases import (
    QUEUE_ARN,
    ROLE,
    SPOT_NC,
    V,
    add,
    at,
    both,
    document,
    found_messages,
    params,
    queue_deny,
)
from policy_baselines import EFA_SG, SG_INGRESS

OIDC_ISSUER = "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"
OIDC_PROVIDER = f"arn:aws:iam::123456789012:oidc-provider/{OIDC_ISSUER}"


def trust(principal: Any, action: Any, condition: dict | None = None) -> dict:
    statement = {"Effect": "Allow", "Principal": principal, "Action": action}
    if condition:
        statement["Condition"] = condition
    return {"Version": "2012-10-17", "Statement": [statement]}


TRUST_POD_IDENTITY = trust(
    {"Service": "pods.eks.amazonaws.com"}, ["sts:AssumeRole", "sts:TagSession"]
)
TRUST_SCOPED = trust(
    {"Service": "pods.eks.amazonaws.com"},
    ["sts:AssumeRole", "sts:TagSession"],
    {
        "StringEquals": {
            "aws:RequestTag/eks-cluster-name": "gpu-test",
            "aws:RequestTag/kubernetes-namespace": "kube-system",
            "aws:RequestTag/kubernetes-service-account": "karpenter",
        }
    },
)

CASES: list[Any] = [
    # imdsv2-required
    (
        "imdsv2-required",
        "nodeclass-imdsv1",
        at(SPOT_NC, "spec", "metadataOptions", value={"httpTokens": "optional"}),
        V,
    ),
    (
        "imdsv2-required",
        "nodeclass-hop-2",
        at(SPOT_NC, "spec", "metadataOptions", value={"httpPutResponseHopLimit": 2}),
        V,
    ),
    (
        "imdsv2-required",
        "launch-template-unset",
        at("platform-cluster-system-lt", "metadataOptions", delete=True),
        V,
    ),
    (
        "imdsv2-required",
        "launch-template-optional",
        at("platform-cluster-system-lt", "metadataOptions", "httpTokens", value="optional"),
        V,
    ),
    (
        "imdsv2-required",
        "control-nodeclass-defaults",
        at(SPOT_NC, "spec", "metadataOptions", value={}),
        [],
    ),
    (
        "imdsv2-required",
        "control-hop-limit-as-string",
        at("platform-cluster-system-lt", "metadataOptions", "httpPutResponseHopLimit", value="1"),
        [],
    ),
    # eks-secrets-encryption
    (
        "eks-secrets-encryption",
        "component-no-key",
        at("platform-cluster-eks", "encryptionConfigKeyArn", delete=True),
        V,
    ),
    (
        "eks-secrets-encryption",
        "component-aws-managed-alias",
        at("platform-cluster-eks", "encryptionConfigKeyArn", value="alias/aws/eks"),
        V,
    ),
    (
        "eks-secrets-encryption",
        "cluster-aws-managed-alias-arn",
        at(
            "platform-cluster-eks-cluster",
            "encryptionConfig",
            "provider",
            "keyArn",
            value="arn:aws:kms:us-west-2:123456789012:alias/aws/eks",
        ),
        V,
    ),
    (
        "eks-secrets-encryption",
        "cluster-not-secrets",
        at("platform-cluster-eks-cluster", "encryptionConfig", "resources", value=["configmaps"]),
        V,
    ),
    (
        "eks-secrets-encryption",
        "control-customer-alias",
        at(
            "platform-cluster-eks",
            "encryptionConfigKeyArn",
            value="arn:aws:kms:us-west-2:123456789012:alias/eks-secrets",
        ),
        [],
    ),
    (
        "eks-secrets-encryption",
        "control-alias-named-like-aws",
        at("platform-cluster-eks", "encryptionConfigKeyArn", value="alias/awsome-key"),
        [],
    ),
    # kms-key-rotation
    (
        "kms-key-rotation",
        "rotation-off",
        at("platform-cluster-key", "enableKeyRotation", value=False),
        V,
    ),
    (
        "kms-key-rotation",
        "rotation-unset",
        at("platform-cluster-key", "enableKeyRotation", delete=True),
        V,
    ),
    (
        "kms-key-rotation",
        "rotation-off-as-string",
        at("platform-cluster-key", "enableKeyRotation", value="false"),
        V,
    ),
    (
        "kms-key-rotation",
        "control-asymmetric-key",
        both(
            at("platform-cluster-key", "enableKeyRotation", value=False),
            at("platform-cluster-key", "keySpec", value="RSA_2048"),
        ),
        [],
    ),
    (
        "kms-key-rotation",
        "control-on-as-string",
        at("platform-cluster-key", "enableKeyRotation", value="true"),
        [],
    ),
    # eks-public-endpoint-allowlist
    (
        "eks-public-endpoint-allowlist",
        "whole-internet",
        at("platform-cluster-eks", "publicAccessCidrs", value=["0.0.0.0/0"]),
        V,
    ),
    (
        "eks-public-endpoint-allowlist",
        "two-halves",
        at("platform-cluster-eks", "publicAccessCidrs", value=["0.0.0.0/1", "128.0.0.0/1"]),
        V,
    ),
    (
        "eks-public-endpoint-allowlist",
        "ipv6-halves-on-the-cluster",
        at(
            "platform-cluster-eks-cluster",
            "vpcConfig",
            "publicAccessCidrs",
            value=["203.0.113.0/24", "::/1", "8000::/1"],
        ),
        V,
    ),
    (
        "eks-public-endpoint-allowlist",
        "three-blocks",
        at(
            "platform-cluster-eks",
            "publicAccessCidrs",
            value=["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/2"],
        ),
        V,
    ),
    (
        "eks-public-endpoint-allowlist",
        "empty-list",
        at("platform-cluster-eks", "publicAccessCidrs", value=[]),
        V,
    ),
    # Issue 22, point 8: half of IPv4 was a compliant control; broader than a /16 is refused.
    (
        "eks-public-endpoint-allowlist",
        "half-the-internet",
        at("platform-cluster-eks", "publicAccessCidrs", value=["0.0.0.0/1"]),
        V,
    ),
    (
        "eks-public-endpoint-allowlist",
        "seven-eighths-on-the-aws-cluster",
        at(
            "platform-cluster-eks-cluster",
            "vpcConfig",
            "publicAccessCidrs",
            value=["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3"],
        ),
        V,
    ),
    (
        "eks-public-endpoint-allowlist",
        "control-one-16",
        at("platform-cluster-eks", "publicAccessCidrs", value=["52.94.0.0/17", "52.94.128.0/17"]),
        [],
    ),
    # iam-trust-policy-scoped (issue 22, point 4 and the Low list)
    (
        "iam-trust-policy-scoped",
        "pod-identity-unconditioned",
        at("platform-karpenter-role", "assumeRolePolicy", value=json.dumps(TRUST_POD_IDENTITY)),
        V,
    ),
    (
        "iam-trust-policy-scoped",
        "pod-identity-namespace-only",
        at(
            "platform-karpenter-role",
            "assumeRolePolicy",
            value=json.dumps(
                trust(
                    {"Service": "pods.eks.amazonaws.com"},
                    ["sts:AssumeRole", "sts:TagSession"],
                    {"StringEquals": {"aws:RequestTag/kubernetes-namespace": "kube-system"}},
                )
            ),
        ),
        V,
    ),
    (
        "iam-trust-policy-scoped",
        "anyone",
        at(
            "platform-karpenter-role",
            "assumeRolePolicy",
            value=json.dumps(trust({"AWS": "*"}, "sts:AssumeRole")),
        ),
        V,
    ),
    (
        "iam-trust-policy-scoped",
        "irsa-audience-only",
        at(
            "platform-karpenter-role",
            "assumeRolePolicy",
            value=json.dumps(
                trust(
                    {"Federated": OIDC_PROVIDER},
                    "sts:AssumeRoleWithWebIdentity",
                    {"StringEquals": {f"{OIDC_ISSUER}:aud": "sts.amazonaws.com"}},
                )
            ),
        ),
        V,
    ),
    (
        "iam-trust-policy-scoped",
        "irsa-sub-wildcard",
        at(
            "platform-karpenter-role",
            "assumeRolePolicy",
            value=json.dumps(
                trust(
                    {"Federated": OIDC_PROVIDER},
                    "sts:AssumeRoleWithWebIdentity",
                    {
                        "StringEquals": {f"{OIDC_ISSUER}:aud": "sts.amazonaws.com"},
                        "StringLike": {f"{OIDC_ISSUER}:sub": "*"},
                    },
                )
            ),
        ),
        V,
    ),
    (
        "iam-trust-policy-scoped",
        "control-pod-identity-scoped-by-cluster-name",
        at("platform-karpenter-role", "assumeRolePolicy", value=json.dumps(TRUST_SCOPED)),
        [],
    ),
    (
        "iam-trust-policy-scoped",
        "control-ec2",
        at(
            "platform-karpenter-role",
            "assumeRolePolicy",
            value=json.dumps(trust({"Service": "ec2.amazonaws.com"}, "sts:AssumeRole")),
        ),
        [],
    ),
    # security-group-no-internet-ingress (issue 22, Low list)
    (
        "security-group-no-internet-ingress",
        "ssh-from-anywhere",
        add(
            SG_INGRESS,
            "platform-extra-ssh",
            {"securityGroupId": EFA_SG, "cidrIpv4": "0.0.0.0/0", "fromPort": 22, "toPort": 22},
        ),
        V,
    ),
    (
        "security-group-no-internet-ingress",
        "ipv6-anywhere-non-canonical",
        add(SG_INGRESS, "platform-extra-v6", {"securityGroupId": EFA_SG, "cidrIpv6": "::1/0"}),
        V,
    ),
    (
        "security-group-no-internet-ingress",
        "legacy-rule",
        add(
            "aws:ec2/securityGroupRule:SecurityGroupRule",
            "platform-extra-legacy",
            {
                "type": "ingress",
                "securityGroupId": EFA_SG,
                "cidrBlocks": ["10.0.0.0/8", "0.0.0.0/0"],
            },
        ),
        V,
    ),
    (
        "security-group-no-internet-ingress",
        "inline-group",
        add(
            "aws:ec2/securityGroup:SecurityGroup",
            "platform-extra-group",
            {"ingress": [{"protocol": "-1", "cidrBlocks": ["0.0.0.0/0"]}]},
        ),
        V,
    ),
    (
        "security-group-no-internet-ingress",
        "control-egress-anywhere",
        add(
            "aws:ec2/securityGroupRule:SecurityGroupRule",
            "platform-extra-egress",
            {"type": "egress", "securityGroupId": EFA_SG, "cidrBlocks": ["0.0.0.0/0"]},
        ),
        [],
    ),
    # eks-control-plane-logging (issue 22, Low list)
    (
        "eks-control-plane-logging",
        "no-logs",
        at("platform-cluster-eks", "enabledClusterLogTypes", value=[]),
        V,
    ),
    (
        "eks-control-plane-logging",
        "unset",
        at("platform-cluster-eks", "enabledClusterLogTypes", delete=True),
        V,
    ),
    (
        "eks-control-plane-logging",
        "api-only-on-the-aws-cluster",
        at("platform-cluster-eks-cluster", "enabledClusterLogTypes", value=["api"]),
        V,
    ),
    (
        "eks-control-plane-logging",
        "control-all-five",
        at(
            "platform-cluster-eks",
            "enabledClusterLogTypes",
            value=["api", "audit", "authenticator", "controllerManager", "scheduler"],
        ),
        [],
    ),
    (
        "eks-public-endpoint-allowlist",
        "control-private-endpoint",
        both(
            at("platform-cluster-eks", "endpointPublicAccess", value=False),
            at("platform-cluster-eks", "publicAccessCidrs", value=["0.0.0.0/0"]),
        ),
        [],
    ),
    # sqs-queue-encrypted
    (
        "sqs-queue-encrypted",
        "sse-off",
        at("platform-karpenter-interruption-queue", "sqsManagedSseEnabled", value=False),
        V,
    ),
    (
        "sqs-queue-encrypted",
        "sse-unset",
        at("platform-karpenter-interruption-queue", "sqsManagedSseEnabled", delete=True),
        V,
    ),
    (
        "sqs-queue-encrypted",
        "empty-kms-key",
        both(
            at("platform-karpenter-interruption-queue", "sqsManagedSseEnabled", value="false"),
            at("platform-karpenter-interruption-queue", "kmsMasterKeyId", value=""),
        ),
        V,
    ),
    (
        "sqs-queue-encrypted",
        "control-sse-kms",
        both(
            at("platform-karpenter-interruption-queue", "sqsManagedSseEnabled", delete=True),
            at("platform-karpenter-interruption-queue", "kmsMasterKeyId", value="alias/aws/sqs"),
        ),
        [],
    ),
    # sqs-queue-policy-denies-insecure-transport
    (
        "sqs-queue-policy-denies-insecure-transport",
        "deny-covers-another-queue",
        queue_deny(Resource="arn:aws:sqs:us-west-2:123456789012:other"),
        V,
    ),
    (
        "sqs-queue-policy-denies-insecure-transport",
        "deny-excludes-this-queue",
        queue_deny(Resource=None, NotResource=QUEUE_ARN),
        V,
    ),
    (
        "sqs-queue-policy-denies-insecure-transport",
        "deny-one-action",
        queue_deny(Action="sqs:ReceiveMessage"),
        V,
    ),
    (
        "sqs-queue-policy-denies-insecure-transport",
        "deny-with-tls",
        queue_deny(Condition={"Bool": {"aws:SecureTransport": "true"}}),
        V,
    ),
    (
        "sqs-queue-policy-denies-insecure-transport",
        "deny-one-account",
        queue_deny(Principal={"AWS": "123456789012"}),
        V,
    ),
    (
        "sqs-queue-policy-denies-insecure-transport",
        "control-every-resource",
        queue_deny(Resource="*"),
        [],
    ),
    (
        "sqs-queue-policy-denies-insecure-transport",
        "control-wildcard-spellings",
        queue_deny(Action=["SQS:*"], Resource="arn:aws:sqs:us-west-2:123456789012:Karpenter-*"),
        [],
    ),
    (
        "sqs-queue-policy-denies-insecure-transport",
        "control-not-resource-elsewhere",
        queue_deny(Resource=None, NotResource="arn:aws:sqs:*:*:other"),
        [],
    ),
    # iam-no-wildcard-actions
    (
        "iam-no-wildcard-actions",
        "service-wildcard",
        document({"Effect": "Allow", "Action": "ec2:*", "Resource": "*"}),
        V,
    ),
    (
        "iam-no-wildcard-actions",
        "upper-case-service",
        document({"Effect": "Allow", "Action": ["EC2:*"], "Resource": "*"}),
        V,
    ),
    (
        "iam-no-wildcard-actions",
        "question-star",
        document({"Effect": "Allow", "Action": "s3:?*", "Resource": "*"}),
        V,
    ),
    (
        "iam-no-wildcard-actions",
        "every-service",
        document({"Effect": "Allow", "Action": "*:*", "Resource": "*"}),
        V,
    ),
    (
        "iam-no-wildcard-actions",
        "not-action",
        document({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}),
        V,
    ),
    (
        "iam-no-wildcard-actions",
        "managed-admin",
        add(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "admin",
            {"role": "r", "policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"},
        ),
        V,
    ),
    (
        "iam-no-wildcard-actions",
        "control-prefix-wildcard",
        document({"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"}),
        [],
    ),
    (
        "iam-no-wildcard-actions",
        "control-deny-everything",
        document({"Effect": "Deny", "Action": "*", "Resource": "*"}),
        [],
    ),
    # iam-no-passrole-on-wildcard
    (
        "iam-no-passrole-on-wildcard",
        "every-resource",
        document({"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"}, 0),
        V,
    ),
    (
        "iam-no-passrole-on-wildcard",
        "every-role-by-prefix-action",
        document(
            {
                "Effect": "Allow",
                "Action": "iam:Pass*",
                "Resource": "arn:aws:iam::123456789012:role/*",
            },
            0,
        ),
        V,
    ),
    (
        "iam-no-passrole-on-wildcard",
        "not-resource",
        document({"Effect": "Allow", "Action": "iam:PassRole", "NotResource": ROLE}, 0),
        V,
    ),
    (
        "iam-no-passrole-on-wildcard",
        "any-partition-double-star",
        document(
            {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:*:iam::*:role/**"}, 0
        ),
        V,
    ),
    (
        "iam-no-passrole-on-wildcard",
        "role-prefix-without-slash",
        document(
            {
                "Effect": "Allow",
                "Action": "iam:PassRole",
                "Resource": ["arn:aws:iam::123456789012:role*"],
            },
            0,
        ),
        V,
    ),
    (
        "iam-no-passrole-on-wildcard",
        "control-role-name-prefix",
        document(
            {
                "Effect": "Allow",
                "Action": "iam:PassRole",
                "Resource": "arn:aws:iam::123456789012:role/KarpenterNodeRole-*",
            },
            0,
        ),
        [],
    ),
    (
        "iam-no-passrole-on-wildcard",
        "control-one-role",
        document({"Effect": "Allow", "Action": "iam:PassRole", "Resource": ROLE}, 0),
        [],
    ),
    (
        "iam-no-passrole-on-wildcard",
        "control-deny",
        document({"Effect": "Deny", "Action": "iam:PassRole", "Resource": "*"}, 0),
        [],
    ),
    # node-volumes-encrypted
    (
        "node-volumes-encrypted",
        "nodeclass-unencrypted",
        at(
            SPOT_NC,
            "spec",
            "blockDeviceMappings",
            value=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": False}}],
        ),
        V,
    ),
    (
        "node-volumes-encrypted",
        "nodeclass-encryption-unset",
        at(
            SPOT_NC,
            "spec",
            "blockDeviceMappings",
            value=[{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi"}}],
        ),
        V,
    ),
    (
        "node-volumes-encrypted",
        "launch-template-no-mappings",
        at("platform-cluster-system-lt", "blockDeviceMappings", delete=True),
        V,
    ),
    (
        "node-volumes-encrypted",
        "control-karpenter-defaults",
        at(SPOT_NC, "spec", "blockDeviceMappings", delete=True),
        [],
    ),
    (
        "node-volumes-encrypted",
        "control-instance-store",
        at(SPOT_NC, "spec", "blockDeviceMappings", value=[{"deviceName": "/dev/sdb"}]),
        [],
    ),
]
EXPECTED: dict[str, list[str]] = {
    "imdsv2-required/nodeclass-imdsv1": [
        'EC2NodeClass "train-spot": spec.metadataOptions.httpTokens is "optional"; set '
        '"required" so the instance metadata service only answers IMDSv2 session requests',
    ],
    "imdsv2-required/nodeclass-hop-2": [
        'EC2NodeClass "train-spot": spec.metadataOptions.httpPutResponseHopLimit is 2; set 1 '
        "so pods without hostNetwork cannot reach the node role's credentials",
    ],
    "imdsv2-required/launch-template-unset": [
        "metadataOptions is not set, so IMDS follows the AMI's and account's defaults; set "
        'httpTokens "required" and httpPutResponseHopLimit 1',
    ],
    "imdsv2-required/launch-template-optional": [
        'metadataOptions.httpTokens is "optional"; set "required" so the instance metadata '
        "service only answers IMDSv2 session requests",
    ],
    "eks-secrets-encryption/component-no-key": [
        "encryptionConfigKeyArn is not set: Kubernetes Secrets are not envelope-encrypted with a "
        "customer-managed KMS key",
    ],
    "eks-secrets-encryption/component-aws-managed-alias": [
        'encryptionConfigKeyArn is "alias/aws/eks", an AWS-managed key (alias/aws/...): its '
        "key policy cannot be changed, so who may decrypt Secrets cannot be controlled or "
        "revoked; use a customer-managed key",
    ],
    "eks-secrets-encryption/cluster-aws-managed-alias-arn": [
        "encryptionConfig.provider.keyArn is "
        '"arn:aws:kms:us-west-2:123456789012:alias/aws/eks", an AWS-managed key '
        "(alias/aws/...): its key policy cannot be changed, so who may decrypt Secrets cannot be "
        "controlled or revoked; use a customer-managed key",
    ],
    "eks-secrets-encryption/cluster-not-secrets": [
        'encryptionConfig.resources is ["configmaps"]; it must include "secrets"',
    ],
    "kms-key-rotation/rotation-off": [
        "enableKeyRotation is false; set it to true so KMS rotates the key material every year",
    ],
    "kms-key-rotation/rotation-unset": [
        "enableKeyRotation is not set; set it to true so KMS rotates the key material every year",
    ],
    "kms-key-rotation/rotation-off-as-string": [
        'enableKeyRotation is "false"; set it to true so KMS rotates the key material every year',
    ],
    "eks-public-endpoint-allowlist/half-the-internet": [
        'publicAccessCidrs "0.0.0.0/1" allow 2,147,483,648 IPv4 addresses, more than '
        "maxIpv4Addresses (65,536); list the egress ranges that need the API server, or keep "
        "the endpoint private",
    ],
    "eks-public-endpoint-allowlist/seven-eighths-on-the-aws-cluster": [
        'vpcConfig.publicAccessCidrs "0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3" allow '
        "3,758,096,384 IPv4 addresses, more than maxIpv4Addresses (65,536); list the egress "
        "ranges that need the API server, or keep the endpoint private",
    ],
    "iam-trust-policy-scoped/pod-identity-unconditioned": [
        "assumeRolePolicy statement #1 trusts pods.eks.amazonaws.com without pinning "
        "aws:RequestTag/kubernetes-namespace, aws:RequestTag/kubernetes-service-account, "
        "aws:RequestTag/eks-cluster-arn or aws:RequestTag/eks-cluster-name (StringEquals): any "
        "Pod Identity association in the account, on any cluster, can hand the role to any pod",
    ],
    "iam-trust-policy-scoped/pod-identity-namespace-only": [
        "assumeRolePolicy statement #1 trusts pods.eks.amazonaws.com without pinning "
        "aws:RequestTag/kubernetes-service-account, aws:RequestTag/eks-cluster-arn or "
        "aws:RequestTag/eks-cluster-name (StringEquals): any Pod Identity association in the "
        "account, on any cluster, can hand the role to any pod",
    ],
    "iam-trust-policy-scoped/anyone": [
        'assumeRolePolicy statement #1 trusts Principal "*": anyone in any AWS account may '
        "assume the role; name the account, role or service that needs it",
    ],
    "iam-trust-policy-scoped/irsa-audience-only": [
        f"assumeRolePolicy statement #1 trusts web identities of {OIDC_PROVIDER} without "
        f"pinning {OIDC_ISSUER}:sub: any service account (or token audience) of that issuer "
        "may assume the role",
    ],
    "iam-trust-policy-scoped/irsa-sub-wildcard": [
        f"assumeRolePolicy statement #1 trusts web identities of {OIDC_PROVIDER} without "
        f"pinning {OIDC_ISSUER}:sub: any service account (or token audience) of that issuer "
        "may assume the role",
    ],
    "security-group-no-internet-ingress/ssh-from-anywhere": [
        'ingress rule admits "0.0.0.0/0", the whole internet; allow the security groups or '
        "CIDRs that need it",
    ],
    "security-group-no-internet-ingress/ipv6-anywhere-non-canonical": [
        'ingress rule admits "::1/0", the whole internet; allow the security groups or CIDRs '
        "that need it",
    ],
    "security-group-no-internet-ingress/legacy-rule": [
        'ingress rule admits "0.0.0.0/0", the whole internet; allow the security groups or '
        "CIDRs that need it",
    ],
    "security-group-no-internet-ingress/inline-group": [
        'ingress[0] admits "0.0.0.0/0", the whole internet; allow the security groups or CIDRs '
        "that need it",
    ],
    "eks-control-plane-logging/no-logs": [
        "enabledClusterLogTypes [] leaves out audit, authenticator: without the audit and "
        "authenticator logs nobody can tell who did what on the cluster",
    ],
    "eks-control-plane-logging/unset": [
        "enabledClusterLogTypes [] leaves out audit, authenticator: without the audit and "
        "authenticator logs nobody can tell who did what on the cluster",
    ],
    "eks-control-plane-logging/api-only-on-the-aws-cluster": [
        "enabledClusterLogTypes ['api'] leaves out audit, authenticator: without the audit and "
        "authenticator logs nobody can tell who did what on the cluster",
    ],
    "eks-public-endpoint-allowlist/whole-internet": [
        'publicAccessCidrs includes "0.0.0.0/0", which opens the API server to the whole internet',
    ],
    "eks-public-endpoint-allowlist/two-halves": [
        'publicAccessCidrs includes "0.0.0.0/1", "128.0.0.0/1", which together cover '
        "0.0.0.0/0: the API server is open to the whole internet",
    ],
    "eks-public-endpoint-allowlist/ipv6-halves-on-the-cluster": [
        'vpcConfig.publicAccessCidrs includes "::/1", "8000::/1", which together cover ::/0: '
        "the API server is open to the whole internet",
    ],
    "eks-public-endpoint-allowlist/three-blocks": [
        'publicAccessCidrs includes "0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/2", which '
        "together cover 0.0.0.0/0: the API server is open to the whole internet",
    ],
    "eks-public-endpoint-allowlist/empty-list": [
        "endpointPublicAccess is on and publicAccessCidrs is empty, so the API server is open to "
        "0.0.0.0/0; list the CIDRs that may reach it, or turn the public endpoint off",
    ],
    "sqs-queue-encrypted/sse-off": [
        "the queue is not encrypted at rest: set sqsManagedSseEnabled to true, or kmsMasterKeyId "
        "to a KMS key",
    ],
    "sqs-queue-encrypted/sse-unset": [
        "the queue is not encrypted at rest: set sqsManagedSseEnabled to true, or kmsMasterKeyId "
        "to a KMS key",
    ],
    "sqs-queue-encrypted/empty-kms-key": [
        "the queue is not encrypted at rest: set sqsManagedSseEnabled to true, or kmsMasterKeyId "
        "to a KMS key",
    ],
    "sqs-queue-policy-denies-insecure-transport/deny-covers-another-queue": [
        'the statements denying requests without TLS (statement "DenyHTTP") do not cover this '
        'queue ("arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-test"); set their Resource '
        'to the queue\'s ARN (or "*")',
    ],
    "sqs-queue-policy-denies-insecure-transport/deny-excludes-this-queue": [
        'the statements denying requests without TLS (statement "DenyHTTP") do not cover this '
        'queue ("arn:aws:sqs:us-west-2:123456789012:Karpenter-gpu-test"); set their Resource '
        'to the queue\'s ARN (or "*")',
    ],
    "sqs-queue-policy-denies-insecure-transport/deny-one-action": [
        'no statement denies requests made without TLS; add {"Effect": "Deny", '
        '"Principal": "*", "Action": "sqs:*", "Condition": {"Bool": '
        '{"aws:SecureTransport": "false"}}}',
    ],
    "sqs-queue-policy-denies-insecure-transport/deny-with-tls": [
        'no statement denies requests made without TLS; add {"Effect": "Deny", '
        '"Principal": "*", "Action": "sqs:*", "Condition": {"Bool": '
        '{"aws:SecureTransport": "false"}}}',
    ],
    "sqs-queue-policy-denies-insecure-transport/deny-one-account": [
        'no statement denies requests made without TLS; add {"Effect": "Deny", '
        '"Principal": "*", "Action": "sqs:*", "Condition": {"Bool": '
        '{"aws:SecureTransport": "false"}}}',
    ],
    "iam-no-wildcard-actions/service-wildcard": [
        'statement #2 allows "ec2:*"; grant the specific actions instead',
    ],
    "iam-no-wildcard-actions/upper-case-service": [
        'statement #2 allows "EC2:*"; grant the specific actions instead',
    ],
    "iam-no-wildcard-actions/question-star": [
        'statement #2 allows "s3:?*"; grant the specific actions instead',
    ],
    "iam-no-wildcard-actions/every-service": [
        'statement #2 allows "*:*"; grant the specific actions instead',
    ],
    "iam-no-wildcard-actions/not-action": [
        'statement #2 allows every action except "iam:*" (Allow with NotAction); list the '
        "actions instead",
    ],
    "iam-no-wildcard-actions/managed-admin": [
        'attaches "arn:aws:iam::aws:policy/AdministratorAccess", an AWS-managed policy that '
        "allows wildcard actions; attach a policy listing the actions needed",
    ],
    "iam-no-passrole-on-wildcard/every-resource": [
        'statement #1 allows iam:PassRole on "*"; scope Resource to the roles it must pass',
    ],
    "iam-no-passrole-on-wildcard/every-role-by-prefix-action": [
        'statement #1 allows iam:PassRole (via "iam:Pass*") on '
        '"arn:aws:iam::123456789012:role/*"; scope Resource to the roles it must pass',
    ],
    "iam-no-passrole-on-wildcard/any-partition-double-star": [
        'statement #1 allows iam:PassRole on "arn:*:iam::*:role/**"; scope Resource to the '
        "roles it must pass",
    ],
    "iam-no-passrole-on-wildcard/role-prefix-without-slash": [
        'statement #1 allows iam:PassRole on "arn:aws:iam::123456789012:role*"; scope Resource '
        "to the roles it must pass",
    ],
    "iam-no-passrole-on-wildcard/not-resource": [
        "statement #1 allows iam:PassRole with NotResource, i.e. on every other role; scope "
        "Resource to the roles it must pass",
    ],
    "node-volumes-encrypted/nodeclass-unencrypted": [
        'EC2NodeClass "train-spot": spec.blockDeviceMappings[0] (/dev/xvda) is not encrypted '
        "(ebs.encrypted is false)",
    ],
    "node-volumes-encrypted/nodeclass-encryption-unset": [
        'EC2NodeClass "train-spot": spec.blockDeviceMappings[0] (/dev/xvdb) is not encrypted '
        "(ebs.encrypted is not set)",
    ],
    "node-volumes-encrypted/launch-template-no-mappings": [
        "blockDeviceMappings is not set, so the root volume is encrypted only if the account "
        'enables EBS encryption by default; map the root device with ebs.encrypted "true"',
    ],
}


@pytest.mark.parametrize(("policy", "mutate", "expected"), params(CASES, EXPECTED))
def test_policy_intent(policy, mutate, expected):
    assert found_messages(policy, mutate) == expected
