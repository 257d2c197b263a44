"""The system node group (``EksCluster``'s children): its IAM role, launch template and EKS managed
node group, from the pure builders of ``nodegroup``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from ..iam import SSM_NODE_POLICY, attach_managed_policies, ec2_trust_policy
from ..naming import IAM_ROLE_NAME_MAX, bounded_name
from .access import CLUSTER_TAG
from .args import EksClusterArgs
from .nodegroup import (
    SYSTEM_NODE_POLICIES,
    SYSTEM_TAINT_KEY,
    system_launch_template_data,
    system_node_group_prefix,
    system_node_label,
)
from .timeouts import node_group_timeouts

if TYPE_CHECKING:  # the component imports this module
    from .component import EksCluster


def system_node_group(
    component: EksCluster,
    name: str,
    args: EksClusterArgs,
    tags: dict[str, str],
    partition: pulumi.Output[str],
    dns_suffix: pulumi.Output[str],
    before: Sequence[pulumi.Resource],
    network_ready: Sequence[pulumi.Resource],
) -> tuple[aws.iam.Role, aws.eks.NodeGroup]:
    """The system nodes' role and managed node group, after the add-ons every node needs
    (``before``) and the network's routes and NAT (``network_ready``)."""
    spec, system = args.spec, args.system_node_group
    label_key, label_value = system_node_label(spec.label_domain)
    child = pulumi.ResourceOptions(parent=component)

    role = aws.iam.Role(
        f"{name}-system-node",
        name=bounded_name("EKSSystemNodeRole-", spec.name, IAM_ROLE_NAME_MAX),
        assume_role_policy=dns_suffix.apply(lambda s: json.dumps(ec2_trust_policy(s))),
        tags=tags,
        opts=child,
    )
    attachments = attach_managed_policies(
        f"{name}-system-node",
        role,
        SYSTEM_NODE_POLICIES + ((SSM_NODE_POLICY,) if spec.node_ssm_access else ()),
        partition,
        child,
    )
    template = system_launch_template_data(system.disk_size_gib)
    node_tags = {CLUSTER_TAG: spec.name}
    launch_template = aws.ec2.LaunchTemplate(
        f"{name}-system",
        description=f"System nodes of EKS cluster {spec.name}",
        update_default_version=True,
        metadata_options=template["metadata_options"],
        block_device_mappings=template["block_device_mappings"],
        # Instance and volume tags are the template's data: any edit makes a new template
        # version and rolls every system node (issue 11, item 6). A stable minimum: the
        # instance's name and the cluster.
        tag_specifications=[
            {"resource_type": "instance", "tags": {**node_tags, "Name": f"{spec.name}-system"}},
            {"resource_type": "volume", "tags": node_tags},
        ],
        tags=tags,
        opts=child,
    )
    node_group = aws.eks.NodeGroup(
        f"{name}-system",
        cluster_name=component.cluster_name,
        # A prefix, not a fixed name: a replacing change (instance types, subnets, AMI
        # type) then creates the new group before deleting the old one. With a fixed name
        # the bridge asks for delete-before-replace (pulumi-terraform-bridge
        # pkg/tfbridge/provider.go L1275-1276, schema.go L193-240, v3.136.0: nodeGroupName
        # is auto-named in pulumi-aws) and every controller goes down with the old group.
        node_group_name_prefix=system_node_group_prefix(spec.name),
        # The control plane's minor: an upgrade rolls the system nodes in place
        # (UpdateNodegroupVersion), after the control plane (cluster_name waits for it).
        version=spec.kubernetes_version,
        node_role_arn=role.arn,
        subnet_ids=args.private_subnet_ids,
        ami_type=system.ami_type,
        capacity_type="ON_DEMAND",
        instance_types=list(system.instance_types),
        scaling_config={
            "min_size": system.min_size,
            "max_size": system.max_size,
            "desired_size": system.desired_size or system.min_size,
        },
        update_config={"max_unavailable": 1},
        launch_template={
            "id": launch_template.id,
            "version": launch_template.latest_version.apply(str),
        },
        labels={label_key: label_value},
        taints=[{"key": SYSTEM_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"}],
        tags=tags,
        opts=pulumi.ResourceOptions(
            parent=component,
            # The nodes pull images and reach AWS through the network's routes and NAT.
            depends_on=[*before, *attachments, *network_ready],
            # The autoscaler and humans resize the group; Pulumi owns only the bounds.
            ignore_changes=["scalingConfig.desiredSize"],
            # A minor upgrade rolls every system node (timeouts.py).
            custom_timeouts=pulumi.CustomTimeouts(**node_group_timeouts(system.max_size)),
        ),
    )
    return role, node_group
