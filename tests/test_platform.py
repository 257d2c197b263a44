"""Integration over the shipped stacks: node pools, EFA, GPU Operator and KAI working together.

The stack files are rendered once per session under the recording mocks: invariants run over
the user's stacks, every ``Pulumi.<stack>.yaml`` of the project root (``USER_STACKS``,
discovered; ``render_user_stack``), checks of one stack's content over the fixture stacks
``tests/fixtures/stacks/Pulumi.{dev,prod}.yaml`` (``render_stack``), which name their stack. The
tests check that every Karpenter and KAI object the stacks create passes the upstream CRDs, and
that the four Run:ai x Karpenter friction-point mitigations (FACTS §8.2) hold in what is
actually rendered. Cross-section configuration mistakes are checked with their exact messages,
through ``PlatformConfig.load`` and through the render CLI.
"""

import contextlib
import dataclasses
import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_validation import unevaluable_rules, validate
from scheduler.helpers import queue_namespace_selector
from stack_files import USER_STACKS, fixture_stack, fixture_stack_path, user_id, user_stack

from eks_gpu_platform import catalog
from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.nodepool import nodepool_groups, pool_labels
from eks_gpu_platform.offline import render as offline
from eks_gpu_platform.offline.render import (
    example_workloads,
    helm_releases,
    kubernetes_objects,
    load_stack_file,
    main,
)
from eks_gpu_platform.spec import SpecError

DOMAIN = "eks-gpu-platform.io"
POOL_LABEL = f"{DOMAIN}/pool"
GPU = "nvidia.com/gpu"
GPU_TAINT = {"key": GPU, "value": "true", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}
ZONE = "topology.kubernetes.io/zone"
PG = "aws:ec2/placementGroup:PlacementGroup"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
CRD_KINDS = ("NodePool", "EC2NodeClass", "NodeOverlay", "Queue")
# The user's stacks: the project root's Pulumi.<stack>.yaml files, invariants only. Tests of one
# stack's content name a fixture stack (tests/fixtures/stacks).
STACKS = USER_STACKS


def whole_numbers(value: Any) -> Any:
    """Numbers cross the mock engine as doubles (``1.0``); the real engine hands the provider
    ``1``, and the CRDs' integer fields reject ``1.0``."""
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def objects(recording, kind: str | None = None) -> list[dict]:
    return [
        whole_numbers(o) for o in kubernetes_objects(recording) if kind is None or o["kind"] == kind
    ]


def named(recording, kind: str, name: str) -> dict:
    matches = [o for o in objects(recording, kind) if o["metadata"]["name"] == name]
    assert len(matches) == 1, (kind, name, len(matches))
    return matches[0]


def registration(recording, typ: str, name: str):
    matches = [r for r in recording.resources if r.type == typ and r.name == name]
    assert len(matches) == 1, (typ, name, len(matches))
    return matches[0]


def release(recording, name: str) -> dict:
    matches = [r for r in helm_releases(recording) if r["name"] == name]
    assert len(matches) == 1, name
    return whole_numbers(matches[0])


def requirements(pool: dict) -> dict[str, dict]:
    return {r["key"]: r for r in pool["spec"]["template"]["spec"]["requirements"]}


def is_gpu_pool(pool: dict) -> bool:
    return "karpenter.k8s.aws/instance-gpu-manufacturer" in requirements(pool)


def labels(pool: dict) -> dict[str, str]:
    return pool["spec"]["template"]["metadata"]["labels"]


# --- every Karpenter and KAI object passes the upstream CRDs -----------------------------------

RENDERED = {
    "dev": {
        ("NodePool", "gpu-spot"),
        ("NodePool", "inference"),
        ("NodePool", "notebooks"),
        ("NodePool", "general"),
        ("EC2NodeClass", "gpu-spot"),
        ("EC2NodeClass", "inference"),
        ("EC2NodeClass", "notebooks"),
        ("EC2NodeClass", "general"),
        ("Queue", "research"),
        ("Queue", "research-batch"),
        ("Queue", "research-serving"),
        ("Queue", "research-notebooks"),
        # The time-sliced notebooks pool: one NodeOverlay per instance type (issue 12).
        *(
            ("NodeOverlay", f"notebooks-{t}-gpus")
            for t in (
                "g6-xlarge",
                "g6-2xlarge",
                "g6-4xlarge",
                "g6-8xlarge",
                "g6-12xlarge",
                "g6-16xlarge",
                "g6-24xlarge",
                "g6-48xlarge",
                "gr6-4xlarge",
                "gr6-8xlarge",
            )
        ),
    },
    "prod": {
        ("NodePool", "train-efa"),
        ("NodePool", "train-spot"),
        ("NodePool", "inference"),
        ("NodePool", "general"),
        ("EC2NodeClass", "train-efa"),
        ("EC2NodeClass", "train-spot"),
        ("EC2NodeClass", "inference"),
        ("EC2NodeClass", "general"),
        ("NodeOverlay", "train-efa-hugepages"),
        ("Queue", "ml"),
        ("Queue", "llm-training"),
        ("Queue", "research"),
        ("Queue", "serving"),
    },
}
CRD_CASES = sorted((stack, kind, name) for stack, items in RENDERED.items() for kind, name in items)


