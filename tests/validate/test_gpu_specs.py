"""The capacity phase's pure helpers: the pool model read from a render, the Job, the parsers."""

from __future__ import annotations

import pytest

from eks_gpu_platform.validate import gpu_specs, nccl

from .gpu_cluster import DATA, namespace, nodepool, pool_entry, render

MIG_LIST = (DATA / "nvidia-smi-L-h100-mig-1g.10gb.txt").read_text()


def test_pools_read_capacity_json_and_the_rendered_nodepools():
    r = render(
        [
            pool_entry("train-efa", {"p5.48xlarge": {"nvidia.com/gpu": 8}}),
            pool_entry("notebooks", {"g6.xlarge": {"nvidia.com/gpu": 4}}),
        ],
        [
            {"name": "llm-training", "pools": ["train-efa"]},
            {"name": "research", "pools": ["notebooks", "train-efa"]},
        ],
        [
            nodepool("train-efa", "train-efa", ["p5.48xlarge"], efa=True, consolidate_after="10m"),
            nodepool("notebooks", "notebooks", ["g6.xlarge"]),
            namespace("research"),
        ],
    )
    assert gpu_specs.pools(r.capacity, r.manifests) == {
        "train-efa": gpu_specs.Pool(
            name="train-efa",
            instance_types=("p5.48xlarge",),
            advertised={"p5.48xlarge": {"nvidia.com/gpu": 8}},
            node_pools=("train-efa",),
            queues=("llm-training", "research"),
            pool_label="eks-gpu-platform.io/pool",
            taints=(
                {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "vpc.amazonaws.com/efa", "value": "true", "effect": "NoSchedule"},
            ),
            consolidate_after={"train-efa": "10m"},
            efa=True,
        ),
        "notebooks": gpu_specs.Pool(
            name="notebooks",
            instance_types=("g6.xlarge",),
            advertised={"g6.xlarge": {"nvidia.com/gpu": 4}},
            node_pools=("notebooks",),
            queues=("research",),
            pool_label="eks-gpu-platform.io/pool",
            taints=({"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},),
            consolidate_after={"notebooks": "5m"},
            efa=False,
        ),
    }


@pytest.mark.parametrize(
    ("advertised", "resource"),
    [
        ({"nvidia.com/gpu": 1}, "nvidia.com/gpu"),
        ({"nvidia.com/gpu": 32}, "nvidia.com/gpu"),  # time-sliced: one slice
        ({"nvidia.com/mig-3g.40gb": 16, "nvidia.com/mig-1g.10gb": 0}, "nvidia.com/mig-1g.10gb"),
        ({"nvidia.com/gpu": 2, "nvidia.com/mig-2g.20gb": 3}, "nvidia.com/mig-2g.20gb"),
        ({}, None),
    ],
)
def test_unit_resource(advertised, resource):
    assert gpu_specs.unit_resource(advertised) == resource


def test_cheapest_type_is_the_lowest_price_among_types_that_advertise_a_gpu():
    pool = gpu_specs.Pool(
        "p",
        ("g6.12xlarge", "g6.xlarge", "g6f.large", "p5e.48xlarge"),
        {
            "g6.12xlarge": {"nvidia.com/gpu": 4},
            "g6.xlarge": {"nvidia.com/gpu": 1},
            "g6f.large": {},  # a fractional L4 advertises no nvidia.com/gpu
            "p5e.48xlarge": {"nvidia.com/gpu": 8},
        },
        ("p",),
        (),
        "d/pool",
        (),
        {},
        False,
    )
    assert gpu_specs.cheapest_type(pool, "us-east-1") == ("g6.xlarge", ["p5e.48xlarge"])
    assert gpu_specs.cheapest_type(pool, "us-west-2") == (
        None,
        ["g6.12xlarge", "g6.xlarge", "p5e.48xlarge"],
    )


def test_the_capacity_job():
    pool = gpu_specs.Pool(
        "inference",
        ("g6.xlarge",),
        {"g6.xlarge": {"nvidia.com/gpu": 1}},
        ("inference",),
        ("serving",),
        "eks-gpu-platform.io/pool",
        (
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
            {"key": "team", "value": "ml", "effect": "NoExecute"},
        ),
        {"inference": "5m"},
        False,
    )
    assert gpu_specs.capacity_job(
        name="validate-capacity-inference",
        namespace="validate-r1-serving",
        queue="serving",
        pool=pool,
        instance_type="g6.xlarge",
        resource="nvidia.com/gpu",
        deadline_s=1800,
    ) == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "validate-capacity-inference",
            "namespace": "validate-r1-serving",
            "labels": {"kai.scheduler/queue": "serving"},
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 1800,
            "template": {
                "metadata": {"labels": {"kai.scheduler/queue": "serving"}},
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 1000,
                        "runAsGroup": 1000,
                        "fsGroup": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": "eks-gpu-platform.io/pool",
                                                "operator": "In",
                                                "values": ["inference"],
                                            },
                                            {
                                                "key": "node.kubernetes.io/instance-type",
                                                "operator": "In",
                                                "values": ["g6.xlarge"],
                                            },
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "team", "operator": "Exists", "effect": "NoExecute"},
                    ],
                    "containers": [
                        {
                            "name": "nvidia-smi",
                            "image": "nvcr.io/nvidia/cuda:12.6.0-base-ubuntu22.04",
                            "command": [
                                "nvidia-smi",
                                "--query-gpu=name,memory.total,driver_version",
                                "--format=csv,noheader",
                            ],
                            "env": [{"name": "HOME", "value": "/tmp"}],
                            "resources": {
                                "requests": {
                                    "nvidia.com/gpu": "1",
                                    "cpu": "100m",
                                    "memory": "128Mi",
                                },
                                "limits": {"nvidia.com/gpu": "1", "memory": "128Mi"},
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                                "runAsNonRoot": True,
                                "seccompProfile": {"type": "RuntimeDefault"},
                            },
                        }
                    ],
                },
            },
        },
    }


