"""The capacity phase end to end on a scripted cluster (tests/validate/gpu_cluster.py)."""

from __future__ import annotations

import pytest

from eks_gpu_platform.validate import capacity, gpu_specs, prices
from eks_gpu_platform.validate.core import Planned, Result

from .gpu_cluster import DATA, Clock, GpuCluster, context, namespace, nodepool, pool_entry, render

# Written to nvidia-smi(1)'s documented csv format, not a recording (see data/PROVENANCE.md).
L4_CSV = "NVIDIA L4, 23034 MiB, 580.95.05\n"
MIG_LIST = (DATA / "nvidia-smi-L-h100-mig-1g.10gb.txt").read_text()
G6 = {"g6.xlarge": {"nvidia.com/gpu": 1}, "g6.12xlarge": {"nvidia.com/gpu": 4}}
NS = "validate-r1-serving"


def g6_render(region="us-east-1", consolidate_after="5m"):
    return render(
        [pool_entry("inference", G6)],
        [{"name": "serving", "pools": ["inference"]}],
        [
            nodepool("inference", "inference", list(G6), consolidate_after=consolidate_after),
            namespace("serving"),
        ],
        region=region,
    )


def g6_cluster(clock, **kw):
    args = {
        "nodepool_name": "inference",
        "instance_type": "g6.xlarge",
        "allocatable": {"nvidia.com/gpu": "1"},
        "logs": L4_CSV,
    }
    return GpuCluster(clock, **{**args, **kw})


def run(kube, render_, clock, **options):
    options = {"pools": ("inference",), **options}
    return capacity.run(context(kube, render_, clock, **options))


def test_a_pool_not_opted_in_is_skipped():
    clock = Clock()
    kube = g6_cluster(clock)
    assert run(kube, g6_render(), clock, pools=()) == [
        Result("capacity", "inference", "skip", "not opted in (--pool inference)")
    ]
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_the_whole_check_passes_on_a_cluster_that_behaves():
    clock = Clock()
    kube = g6_cluster(clock)
    [res] = run(kube, g6_render(), clock)
    assert res.status == "pass", res
    # g6.xlarge at $0.8048/h for the 30-min time cap = $0.4024
    assert res.reason == (
        "g6.xlarge launched, advertised nvidia.com/gpu=1, ran nvidia-smi, consolidated after 325 s"
    )
    assert res.details == (
        "cost estimate: $0.40 = 1 node(s) x $0.8048/h (g6.xlarge, us-east-1, on-demand, "
        "2026-07-20) x 30 min",
        f"Job {NS}/validate-capacity-inference via queue serving: requests 1 nvidia.com/gpu "
        "on g6.xlarge",
        "pod validate-capacity-inference-x7k2p Succeeded on node ip-10-0-1-1.ec2.internal "
        "after 80 s",
        "  | NVIDIA L4, 23034 MiB, 580.95.05",
        "NodeClaim inference-abcd0 (NodePool inference, g6.xlarge)",
        "Node ip-10-0-1-1.ec2.internal allocatable nvidia.com/gpu=1; capacity.json "
        "nvidia.com/gpu=1",
        "nvidia-smi: NVIDIA L4, 23034 MiB, driver 580.95.05",
        "consolidation: started after 325 s (bound 330 s = consolidateAfter 5m + margin 30 s)",
    )
    creates = [c[1] for c in kube.calls if c[0] == "create"]
    assert creates == [
        ("v1", "Namespace", None, NS),
        ("batch/v1", "Job", NS, "validate-capacity-inference"),
    ]
    deletes = [c[1:] for c in kube.calls if c[0] == "delete"]
    assert deletes == [
        ("v1", "Pod", "validate-capacity-inference-x7k2p", NS),
        ("batch/v1", "Job", "validate-capacity-inference", NS),
    ]


def test_the_job_is_the_spec_builder_s_with_the_run_s_labels():
    clock = Clock()
    kube = g6_cluster(clock)
    ctx = context(kube, g6_render(), clock, pools=("inference",))
    capacity.run(ctx)
    job = kube.created[("Job", "validate-capacity-inference")]
    pool = gpu_specs.pools(ctx.render.capacity, ctx.render.manifests)["inference"]
    expected = gpu_specs.capacity_job(
        name="validate-capacity-inference",
        namespace=NS,
        queue="serving",
        pool=pool,
        instance_type="g6.xlarge",
        resource="nvidia.com/gpu",
        deadline_s=1800,
    )
    expected["metadata"]["labels"].update(ctx.labels)
    assert job == expected