@pytest.mark.parametrize("stack", sorted(RENDERED))
def test_the_stack_renders_exactly_these_custom_resources(render_stack, stack):
    rendered = {
        (o["kind"], o["metadata"]["name"])
        for o in objects(render_stack(stack))
        if o["kind"] in CRD_KINDS
    }
    assert rendered == RENDERED[stack]


@pytest.mark.parametrize(
    ("stack", "kind", "name"), CRD_CASES, ids=[f"{s}/{k}/{n}" for s, k, n in CRD_CASES]
)
def test_rendered_object_passes_the_upstream_crd(render_stack, stack, kind, name):
    assert validate(named(render_stack(stack), kind, name)) == []


def test_every_crd_rule_on_the_rendered_objects_was_evaluated(render_stack):
    for stack in RENDERED:
        for obj in objects(render_stack(stack)):
            if obj["kind"] in CRD_KINDS:
                validate(obj)
    assert unevaluable_rules() == set()


# --- GPU pools: taint, pool label, GPU limit; a cpu pool in every stack -------------------------


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_every_gpu_nodepool_is_tainted_labelled_and_capped(render_user_stack, stack):
    gpu_pools = [p for p in objects(render_user_stack(stack), "NodePool") if is_gpu_pool(p)]
    assert gpu_pools
    for pool in gpu_pools:
        name = pool["metadata"]["name"]
        assert GPU_TAINT in pool["spec"]["template"]["spec"]["taints"], name
        assert POOL_LABEL in labels(pool), name
        assert name.startswith(labels(pool)[POOL_LABEL]), name
        assert GPU in pool["spec"]["limits"], name


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_no_template_label_uses_karpenter_or_kai_pool_keys(render_user_stack, stack):
    for pool in objects(render_user_stack(stack), "NodePool"):
        assert "karpenter.sh/nodepool" not in labels(pool)
        assert "kai.scheduler/node-pool" not in labels(pool)


@pytest.mark.parametrize("stack", STACKS, ids=user_id)
def test_every_stack_has_an_untainted_cpu_pool(render_user_stack, stack):
    cpu = [
        p
        for p in objects(render_user_stack(stack), "NodePool")
        if not is_gpu_pool(p) and not p["spec"]["template"]["spec"].get("taints")
    ]
    # The configured untainted cpu pools, or the default `general` one when none is configured.
    configured = [
        p.name
        for p in offline.validate(user_stack(stack)).pools
        if p.kind == "cpu" and not p.taints
    ]
    assert configured
    assert [p["metadata"]["name"] for p in cpu] == configured
    for pool in cpu:
        assert GPU not in pool["spec"].get("limits", {})


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_shipped_stacks_use_the_default_general_pool(render_stack, stack):
    cpu = [
        p["metadata"]["name"]
        for p in objects(render_stack(stack), "NodePool")
        if not is_gpu_pool(p)
    ]
    assert cpu == ["general"]


# --- EFA ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prod(render_stack):
    return render_stack("prod")


def efa_pools(recording) -> list[dict]:
    return [p for p in objects(recording, "NodePool") if labels(p).get(f"{DOMAIN}/efa") == "true"]


def test_prod_has_one_efa_nodepool_for_p5_and_p5e(prod):
    # p5.48xlarge and p5e.48xlarge have the same EFA layout: one NodePool, one limit.
    assert [p["metadata"]["name"] for p in efa_pools(prod)] == ["train-efa"]


def test_efa_nodepools_pin_one_zone(prod):
    for pool in efa_pools(prod):
        zone = [r for r in pool["spec"]["template"]["spec"]["requirements"] if r["key"] == ZONE]
        assert zone == [{"key": ZONE, "operator": "In", "values": ["us-east-1a"]}]


def test_efa_node_classes_use_the_stacks_placement_group_and_security_group(prod):
    pg = registration(prod, PG, "platform-pool-train-efa-pg")
    sg = registration(prod, SG, "platform-pool-train-efa-efa")
    assert pg.inputs["strategy"] == "cluster"
    for typ, name in (
        (INGRESS, "platform-pool-train-efa-efa-self-in"),
        (EGRESS, "platform-pool-train-efa-efa-self-out"),
    ):
        rule = registration(prod, typ, name)
        assert rule.inputs["securityGroupId"] == sg.id
        assert rule.inputs["referencedSecurityGroupId"] == sg.id
        assert rule.inputs["ipProtocol"] == "-1"
    for pool in efa_pools(prod):
        node_class = named(
            prod, "EC2NodeClass", pool["spec"]["template"]["spec"]["nodeClassRef"]["name"]
        )
        itypes = requirements(pool)["node.kubernetes.io/instance-type"]["values"]
        assert itypes == ["p5.48xlarge", "p5e.48xlarge"]
        spec = node_class["spec"]
        assert spec["placementGroupSelector"] == {"name": pg.outputs["name"]}
        assert {"id": sg.id} in spec["securityGroupSelectorTerms"]
        for itype in itypes:  # the one layout both types share
            assert spec["networkInterfaces"] == catalog.efa_network_interfaces(itype)
        assert spec["associatePublicIPAddress"] is False
        assert spec["capacityReservationSelectorTerms"] == [
            {"tags": {"eks-gpu-platform/reservation": "train-efa"}}
        ]


