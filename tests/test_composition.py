"""Composing the components one by one: what each ``*Args`` derives, what it refuses.

Every component argument either has a default that works with the other components or is
required. The components built with only their required arguments (the ``EksCluster`` given to
Karpenter, the pools, the GPU Operator, KAI and the EFA plugin; ``Network`` to the cluster) make
a platform whose controllers land on the system nodes, whose pools wait for Karpenter's CRDs
and have a GPU cap, and whose DaemonSets tolerate the GPU pools' taints. The shipped consumer
program (``examples/consumer``) is such a composition, rendered offline here.
"""

import ast
import json
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest
from addon_pins import ADDON_VERSIONS
from recordings import one
from ruamel.yaml import YAML

import eks_gpu_platform
from eks_gpu_platform import (
    CapacityReservationSpec,
    ClusterSpec,
    EfaDevicePlugin,
    EfaDevicePluginArgs,
    EksCluster,
    EksClusterArgs,
    GpuOperator,
    GpuOperatorArgs,
    GpuOperatorSpec,
    KaiScheduler,
    KaiSchedulerArgs,
    Karpenter,
    KarpenterArgs,
    KarpenterSpec,
    LimitsSpec,
    Network,
    NetworkArgs,
    NodePool,
    NodePoolArgs,
    NodePoolSpec,
    QueueResourceSpec,
    QueueSpec,
    RootVolumeSpec,
    SchedulerSpec,
    SpecError,
    SystemNodeGroupSpec,
    TaintSpec,
    VpcSpec,
)
from eks_gpu_platform.offline import mocks
from eks_gpu_platform.offline.render import main as render_main