def test_above_the_cost_cap_nothing_is_created():
    clock = Clock()
    kube = g6_cluster(clock)
    [res] = run(kube, g6_render(), clock, cost_cap_usd=0.25)
    assert (res.status, res.reason) == (
        "fail",
        "estimated $0.40 (g6.xlarge for up to 30 min; $0.40 for the run so far) is above the "
        "cost cap $0.25; nothing created",
    )
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_the_run_total_counts_against_the_cost_cap():
    clock = Clock()
    two = render(
        [pool_entry("a", {"g6.xlarge": {"nvidia.com/gpu": 1}}), pool_entry("b", G6)],
        [{"name": "serving", "pools": ["a", "b"]}],
        [nodepool("a", "a", ["g6.xlarge"]), nodepool("b", "b", list(G6)), namespace("serving")],
    )
    kube = g6_cluster(clock, nodepool_name="a")
    first, second = capacity.run(context(kube, two, clock, pools=("a", "b"), cost_cap_usd=0.5))
    assert first.status == "pass", first
    assert (second.status, second.reason) == (
        "fail",
        "estimated $0.40 (g6.xlarge for up to 30 min; $0.80 for the run so far) is above the "
        "cost cap $0.50; nothing created",
    )


def test_a_price_option_lets_an_unpriced_region_launch_and_says_so():
    clock = Clock()
    kube = g6_cluster(clock)
    user = {"g6.xlarge": 0.81, "g6.12xlarge": 4.61}
    [res] = run(kube, g6_render(region="us-west-2"), clock, prices=user)
    assert res.status == "pass", res
    assert res.details[0] == (
        "cost estimate: $0.41 = 1 node(s) x $0.8100/h (g6.xlarge, us-west-2, user-supplied "
        "(--price)) x 30 min"
    )


def test_no_price_refuses_to_launch():
    clock = Clock()
    kube = g6_cluster(clock)
    [res] = run(kube, g6_render(region="us-west-2"), clock)
    assert (res.status, res.reason) == (
        "fail",
        f"no price for g6.xlarge, g6.12xlarge in us-west-2 (table of 2026-07-20, {prices.SOURCE}; "
        "--price INSTANCE_TYPE=USD_PER_HOUR supplies one)"
        ": the cost cap cannot be checked; nothing created",
    )
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_a_node_that_advertises_other_than_capacity_json_fails():
    clock = Clock()
    kube = g6_cluster(clock, allocatable={"nvidia.com/gpu": "4"})
    [res] = run(kube, g6_render(), clock)
    assert (res.status, res.reason) == (
        "fail",
        "node ip-10-0-1-1.ec2.internal (g6.xlarge) advertises nvidia.com/gpu=4, capacity.json "
        "says nvidia.com/gpu=1",
    )


def test_a_pod_on_a_node_that_was_already_there_proves_no_launch():
    clock = Clock()
    existing = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": "inference-abcd0",
            "labels": {
                "karpenter.sh/nodepool": "inference",
                "node.kubernetes.io/instance-type": "g6.xlarge",
            },
        },
        "status": {"nodeName": "ip-10-0-1-1.ec2.internal"},
    }
    kube = g6_cluster(clock, objects=[existing])
    [res] = run(kube, g6_render(), clock)
    assert (res.status, res.reason) == (
        "fail",
        "the pod ran on node ip-10-0-1-1.ec2.internal, which existed before the check (NodeClaim "
        "inference-abcd0): no launch was tested; retry when the pool has no free node",
    )


def test_a_launch_of_a_type_the_pool_does_not_allow_fails():
    clock = Clock()
    kube = g6_cluster(clock, instance_type="g6e.xlarge")
    [res] = run(kube, g6_render(), clock)
    assert (res.status, res.reason) == (
        "fail",
        "NodeClaim inference-abcd0 launched 'g6e.xlarge', not a type of the pool "
        "(g6.xlarge, g6.12xlarge)",
    )


def test_the_wrong_gpu_in_nvidia_smi_fails():
    clock = Clock()
    kube = g6_cluster(clock, logs="NVIDIA L40S, 46068 MiB, 580.95.05\n")
    [res] = run(kube, g6_render(), clock)
    assert (res.status, res.reason) == (
        "fail",
        "nvidia-smi: NVIDIA L40S, 46068 MiB, driver 580.95.05: not the l4 of g6.xlarge",
    )


def test_a_failed_pod_fails_with_its_log_in_the_details():
    clock = Clock()
    kube = g6_cluster(clock, phase="Failed", logs="Failed to initialize NVML: Unknown Error\n")
    [res] = run(kube, g6_render(), clock)
    assert (res.status, res.reason) == (
        "fail",
        "pod validate-capacity-inference-x7k2p failed; its log is in the details",
    )
    assert "  | Failed to initialize NVML: Unknown Error" in res.details


