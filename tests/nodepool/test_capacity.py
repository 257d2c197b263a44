"""What a GPU node advertises and how Karpenter counts it (issue 12): ``budget.capacity``, the
GPU NodeOverlays, the NodePool limits in advertised units, and the component that registers
them. The Karpenter side is tests/karpenter_model.py (kubernetes-sigs/karpenter v1.15.0)."""

import pulumi
import pulumi_kubernetes as k8s
import pytest
from addon_pins import ADDON_VERSIONS
from crd_validation import validate
from karpenter_model import GPU, Karpenter, Pod, Render

from eks_gpu_platform.budget.capacity import (
    GPU_OVERLAY_WEIGHT,
    gpu_overlay_manifests,
    pool_capacity,
    uneven_density_problem,
)
from eks_gpu_platform.gpu_operator import mig_layout
from eks_gpu_platform.nodepool.component import NodePool, NodePoolArgs
from eks_gpu_platform.nodepool.manifests import nodepool_manifest
from eks_gpu_platform.spec import SpecError

from .pools import CLUSTER, DOMAIN, ROLE, spec

NOTEBOOKS = {"name": "notebooks", "instanceTypes": ["g6.xlarge", "g6.12xlarge"]}
SLICED = {**NOTEBOOKS, "timeSlicing": "shared-4"}
H100 = {"name": "mig", "instanceTypes": ["p5.48xlarge"]}


def layouts(profile: str, *families: str) -> dict:
    return {f: mig_layout(profile, f) for f in families}


def test_whole_gpus_need_no_overlay():
    capacity = pool_capacity(spec(NOTEBOOKS))
    assert capacity.mode == "whole"
    assert capacity.per_gpu == {"nvidia.com/gpu": 1}
    assert [(t.name, dict(t.advertised)) for t in capacity.types] == [
        ("g6.xlarge", {"nvidia.com/gpu": 1}),
        ("g6.12xlarge", {"nvidia.com/gpu": 4}),
    ]
    assert capacity.node_gpus == 1
    assert gpu_overlay_manifests(spec(NOTEBOOKS), capacity, label_domain=DOMAIN) == []


def test_time_sliced_pool_advertises_gpus_times_replicas():
    capacity = pool_capacity(spec(SLICED), replicas=4)
    assert capacity.mode == "time-sliced"
    assert capacity.per_gpu == {"nvidia.com/gpu": 4}
    assert (capacity.units_per_gpu, capacity.max_units_per_gpu) == (4, 4)
    assert capacity.limits(1) == {"nvidia.com/gpu": "4"}
    overlays = gpu_overlay_manifests(spec(SLICED), capacity, label_domain=DOMAIN)
    assert overlays == [
        {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": f"notebooks-{slug}-gpus"},
            "spec": {
                "weight": GPU_OVERLAY_WEIGHT,
                "requirements": [
                    {"key": f"{DOMAIN}/pool", "operator": "In", "values": ["notebooks"]},
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [t]},
                ],
                "capacity": {"nvidia.com/gpu": n},
            },
        }
        for slug, t, n in (("g6-xlarge", "g6.xlarge", "4"), ("g6-12xlarge", "g6.12xlarge", "16"))
    ]
    for overlay in overlays:
        assert validate(overlay) == []


def test_mig_single_pool_advertises_its_devices_as_gpus():
    raw = {**H100, "migProfile": "all-1g.10gb"}
    capacity = pool_capacity(spec(raw), mig_layouts=layouts("all-1g.10gb", "p5"))
    assert capacity.mode == "mig-single"
    assert capacity.per_gpu == {"nvidia.com/gpu": 7}
    assert [dict(t.advertised) for t in capacity.types] == [{"nvidia.com/gpu": 56}]
    assert capacity.limits(16) == {"nvidia.com/gpu": "112"}