def test_efa_device_plugin_release(prod, render_stack):
    plugin = release(prod, "aws-efa-k8s-device-plugin")
    assert (plugin["repository"], plugin["chart"], plugin["version"], plugin["namespace"]) == (
        "https://aws.github.io/eks-charts",
        "aws-efa-k8s-device-plugin",
        "0.5.30",
        "kube-system",
    )
    assert plugin["values"]["nodeSelector"] == {f"{DOMAIN}/efa": "true"}
    assert plugin["values"]["supportedInstanceLabels"]["values"] == ["p5.48xlarge", "p5e.48xlarge"]
    assert sorted(plugin["values"]["tolerations"], key=str) == sorted(
        [GPU_TOLERATION, EFA_TOLERATION], key=str
    )
    assert "aws-efa-k8s-device-plugin" not in [
        r["name"] for r in helm_releases(render_stack("dev"))
    ]


# dev has a time-sliced pool (its advertised GPUs), prod an EFA pool (its hugepages): both need
# the gate. A stack with neither is covered by tests/nodepool/test_capacity.py.
@pytest.mark.parametrize(("stack", "overlay"), [("dev", True), ("prod", True)])
def test_node_overlay_gate_only_with_efa_pools(render_stack, stack, overlay):
    karpenter = release(render_stack(stack), "karpenter")
    assert karpenter["values"]["settings"]["featureGates"]["nodeOverlay"] is overlay
    assert bool(objects(render_stack(stack), "NodeOverlay")) is overlay


# --- friction point 1: each GPU pool's limit is what its queues can admit ----------------------

# dev (Pulumi.dev.yaml): the three leaves' shares (8 + 4 + 2 = 14) are cut to their parent
# research's gpu.limit 12 (budget/queues.py): the in-quota parts (2 + 4 + 2 = 8) stay, the
# over-quota part (batch's 6) gets the 4 left:
#   gpu-spot  preemptible      <- research-batch   gpu.limit 8, cut to 2 + 4 -> 6
#   inference non-preemptible  <- research-serving gpu.quota 4           -> 4
#   notebooks non-preemptible, time-sliced 4 ways (gpuOperator.timeSlicing shared-4)
#             <- research-notebooks gpu.quota 2 (slices) -> ceil(2 / 4) = 1 physical GPU,
#                within the pool's cap of 2                              -> 1, rendered in the
#                slices its nodes advertise: 1 x 4                       -> "4"
# prod (Pulumi.prod.yaml):
#   train-efa non-preemptible  <- llm-training gpu.quota 64, cap 64      -> 64, one NodePool
#             (p5.48xlarge and p5e.48xlarge share one EFA layout)
#   train-spot preemptible     <- research gpu.limit 32                  -> 32
#   inference non-preemptible  <- serving gpu.quota 16                   -> 16
GPU_LIMITS = {
    "dev": {"gpu-spot": "6", "inference": "4", "notebooks": "4"},
    "prod": {
        "train-efa": "64",
        "train-spot": "32",
        "inference": "16",
    },
}
CONFIG_GPU_LIMITS = {
    "dev": {"gpu-spot": 6, "inference": 4, "notebooks": 1},
    "prod": {"train-efa": 64, "train-spot": 32, "inference": 16},
}


def stack_config(stack: str) -> PlatformConfig:
    """The fixture stack ``stack``'s configuration."""
    return offline.validate(fixture_stack(stack))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_gpu_limits_equal_what_the_queues_admit(render_stack, repo, stack):
    assert stack_config(stack).gpu_limits == CONFIG_GPU_LIMITS[stack]
    rendered = {
        p["metadata"]["name"]: p["spec"]["limits"][GPU]
        for p in objects(render_stack(stack), "NodePool")
        if is_gpu_pool(p)
    }
    assert rendered == GPU_LIMITS[stack]


def queue(name: str, pools: list[str], gpu_quota: float = 8, gpu_limit: float = 8) -> dict:
    return {
        "name": name,
        "nodePools": pools,
        "gpu": {"quota": gpu_quota, "limit": gpu_limit, "overQuotaWeight": 1},
        # Unbounded: a queue's CPU and memory must hold one node (budget.resources).
        "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
        "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
    }


def test_a_gpu_pool_no_queue_routes_to_is_a_config_error():
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(
            {
                "cluster": {"name": "gpu-test"},
                "nodePools": [
                    {"name": "gpu", "gpus": ["l4"]},
                    {"name": "idle", "gpus": ["l4"]},
                ],
                "scheduler": {"queues": [queue("team", ["gpu"])]},
            },
            "us-east-1",
        )
    assert err.value.lines == [
        "scheduler.queues: no leaf queue routes to GPU node pool 'idle'; its GPU limit would be "
        "0, so Karpenter would never provision it; add it to a leaf queue's nodePools"
    ]


EFA_POOL = {
    "name": "train",
    "kind": "efa",
    "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"],
    "zone": "us-east-1a",
}


# p5en.48xlarge (efa-only on cards 0-15) and p5.48xlarge (cards 0-31): two EFA layouts.
TWO_LAYOUTS = {**EFA_POOL, "instanceTypes": ["p5en.48xlarge", "p5.48xlarge"]}