def test_a_pod_that_never_runs_fails_at_the_time_cap():
    clock = Clock()
    kube = g6_cluster(clock, launch_s=10_000)
    [res] = run(kube, g6_render(), clock, time_cap_s=600)
    assert (res.status, res.reason) == (
        "fail",
        "the pod did not finish within the time cap (600 s)",
    )
    assert res.seconds == 600


def test_a_node_not_consolidated_within_consolidate_after_plus_margin_fails():
    clock = Clock()
    kube = g6_cluster(clock, consolidate_s=400)
    [res] = run(kube, g6_render(), clock)
    assert (res.status, res.reason) == (
        "fail",
        "NodeClaim inference-abcd0 was not consolidated within 330 s (consolidateAfter 5m + 30 s)",
    )
    assert res.details[-2:] == (
        "consolidation: not started after 330 s (bound 330 s = consolidateAfter 5m + margin 30 s)",
        "Karpenter's disruption loop runs Emptiness after the multi- and single-node consolidation "
        "of its previous pass (up to 1 min and 3 min, karpenter v1.15.0 disruption/"
        "multinodeconsolidation.go:35, singlenodeconsolidation.go:33): on a cluster with other "
        "consolidation candidates the empty node can be removed later than this bound",
    )


def test_a_node_consolidated_35_s_after_consolidate_after_is_late():
    # 35 s > 10 s disruption poll + 15 s emptiness validation + 5 s check poll; the podevents
    # 10 s dedupe only moves lastPodEventTime earlier (podevents/controller.go:84-87), so it
    # adds nothing to the bound
    clock = Clock()
    kube = g6_cluster(clock, consolidate_s=335)
    [res] = run(kube, g6_render(), clock)
    assert (res.status, res.reason) == (
        "fail",
        "NodeClaim inference-abcd0 was not consolidated within 330 s (consolidateAfter 5m + 30 s)",
    )


def test_consolidate_after_never_deletes_the_nodeclaim_itself():
    clock = Clock()
    kube = g6_cluster(clock, consolidate_s=None)
    [res] = run(kube, g6_render(consolidate_after="Never"), clock)
    assert (res.status, res.reason) == (
        "pass",
        "g6.xlarge launched, advertised and ran nvidia-smi; consolidation not tested "
        "(consolidateAfter: Never)",
    )
    assert ("delete", "karpenter.sh/v1", "NodeClaim", "inference-abcd0", None) in kube.calls


def test_a_mig_pool_requests_one_mig_device_and_reads_nvidia_smi_l():
    # p5.48xlarge under MIG mixed, all-1g.10gb: 8 GPUs x 7 devices (capacity.json's figure).
    advertised = {"p5.48xlarge": {"nvidia.com/mig-1g.10gb": 56}}
    mig = render(
        [pool_entry("mig", advertised)],
        [{"name": "serving", "pools": ["mig"]}],
        [nodepool("mig", "mig", ["p5.48xlarge"]), namespace("serving")],
    )
    # the recorded listing shows all seven devices of a GPU: one device is what a pod sees
    one_device = "\n".join(MIG_LIST.splitlines()[:2]) + "\n"
    clock = Clock()
    kube = GpuCluster(
        clock,
        nodepool_name="mig",
        instance_type="p5.48xlarge",
        allocatable={"nvidia.com/mig-1g.10gb": "56"},
        logs=one_device,
    )
    [res] = capacity.run(context(kube, mig, clock, pools=("mig",), cost_cap_usd=50.0))
    assert res.status == "pass", res
    assert "nvidia-smi: NVIDIA H100 80GB HBM3, MIG 1g.10gb" in res.details
    job = kube.created[("Job", "validate-capacity-mig")]
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["nvidia-smi", "-L"]
    assert container["resources"]["limits"] == {"nvidia.com/mig-1g.10gb": "1", "memory": "128Mi"}


def test_a_mig_listing_with_seven_devices_is_not_one_unit():
    ok, reason = capacity._judge_smi(MIG_LIST, "p5.48xlarge", "nvidia.com/mig-1g.10gb")
    assert not ok
    assert reason == (
        "NVIDIA H100 80GB HBM3, MIG 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, "
        "1g.10gb; expected one MIG 1g.10gb device"
    )