def test_mig_mixed_pool_advertises_each_profile_and_no_whole_gpu():
    raw = {**H100, "migProfile": "all-balanced"}
    capacity = pool_capacity(
        spec(raw), mig_strategy="mixed", mig_layouts=layouts("all-balanced", "p5")
    )
    assert capacity.mode == "mig-mixed"
    assert capacity.per_gpu == {
        "nvidia.com/mig-1g.10gb": 2,
        "nvidia.com/mig-2g.20gb": 1,
        "nvidia.com/mig-3g.40gb": 1,
    }
    # KAI charges the g-count (kai-scheduler v0.16.8 resources/mig.go): 2x1 + 1x2 + 1x3 = 7 per
    # GPU in all; a queue using only one profile surely gets 2 (1g or 2g) per GPU.
    assert (capacity.units_per_gpu, capacity.max_units_per_gpu) == (2, 7)
    (overlay,) = gpu_overlay_manifests(spec(raw), capacity, label_domain=DOMAIN)
    assert overlay["spec"]["capacity"] == {
        "nvidia.com/gpu": "0",
        "nvidia.com/mig-1g.10gb": "16",
        "nvidia.com/mig-2g.20gb": "8",
        "nvidia.com/mig-3g.40gb": "8",
    }
    assert validate(overlay) == []
    manifest = nodepool_manifest(
        spec(raw), name="mig", node_class="mig", label_domain=DOMAIN, gpu_limit=16,
        per_gpu=capacity.per_gpu,
    )  # fmt: skip
    assert manifest["spec"]["limits"] == {
        "nvidia.com/mig-1g.10gb": "32",
        "nvidia.com/mig-2g.20gb": "16",
        "nvidia.com/mig-3g.40gb": "16",
    }
    assert validate(manifest) == []


A100S = {"name": "a100", "instanceTypes": ["p4d.24xlarge", "p4de.24xlarge"]}
UNEVEN = (
    "the pool's instance types carry different MIG devices per GPU (p4d.24xlarge: 32 {r} per "
    "node, 4 per GPU; p4de.24xlarge: 56 {r} per node, 7 per GPU), so one NodePool limit cannot "
    "hold its GPU budget for all of them: sized at the smallest (4 {r} per GPU), it leaves "
    "p4de.24xlarge only part of the budget (none when the budget is one node); select GPUs of "
    "one class (one pool per class)"
)


@pytest.mark.parametrize(
    ("strategy", "resource"),
    [("single", "nvidia.com/gpu"), ("mixed", "nvidia.com/mig-1g.10gb")],
)
def test_mig_pool_of_uneven_densities_is_refused(strategy, resource):
    """Review S3: A100 40GB (p4d) takes 4 1g.10gb devices per GPU, A100 80GB (p4de) 7 (the
    operator's default mig-parted config, gpu_operator/mig.py). The limit follows the smallest:
    a budget of 8 GPUs gives 32, and a p4de node (56) never fits (scheduler.go L1097-1114)."""
    raw = {**A100S, "migProfile": "all-1g.10gb"}
    capacity = pool_capacity(
        spec(raw), mig_strategy=strategy, mig_layouts=layouts("all-1g.10gb", "p4d", "p4de")
    )
    assert capacity.limits(8) == {resource: "32"}
    assert [dict(t.advertised) for t in capacity.types][1] == {
        **({"nvidia.com/gpu": 0} if strategy == "mixed" else {}),
        resource: 56,
    }
    assert uneven_density_problem(capacity) == UNEVEN.format(r=resource)
    with pytest.raises(SpecError) as err:
        load([raw], migStrategy=strategy)
    assert err.value.lines == [
        f"nodePools[0](a100).migProfile: 'all-1g.10gb': {UNEVEN.format(r=resource)}"
    ]
    with pytest.raises(SpecError) as err:
        NodePoolArgs(
            spec=spec(raw), cluster_name=CLUSTER, label_domain=DOMAIN, node_role=ROLE,
            k8s_provider=object(), gpu_limit=8, capacity=capacity, depends_on=[object()],
        )  # fmt: skip
    assert err.value.lines == [
        f"NodePoolArgs.capacity: of gpu pool 'a100': {UNEVEN.format(r=resource)}"
    ]


