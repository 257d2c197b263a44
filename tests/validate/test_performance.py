"""The performance phase end to end on a scripted cluster, judged on recorded nccl-tests logs."""

from __future__ import annotations

from eks_gpu_platform.validate import gpu_specs, nccl, performance, prices
from eks_gpu_platform.validate.core import Planned, Result

from .gpu_cluster import DATA, Clock, GpuCluster, context, namespace, nodepool, pool_entry, render

EFA_LOG = (DATA / "nccl-allreduce-efa-aws-do-eks-karpenter.log").read_text()
SOCKET_LOG = (DATA / "nccl-allreduce-socket-aws-do-eks-karpenter.log").read_text()
P5_TABLE = (DATA / "nccl-allreduce-p5-2nodes-aws-do-eks-eks-gpu-efa.log").read_text()
# aws-ofi-nccl v1.19.0's own line (src/nccl_ofi_net.cpp:594, "NET/OFI " prefix from
# include/nccl_ofi_log.h), as NCCL prints an INFO line; written to the format, not recorded.
V119_LINE = (
    "[1,0]<stdout>:worker-0:23:23 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa "
    "(found 32 nics)\n"
)
P5 = {"p5.48xlarge": {"nvidia.com/gpu": 8}}
NS = "validate-r1-nccl"


def efa_render(region="us-east-1"):
    return render(
        [pool_entry("train-efa", P5), pool_entry("gpu", {"g6.xlarge": {"nvidia.com/gpu": 1}})],
        [{"name": "llm-training", "pools": ["train-efa"]}],
        [
            nodepool("train-efa", "train-efa", ["p5.48xlarge"], efa=True),
            nodepool("gpu", "gpu", ["g6.xlarge"]),
            namespace("llm-training"),
        ],
        region=region,
    )


def cluster(clock, logs, **kw):
    return GpuCluster(
        clock,
        nodepool_name="train-efa",
        instance_type="p5.48xlarge",
        allocatable={"nvidia.com/gpu": "8"},
        logs=logs,
        **kw,
    )


def run(kube, clock, render_=None, **options):
    options = {"pools": ("train-efa",), "cost_cap_usd": 200.0, **options}
    return performance.run(context(kube, render_ or efa_render(), clock, **options))


def test_no_efa_pool_is_one_skip():
    clock = Clock()
    plain = render(
        [pool_entry("gpu", {"g6.xlarge": {"nvidia.com/gpu": 1}})],
        [],
        [nodepool("gpu", "gpu", ["g6.xlarge"])],
    )
    assert run(cluster(clock, EFA_LOG), clock, plain) == [
        Result("performance", "efa", "skip", "the render has no EFA pool")
    ]


def test_an_efa_pool_not_opted_in_is_skipped():
    clock = Clock()
    assert run(cluster(clock, EFA_LOG), clock, pools=()) == [
        Result("performance", "train-efa", "skip", "not opted in (--pool train-efa)")
    ]


def test_without_the_mpi_operator_the_check_is_skipped_with_the_install_command():
    clock = Clock()
    kube = cluster(clock, EFA_LOG, served={("batch/v1", "Job")})
    assert run(kube, clock) == [
        Result(
            "performance",
            "train-efa",
            "skip",
            "the API server does not serve MPIJob (kubeflow.org/v2beta1): install the MPI "
            'Operator v0.6.0 (kubectl apply --server-side -k "github.com/kubeflow/mpi-operator/'
            'manifests/overlays/standalone?ref=v0.6.0")',
        )
    ]
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_nccl_over_efa_reports_the_table_and_a_run_short_of_16gib_misses_aicr_s_floor():
    # the recorded p5 run stops at 2 GiB; NVIDIA AICR's floor is read at 16 GiB
    # (test_nccl_floor.py has the runs that reach it)
    clock = Clock()
    kube = cluster(clock, V119_LINE + P5_TABLE)
    [res] = run(kube, clock)
    assert (res.status, res.reason) == (
        "fail",
        "NCCL over efa on 2 x p5.48xlarge: no result at 17179869184 B (16 GiB), the message size "
        "of the floor 300 GB/s (NVIDIA AICR, H100 on EKS: NVIDIA/aicr v0.11.1 "
        "recipes/overlays/h100-eks-ubuntu-training.yaml L55-60)",
    )
    assert res.details[:4] == (
        # 2 x $55.04/h x (30 min time cap + 5 min consolidateAfter) = $64.21
        "cost estimate: $64.21 = 2 node(s) x $55.0400/h (p5.48xlarge, us-east-1, on-demand, "
        "2026-07-20) x 35 min",
        f"MPIJob {NS}/validate-nccl-train-efa: 2 x p5.48xlarge, all_reduce_perf",
        "launcher validate-nccl-train-efa-launcher Succeeded after 80 s",
        "aws-ofi-nccl providers: efa",
    )
    assert res.details[-3:] == (
        "2147483648 B: busbw 444.31 GB/s out-of-place, 444.41 GB/s in-place",
        "reference (not a floor): 438.85 GB/s at 2147483648 B, aws-samples/aws-do-eks "
        'Container-Root/eks/deployment/nccl-test/README.md "Expected results", p5.48xlarge two '
        "nodes",
        "average busbw 79.9352 GB/s over every message size",
    )
    assert len(res.details) == 4 + 32 + 2
    creates = [c[1] for c in kube.calls if c[0] == "create"]
    assert creates == [
        ("v1", "Namespace", None, NS),
        ("kubeflow.org/v2beta1", "MPIJob", NS, "validate-nccl-train-efa"),
    ]
    assert kube.created[("Namespace", NS)]["metadata"]["labels"] == {
        "pod-security.kubernetes.io/enforce": "baseline",
        "app.kubernetes.io/managed-by": "eks-gpu-platform-validate",
        "eks-gpu-platform.validate/run": "r1",
    }


