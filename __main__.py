"""eks-gpu-platform: read the stack's configuration, build the platform, export its outputs."""

import pulumi

from eks_gpu_platform import GpuPlatform, SpecError, read_stack_config

try:
    config = read_stack_config()
except SpecError as err:
    # A clean failure: one line per bad key, no traceback.
    raise pulumi.RunError(f"invalid stack configuration:\n{err}") from None

try:
    platform = GpuPlatform("platform", config)
except SpecError as err:
    # What `up` (or preview) refuses before anything is created: the same clean failure.
    raise pulumi.RunError(f"refused before anything was created:\n{err}") from None

# The component's outputs, under their package schema names (GpuPlatform documents each).
pulumi.export("clusterName", platform.cluster_name)
pulumi.export("kubeconfig", platform.kubeconfig)
pulumi.export("clusterEndpoint", platform.cluster_endpoint)
pulumi.export("oidcProviderArn", platform.oidc_provider_arn)
pulumi.export("clusterSecurityGroupId", platform.cluster_security_group_id)
pulumi.export("nodeSecurityGroupId", platform.node_security_group_id)
pulumi.export("vpcId", platform.vpc_id)
pulumi.export("privateSubnetIds", platform.private_subnet_ids)
pulumi.export("karpenterNodeRoleArn", platform.karpenter_node_role_arn)
pulumi.export("karpenterControllerRoleArn", platform.karpenter_controller_role_arn)
pulumi.export("interruptionQueueName", platform.interruption_queue_name)
pulumi.export("addonVersions", platform.addon_versions)