def test_even_densities_pass_the_density_check():
    raw = {"name": "h", "instanceTypes": ["p4de.24xlarge", "p5.48xlarge"]}
    raw["migProfile"] = "all-1g.10gb"
    capacity = pool_capacity(spec(raw), mig_layouts=layouts("all-1g.10gb", "p4de", "p5"))
    assert capacity.per_gpu == {"nvidia.com/gpu": 7}
    assert uneven_density_problem(capacity) is None
    load([raw], migStrategy="single")
    sliced = pool_capacity(spec(SLICED), replicas=4)  # g6.xlarge 4, g6.12xlarge 16: 4 per GPU
    assert uneven_density_problem(sliced) is None


def test_b200_mig_profiles_are_counted():
    raw = {"name": "b200", "instanceTypes": ["p6-b200.48xlarge"], "migProfile": "all-3g.90gb"}
    capacity = pool_capacity(spec(raw), mig_layouts=layouts("all-3g.90gb", "p6-b200"))
    assert [dict(t.advertised) for t in capacity.types] == [{"nvidia.com/gpu": 16}]


# --- Karpenter's accounting, before and after (the issue's cases) ------------------------------


# The device plugin's config as the GPU Operator hands it (k8s-device-plugin v0.20.0).
DEVICE_PLUGIN = {
    "devicePlugin": {
        "config": {
            "data": {
                "shared-4": "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: false\n"
                "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
            }
        }
    }
}


def sliced_model(limit: str, overlays: list, gate: bool = True) -> Karpenter:
    manifest = nodepool_manifest(
        spec(SLICED), name="notebooks", node_class="notebooks", label_domain=DOMAIN,
        gpu_limit=1,
    )  # fmt: skip
    manifest["spec"]["limits"]["nvidia.com/gpu"] = limit
    manifest["spec"]["template"]["metadata"]["labels"]["nvidia.com/device-plugin.config"] = (
        "shared-4"
    )
    render = Render.of([manifest, *overlays], DEVICE_PLUGIN, "us-east-1")
    return Karpenter(render, overlay_gate=gate)


def slices(n: int) -> list[Pod]:
    return [Pod({GPU: 1, "pods": 1}, {f"{DOMAIN}/pool": "notebooks"}) for _ in range(n)]


def test_time_sliced_pool_before_issue_12_launches_a_node_per_slice_then_never_again():
    """The limit in physical GPUs (2 for 8 slices) and no overlay: Karpenter thinks a g6.xlarge
    offers 1 GPU, so it launches one node per one-slice pod in a round (subtractMax of the
    largest option, 1 GPU); once initialized, each node counts 4, the pool is over its limit,
    and a node that goes is never replaced."""
    model = sliced_model("2", overlays=[])
    assert model.provision(slices(8)) == []
    assert [n.instance_type for n in model.nodes] == ["g6.xlarge", "g6.xlarge"]
    assert model.usage("notebooks")[GPU] == 8  # 4 times the limit
    model.nodes[0].deleting = True  # expired: its 4 pods go pending
    assert len(model.provision(slices(4))) == 4  # never replaced
    assert len(model.nodes) == 2


def test_time_sliced_pool_with_overlays_and_limits_in_slices():
    config_spec = spec(SLICED)
    capacity = pool_capacity(config_spec, replicas=4)
    overlays = gpu_overlay_manifests(config_spec, capacity, label_domain=DOMAIN)
    model = sliced_model(capacity.limits(2)["nvidia.com/gpu"], overlays)
    assert model.types["notebooks"]["g6.xlarge"].capacity[GPU] == 4
    assert model.provision(slices(8)) == []
    assert [n.instance_type for n in model.nodes] == ["g6.xlarge", "g6.xlarge"]
    assert model.usage("notebooks")[GPU] == 8  # exactly the limit
    model.nodes[0].deleting = True
    assert model.provision(slices(4)) == []  # replaced
    assert len([n for n in model.nodes if not n.deleting]) == 2


def test_overlays_do_nothing_without_the_feature_gate():
    capacity = pool_capacity(spec(SLICED), replicas=4)
    overlays = gpu_overlay_manifests(spec(SLICED), capacity, label_domain=DOMAIN)
    assert (
        sliced_model("8", overlays, gate=False).types["notebooks"]["g6.xlarge"].capacity[GPU] == 1
    )
    assert sliced_model("8", overlays).types["notebooks"]["g6.xlarge"].capacity[GPU] == 4