def test_queue_derived_efa_budget_fills_the_first_layout_then_type_shares_split_it():
    values = {
        "cluster": {"name": "gpu-test"},
        "nodePools": [TWO_LAYOUTS],
        "scheduler": {"queues": [queue("train", ["train"], gpu_quota=16, gpu_limit=16)]},
    }
    # Greedy in instanceTypes order, not round-robin, the first layout takes the whole 16 and
    # leaves the second NodePool a limit of 0, which can never launch a node: a configuration
    # error naming typeShares and a split in whole 8-GPU nodes (issue 30, point 5; review M3).
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-east-1")
    assert err.value.lines == [
        "nodePools[0](train).typeShares: efa pool 'train' has 2 EFA layouts, one NodePool each "
        "('train-p5en-48xlarge' (p5en.48xlarge): 16 GPUs; 'train-p5-48xlarge' (p5.48xlarge): "
        "0 GPUs) from a budget of 16 GPUs: without typeShares the first layout takes it all, "
        "leaving 'train-p5-48xlarge' with no whole node, a NodePool that can never launch; set "
        "typeShares to split it, e.g. typeShares: {p5en.48xlarge: 8, p5.48xlarge: 8}"
    ]
    # A preemptible pool, sized by gpu.limit: typeShares give the first layout 8, the next one
    # the rest (quota 8 fits one NodePool, so no gang error).
    shared = {**TWO_LAYOUTS, "preemptible": True, "typeShares": {"p5en.48xlarge": 8}}
    config = PlatformConfig.load(
        {
            **values,
            "nodePools": [shared],
            "scheduler": {"queues": [queue("train", ["train"], gpu_quota=8, gpu_limit=16)]},
        },
        "us-east-1",
    )
    groups = nodepool_groups(config.node_pools[0], config.gpu_limits["train"])
    assert [g.gpus for g in groups] == [8, 8]
    too_much = {**TWO_LAYOUTS, "typeShares": {"p5en.48xlarge": 16, "p5.48xlarge": 16}}
    with pytest.raises(SpecError) as err:
        PlatformConfig.load({**values, "nodePools": [too_much]}, "us-east-1")
    assert err.value.lines == [
        "nodePools[0](train).typeShares: sum to 32 GPUs, more than the budget of efa pool "
        "'train' (16 GPUs, from its queues and limits.gpus)"
    ]


def test_a_non_preemptible_efa_queue_whose_quota_no_gang_can_get_is_a_config_error():
    # Both layouts get 8 GPUs: no NodePool holds the 16-GPU quota of a queue whose work runs
    # in quota only (a gang runs on one instance type of one NodePool).
    shared = {**TWO_LAYOUTS, "typeShares": {"p5en.48xlarge": 8, "p5.48xlarge": 8}}
    values = {
        "cluster": {"name": "gpu-test"},
        "nodePools": [shared],
        "scheduler": {"queues": [queue("train", ["train"], gpu_quota=16, gpu_limit=16)]},
    }
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-east-1")
    assert err.value.lines == [
        "scheduler.queues[0](train).gpu.quota: 16 of queue 'train' is more than one gang can get "
        "(8 GPUs): it runs in quota only on its non-preemptible EFA pool(s) 'train', and a gang "
        "runs on one instance type of one NodePool, whose budget holds at most that many; give "
        "the pool's types one EFA layout, raise its budget, or set its typeShares so one "
        "NodePool holds the quota"
    ]


# --- friction point 3: non-preemptible pools are not disrupted ---------------------------------