def test_the_mig_job_lists_devices():
    pool = gpu_specs.Pool("m", ("p5.48xlarge",), {}, ("m",), (), "d/pool", (), {}, False)
    job = gpu_specs.capacity_job(
        name="j",
        namespace="n",
        queue="q",
        pool=pool,
        instance_type="p5.48xlarge",
        resource="nvidia.com/mig-1g.10gb",
        deadline_s=60,
    )
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["nvidia-smi", "-L"]
    assert job["spec"]["template"]["spec"]["tolerations"] == []


def test_parse_the_recorded_mig_listing():
    assert gpu_specs.parse_smi_list(MIG_LIST) == [
        gpu_specs.SmiGpu(
            name="NVIDIA H100 80GB HBM3",
            uuid="GPU-b4895dbf-9350-2524-a89b-98161ddd9fe4",
            mig=(
                ("1g.10gb", "MIG-3f6f389f-b0cc-5e5c-8e32-eaa8fd067902"),
                ("1g.10gb", "MIG-35f93699-4b53-5a19-8289-80b8418eec60"),
                ("1g.10gb", "MIG-9d14fb21-4ae1-546f-a636-011582899c39"),
                ("1g.10gb", "MIG-0f709664-740c-52b0-ae79-3e4c9ede6d3b"),
                ("1g.10gb", "MIG-5d23f73a-d378-50ac-a6f5-3bf5184773bb"),
                ("1g.10gb", "MIG-6cea15c7-8a56-578c-b965-0e73cb6dfc10"),
                ("1g.10gb", "MIG-981c86e9-3607-57d7-9426-295347e4b925"),
            ),
        )
    ]


def test_a_listing_line_of_another_shape_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"not an nvidia-smi -L line: 'No devices were found'"):
        gpu_specs.parse_smi_list("No devices were found\n")


def test_parse_the_csv_query():
    # written to nvidia-smi(1)'s documented format; no citable recording was found
    text = "NVIDIA A10G, 23028 MiB, 580.95.05\nNVIDIA A10G, 23028 MiB, 580.95.05\n"
    assert gpu_specs.parse_smi_csv(text) == [
        gpu_specs.SmiGpu("NVIDIA A10G", 23028, "580.95.05"),
        gpu_specs.SmiGpu("NVIDIA A10G", 23028, "580.95.05"),
    ]


def test_a_csv_line_of_another_shape_is_an_error_naming_it():
    with pytest.raises(
        ValueError, match=r"not an nvidia-smi csv line .*'Failed to initialize NVML"
    ):
        gpu_specs.parse_smi_csv("Failed to initialize NVML: Unknown Error\n")