def test_equal_weight_overlays_on_the_same_resource_conflict():
    """Same weight: name descending first (nodeoverlay.go L127-136), so 'zz-admin' applies and
    ours, setting the same key at the same weight, is rejected (store.go L214-238); at a lower
    weight theirs loses to ours."""
    capacity = pool_capacity(spec(SLICED), replicas=4)
    (ours, _) = gpu_overlay_manifests(spec(SLICED), capacity, label_domain=DOMAIN)
    theirs = {**ours, "metadata": {"name": "zz-admin"}, "spec": {**ours["spec"], "capacity": {
        "nvidia.com/gpu": "9"}}}  # fmt: skip
    model = sliced_model("8", [ours, theirs])
    assert model.types["notebooks"]["g6.xlarge"].capacity[GPU] == 9
    assert model.rejected_overlays == [ours["metadata"]["name"]]
    lower = {**theirs, "spec": {**theirs["spec"], "weight": GPU_OVERLAY_WEIGHT - 1}}
    model = sliced_model("8", [lower, ours])
    assert model.types["notebooks"]["g6.xlarge"].capacity[GPU] == 4
    assert model.rejected_overlays == []


def test_mig_mixed_pool_cannot_scale_from_zero_without_overlays():
    raw = {**H100, "migProfile": "all-1g.10gb"}
    capacity = pool_capacity(
        spec(raw), mig_strategy="mixed", mig_layouts=layouts("all-1g.10gb", "p5")
    )
    manifest = nodepool_manifest(
        spec(raw), name="mig", node_class="mig", label_domain=DOMAIN, gpu_limit=8,
        per_gpu=capacity.per_gpu,
    )  # fmt: skip
    operator = {"mig": {"strategy": "mixed"}}
    pods = [Pod({"nvidia.com/mig-1g.10gb": 1, "pods": 1}, {f"{DOMAIN}/pool": "mig"})] * 10
    stuck = Karpenter(Render.of([manifest], operator, "us-east-1"))
    assert len(stuck.provision(pods)) == 10 and stuck.nodes == []
    overlays = gpu_overlay_manifests(spec(raw), capacity, label_domain=DOMAIN)
    model = Karpenter(Render.of([manifest, *overlays], operator, "us-east-1"))
    assert model.provision(pods) == []
    assert len(model.nodes) == 1
    assert model.nodes[0].advertised["nvidia.com/mig-1g.10gb"] == 56  # mig-parted: 7 per H100


# --- the component --------------------------------------------------------------------------


def program(raw: dict, capacity):
    def run() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        marker = k8s.core.v1.ConfigMap("ready", opts=pulumi.ResourceOptions(provider=provider))
        NodePool(
            "nb",
            NodePoolArgs(
                spec=spec(raw),
                cluster_name=CLUSTER,
                label_domain=DOMAIN,
                node_role=ROLE,
                k8s_provider=provider,
                gpu_limit=2,
                capacity=capacity,
                depends_on=[marker],
            ),
        )

    return run


def test_component_registers_the_overlays_and_limits_in_slices(run_program):
    recording = run_program(program(SLICED, pool_capacity(spec(SLICED), replicas=4)))
    overlays = recording.of_type("kubernetes:karpenter.sh/v1alpha1:NodeOverlay")
    assert sorted(r.name for r in overlays) == ["nb-g6-12xlarge-gpus", "nb-g6-xlarge-gpus"]
    (pool,) = recording.of_type("kubernetes:karpenter.sh/v1:NodePool")
    assert pool.inputs["spec"]["limits"] == {"nvidia.com/gpu": "8"}