REPO = Path(__file__).resolve().parents[1]
CONSUMER = REPO / "examples" / "consumer"
RELEASE = "kubernetes:helm.sh/v3:Release"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ADDON = "aws:eks/addon:Addon"
SYSTEM_TOLERATION = {"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
EFA_TOLERATION = {"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"}
# EKS node group taint effects (aws.eks.NodeGroup) as Kubernetes spells them.
EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute"}


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    """Whether a pod with ``tolerations`` may run on a node with ``taint`` (Kubernetes rules
    for ``Exists`` and ``Equal``; an empty effect matches every effect)."""
    effect = EKS_EFFECTS.get(taint["effect"], taint["effect"])
    for t in tolerations:
        if t.get("effect") not in (None, "", effect):
            continue
        if t.get("operator") == "Exists" and t.get("key") in (None, taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value") == taint.get("value"):
            return True
    return False


# --- the consumer example ---------------------------------------------------------------------


def test_consumer_example_imports_only_names_the_package_root_exports() -> None:
    tree = ast.parse((CONSUMER / "__main__.py").read_text())
    imported: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert [a.name for a in node.names] == ["pulumi"], ast.unparse(node)
        elif isinstance(node, ast.ImportFrom):
            assert node.module == "eks_gpu_platform" and node.level == 0, ast.unparse(node)
            imported += [a.name for a in node.names]
    assert imported == sorted(imported)
    assert set(imported) <= set(eks_gpu_platform.__all__)
    assert {"GpuOperator", "Karpenter", "NodePool", "Network", "EksCluster"} <= set(imported)


def test_package_root_exports_are_sorted_and_exist() -> None:
    names = eks_gpu_platform.__all__
    assert names == sorted(names)
    assert [n for n in names if not hasattr(eks_gpu_platform, n)] == []
    for name in ("LimitsSpec", "TaintSpec", "system_node_label", "system_tolerations"):
        assert name in names


@pytest.fixture(scope="module")
def consumer(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("consumer")
    code = render_main(["--project-dir", str(CONSUMER), "--stack", "dev", "--out", str(out)])
    assert code == 0
    return out


def load(path: Path):
    return YAML(typ="safe").load(path.read_text())


def test_consumer_example_renders_a_working_gpu_platform(consumer: Path) -> None:
    assert sorted(p.name for p in (consumer / "manifests").iterdir()) == [
        "ec2nodeclass-l4.yaml",
        "namespace-gpu-operator.yaml",
        "nodepool-l4.yaml",
    ]
    assert sorted(p.name for p in (consumer / "helm").iterdir()) == [
        "gpu-operator.yaml",
        "karpenter-crd.yaml",
        "karpenter.yaml",
    ]
    pool = load(consumer / "manifests" / "nodepool-l4.yaml")
    assert pool["spec"]["limits"] == {"nvidia.com/gpu": "8"}
    assert pool["spec"]["template"]["metadata"]["labels"]["eks-gpu-platform.io/pool"] == "l4"
    resources = json.loads((consumer / "resources.json").read_text())
    assert sorted(r["type"] for r in resources if not r["custom"]) == [
        "eks-gpu-platform:index:EksCluster",
        "eks-gpu-platform:index:GpuOperator",
        "eks-gpu-platform:index:Karpenter",
        "eks-gpu-platform:index:Network",
        "eks-gpu-platform:index:NodePool",
        "eks:index:Cluster",
    ]
    # 77 + the admin's access entry and its policy association (EksCluster children: issue 11),
    # + the vpc-cni role and its CNI policy - the CNI and SSM policies on both node roles
    # (issue 22, point 3), + the EC2 Spot service-linked role Karpenter creates when the
    # account has none (issue 28, point 7)
    assert len(resources) == 78


def test_consumer_karpenter_runs_on_the_system_nodes(consumer: Path) -> None:
    values = load(consumer / "helm" / "karpenter.yaml")["values"]
    assert values["tolerations"] == [SYSTEM_TOLERATION]
    assert values["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "eks-gpu-platform.io/system": "true",
    }
    # The only nodes before Karpenter launches any: the system node group. Karpenter must
    # tolerate every taint it has and select its labels.
    resources = json.loads((consumer / "resources.json").read_text())
    (group,) = [r for r in resources if r["type"] == NODE_GROUP]
    assert group["inputs"]["labels"] == {"eks-gpu-platform.io/system": "true"}
    assert group["inputs"]["taints"]
    for taint in group["inputs"]["taints"]:
        assert tolerates(values["tolerations"], taint), taint
    for key, value in values["nodeSelector"].items():
        assert key == "kubernetes.io/os" or group["inputs"]["labels"][key] == value


def test_consumer_gpu_operator_deploys_the_device_plugin(consumer: Path) -> None:
    release = load(consumer / "helm" / "gpu-operator.yaml")
    values = release["values"]
    assert release["chart"] == "gpu-operator"
    assert values["devicePlugin"] == {"enabled": True}
    assert values["driver"] == {"enabled": False}
    assert values["operator"]["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "eks-gpu-platform.io/system": "true",
    }
    assert values["operator"]["tolerations"] == [SYSTEM_TOLERATION]
    pool = load(consumer / "manifests" / "nodepool-l4.yaml")
    for taint in pool["spec"]["template"]["spec"]["taints"]:
        assert tolerates(values["daemonsets"]["tolerations"], taint), taint


# --- every component with only its required arguments --------------------------------------

QUEUE = QueueSpec(
    name="research",
    gpu=QueueResourceSpec(quota=4, limit=8, over_quota_weight=1),
    cpu=QueueResourceSpec(quota=64, limit=-1, over_quota_weight=1),
    memory=QueueResourceSpec(quota=256, limit=-1, over_quota_weight=1),
    node_pools=("l4",),
)
L4 = NodePoolSpec(name="l4", gpus=("l4",), limits=LimitsSpec(gpus=8))
EFA = NodePoolSpec(
    name="train",
    kind="efa",
    instance_types=("p5.48xlarge",),
    zone="us-west-2a",
    limits=LimitsSpec(gpus=16),
    taints=(TaintSpec(key="example.com/team", value="llm"),),
)


def minimal_platform(label_domain: str = "eks-gpu-platform.io") -> dict:
    network = Network("net", NetworkArgs(cluster_name="gpu"))
    cluster = EksCluster(
        "eks",
        EksClusterArgs(
            spec=ClusterSpec(name="gpu", label_domain=label_domain, addon_versions=ADDON_VERSIONS),
            network=network,
        ),
    )
    karpenter = Karpenter(
        "karpenter", KarpenterArgs(cluster=cluster, feature_gates={"nodeOverlay": True})
    )
    l4 = NodePool("l4", NodePoolArgs(spec=L4, cluster=cluster, karpenter=karpenter))
    train = NodePool("train", NodePoolArgs(spec=EFA, cluster=cluster, karpenter=karpenter))
    operator = GpuOperator("gpu", GpuOperatorArgs(cluster=cluster, node_pools=[l4, train]))
    KaiScheduler(
        "kai",
        KaiSchedulerArgs(
            spec=SchedulerSpec(queues=(QUEUE,)), cluster=cluster, gpu_operator=operator
        ),
    )
    EfaDevicePlugin("efa", EfaDevicePluginArgs(cluster=cluster, node_pools=[train]))
    return {"network": network, "cluster": cluster, "karpenter": karpenter}


@pytest.fixture(scope="module")
def composed():
    """One run for the tests reading it (the ``run_program`` fixture is per test)."""
    return mocks.run(
        minimal_platform,
        project="eks-gpu-platform",
        stack="test",
        config={},
        region="us-west-2",
        partition="aws",
        account_id=mocks.PLACEHOLDER_ACCOUNT_ID,
    )


def test_karpenter_derives_everything_from_the_cluster(composed) -> None:
    chart = one(composed, RELEASE, "karpenter-chart")
    values = chart.inputs["values"]
    assert values["tolerations"] == [SYSTEM_TOLERATION]
    assert values["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "eks-gpu-platform.io/system": "true",
    }
    assert values["settings"]["clusterName"] == "gpu"
    assert values["settings"]["featureGates"]["nodeOverlay"] is True
    group = one(composed, NODE_GROUP, "eks-system")
    agent = one(composed, ADDON, "eks-eks-pod-identity-agent")
    crd = one(composed, RELEASE, "karpenter-crd")
    for release in (chart, crd):
        assert group.urn in release.dependencies, release.name
        assert agent.urn in release.dependencies, release.name
    (provider,) = composed.of_type("pulumi:providers:kubernetes")
    assert chart.provider.startswith(provider.urn + "::")
    association = one(
        composed, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "karpenter-controller"
    )
    assert association.inputs["clusterName"] == "gpu"


def test_node_pools_wait_for_karpenter_and_use_its_node_role(composed) -> None:
    crd = one(composed, RELEASE, "karpenter-crd")
    chart = one(composed, RELEASE, "karpenter-chart")
    role = one(composed, "aws:iam/role:Role", "karpenter-node")
    pool = one(composed, NODEPOOL, "l4-pool")
    node_class = one(composed, NODECLASS, "l4-class")
    for r in (pool, node_class):
        assert crd.urn in r.dependencies, r.name
        assert chart.urn in r.dependencies, r.name
    assert pool.inputs["spec"]["limits"] == {"nvidia.com/gpu": "8"}
    assert node_class.inputs["spec"]["role"] == role.outputs["name"]
    assert node_class.inputs["spec"]["subnetSelectorTerms"] == [
        {"tags": {"karpenter.sh/discovery": "gpu"}}
    ]
    vpc = one(composed, "aws:ec2/vpc:Vpc", "net-vpc")
    sg = one(composed, "aws:ec2/securityGroup:SecurityGroup", "train-efa")
    assert sg.inputs["vpcId"] == vpc.id
    efa_pool = one(composed, NODEPOOL, "train-pool")
    assert efa_pool.inputs["spec"]["limits"] == {"nvidia.com/gpu": "16"}


def test_gpu_operator_tolerates_every_gpu_pool_taint(composed) -> None:
    release = one(composed, RELEASE, "gpu-chart")
    values = release.inputs["values"]
    team = {"key": "example.com/team", "operator": "Exists", "effect": "NoSchedule"}
    assert values["daemonsets"]["tolerations"] == [GPU_TOLERATION, team, EFA_TOLERATION]
    assert values["operator"]["tolerations"] == [SYSTEM_TOLERATION]
    assert values["operator"]["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "eks-gpu-platform.io/system": "true",
    }
    assert values["driver"] == {"enabled": False}
    for pool_name in ("l4-pool", "train-pool"):
        pool = one(composed, NODEPOOL, pool_name)
        for taint in pool.inputs["spec"]["template"]["spec"]["taints"]:
            assert tolerates(values["daemonsets"]["tolerations"], taint), (pool_name, taint)
    group = one(composed, NODE_GROUP, "eks-system")
    namespace = one(composed, "kubernetes:core/v1:Namespace", "gpu-namespace")
    assert group.urn in namespace.dependencies


def test_kai_scheduler_derives_from_the_cluster_and_waits_for_the_operator(composed) -> None:
    release = one(composed, RELEASE, "kai-chart")
    assert release.inputs["values"]["global"]["nodeSelector"] == {
        "eks-gpu-platform.io/system": "true"
    }
    assert release.inputs["values"]["global"]["tolerations"] == [SYSTEM_TOLERATION]
    # A dependency on a component is one on each of its children (pulumi/runtime/rpc.py,
    # _expand_dependencies / _add_dependency).
    operator = one(composed, RELEASE, "gpu-chart")
    group = one(composed, NODE_GROUP, "eks-system")
    assert operator.urn in release.dependencies
    assert group.urn in release.dependencies
    # Kubernetes 1.36 (the cluster's): the mutating admission policy.
    assert composed.of_type("kubernetes:admissionregistration.k8s.io/v1:MutatingAdmissionPolicy")
    queue = one(composed, "kubernetes:scheduling.run.ai/v2:Queue", "kai-queue-research")
    assert queue.inputs["metadata"]["name"] == "research"


def test_efa_plugin_derives_label_types_and_tolerations(composed) -> None:
    values = one(composed, RELEASE, "efa-chart").inputs["values"]
    assert values["nodeSelector"] == {"eks-gpu-platform.io/efa": "true"}
    assert values["supportedInstanceLabels"]["values"] == ["p5.48xlarge"]
    assert values["tolerations"] == [
        GPU_TOLERATION,
        EFA_TOLERATION,
        {"key": "example.com/team", "operator": "Exists", "effect": "NoSchedule"},
    ]


def test_a_custom_label_domain_follows_the_cluster(run_program) -> None:
    recording = run_program(lambda: minimal_platform("ml.example.com"))
    karpenter = one(recording, RELEASE, "karpenter-chart").inputs["values"]
    assert karpenter["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "ml.example.com/system": "true",
    }
    group = one(recording, NODE_GROUP, "eks-system")
    assert group.inputs["labels"] == {"ml.example.com/system": "true"}
    pool = one(recording, NODEPOOL, "l4-pool")
    assert pool.inputs["spec"]["template"]["metadata"]["labels"]["ml.example.com/pool"] == "l4"
    efa = one(recording, RELEASE, "efa-chart").inputs["values"]
    assert efa["nodeSelector"] == {"ml.example.com/efa": "true"}


def test_explicit_arguments_win_over_derived_ones(run_program) -> None:
    def program():
        network = Network("net", NetworkArgs(cluster_name="gpu"))
        cluster = EksCluster(
            "eks",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu", addon_versions=ADDON_VERSIONS), network=network
            ),
        )
        Karpenter(
            "karpenter",
            KarpenterArgs(
                cluster=cluster,
                node_selector={"example.com/controllers": "true"},
                tolerations=[{"key": "example.com/controllers", "operator": "Exists"}],
            ),
        )

    values = one(run_program(program), RELEASE, "karpenter-chart").inputs["values"]
    assert values["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "example.com/controllers": "true",
    }
    assert values["tolerations"] == [{"key": "example.com/controllers", "operator": "Exists"}]


# --- what the Args refuse --------------------------------------------------------------------

PROVIDER = object()  # any non-None stands for a provider or a resource in these checks
NO_LIMIT = NodePoolSpec(name="l4", gpus=("l4",))
EXPLICIT_POOL = {
    "cluster_name": "gpu",
    "label_domain": "eks-gpu-platform.io",
    "node_role": "KarpenterNodeRole-gpu",
    "k8s_provider": PROVIDER,
    "depends_on": [PROVIDER],
}

REFUSED = [
    pytest.param(
        lambda: NodePoolArgs(spec=NO_LIMIT, **EXPLICIT_POOL),
        [
            "NodePoolArgs.gpu_limit: gpu pool 'l4' has no GPU limit; set limits.gpus in its "
            "NodePoolSpec (or gpu_limit here), or nothing bounds how many GPUs Karpenter "
            "provisions"
        ],
        id="gpu-pool-without-limit",
    ),
    pytest.param(
        lambda: NodePoolArgs(
            spec=NodePoolSpec(
                name="train", kind="efa", instance_types=("p5.48xlarge",), zone="us-west-2a"
            ),
            vpc_id="vpc-0123456789abcdef0",
            **EXPLICIT_POOL,
        ),
        [
            "NodePoolArgs.gpu_limit: efa pool 'train' has no GPU limit; set limits.gpus in its "
            "NodePoolSpec (or gpu_limit here), or nothing bounds how many GPUs Karpenter "
            "provisions"
        ],
        id="efa-pool-without-limit",
    ),
    pytest.param(
        lambda: NodePoolArgs(spec=L4, gpu_limit=16, **EXPLICIT_POOL),
        [
            "NodePoolArgs.gpu_limit: 16 exceeds limits.gpus of gpu pool 'l4' (8); the pool's "
            "own cap is the most it may get"
        ],
        id="gpu-limit-above-the-pool-cap",
    ),
    pytest.param(
        lambda: NodePoolArgs(
            spec=NodePoolSpec(name="big", instance_types=("p5.48xlarge",)),
            gpu_limit=4,
            **EXPLICIT_POOL,
        ),
        [
            "NodePoolArgs.gpu_limit: 4 is less than one node of the smallest type (p5.48xlarge, "
            "8 GPUs); raise it or select fewer types"
        ],
        id="gpu-limit-below-one-node",
    ),
    pytest.param(
        lambda: NodePoolArgs(spec=NO_LIMIT, gpu_limit=True, **EXPLICIT_POOL),
        ["NodePoolArgs.gpu_limit: true is not an integer"],
        id="gpu-limit-bool",
    ),
    pytest.param(
        lambda: NodePoolArgs(spec=NO_LIMIT, gpu_limit=0, **EXPLICIT_POOL),
        ["NodePoolArgs.gpu_limit: 0 is out of range; expected a number from 1 to 100000"],
        id="gpu-limit-zero",
    ),
    pytest.param(
        lambda: NodePoolArgs(
            spec=NodePoolSpec(name="cpu", kind="cpu"), gpu_limit=8, **EXPLICIT_POOL
        ),
        ["NodePoolArgs.gpu_limit: only applies to gpu and efa pools; cpu pool 'cpu' has none"],
        id="gpu-limit-on-a-cpu-pool",
    ),
    pytest.param(
        lambda: NodePoolArgs(spec=L4),
        [
            "NodePoolArgs.cluster_name: is required; pass the EksCluster component as cluster, "
            "or set cluster_name",
            "NodePoolArgs.label_domain: is required; pass the EksCluster component as cluster, "
            "or set label_domain",
            "NodePoolArgs.k8s_provider: is required; pass the EksCluster component as cluster, "
            "or set k8s_provider",
            "NodePoolArgs.node_role: is required; pass the Karpenter component as karpenter, or "
            "set node_role",
            "NodePoolArgs.depends_on: is empty; a NodePool and its EC2NodeClass need Karpenter's "
            "CRDs: pass the Karpenter component as karpenter, or list its crd_release",
        ],
        id="pool-without-cluster-or-karpenter",
    ),
    pytest.param(
        lambda: NodePoolArgs(spec={"name": "l4"}, **EXPLICIT_POOL),
        ["NodePoolArgs.spec: {'name': 'l4'} is not a NodePoolSpec"],
        id="pool-spec-as-dict",
    ),
    pytest.param(
        lambda: KarpenterArgs(cluster="gpu"),
        [
            "KarpenterArgs.cluster_name: is required; pass the EksCluster component as cluster, "
            "or set cluster_name",
            "KarpenterArgs.oidc_provider_arn: is required; pass the EksCluster component as "
            "cluster, or set oidc_provider_arn",
            "KarpenterArgs.oidc_provider_url: is required; pass the EksCluster component as "
            "cluster, or set oidc_provider_url",
            "KarpenterArgs.k8s_provider: is required; pass the EksCluster component as cluster, "
            "or set k8s_provider",
            "KarpenterArgs.depends_on: is empty; the chart waits for its pods, which run on the "
            "system nodes: pass the EksCluster component as cluster, or list its "
            "system_node_group and pod_identity_agent",
        ],
        id="karpenter-with-a-cluster-name-only",
    ),
    pytest.param(
        lambda: KarpenterArgs(
            cluster="gpu",
            spec={"replicas": 2},
            cluster_name="gpu",
            oidc_provider_arn="arn",
            oidc_provider_url="url",
            k8s_provider=PROVIDER,
            depends_on=[PROVIDER],
        ),
        ["KarpenterArgs.spec: {'replicas': 2} is not a KarpenterSpec"],
        id="karpenter-spec-as-dict",
    ),
    pytest.param(
        lambda: GpuOperatorArgs(),
        [
            "GpuOperatorArgs.k8s_provider: is required; pass the EksCluster component as "
            "cluster, or set k8s_provider",
            "GpuOperatorArgs.system_node_selector: is required; pass the EksCluster component as "
            "cluster, or set system_node_selector",
        ],
        id="gpu-operator-without-cluster",
    ),
    pytest.param(
        lambda: GpuOperatorArgs(
            spec=GpuOperatorSpec(enabled=False), k8s_provider=PROVIDER, system_node_selector={}
        ),
        [
            "GpuOperatorArgs.spec.enabled: is false; leave the GpuOperator component out instead "
            "of creating it"
        ],
        id="gpu-operator-disabled",
    ),
    pytest.param(
        lambda: GpuOperatorArgs(
            spec=GpuOperatorSpec(mig_strategy="none"),
            k8s_provider=PROVIDER,
            system_node_selector={},
            node_pools=[
                NodePoolSpec(name="nb", gpus=("l4",), time_slicing="shared-4"),
                NodePoolSpec(
                    name="mig", instance_types=("p5.48xlarge",), mig_profile="all-7g.80gb"
                ),
                "l4",
            ],
        ),
        ["GpuOperatorArgs.node_pools[2]: 'l4' is not a NodePool or a NodePoolSpec"],
        id="gpu-operator-pool-of-the-wrong-type",
    ),
    pytest.param(
        lambda: GpuOperatorArgs(
            spec=GpuOperatorSpec(mig_strategy="none"),
            k8s_provider=PROVIDER,
            system_node_selector={},
            node_pools=[
                NodePoolSpec(name="nb", gpus=("l4",), time_slicing="shared-4"),
                NodePoolSpec(
                    name="mig", instance_types=("p5.48xlarge",), mig_profile="all-7g.80gb"
                ),
            ],
        ),
        [
            "GpuOperatorArgs.node_pools[0]: pool 'nb' selects time-slicing configuration "
            "'shared-4', which spec.time_slicing does not define; expected one of (none defined)",
            "GpuOperatorArgs.node_pools[1]: pool 'mig' selects MIG profile 'all-7g.80gb', but "
            "spec.mig_strategy is 'none'; use single or mixed",
        ],
        id="gpu-operator-missing-pool-configs",
    ),
    pytest.param(
        lambda: KaiSchedulerArgs(spec=SchedulerSpec(queues=(QUEUE,))),
        [
            "KaiSchedulerArgs.gpu_operator: is required; KAI needs the GPU Operator (RuntimeClass "
            "nvidia, GPU feature discovery labels): pass the GpuOperator component, or list it in "
            "depends_on",
            "KaiSchedulerArgs.k8s_provider: is required; pass the EksCluster component as "
            "cluster, or set k8s_provider",
            "KaiSchedulerArgs.kubernetes_version: is required; pass the EksCluster component as "
            "cluster, or set kubernetes_version",
            "KaiSchedulerArgs.pool_label_key: is required; pass the EksCluster component as "
            "cluster, or set pool_label_key",
            "KaiSchedulerArgs.system_node_selector: is required; pass the EksCluster component "
            "as cluster, or set system_node_selector",
        ],
        id="kai-without-cluster-or-operator",
    ),
    pytest.param(
        lambda: KaiSchedulerArgs(
            spec=SchedulerSpec(enabled=False),
            k8s_provider=PROVIDER,
            kubernetes_version="1.36",
            pool_label_key="eks-gpu-platform.io/pool",
            system_node_selector={},
            depends_on=[PROVIDER],
        ),
        [
            "KaiSchedulerArgs.spec.enabled: is false; leave the KaiScheduler component out "
            "instead of creating it"
        ],
        id="kai-disabled",
    ),
    pytest.param(
        lambda: KaiSchedulerArgs(
            spec=SchedulerSpec(queues=(QUEUE,)),
            k8s_provider=PROVIDER,
            kubernetes_version="1.36",
            pool_label_key="eks-gpu-platform.io/pool",
            system_node_selector={},
            system_tolerations=[],
            depends_on=[PROVIDER],
        ),
        [
            "KaiSchedulerArgs.system_tolerations: names no taint key; tenant_guardrails denies "
            "tenant pods the system nodes' taint keys taken from it (the system node group's: "
            "[{'key': 'CriticalAddonsOnly', 'operator': 'Exists', 'effect': 'NoSchedule'}]): "
            "list them, or set tenant_guardrails=False"
        ],
        id="kai-guardrails-without-system-taint",
    ),
    pytest.param(
        lambda: EfaDevicePluginArgs(),
        [
            "EfaDevicePluginArgs.efa_label_key: is required; pass the EksCluster component as "
            "cluster, or set efa_label_key",
            "EfaDevicePluginArgs.k8s_provider: is required; pass the EksCluster component as "
            "cluster, or set k8s_provider",
            "EfaDevicePluginArgs.instance_types: is required; pass the efa NodePool components "
            "as node_pools, or set instance_types",
        ],
        id="efa-plugin-without-anything",
    ),
    pytest.param(
        lambda: EfaDevicePluginArgs(
            efa_label_key="eks-gpu-platform.io/efa", k8s_provider=PROVIDER, node_pools=[L4]
        ),
        [
            "EfaDevicePluginArgs.node_pools: lists no efa pool; the EFA device plugin runs on "
            "the nodes of efa pools only"
        ],
        id="efa-plugin-without-efa-pools",
    ),
    pytest.param(
        lambda: EksClusterArgs(spec=ClusterSpec(name="gpu", addon_versions=ADDON_VERSIONS)),
        [
            "EksClusterArgs.vpc_id: is required; pass the Network component as network, or set "
            "vpc_id",
            "EksClusterArgs.private_subnet_ids: is required; pass the Network component as "
            "network, or set private_subnet_ids",
        ],
        id="cluster-without-network",
    ),
    pytest.param(
        lambda: EksClusterArgs(
            spec={"name": "gpu"},
            system_node_group=None,
            vpc_id="vpc-0123456789abcdef0",
            private_subnet_ids=["subnet-0123456789abcdef0"],
        ),
        [
            "EksClusterArgs.spec: {'name': 'gpu'} is not a ClusterSpec",
            "EksClusterArgs.system_node_group: null is not a SystemNodeGroupSpec",
        ],
        id="cluster-specs-of-the-wrong-type",
    ),
    pytest.param(
        lambda: NetworkArgs(cluster_name=5, spec={"cidr": "10.0.0.0/16"}),
        [
            "NetworkArgs.spec: {'cidr': '10.0.0.0/16'} is not a VpcSpec",
            "NetworkArgs.cluster_name: 5 is not a string",
        ],
        id="network-args-of-the-wrong-type",
    ),
]


@pytest.mark.parametrize(("build", "lines"), REFUSED)
def test_args_refuse_what_cannot_work(build, lines) -> None:
    with pytest.raises(SpecError) as err:
        build()
    assert err.value.lines == lines


def test_explicit_pool_args_take_the_spec_limit() -> None:
    assert NodePoolArgs(spec=L4, **EXPLICIT_POOL).gpu_limit == 8
    assert NodePoolArgs(spec=L4, gpu_limit=4, **EXPLICIT_POOL).gpu_limit == 4
    assert (
        NodePoolArgs(spec=NodePoolSpec(name="cpu", kind="cpu"), **EXPLICIT_POOL).gpu_limit is None
    )


def test_defaults_without_a_cluster_component() -> None:
    karpenter = KarpenterArgs(
        cluster="gpu",
        cluster_name="gpu",
        oidc_provider_arn="arn",
        oidc_provider_url="url",
        k8s_provider=PROVIDER,
        depends_on=[PROVIDER],
    )
    # The chart's affinity keeps Karpenter off its own nodes; the taint is the system nodes'.
    assert karpenter.node_selector == {}
    assert karpenter.tolerations == [SYSTEM_TOLERATION]
    operator = GpuOperatorArgs(k8s_provider=PROVIDER, system_node_selector={"a/system": "true"})
    assert operator.gpu_tolerations == [EFA_TOLERATION]
    assert operator.system_tolerations == [SYSTEM_TOLERATION]
    assert operator.drivers_preinstalled is True
    efa = EfaDevicePluginArgs(efa_label_key="a/efa", k8s_provider=PROVIDER, node_pools=[EFA, L4])
    assert efa.instance_types == ["p5.48xlarge"]
    assert efa.extra_tolerations == [
        {"key": "example.com/team", "operator": "Exists", "effect": "NoSchedule"}
    ]


def refused_in_a_program(run_program, program) -> list[str]:
    with pytest.raises(SpecError) as err:
        run_program(program)
    return err.value.lines


def test_components_that_do_not_fit_the_cluster_are_refused(run_program) -> None:
    def program():
        network = Network("net", NetworkArgs(cluster_name="gpu"))
        cluster = EksCluster(
            "eks",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu", addon_versions=ADDON_VERSIONS),
                system_node_group=SystemNodeGroupSpec(min_size=2),
                network=network,
            ),
        )
        Karpenter(
            "karpenter",
            KarpenterArgs(cluster=cluster, cluster_name="other", spec=KarpenterSpec(replicas=3)),
        )

    assert refused_in_a_program(run_program, program) == [
        "KarpenterArgs.cluster_name: 'other' is not the name of the EksCluster given as cluster "
        "('gpu')",
        "KarpenterArgs.spec.replicas: 3 replicas need 3 system nodes (one per node), but the "
        "cluster's system node group has minSize 2",
    ]


def test_an_efa_pool_needs_karpenters_node_overlay_gate(run_program) -> None:
    def program():
        network = Network("net", NetworkArgs(cluster_name="gpu"))
        cluster = EksCluster(
            "eks",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu", addon_versions=ADDON_VERSIONS), network=network
            ),
        )
        karpenter = Karpenter("karpenter", KarpenterArgs(cluster=cluster))
        NodePool(
            "train",
            NodePoolArgs(spec=EFA, cluster=cluster, karpenter=karpenter, label_domain="x.io"),
        )

    assert refused_in_a_program(run_program, program) == [
        "NodePoolArgs.label_domain: 'x.io' is not the label domain of the EksCluster given as "
        "cluster ('eks-gpu-platform.io')",
    ]

    def gate_off():
        network = Network("net", NetworkArgs(cluster_name="gpu"))
        cluster = EksCluster(
            "eks",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu", addon_versions=ADDON_VERSIONS), network=network
            ),
        )
        karpenter = Karpenter("karpenter", KarpenterArgs(cluster=cluster))
        NodePool("train", NodePoolArgs(spec=EFA, cluster=cluster, karpenter=karpenter))

    assert refused_in_a_program(run_program, gate_off) == [
        "NodePoolArgs.karpenter: runs with the nodeOverlay feature gate off, but efa pool "
        "'train' declares its hugepages to Karpenter with a NodeOverlay; create Karpenter with "
        "feature_gates={'nodeOverlay': True}",
    ]