def test_the_older_aws_ofi_nccl_line_counts_too():
    clock = Clock()
    [res] = run(cluster(clock, EFA_LOG), clock)
    assert "aws-ofi-nccl providers: efa" in res.details
    assert (res.status, res.reason) == (
        "fail",
        "NCCL over efa on 2 x p5.48xlarge: no result at 17179869184 B (16 GiB), the message size "
        "of the floor 300 GB/s (NVIDIA AICR, H100 on EKS: NVIDIA/aicr v0.11.1 "
        "recipes/overlays/h100-eks-ubuntu-training.yaml L55-60)",
    )


def test_a_log_without_the_ofi_line_fails():
    clock = Clock()
    [res] = run(cluster(clock, SOCKET_LOG), clock)
    assert (res.status, res.reason) == (
        "fail",
        "no 'NET/OFI Selected provider' line: NCCL did not load the aws-ofi-nccl plugin (it used "
        "its Socket transport)",
    )


def test_another_provider_fails():
    clock = Clock()
    tcp = V119_LINE.replace("is efa, fabric is efa", "is tcp, fabric is 10.0.0.0/16")
    [res] = run(cluster(clock, tcp + P5_TABLE), clock)
    assert (res.status, res.reason) == ("fail", "aws-ofi-nccl selected tcp, not efa")


def test_a_log_without_the_table_fails():
    clock = Clock()
    [res] = run(cluster(clock, V119_LINE), clock)
    assert (res.status, res.reason) == (
        "fail",
        "the log has no nccl-tests result table and summary",
    )


def test_wrong_values_fail():
    clock = Clock()
    log = V119_LINE + P5_TABLE.replace(
        "Out of bounds values : 0 OK", "Out of bounds values : 3 FAILED"
    )
    [res] = run(cluster(clock, log), clock)
    assert (res.status, res.reason) == ("fail", "nccl-tests counted 3 wrong values")


def test_a_failed_launcher_fails():
    clock = Clock()
    [res] = run(cluster(clock, V119_LINE + P5_TABLE, phase="Failed"), clock)
    assert (res.status, res.reason) == (
        "fail",
        "the launcher Failed; its log's figures are in the details",
    )


def test_above_the_cost_cap_nothing_is_created():
    clock = Clock()
    kube = cluster(clock, EFA_LOG)
    [res] = run(kube, clock, cost_cap_usd=20.0)
    assert (res.status, res.reason) == (
        "fail",
        "estimated $64.21 (2 x p5.48xlarge for up to 35 min; $64.21 for the run so far) is above "
        "the cost cap $20.00; nothing created",
    )
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_no_price_refuses():
    clock = Clock()
    kube = cluster(clock, EFA_LOG)
    [res] = run(kube, clock, efa_render("us-west-2"))
    assert (res.status, res.reason) == (
        "fail",
        f"no price for p5.48xlarge in us-west-2 (table of 2026-07-20, {prices.SOURCE}; --price "
        "INSTANCE_TYPE=USD_PER_HOUR supplies one): the cost cap cannot be checked; nothing created",
    )


def test_a_launcher_that_never_finishes_fails_at_the_time_cap():
    clock = Clock()
    [res] = run(cluster(clock, EFA_LOG, launch_s=5000), clock, time_cap_s=600)
    assert (res.status, res.reason) == (
        "fail",
        "the launcher did not finish within the time cap (600 s)",
    )


def test_planned():
    clock = Clock()
    ctx = context(cluster(clock, EFA_LOG), efa_render(), clock, pools=("train-efa", "gpu"))
    assert performance.planned(ctx) == [
        Planned(
            phase="performance",
            check="train-efa",
            objects=(f"Namespace {NS}", f"MPIJob {NS}/validate-nccl-train-efa"),
            pool="train-efa",
            instance_types=("p5.48xlarge",),
            nodes=2,
            max_minutes=35.0,
        )
    ]