def test_the_nodepool_depends_on_its_gpu_overlays(run_program):
    """Review S4: the overlays are registered first and the NodePool depends on them, so Pulumi
    creates it after them and deletes it before them (pulumi.com/docs/iac/concepts/resources/
    options/dependson/): Karpenter never sees the limit in slices with whole-GPU types."""
    recording = run_program(program(SLICED, pool_capacity(spec(SLICED), replicas=4)))
    overlays = recording.of_type("kubernetes:karpenter.sh/v1alpha1:NodeOverlay")
    (pool,) = recording.of_type("kubernetes:karpenter.sh/v1:NodePool")
    order = [r.urn for r in recording.resources]
    assert sorted(r.name for r in overlays if r.urn in pool.dependencies) == [
        "nb-g6-12xlarge-gpus",
        "nb-g6-xlarge-gpus",
    ]
    assert all(order.index(r.urn) < order.index(pool.urn) for r in overlays)


DEV_NOTEBOOK_TYPES = [
    "g6-12xlarge",
    "g6-16xlarge",
    "g6-24xlarge",
    "g6-2xlarge",
    "g6-48xlarge",
    "g6-4xlarge",
    "g6-8xlarge",
    "g6-xlarge",
    "gr6-4xlarge",
    "gr6-8xlarge",
]
RENDERED_OVERLAY_DEPENDENCIES = {
    "dev": {
        "platform-pool-notebooks-pool": [
            f"platform-pool-notebooks-{t}-gpus" for t in DEV_NOTEBOOK_TYPES
        ]
    },
    "prod": {
        "platform-pool-train-efa-pool": ["platform-pool-train-efa-hugepages"],
    },
}


@pytest.mark.parametrize("stack", sorted(RENDERED_OVERLAY_DEPENDENCIES))
def test_rendered_nodepools_depend_on_their_overlays(render_stack, stack):
    """resources.json of the shipped stacks: each NodePool lists its pool's NodeOverlays (GPU
    and hugepages) in its dependencies, and ``pulumi destroy`` deletes it in an earlier
    antichain than them (the engine's ScheduleDeletes, offline.teardown)."""
    from eks_gpu_platform.offline.teardown import delete_step

    rec = render_stack(stack)
    overlays = rec.of_type("kubernetes:karpenter.sh/v1alpha1:NodeOverlay")
    pools = rec.of_type("kubernetes:karpenter.sh/v1:NodePool")
    got = {
        p.name: sorted(o.name for o in overlays if o.urn in p.dependencies)
        for p in pools
        if any(o.parent == p.parent for o in overlays)
    }
    assert got == RENDERED_OVERLAY_DEPENDENCIES[stack]
    step = delete_step([r.to_json() for r in rec.resources])
    pairs = [(p, o) for p in pools for o in overlays if o.parent == p.parent]
    assert len(pairs) == sum(map(len, RENDERED_OVERLAY_DEPENDENCIES[stack].values()))
    assert [(p.name, o.name) for p, o in pairs if step[p.urn] >= step[o.urn]] == []


def test_component_refuses_a_time_sliced_pool_without_capacity():
    with pytest.raises(SpecError) as err:
        NodePoolArgs(
            spec=spec(SLICED),
            cluster_name=CLUSTER,
            label_domain=DOMAIN,
            node_role=ROLE,
            k8s_provider=object(),
            gpu_limit=2,
            depends_on=[object()],
        )
    assert err.value.lines == [
        "NodePoolArgs.capacity: is required for gpu pool 'notebooks': it is time-sliced or "
        "MIG-partitioned, so its nodes advertise more nvidia.com/gpu (or nvidia.com/mig-*) than "
        "the instance type has GPUs; pass pool_capacity(spec, replicas=... or mig_layouts=...)"
    ]


# --- configuration checks (issue 12, items 2 and 6) --------------------------------------------


def load(pools: list[dict], **operator) -> None:
    from eks_gpu_platform.config import PlatformConfig

    PlatformConfig.load(
        {
            "cluster": {"name": "gpu-test"},
            "nodePools": [{**p, "limits": {"gpus": 16}} for p in pools],
            "gpuOperator": {"timeSlicing": {"shared-4": 4}, **operator},
        },
        "us-east-1",
    )


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [("timeSlicing", "shared-4", "time-slicing"), ("migProfile", "all-1g.10gb", "MIG")],
)
def test_bottlerocket_refuses_the_operators_sharing(field, value, what):
    pool = {"name": "br", "instanceTypes": ["p5.48xlarge"], "ami": {"family": "bottlerocket"}}
    with pytest.raises(SpecError) as err:
        load([{**pool, field: value}])
    assert [line.split(": ", 1)[1] for line in err.value.lines] == [
        "is not supported on Bottlerocket: its NVIDIA variants run their own device plugin, "
        f"configured by Bottlerocket settings, not the GPU Operator's {what} configuration; use "
        "ami.family al2023"
    ]
    assert err.value.lines[0].startswith("nodePools[0]")
    load([pool])  # whole GPUs on Bottlerocket are fine