# --- values that come from other resources -----------------------------------------------------


def test_outputs_from_other_resources_flow_into_the_resources(run_program) -> None:
    def program():
        admin = aws.iam.Role("admin", assume_role_policy="{}")
        key = aws.kms.Key("ebs")
        reservation = pulumi.Output.from_input("cr-0123456789abcdef0")
        vpc = pulumi.Output.from_input("vpc-0123456789abcdef0")
        subnets = [pulumi.Output.from_input(f"subnet-0123456789abcdef{i}") for i in range(2)]
        network = Network(
            "net",
            NetworkArgs(cluster_name="gpu", spec=VpcSpec(vpc_id=vpc, private_subnet_ids=subnets)),
        )
        cluster = EksCluster(
            "eks",
            EksClusterArgs(
                spec=ClusterSpec(
                    name="gpu",
                    admins=["user/offline-render", admin.arn],
                    kms_key_arn=key.arn,
                    addon_versions=ADDON_VERSIONS,
                ),
                network=network,
            ),
        )
        karpenter = Karpenter("karpenter", KarpenterArgs(cluster=cluster))
        spec = NodePoolSpec(
            name="l4",
            gpus=("l4",),
            limits=LimitsSpec(gpus=8),
            capacity_types=("reserved", "on-demand"),
            capacity_reservations=[CapacityReservationSpec(id=reservation)],
            root_volume=RootVolumeSpec(kms_key_id=key.arn),
        )
        NodePool("l4", NodePoolArgs(spec=spec, cluster=cluster, karpenter=karpenter))

    recording = run_program(program)
    role = one(recording, "aws:iam/role:Role", "admin")
    key = one(recording, "aws:kms/key:Key", "ebs")
    eks = one(recording, "eks:index:Cluster", "eks-eks")
    assert eks.inputs["vpcId"] == "vpc-0123456789abcdef0"
    assert eks.inputs["subnetIds"] == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    assert eks.inputs["encryptionConfigKeyArn"] == key.outputs["arn"]
    # An Output admin keeps a positional key (no name to derive one from): issue 11.
    entry = one(recording, "aws:eks/accessEntry:AccessEntry", "eks-admin-admin-1")
    assert entry.inputs["principalArn"] == role.outputs["arn"]
    tags = sorted(
        r.inputs["resourceId"] for r in recording.of_type("aws:ec2/tag:Tag") if "private" in r.name
    )
    assert tags == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    node_class = one(recording, NODECLASS, "l4-class")
    assert node_class.inputs["spec"]["capacityReservationSelectorTerms"] == [
        {"id": "cr-0123456789abcdef0"}
    ]
    (volume,) = node_class.inputs["spec"]["blockDeviceMappings"]
    assert volume["ebs"]["kmsKeyID"] == key.outputs["arn"]