NON_PREEMPTIBLE = {
    "dev": ["inference", "notebooks"],
    "prod": ["inference", "train-efa"],
}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_non_preemptible_pools(render_stack, stack):
    pools = [
        p
        for p in objects(render_stack(stack), "NodePool")
        if labels(p)[f"{DOMAIN}/preemptible"] == "false"
    ]
    assert sorted(p["metadata"]["name"] for p in pools) == NON_PREEMPTIBLE[stack]
    for pool in pools:
        capacity = requirements(pool)["karpenter.sh/capacity-type"]["values"]
        assert set(capacity) <= {"on-demand", "reserved"}
        assert pool["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"
        drifted = [
            b for b in pool["spec"]["disruption"]["budgets"] if b.get("reasons") == ["Drifted"]
        ]
        assert drifted == [
            {"nodes": "0", "reasons": ["Drifted"], "schedule": "0 8 * * mon-fri", "duration": "10h"}
        ]


ADMISSION = ("MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")
POLICY_NAME = "kai-non-preemptible-do-not-disrupt"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_mutating_admission_policy_on_kubernetes_1_36(render_stack, stack):
    kinds = sorted(
        (o["kind"], o["metadata"]["name"])
        for o in objects(render_stack(stack))
        if o["kind"].endswith(("AdmissionPolicy", "AdmissionPolicyBinding"))
    )
    assert kinds == [
        ("MutatingAdmissionPolicy", POLICY_NAME),
        ("MutatingAdmissionPolicy", f"{POLICY_NAME}-cronjobs"),
        ("MutatingAdmissionPolicy", f"{POLICY_NAME}-mpijobs"),
        ("MutatingAdmissionPolicy", f"{POLICY_NAME}-workloads"),
        ("MutatingAdmissionPolicy", "platform-tenant-queue-label"),
        ("MutatingAdmissionPolicyBinding", POLICY_NAME),
        ("MutatingAdmissionPolicyBinding", f"{POLICY_NAME}-cronjobs"),
        ("MutatingAdmissionPolicyBinding", f"{POLICY_NAME}-mpijobs"),
        ("MutatingAdmissionPolicyBinding", f"{POLICY_NAME}-workloads"),
        # Issue 29: the queue label of an unlabelled tenant pod, mutating from 1.36.
        ("MutatingAdmissionPolicyBinding", "platform-tenant-queue-label"),
        # The tenant guardrail is a ValidatingAdmissionPolicy on every minor (issue 22, point 5),
        # as are the tenancy policies (issue 29).
        ("ValidatingAdmissionPolicy", "platform-tenant-pods"),
        ("ValidatingAdmissionPolicy", "platform-tenant-queue"),
        ("ValidatingAdmissionPolicy", "platform-tenant-tolerations"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-pods"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-queue"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-tolerations"),
    ]


# --- rendering a temporary stack file ----------------------------------------------------------


def write_stack(path: Path, values: dict, region: str = "us-east-1") -> Path:
    config = {"aws:region": region}
    config.update({f"eks-gpu-platform:{key}": value for key, value in values.items()})
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def render_values(repo: Path, tmp_path: Path, values: dict, region: str = "us-east-1"):
    path = write_stack(tmp_path / "Pulumi.test.yaml", values, region)
    return offline.render(repo, load_stack_file(repo, "test", path))


def prod_values(repo: Path) -> dict:
    document = yaml.safe_load(fixture_stack_path("prod").read_text())
    prefix = "eks-gpu-platform:"
    return {
        k.removeprefix(prefix): v for k, v in document["config"].items() if k.startswith(prefix)
    }


def test_validating_admission_policy_before_kubernetes_1_36(repo, tmp_path):
    values = prod_values(repo)
    values["cluster"] = {**values["cluster"], "kubernetesVersion": "1.35"}
    recording = render_values(repo, tmp_path, values)
    kinds = sorted(
        (o["kind"], o["metadata"]["name"])
        for o in objects(recording)
        if o["kind"].endswith(("AdmissionPolicy", "AdmissionPolicyBinding"))
    )
    assert kinds == [
        ("ValidatingAdmissionPolicy", POLICY_NAME),
        ("ValidatingAdmissionPolicy", f"{POLICY_NAME}-cronjobs"),
        ("ValidatingAdmissionPolicy", f"{POLICY_NAME}-mpijobs"),
        ("ValidatingAdmissionPolicy", f"{POLICY_NAME}-workloads"),
        ("ValidatingAdmissionPolicy", "platform-tenant-pods"),
        ("ValidatingAdmissionPolicy", "platform-tenant-queue"),
        ("ValidatingAdmissionPolicy", "platform-tenant-tolerations"),
        ("ValidatingAdmissionPolicyBinding", POLICY_NAME),
        ("ValidatingAdmissionPolicyBinding", f"{POLICY_NAME}-cronjobs"),
        ("ValidatingAdmissionPolicyBinding", f"{POLICY_NAME}-mpijobs"),
        ("ValidatingAdmissionPolicyBinding", f"{POLICY_NAME}-workloads"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-pods"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-queue"),
        ("ValidatingAdmissionPolicyBinding", "platform-tenant-tolerations"),
    ]
    binding = named(recording, "ValidatingAdmissionPolicyBinding", POLICY_NAME)
    assert binding["spec"] == {
        "policyName": POLICY_NAME,
        "matchResources": {"namespaceSelector": queue_namespace_selector("eks-gpu-platform.io")},
        "validationActions": ["Deny"],
    }


# --- friction point 4: workloads stay in one pool ----------------------------------------------


@pytest.fixture(scope="module")
def prod_examples(repo) -> dict:
    return example_workloads(stack_config("prod"))


def pool_affinity(pool: str, zone: str | None = None, instance_type: str | None = None) -> dict:
    expressions = [{"key": POOL_LABEL, "operator": "In", "values": [pool]}]
    if zone is not None:
        expressions.append({"key": ZONE, "operator": "In", "values": [zone]})
    if instance_type is not None:
        expressions.append(
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [instance_type]}
        )
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]
        }
    }


def test_prod_example_workloads(prod_examples):
    assert sorted(prod_examples) == [
        "inference-serving",
        "nccl-allreduce-train-efa",
        "training-llm-training",
        "training-research",
    ]


def test_training_job_on_the_efa_pool(prod_examples):
    job = prod_examples["training-llm-training"].kind("Job")
    assert job["metadata"]["labels"] == {"kai.scheduler/queue": "llm-training"}
    assert job["metadata"]["annotations"] == {"kai.scheduler/batch-min-member": "2"}
    template = job["spec"]["template"]
    assert template["metadata"] == {
        "labels": {"kai.scheduler/queue": "llm-training"},
        "annotations": {"karpenter.sh/do-not-disrupt": "true"},
    }
    pod = template["spec"]
    assert pod["schedulerName"] == "kai-scheduler"
    assert pod["priorityClassName"] == "build"
    # Two instance types (p5 and p5e, 8 GPUs each): the gang pins the pool's zone and the first
    # type by size, then name (issue 19 item 7).
    assert pod["affinity"]["nodeAffinity"] == pool_affinity(
        "train-efa", "us-east-1a", "p5.48xlarge"
    )
    own_pods = {"matchLabels": {"batch.kubernetes.io/job-name": "train-llm-training"}}
    assert pod["affinity"]["podAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": own_pods, "topologyKey": POOL_LABEL},
            {"labelSelector": own_pods, "topologyKey": ZONE},
            {"labelSelector": own_pods, "topologyKey": "node.kubernetes.io/instance-type"},
        ]
    }
    assert pod["tolerations"] == [GPU_TOLERATION, EFA_TOLERATION]
    (container,) = pod["containers"]
    devices = {GPU: "8", "vpc.amazonaws.com/efa": "32", "hugepages-2Mi": "5120Mi"}
    assert container["resources"] == {
        "requests": {"cpu": "32", "memory": "256Gi", **devices},
        "limits": {"memory": "256Gi", **devices},
    }


