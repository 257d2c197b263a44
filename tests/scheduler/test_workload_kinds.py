"""Templates by intent (issue 23, point 6): ``scheduler.queues[].workloadKind``, its default from
the queue's pools, its validation, and the template each kind generates."""

import pytest
from pod_security import RESTRICTED_CONTAINER, RESTRICTED_POD

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.offline.examples import example_workloads
from eks_gpu_platform.spec import SpecError

DOMAIN = "eks-gpu-platform.io"
GPU = "nvidia.com/gpu"
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
IMAGE = (
    "nvcr.io/nvidia/pytorch:26.05-py3@sha256:"
    "222d8b18e671be5c3ef91cb41727a2572a0b23f59ded6c39f373a96946f6f2ba"
)

POOLS = {
    "spot": {"name": "spot", "gpus": ["l4"], "capacityTypes": ["spot"], "preemptible": True},
    "serve": {"name": "serve", "gpus": ["l4"], "capacityTypes": ["on-demand"]},
    # A new on-demand H100 pool: training, not Triton (the first complaint).
    "h100": {"name": "h100", "gpus": ["h100"], "instanceFamilies": ["p5"]},
    "sliced": {"name": "sliced", "gpus": ["l4"], "timeSlicing": "shared-4"},
    # One EFA layout: with p5.48xlarge's too, a 1-GPU budget would leave its NodePool empty.
    "efa": {
        "name": "efa",
        "kind": "efa",
        "gpus": ["h100"],
        "instanceTypes": ["p5.4xlarge"],
        "zone": "us-east-1a",
    },
    "mig": {
        "name": "mig",
        "gpus": ["h100"],
        "instanceFamilies": ["p5"],
        "migProfile": "all-balanced",
    },
}


def queue(name: str, pools=(), **extra) -> dict:
    out = {
        "name": name,
        "gpu": {"quota": 2, "limit": 8, "overQuotaWeight": 1},
        # Unbounded: a queue's CPU and memory must hold one node of its pool
        # (budget.resources), which is not what this checks.
        "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
        "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
        **extra,
    }
    if pools:
        out["nodePools"] = list(pools)
    return out


def load(pools, queues, gpu_operator=None, scheduler=None) -> PlatformConfig:
    values = {
        "cluster": {"name": "gpu-test"},
        "nodePools": [POOLS[p] for p in pools],
        "gpuOperator": gpu_operator or {"timeSlicing": {"shared-4": 4}},
        "scheduler": {"queues": queues, **(scheduler or {})},
    }
    return PlatformConfig.load(values, "us-east-1")


@pytest.mark.parametrize(
    ("pools", "kind"),
    [
        (["spot"], "training"),
        (["serve"], "inference"),
        (["h100"], "training"),
        (["sliced"], "notebook"),
        (["efa"], "training"),
        # An efa pool anywhere in the routing makes it training; otherwise the first pool rules.
        (["serve", "efa"], "training"),
        (["serve", "sliced"], "inference"),
        (["sliced", "serve"], "notebook"),
        # MIG is not time-slicing: isolated slices serve, so the GPU decides (H100: training).
        (["mig"], "training"),
    ],
    ids=[
        "preemptible",
        "on-demand-l4",
        "on-demand-h100",
        "time-sliced",
        "efa",
        "efa-second",
        "first-pool",
        "first-sliced",
        "mig",
    ],
)
def test_default_workload_kind_follows_the_pools(pools, kind):
    operator = {"migStrategy": "mixed"} if "mig" in pools else None
    # A quota of one GPU: reachable whatever share of the limit an efa pool's gang gets.
    one = {"quota": 1, "limit": 8, "overQuotaWeight": 1}
    config = load(pools, [queue("q", pools, gpu=one)], gpu_operator=operator)
    assert config.workload_kinds == {"q": kind}


@pytest.mark.parametrize("kind", ["training", "inference", "notebook"])
def test_workload_kind_overrides_the_default(kind):
    config = load(["serve"], [queue("q", ["serve"], workloadKind=kind)])
    assert config.workload_kinds == {"q": kind}
    assert sorted(example_workloads(config)) == [f"{kind}-q"]


def test_parent_and_cpu_only_queues_have_no_kind():
    config = load(
        ["serve"],
        [queue("org"), queue("team", ["serve"], parent="org")],
    )
    assert config.workload_kinds == {"team": "inference"}


def test_bad_workload_kind_names_the_queue_and_suggests():
    with pytest.raises(SpecError) as err:
        load(["serve"], [queue("q", ["serve"], workloadKind="train")])
    assert err.value.lines == [
        "scheduler.queues[0](q).workloadKind: 'train' is not allowed; expected one of training, "
        "inference, notebook; did you mean 'training'?"
    ]


def test_workload_kind_on_a_parent_queue_is_refused():
    with pytest.raises(SpecError) as err:
        load(
            ["serve"],
            [queue("org", workloadKind="training"), queue("team", ["serve"], parent="org")],
        )
    assert err.value.lines == [
        "scheduler.queues[0](org).workloadKind: is set but the queue is not a leaf queue routed "
        "to a GPU pool, so no workload template follows it; remove it"
    ]