def test_planned_is_one_node_of_the_cheapest_type_for_the_time_cap():
    clock = Clock()
    ctx = context(g6_cluster(clock), g6_render(), clock, pools=("inference",), time_cap_s=900)
    assert capacity.planned(ctx) == [
        Planned(
            phase="capacity",
            check="inference",
            objects=(f"Namespace {NS}", f"Job {NS}/validate-capacity-inference"),
            pool="inference",
            instance_types=("g6.xlarge",),
            nodes=1,
            max_minutes=15.0,
        )
    ]
    assert prices.estimate_usd(capacity.planned(ctx)[0], "us-east-1") == 0.2012


def test_planned_without_prices_lists_every_type_so_the_dry_run_says_no_price():
    clock = Clock()
    ctx = context(g6_cluster(clock), g6_render("us-west-2"), clock, pools=("inference",))
    [plan] = capacity.planned(ctx)
    assert plan.instance_types == ("g6.xlarge", "g6.12xlarge")
    assert prices.estimate_usd(plan, "us-west-2") is None


def test_planned_leaves_out_pools_not_opted_in():
    clock = Clock()
    assert capacity.planned(context(g6_cluster(clock), g6_render(), clock)) == []


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5m", 300.0), ("30s", 30.0), ("1h30m", 5400.0), ("0s", 0.0), ("Never", None)],
)
def test_durations(text, seconds):
    assert gpu_specs.duration_s(text) == seconds


def test_a_bad_duration_names_the_value():
    with pytest.raises(ValueError, match=r"duration '5 minutes': expected Go duration units"):
        gpu_specs.duration_s("5 minutes")


def test_the_margin_is_karpenters_delays_plus_the_poll():
    # disruption pollingPeriod 10 s (controller.go:72) + commandValidationDelay 15 s
    # (consolidation.go:45) + this check's 5 s poll (sigs.k8s.io/karpenter v1.15.0)
    assert capacity.CONSOLIDATION_MARGIN_S == 30.0


@pytest.mark.parametrize(
    ("glob", "runs"),
    [
        ("inference", True),
        ("capacity/inference", True),
        ("capacity/*", True),
        ("performance/*", False),
    ],
)
def test_checks_select_by_name_or_phase_and_name(glob, runs):
    # as the runner sets it before the phase runs, and filters the results (runner.selected)
    clock = Clock()
    kube = g6_cluster(clock)
    ctx = context(kube, g6_render(), clock, pools=("inference",), checks=(glob,))
    ctx.phase = "capacity"
    assert [r.name for r in capacity.run(ctx)] == (["inference"] if runs else [])
    assert bool([c for c in kube.calls if c[0] == "create"]) is runs


def test_a_check_left_out_by_checks_creates_nothing():
    clock = Clock()
    kube = g6_cluster(clock)
    ctx = context(kube, g6_render(), clock, pools=("inference",), checks=("other",))
    assert capacity.run(ctx) == []
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_a_render_without_a_gpu_pool_is_a_named_skip_not_silence():
    # Before: the phase reported no check at all (issue 32, point 6).
    clock = Clock()
    kube = g6_cluster(clock)
    empty = render([], [], [namespace("serving")])
    assert run(kube, empty, clock, pools=()) == [
        Result("capacity", "gpu", "skip", "the render has no GPU pool")
    ]
    assert capacity.checks(context(kube, empty, clock)) == ["gpu"]


def test_a_dra_pool_is_skipped_with_the_reason_and_nothing_is_created():
    """Issue 31 point 4: a DRA pool's nodes advertise no nvidia.com/gpu (docs/dra-pools.md)."""
    clock = Clock()
    kube = g6_cluster(clock)
    entry = {
        **pool_entry("inference", G6),
        "draDevicesPerNode": {"g6.xlarge": {"gpu.nvidia.com": 1}},
    }
    render_ = render(
        [entry],
        [{"name": "serving", "pools": ["inference"]}],
        [nodepool("inference", "inference", list(G6)), namespace("serving")],
    )
    assert run(kube, render_, clock) == [
        Result(
            "capacity",
            "inference",
            "skip",
            "a DRA pool: this check requests nvidia.com/gpu, which its nodes do not advertise; "
            "DRA pools are not validated yet (docs/dra-pools.md)",
        )
    ]
    assert [c for c in kube.calls if c[0] == "create"] == []


def test_planned_leaves_out_a_dra_pool():
    entry = {
        **pool_entry("inference", G6),
        "draDevicesPerNode": {"g6.xlarge": {"gpu.nvidia.com": 1}},
    }
    render_ = render(
        [entry],
        [{"name": "serving", "pools": ["inference"]}],
        [nodepool("inference", "inference", list(G6)), namespace("serving")],
    )
    clock = Clock()
    assert capacity.planned(context(g6_cluster(clock), render_, clock, pools=("inference",))) == []