def test_the_mpijob_is_the_platform_s_reference_test_for_the_pool():
    clock = Clock()
    render_ = efa_render()
    pool = gpu_specs.pools(render_.capacity, render_.manifests)["train-efa"]
    job = nccl.mpijob(
        pool, instance_type="p5.48xlarge", name="validate-nccl-train-efa", namespace=NS, labels={}
    )
    assert job["metadata"] == {"name": "validate-nccl-train-efa", "namespace": NS, "labels": {}}
    # the launcher starts once both workers are Ready, not at once (mpi-operator v0.6.0
    # mpi_job_controller.go:661-662; the default AtStartup, default.go:71-73)
    assert job["spec"]["launcherCreationPolicy"] == "WaitForWorkersReady"
    assert job["spec"]["runPolicy"] == {"cleanPodPolicy": "Running", "backoffLimit": 4}
    assert job["spec"]["slotsPerWorker"] == 8
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    assert worker["template"]["spec"]["nodeSelector"] == {
        "eks-gpu-platform.io/pool": "train-efa",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
    }
    # the GPU and EFA taints once each (the rendered taints are exactly those two)
    assert worker["template"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"},
    ]
    container = worker["template"]["spec"]["containers"][0]
    # every GPU and EFA interface of a p5.48xlarge (catalog: 8 GPUs, 32 EFAs), the hugepages
    assert container["resources"]["limits"] == {
        "nvidia.com/gpu": "8",
        "vpc.amazonaws.com/efa": "32",
        "hugepages-2Mi": "5120Mi",
        "memory": "32Gi",
        "cpu": "16",
    }
    assert {e["name"]: e["value"] for e in container["env"]} == {
        "FI_PROVIDER": "efa",
        "FI_EFA_USE_DEVICE_RDMA": "1",
        "FI_EFA_FORK_SAFE": "1",
        "FI_HMEM_CUDA_USE_DMABUF": "1",
        "NCCL_NET_PLUGIN": "ofi",
        "NCCL_DEBUG": "INFO",
        "NCCL_SOCKET_IFNAME": "^docker,lo,veth",
    }
    assert container["image"] == (
        "public.ecr.aws/hpc-cloud/nccl-tests:cuda13.0.2-efa1.48.0-ofiv1.19.0-ncclv2.30.4-1-"
        "testsv2.18.3"
    )
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["args"][2:4] == ["-np", "16"]
    assert clock() == 0.0


def test_a_check_left_out_by_checks_creates_nothing():
    clock = Clock()
    kube = cluster(clock, EFA_LOG)
    ctx = context(
        kube, efa_render(), clock, pools=("train-efa",), cost_cap_usd=200.0, checks=("other",)
    )
    assert performance.run(ctx) == []
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_what_earlier_phases_committed_counts_against_the_cost_cap():
    clock = Clock()
    kube = cluster(clock, EFA_LOG)
    ctx = context(kube, efa_render(), clock, pools=("train-efa",), cost_cap_usd=64.5)
    ctx.committed_usd = 0.4024  # the capacity phase's g6.xlarge check, earlier in the run
    [res] = performance.run(ctx)
    assert (res.status, res.reason) == (
        "fail",
        "estimated $64.21 (2 x p5.48xlarge for up to 35 min; $64.62 for the run so far) is above "
        "the cost cap $64.50; nothing created",
    )
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_a_check_that_ran_commits_its_estimate_to_the_run():
    clock = Clock()
    ctx = context(
        cluster(clock, EFA_LOG), efa_render(), clock, pools=("train-efa",), cost_cap_usd=200.0
    )
    performance.run(ctx)
    assert round(ctx.committed_usd, 2) == 64.21


def test_the_p6_b200_reference_says_its_collective_is_not_stated():
    # aws-samples/aws-do-eks f721602 Container-Root/eks/deployment/nccl-test/: line 12 of
    # all-gather, all-reduce, all-reduce-pair, fi-info and reduce-scatter .yaml-template is the
    # same "# VERIFIED on 2x p6-b200: NET/OFI platform AWS (EFA), busbw 523.8 GB/s @ 8GiB,
    # 0 errors."
    assert nccl.REFERENCES["p6-b200.48xlarge"] == (
        8589934592,
        523.8,
        "aws-samples/aws-do-eks Container-Root/eks/deployment/nccl-test/*.yaml-template line 12 "
        '"VERIFIED on 2x p6-b200" (the same header line in the all-reduce, all-gather, '
        "reduce-scatter, all-reduce-pair and fi-info templates: its collective is not stated)",
    )