def test_bottlerocket_gpu_nodes_keep_the_operators_operands_off():
    from eks_gpu_platform.nodepool.manifests import pool_labels

    pool = {"name": "br", "instanceTypes": ["p5.48xlarge"], "ami": {"family": "bottlerocket"}}
    assert pool_labels(spec(pool), DOMAIN)["nvidia.com/gpu.deploy.operands"] == "false"
    assert "nvidia.com/gpu.deploy.operands" not in pool_labels(spec(NOTEBOOKS), DOMAIN)


def test_mixed_mig_pool_must_stay_within_one_gpu_class():
    pool = {"name": "mig", "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"]}
    with pytest.raises(SpecError) as err:
        load([{**pool, "migProfile": "all-balanced"}], migStrategy="mixed")
    assert err.value.lines[-1].split(": ", 1)[1] == (
        "'all-balanced' gives the pool's GPU classes different MIG resources under migStrategy "
        "mixed, so one NodePool limit cannot bound them; select GPUs of one class (one pool per "
        "class)"
    )
    load(
        [{**pool, "instanceTypes": ["p5.48xlarge"], "migProfile": "all-balanced"}],
        migStrategy="mixed",
    )


def test_a_time_sliced_pool_turns_the_overlay_gate_on():
    from eks_gpu_platform.budget import needs_node_overlay
    from eks_gpu_platform.config import PlatformConfig

    def config(pool: dict) -> PlatformConfig:
        return PlatformConfig.load(
            {
                "cluster": {"name": "gpu-test"},
                "nodePools": [{**pool, "limits": {"gpus": 4}}],
                "gpuOperator": {"timeSlicing": {"shared-4": 4}},
            },
            "us-east-1",
        )

    sliced, notebooks = config(SLICED), config(NOTEBOOKS)
    assert needs_node_overlay(sliced.pools, sliced.gpu_operator) is True
    assert needs_node_overlay(notebooks.pools, notebooks.gpu_operator) is False


def test_a_time_sliced_pool_needs_karpenters_node_overlay_gate(run_program):
    from eks_gpu_platform import (
        ClusterSpec,
        EksCluster,
        EksClusterArgs,
        Karpenter,
        KarpenterArgs,
        Network,
        NetworkArgs,
    )

    def pool(gates: dict):
        def run() -> None:
            network = Network("net", NetworkArgs(cluster_name="gpu"))
            cluster = EksCluster(
                "eks",
                EksClusterArgs(
                    spec=ClusterSpec(name="gpu", addon_versions=ADDON_VERSIONS), network=network
                ),
            )
            karpenter = Karpenter("karpenter", KarpenterArgs(cluster=cluster, feature_gates=gates))
            NodePool(
                "nb",
                NodePoolArgs(
                    spec=spec(SLICED),
                    cluster=cluster,
                    karpenter=karpenter,
                    gpu_limit=2,
                    capacity=pool_capacity(spec(SLICED), replicas=4),
                ),
            )

        return run

    with pytest.raises(SpecError) as err:
        run_program(pool({}))
    assert err.value.lines == [
        "NodePoolArgs.karpenter: runs with the nodeOverlay feature gate off, but gpu pool "
        "'notebooks' declares its advertised GPUs to Karpenter with a NodeOverlay; create "
        "Karpenter with feature_gates={'nodeOverlay': True}"
    ]
    recording = run_program(pool({"nodeOverlay": True}))
    assert len(recording.of_type("kubernetes:karpenter.sh/v1alpha1:NodeOverlay")) == 2