def test_preemptible_training_job_on_spot(prod_examples):
    job = prod_examples["training-research"].kind("Job")
    pod = job["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "train"
    # Three zones and four types: the VPC's first zone and the type with the fewest GPUs.
    assert pod["affinity"]["nodeAffinity"] == pool_affinity(
        "train-spot", "us-east-1a", "p5.4xlarge"
    )
    assert pod["tolerations"] == [GPU_TOLERATION]
    assert "annotations" not in job["spec"]["template"]["metadata"]
    # research shares the preemptible train-spot (a100, h100: p5 is the slowest family, 360 s
    # to Ready + 120 s to GPUs) with preemptible work: KAI waits 10 s + 480 s before it evicts.
    assert job["metadata"]["annotations"] == {
        "kai.scheduler/batch-min-member": "2",
        "kai.scheduler/preemption-delay": "490s",
    }


def test_inference_deployment_is_protected_from_consolidation(prod_examples):
    deployment = prod_examples["inference-serving"].kind("Deployment")
    template = deployment["spec"]["template"]
    assert template["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
    assert template["metadata"]["labels"]["kai.scheduler/queue"] == "serving"
    assert template["spec"]["schedulerName"] == "kai-scheduler"
    assert template["spec"]["priorityClassName"] == "inference"
    assert template["spec"]["affinity"] == {"nodeAffinity": pool_affinity("inference")}
    assert template["spec"]["tolerations"] == [GPU_TOLERATION]


def test_dev_notebook_takes_one_time_slice_on_the_notebooks_queue(repo):
    """Issue 23, point 6: the notebooks queue (routed to the time-sliced pool) gets the notebook,
    in its own namespace and on its own queue, asking for one of the pool's slices."""
    pod = example_workloads(stack_config("dev"))["notebook-research-notebooks"].kind("Pod")
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "notebook-research-notebooks",
            "namespace": "research-notebooks",
            "labels": {
                "app.kubernetes.io/name": "notebook-research-notebooks",
                "kai.scheduler/queue": "research-notebooks",
            },
            "annotations": {"karpenter.sh/do-not-disrupt": "true"},
        },
        "spec": {
            "schedulerName": "kai-scheduler",
            "priorityClassName": "build",
            "automountServiceAccountToken": False,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": 1000,
                "runAsGroup": 1000,
                "fsGroup": 1000,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "affinity": {"nodeAffinity": pool_affinity("notebooks")},
            "tolerations": [GPU_TOLERATION],
            "containers": [
                {
                    "name": "main",
                    "image": (
                        "nvcr.io/nvidia/pytorch:26.05-py3@sha256:"
                        "222d8b18e671be5c3ef91cb41727a2572a0b23f59ded6c39f373a96946f6f2ba"
                    ),
                    "command": ["sleep", "infinity"],
                    "env": [{"name": "HOME", "value": "/tmp"}],
                    "resources": {
                        "requests": {"cpu": "1", "memory": "4Gi", GPU: "1"},
                        "limits": {"memory": "4Gi", GPU: "1"},
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
    }


def test_the_committed_examples_are_the_prod_render(repo, prod_examples):
    committed = sorted(p.stem for p in (repo / "examples").glob("*.yaml"))
    assert committed == sorted(prod_examples)
    for name, template in prod_examples.items():
        text = (repo / "examples" / f"{name}.yaml").read_text()
        assert list(yaml.safe_load_all(text)) == list(template.documents), name
        assert text == offline.template_text(template), name


def test_dev_examples_have_no_nccl_test(repo):
    examples = example_workloads(stack_config("dev"))
    assert sorted(examples) == [
        "inference-research-serving",
        "notebook-research-notebooks",
        "training-research-batch",
    ]


# --- GPU Operator and KAI ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack", "daemonset_tolerations"),
    [("dev", [GPU_TOLERATION]), ("prod", [GPU_TOLERATION, EFA_TOLERATION])],
)
def test_gpu_operator_values(render_stack, repo, stack, daemonset_tolerations):
    assert stack_config(stack).drivers_preinstalled is True
    values = release(render_stack(stack), "gpu-operator")["values"]
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False}
    assert values["operator"]["nodeSelector"] == {
        f"{DOMAIN}/system": "true",
        "kubernetes.io/os": "linux",
    }
    assert sorted(values["daemonsets"]["tolerations"], key=str) == sorted(
        daemonset_tolerations, key=str
    )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kai_waits_for_the_gpu_operator_and_a_cpu_pool(render_stack, stack):
    recording = render_stack(stack)
    kai = registration(recording, "kubernetes:helm.sh/v3:Release", "platform-scheduler-chart")
    operator = registration(
        recording, "eks-gpu-platform:index:GpuOperator", "platform-gpu-operator"
    )
    operator_urns = {operator.urn} | {r.urn for r in recording.children_of(operator.urn)}
    assert operator_urns & set(kai.dependencies)
    general = registration(recording, "eks-gpu-platform:index:NodePool", "platform-pool-general")
    cpu_pool = registration(
        recording, "kubernetes:karpenter.sh/v1:NodePool", "platform-pool-general-pool"
    )
    assert cpu_pool.parent == general.urn
    assert {general.urn, cpu_pool.urn} & set(kai.dependencies)


# --- cross-section validation: exact messages --------------------------------------------------

BASE = {"cluster": {"name": "gpu-test"}}
L4 = {"name": "gpu", "gpus": ["l4"], "limits": {"gpus": 8}}

BAD_CONFIGS = [
    (
        "mig-profile-for-a-gpu-without-mig",
        {"nodePools": [{**L4, "migProfile": "all-1g.10gb"}]},
        [
            "nodePools[0](gpu).migProfile: 'all-1g.10gb' does not apply to the pool's GPUs: l4 "
            "has no MIG",
        ],
    ),
    (
        "mig-profile-for-one-family-of-two",
        {"nodePools": [{**L4, "gpus": ["a100"], "migProfile": "all-1g.5gb"}]},
        [
            "nodePools[0](gpu).migProfile: 'all-1g.5gb' does not apply to every GPU the pool "
            "selects: a100 80 GiB takes all-disabled, all-balanced, all-1g.10gb, all-1g.20gb, "
            "all-2g.20gb, all-3g.40gb, all-4g.40gb, all-7g.80gb; select only GPUs it fits"
        ],
    ),
    (
        "mig-profile-without-the-operator",
        {
            "nodePools": [{**L4, "gpus": ["h100"], "migProfile": "all-1g.10gb"}],
            "gpuOperator": {"enabled": False, "externalDevicePlugin": True},
        },
        ["nodePools[0](gpu).migProfile: needs the GPU Operator with migStrategy single or mixed"],
    ),
    (
        "time-slicing-not-defined",
        {
            "nodePools": [{**L4, "timeSlicing": "shared-8"}],
            "gpuOperator": {"timeSlicing": {"shared-4": 4}},
        },
        [
            "nodePools[0](gpu).timeSlicing: 'shared-8' is not a gpuOperator.timeSlicing "
            "configuration; expected one of shared-4"
        ],
    ),
    (
        "scheduler-without-gpu-operator",
        {
            "nodePools": [L4],
            "gpuOperator": {"enabled": False},
            "scheduler": {"queues": [queue("team", ["gpu"])]},
        },
        [
            "gpuOperator.enabled: is false but the KAI scheduler is on; KAI needs the GPU Operator "
            "(RuntimeClass nvidia, GPU feature discovery labels)",
            "gpuOperator.enabled: is false but GPU pools gpu need an NVIDIA device plugin (without "
            "one their nodes advertise no nvidia.com/gpu and GPU pods never schedule); keep the "
            "GPU Operator, or set gpuOperator.externalDevicePlugin: true if the cluster brings its "
            "own",
        ],
    ),
    (
        "spot-without-interruption-handling",
        {
            "nodePools": [{**L4, "capacityTypes": ["spot"], "preemptible": True}],
            "karpenter": {"interruptionHandling": False},
        },
        [
            "karpenter.interruptionHandling: is false but nodePools[0] (gpu) uses spot capacity; "
            "Karpenter needs the interruption queue to drain those nodes before EC2 reclaims them"
        ],
    ),
    (
        "gpu-pool-without-limits-and-no-scheduler",
        {"nodePools": [{"name": "gpu", "gpus": ["l4"]}]},
        [
            "nodePools[0](gpu).limits.gpus: is not set; GPU pool 'gpu' needs a GPU cap (or "
            "scheduler queues routed to it, which size it)"
        ],
    ),
    (
        "duplicate-pool-name",
        {"nodePools": [L4, {**L4, "gpus": ["l40s"]}]},
        ["nodePools[1](gpu).name: 'gpu' collides with nodePools[0] (Karpenter object 'gpu')"],
    ),
    (
        "efa-type-name-collides",
        {
            "nodePools": [
                {
                    **EFA_POOL,
                    "instanceTypes": ["p5en.48xlarge", "p5.48xlarge"],
                    "limits": {"gpus": 16},
                    "typeShares": {"p5en.48xlarge": 8, "p5.48xlarge": 8},
                },
                {**L4, "name": "train-p5-48xlarge"},
            ]
        },
        [
            "nodePools[1](train-p5-48xlarge).name: 'train-p5-48xlarge' collides with "
            "nodePools[0] (Karpenter object 'train-p5-48xlarge')"
        ],
    ),
    (
        "zone-outside-the-region",
        {"nodePools": [{**EFA_POOL, "zone": "us-west-2a", "limits": {"gpus": 16}}]},
        ["nodePools[0](train).zone: 'us-west-2a' is not in region us-east-1"],
    ),
    (
        "queue-routes-to-an-unknown-pool",
        {"nodePools": [L4], "scheduler": {"queues": [queue("team", ["gpu", "gpus"])]}},
        [
            "scheduler.queues[0](team).nodePools[1]: 'gpus' is not a node pool; expected one of "
            "general, gpu; did you mean 'gpu'?"
        ],
    ),
]


@pytest.mark.parametrize(
    ("values", "lines"), [c[1:] for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS]
)
def test_bad_configuration(values, lines):
    with pytest.raises(SpecError) as err:
        PlatformConfig.load({**BASE, **values}, "us-east-1")
    assert err.value.lines == lines


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


CLI_CASES = [
    "mig-profile-for-a-gpu-without-mig",
    "scheduler-without-gpu-operator",
    "spot-without-interruption-handling",
    "efa-type-name-collides",
    "zone-outside-the-region",
]


@pytest.mark.parametrize("case", CLI_CASES)
def test_bad_configuration_through_the_render_cli(repo, tmp_path, monkeypatch, case):
    _, values, lines = next(c for c in BAD_CONFIGS if c[0] == case)
    monkeypatch.chdir(repo)
    path = write_stack(tmp_path / "Pulumi.bad.yaml", {**BASE, **values})
    out = tmp_path / "out"
    code, stdout, stderr = run_main("--config-file", str(path), "--out", str(out))
    assert code == 2
    assert stdout == ""
    assert stderr == "invalid stack configuration:\n" + "".join(f"  {line}\n" for line in lines)
    assert "Traceback" not in stderr
    assert not out.exists()


# --- bugs: written for the correct behaviour ---------------------------------------------------


def test_a_gpu_pool_named_like_the_default_cpu_pool():
    values = {**BASE, "nodePools": [{**L4, "name": "general"}]}
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-east-1")
    assert err.value.lines == [
        "nodePools[0](general).name: 'general' is the default cpu pool's name (added because no "
        "pool is kind: cpu); rename this pool or define a cpu pool"
    ]


def test_reserved_tag_keys_never_reach_an_ec2nodeclass(repo, tmp_path):
    for key in ("kubernetes.io/cluster/gpu-test", "karpenter.sh/nodepool", "eks:eks-cluster-name"):
        values = {**BASE, "nodePools": [L4], "tags": {key: "owned"}}
        with pytest.raises(SpecError) as err:
            PlatformConfig.load(values, "us-east-1")
        assert err.value.lines == [
            f"tags: '{key}' is a tag Karpenter sets on its nodes itself; EC2NodeClass tags may "
            "not include it"
        ]
    recording = render_values(repo, tmp_path, {**BASE, "nodePools": [L4], "tags": {"t": "v"}})
    for node_class in objects(recording, "EC2NodeClass"):
        assert validate(node_class) == []


def test_user_labels_cannot_override_the_pool_label():
    values = {**BASE, "nodePools": [{**L4, "labels": {POOL_LABEL: "other"}}]}
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-east-1")
    assert err.value.lines == [
        f"nodePools[0](gpu).labels: '{POOL_LABEL}' is set by the platform itself (pool name, "
        "preemptible, efa, migProfile, timeSlicing); remove it"
    ]
    # Built directly (no config), the platform's labels still win.
    spec = PlatformConfig.load({**BASE, "nodePools": [L4]}, "us-east-1").node_pools[0]
    forced = dataclasses.replace(spec, labels={POOL_LABEL: "other"})
    assert pool_labels(forced, "eks-gpu-platform.io")[POOL_LABEL] == spec.name


def test_efa_device_plugin_tolerates_every_efa_pool_taint(repo, tmp_path):
    values = {
        **BASE,
        "nodePools": [
            {
                **EFA_POOL,
                "limits": {"gpus": 16},
                "taints": [{"key": "example.com/dedicated", "value": "ml"}],
            }
        ],
    }
    recording = render_values(repo, tmp_path, values)
    tolerations = release(recording, "aws-efa-k8s-device-plugin")["values"]["tolerations"]
    assert {"key": "example.com/dedicated", "operator": "Exists", "effect": "NoSchedule"} in (
        tolerations
    )


MIG_POOL = {
    "name": "mig",
    "gpus": ["h100"],
    "instanceFamilies": ["p5"],
    "capacityTypes": ["on-demand"],
    "limits": {"gpus": 64},
}


@pytest.mark.parametrize(
    ("profile", "strategy", "expected"),
    [
        ("all-1g.10gb", "single", 2),  # 14 MIG devices admitted / 7 per H100
        ("all-3g.40gb", "single", 7),  # 14 / 2
        ("all-disabled", "single", 14),
        # mixed advertises nvidia.com/mig-1g.10gb (7 per H100, KAI charges 1 each): 14 / 7
        ("all-1g.10gb", "mixed", 2),
    ],
)
def test_mig_pool_limit_counts_physical_gpus(profile, strategy, expected):
    values = {
        "cluster": {"name": "gpu-test"},
        "nodePools": [{**MIG_POOL, "migProfile": profile}],
        "gpuOperator": {"migStrategy": strategy},
        "scheduler": {"queues": [queue("team", ["mig"], gpu_quota=14, gpu_limit=14)]},
    }
    assert PlatformConfig.load(values, "us-east-1").gpu_limits == {"mig": expected}


def test_balanced_mig_profile_needs_the_mixed_strategy():
    values = {
        "cluster": {"name": "gpu-test"},
        "nodePools": [{**MIG_POOL, "migProfile": "all-balanced"}],
    }
    with pytest.raises(SpecError) as err:
        PlatformConfig.load(values, "us-east-1")
    assert err.value.lines == [
        "nodePools[0](mig).migProfile: MIG profile 'all-balanced' mixes 1g.10gb, 2g.20gb, 3g.40gb; "
        "migStrategy single advertises one size only, so it needs migStrategy mixed"
    ]
    mixed = {**values, "gpuOperator": {"migStrategy": "mixed"}}
    assert PlatformConfig.load(mixed, "us-east-1").node_pools[0].mig_profile == "all-balanced"