def test_each_queue_gets_the_template_of_its_kind():
    config = load(
        ["spot", "serve", "sliced", "h100"],
        [
            queue("org", gpu={"quota": 16, "limit": 32, "overQuotaWeight": 1}),
            queue("batch", ["spot"], parent="org"),
            queue("serving", ["serve"], parent="org"),
            queue("notebooks", ["sliced"], parent="org"),
            queue("pretrain", ["h100"], parent="org"),
        ],
    )
    assert sorted(example_workloads(config)) == [
        "inference-serving",
        "notebook-notebooks",
        "training-batch",
        "training-pretrain",
    ]


def _notebook_pod(config: PlatformConfig, queue_name: str) -> dict:
    return example_workloads(config)[f"notebook-{queue_name}"].kind("Pod")


def _pod(name, queue_name, pool, priority, resources, annotations) -> dict:
    metadata = {
        "name": name,
        "namespace": queue_name,
        "labels": {"app.kubernetes.io/name": name, "kai.scheduler/queue": queue_name},
    }
    if annotations:
        metadata["annotations"] = annotations
    affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": f"{DOMAIN}/pool", "operator": "In", "values": [pool]}
                    ]
                }
            ]
        }
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "schedulerName": "kai-scheduler",
            "priorityClassName": priority,
            "automountServiceAccountToken": False,
            "securityContext": RESTRICTED_POD,
            "affinity": {"nodeAffinity": affinity},
            "tolerations": [GPU_TOLERATION],
            "containers": [
                {
                    "name": "main",
                    "image": IMAGE,
                    "command": ["sleep", "infinity"],
                    "env": [{"name": "HOME", "value": "/tmp"}],
                    "resources": resources,
                    "securityContext": RESTRICTED_CONTAINER,
                }
            ],
        },
    }


def test_notebook_on_whole_gpus_is_half_a_gpu_through_kai_sharing():
    config = load(["serve"], [queue("nb", ["serve"], workloadKind="notebook")])
    assert _notebook_pod(config, "nb") == _pod(
        "notebook-nb",
        "nb",
        "serve",
        "build",
        {"requests": {"cpu": "1", "memory": "4Gi"}, "limits": {"memory": "4Gi"}},
        {"gpu-fraction": "0.5", "karpenter.sh/do-not-disrupt": "true"},
    )


def test_notebook_without_gpu_sharing_takes_one_whole_gpu_preemptibly_on_spot():
    config = load(
        ["spot"],
        [queue("nb", ["spot"], workloadKind="notebook")],
        scheduler={"gpuSharing": False},
    )
    one = {"cpu": "1", "memory": "4Gi", GPU: "1"}
    assert _notebook_pod(config, "nb") == _pod(
        "notebook-nb",
        "nb",
        "spot",
        "build-preemptible",
        {"requests": one, "limits": {"memory": "4Gi", GPU: "1"}},
        # On a preemptible l4 pool (g6, gr6: 120 + 60 s) plus Karpenter's 10 s batch window.
        {"kai.scheduler/preemption-delay": "190s"},
    )


def test_notebook_prefers_the_queues_sliced_pool():
    config = load(["serve", "sliced"], [queue("nb", ["serve", "sliced"], workloadKind="notebook")])
    pod = _notebook_pod(config, "nb")
    assert pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["sliced"]
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "1", "memory": "4Gi", GPU: "1"},
        "limits": {"memory": "4Gi", GPU: "1"},
    }


def test_notebook_on_a_mixed_mig_pool_takes_the_smallest_device():
    # all-balanced on an H100: 1g.10gb x2, 2g.20gb x1, 3g.40gb x1 (the operator's default
    # mig-parted config); the notebook takes one 1g.10gb.
    config = load(
        ["mig"],
        [queue("nb", ["mig"], workloadKind="notebook")],
        gpu_operator={"migStrategy": "mixed"},
    )
    resources = _notebook_pod(config, "nb")["spec"]["containers"][0]["resources"]
    assert resources == {
        "requests": {"cpu": "1", "memory": "4Gi", "nvidia.com/mig-1g.10gb": "1"},
        "limits": {"memory": "4Gi", "nvidia.com/mig-1g.10gb": "1"},
    }
    assert example_workloads(config)["notebook-nb"].notes[0] == (
        "One nvidia.com/mig-1g.10gb device of pool mig (a GPU slice)."
    )


def test_h100_pool_trains_with_a_gang_job_not_triton():
    config = load(["h100"], [queue("pretrain", ["h100"])])
    template = example_workloads(config)["training-pretrain"]
    assert [d["kind"] for d in template.documents] == [
        "ConfigMap",
        "Service",
        "NetworkPolicy",
        "Job",
    ]
    job = template.kind("Job")
    assert job["metadata"]["annotations"] == {"kai.scheduler/batch-min-member": "2"}
    pod = job["spec"]["template"]["spec"]
    # Not preemptible: the build class (non-preemptible, in quota).
    assert pod["priorityClassName"] == "build"
    assert pod["containers"][0]["resources"]["limits"][GPU] == "1"  # p5.4xlarge: one H100
