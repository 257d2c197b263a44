"""IAM pieces shared by the components: EC2 trust, AWS managed policy ARNs and attachments.

``ec2_trust_policy`` is pure; ``attach_managed_policies`` registers attachments as children of
the calling component.
"""

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

IAM_VERSION = "2012-10-17"


def ec2_trust_policy(dns_suffix: str) -> dict:
    """Trust policy letting EC2 instances in this partition assume a node role
    (``ec2.${AWS::URLSuffix}``)."""
    return {
        "Version": IAM_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": f"ec2.{dns_suffix}"},
                "Action": "sts:AssumeRole",
            }
        ],
    }


def managed_policy_arn(partition: str, policy: str) -> str:
    """The ARN of an AWS managed policy, built from the partition."""
    return f"arn:{partition}:iam::aws:policy/{policy}"


def compact_json(document: dict) -> str:
    """A policy document as IAM stores and counts it (no insignificant whitespace)."""
    return json.dumps(document, separators=(",", ":"))


def attach_managed_policies(
    name: str,
    role: aws.iam.Role,
    policies: Sequence[str],
    partition: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> list[aws.iam.RolePolicyAttachment]:
    """One ``RolePolicyAttachment`` per AWS managed policy, named ``<name>-<policy>``."""
    return [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy}",
            role=role.name,
            policy_arn=pulumi.Output.from_input(partition).apply(
                lambda p, policy=policy: managed_policy_arn(p, policy)
            ),
            opts=opts,
        )
        for policy in policies
    ]