@pytest.mark.parametrize(
    ("instance_type", "name", "matches"),
    [
        ("g6.xlarge", "NVIDIA L4", True),
        ("g6.xlarge", "NVIDIA L40S", False),
        ("g6e.xlarge", "NVIDIA L40S", True),
        ("g5.xlarge", "NVIDIA A10G", True),
        ("p4d.24xlarge", "NVIDIA A100-SXM4-40GB", True),
        ("p5.48xlarge", "NVIDIA H100 80GB HBM3", True),
        ("p5e.48xlarge", "NVIDIA H100 80GB HBM3", False),
        ("g4dn.xlarge", "Tesla T4", True),
        ("g5g.xlarge", "NVIDIA T4G", True),
        ("g7e.2xlarge", "NVIDIA RTX PRO 6000 Blackwell Server Edition", True),
        ("m5.large", "NVIDIA L4", False),
    ],
)
def test_gpu_matches(instance_type, name, matches):
    assert gpu_specs.gpu_matches(instance_type, name) is matches


def test_nvidia_allocatable_keeps_the_nvidia_device_counts():
    node = {
        "status": {
            "allocatable": {
                "cpu": "3920m",
                "nvidia.com/gpu": "4",
                "nvidia.com/mig-1g.10gb": "0",
                "vpc.amazonaws.com/efa": "1",
            }
        }
    }
    assert gpu_specs.nvidia_allocatable(node) == {"nvidia.com/gpu": 4, "nvidia.com/mig-1g.10gb": 0}


def test_parse_the_recorded_two_node_p5_table():
    table = nccl.parse_all_reduce(
        (DATA / "nccl-allreduce-p5-2nodes-aws-do-eks-eks-gpu-efa.log").read_text()
    )
    assert len(table.rows) == 32
    assert table.rows[0] == nccl.Row(0, 0, "float", "sum", -1, 0.13, 0.0, 0.0, 0, 0.12, 0, 0, 0)
    assert table.peak == nccl.Row(
        2147483648,
        536870912,
        "float",
        "sum",
        -1,
        9062.5,
        236.96,
        444.31,
        0,
        9060.4,
        237.02,
        444.41,
        0,
    )
    assert (table.avg_busbw, table.out_of_bounds) == (79.9352, 0)


def test_parse_the_recorded_karpenter_efa_log():
    log = (DATA / "nccl-allreduce-efa-aws-do-eks-karpenter.log").read_text()
    assert nccl.ofi_providers(log) == ["efa"]
    table = nccl.parse_all_reduce(log)
    assert len(table.rows) == 31
    assert table.peak.size_bytes == 1073741824
    assert (table.peak.oop_busbw, table.peak.ip_busbw) == (2.83, 2.82)
    assert (table.avg_busbw, table.out_of_bounds) == (0.960456, 0)


def test_the_socket_log_has_no_ofi_line():
    log = (DATA / "nccl-allreduce-socket-aws-do-eks-karpenter.log").read_text()
    assert nccl.ofi_providers(log) == []
    assert nccl.parse_all_reduce(log).avg_busbw == 0.733914


@pytest.mark.parametrize(
    ("line", "providers"),
    [
        # aws-ofi-nccl v1.19.0 src/nccl_ofi_net.cpp:594
        ("x NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 32 nics)", ["efa"]),
        # v1.6.0-v1.13.x "Selected Provider is %s (found %d nics)"
        ("x NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)", ["efa"]),
        (
            "x NCCL INFO NET/OFI Selected provider is tcp, fabric is 10.0.0.0/16 (found 1 nics)",
            ["tcp"],
        ),
        ("x NCCL INFO Using network Socket", []),
    ],
)
def test_ofi_provider_lines(line, providers):
    assert nccl.ofi_providers(line) == providers


def test_a_row_with_na_wrong_counts():
    # nccl-tests v2.18.3 util.cu:485 prints "N/A" for #wrong when it does not check the result;
    # a row recorded in bottlerocket-os/bottlerocket-kernel-kit pull request #313 (description)
    row = (
        "[1,0]<stdout>:      524288          8192     float    none      -1   212.76    2.46    "
        "2.31       0   223.82    2.34    2.20    N/A"
    )
    [parsed] = nccl.parse_all_reduce(row).rows
    assert parsed == nccl.Row(
        524288, 8192, "float", "none", -1, 212.76, 2.46, 2.31, 0, 223.82, 2.34, 2.2, None
    )
