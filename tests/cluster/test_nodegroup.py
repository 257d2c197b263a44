"""The system node group's builders (``eks_gpu_platform.cluster.nodegroup``) and its role's
trust policy."""

from eks_gpu_platform.cluster.nodegroup import (
    system_launch_template_data,
    system_node_label,
    system_tolerations,
)
from eks_gpu_platform.iam import ec2_trust_policy


def test_ec2_trust_policy():
    assert ec2_trust_policy("amazonaws.com.cn") == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "ec2.amazonaws.com.cn"},
                "Action": "sts:AssumeRole",
            }
        ],
    }


def test_system_launch_template_data():
    assert system_launch_template_data(80) == {
        "metadata_options": {
            "http_endpoint": "enabled",
            "http_tokens": "required",
            "http_put_response_hop_limit": 1,
        },
        "block_device_mappings": [
            {
                "device_name": "/dev/xvda",
                "ebs": {
                    "volume_size": 80,
                    "volume_type": "gp3",
                    "encrypted": "true",
                    "delete_on_termination": "true",
                },
            }
        ],
    }


def test_system_node_label_and_tolerations():
    assert system_node_label("ml.example.com") == ("ml.example.com/system", "true")
    assert system_tolerations() == [
        {"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_system_node_group_prefix_fits_the_provider_limit():
    """A prefix leaves 26 characters for the provider's unique suffix (63 in all)."""
    from eks_gpu_platform.cluster.nodegroup import system_node_group_prefix

    assert system_node_group_prefix("gpu-prod") == "gpu-prod-system-"
    long = "a" * 100
    prefix = system_node_group_prefix(long)
    assert len(prefix) == 37
    assert prefix == "a" * 20 + "-" + prefix[21:29] + "-system-"
    assert system_node_group_prefix("b" * 29) == "b" * 29 + "-system-"