def test_gpu_platform_takes_an_existing_vpc_as_outputs(run_program) -> None:
    from eks_gpu_platform import GpuPlatform
    from eks_gpu_platform.platform import platform_config_from_args

    def program():
        vpc = pulumi.Output.from_input("vpc-0123456789abcdef0")
        subnets = [pulumi.Output.from_input(f"subnet-0123456789abcdef{i}") for i in range(2)]
        # As a hosted component receives it: snake_case, Outputs inside the objects.
        args = {
            "region": "us-west-2",
            "cluster": {"name": "gpu", "addon_versions": ADDON_VERSIONS},
            "vpc": {"vpc_id": vpc, "private_subnet_ids": subnets},
            "node_pools": [{"name": "l4", "gpus": ["l4"], "limits": {"gpus": 8}}],
        }
        config = platform_config_from_args(args)
        assert config.vpc.vpc_id is vpc
        GpuPlatform("platform", config)

    recording = run_program(program)
    eks = one(recording, "eks:index:Cluster", "platform-cluster-eks")
    assert eks.inputs["vpcId"] == "vpc-0123456789abcdef0"
    assert eks.inputs["subnetIds"] == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    assert recording.of_type("aws:ec2/vpc:Vpc") == []


def test_the_network_must_be_tagged_for_this_cluster(run_program) -> None:
    def program():
        network = Network("net", NetworkArgs(cluster_name="gpu-dev"))
        EksCluster(
            "eks",
            EksClusterArgs(
                spec=ClusterSpec(name="gpu", addon_versions=ADDON_VERSIONS), network=network
            ),
        )

    assert refused_in_a_program(run_program, program) == [
        "EksClusterArgs.network: tags its subnets for cluster 'gpu-dev' "
        "(NetworkArgs.cluster_name), but this cluster is 'gpu'; Karpenter would find no subnets",
    ]
