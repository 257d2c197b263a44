"""The MIG startup taint and its remover (review F6): the NodePool's ``startupTaints`` on MIG pools
only, the operands tolerating it, the remover's exact manifests, what it waits for, and the
platform registering it."""

import json
from pathlib import Path

import celpy
import pytest
from addon_pins import ADDON_VERSIONS
from cel_programs import program as cel_program
from recordings import one

from eks_gpu_platform.config import PlatformConfig
from eks_gpu_platform.gpu_operator import (
    MIG_READY_SCRIPT,
    GpuOperatorSpec,
    mig_ready_daemonset,
    mig_ready_pools,
    mig_ready_rbac,
)
from eks_gpu_platform.gpu_operator import mig_ready_script as script
from eks_gpu_platform.gpu_operator.mig_ready import mig_ready_admission
from eks_gpu_platform.nodepool import (
    LimitsSpec,
    NodePoolSpec,
    nodepool_manifest,
    pool_startup_taints,
    taint_tolerations,
)
from eks_gpu_platform.offline.write import kubernetes_objects
from eks_gpu_platform.platform import GpuPlatform, gpu_node_tolerations

STARTUP_TAINT = {"key": "nvidia.com/mig.config.state", "value": "pending", "effect": "NoSchedule"}
STARTUP_TOLERATION = {
    "key": "nvidia.com/mig.config.state",
    "operator": "Exists",
    "effect": "NoSchedule",
}
MIG = NodePoolSpec(
    name="mig", instance_types=("p4d.24xlarge",), mig_profile="all-1g.5gb", limits=LimitsSpec()
)


def template_spec(spec: NodePoolSpec) -> dict:
    manifest = nodepool_manifest(
        spec, name=spec.name, node_class=spec.name, label_domain="example.com", gpu_limit=8
    )
    return manifest["spec"]["template"]["spec"]


def template_labels(spec: NodePoolSpec) -> dict:
    manifest = nodepool_manifest(
        spec, name=spec.name, node_class=spec.name, label_domain="example.com", gpu_limit=8
    )
    return manifest["spec"]["template"]["metadata"]["labels"]


def test_a_mig_pool_starts_its_nodes_with_the_startup_taint():
    spec = template_spec(MIG)
    assert spec["startupTaints"] == [STARTUP_TAINT]
    # Not a regular taint: pods need not tolerate it to get nodes (nodeclaim.go L32-35).
    assert STARTUP_TAINT not in spec["taints"]


@pytest.mark.parametrize("strategy", ["single", "mixed"])
def test_a_mig_pool_holds_the_device_plugin_off_until_the_remover_starts_it(strategy):
    # Under either strategy the device plugin would first advertise the whole GPUs as
    # nvidia.com/gpu: 8 (k8s-device-plugin v0.20.0 internal/rm/rm.go L111), and Karpenter charges
    # an uninitialized node that instead of its overlay's 56 (statenode.go L359-368).
    assert template_labels(MIG) == {
        "example.com/pool": "mig",
        "example.com/preemptible": "false",
        "nvidia.com/mig.config": "all-1g.5gb",
        "nvidia.com/gpu.deploy.device-plugin": "false",
    }
    # The remover starts it on the pool's nodes.
    assert mig_ready_pools([MIG], GpuOperatorSpec(mig_strategy=strategy)).keys() == {"mig"}


@pytest.mark.parametrize(
    "spec",
    [
        NodePoolSpec(name="whole", gpus=("a100",)),
        NodePoolSpec(name="nb", gpus=("l4",), time_slicing="shared-4"),
        NodePoolSpec(name="off", instance_types=("p4d.24xlarge",), mig_profile="all-disabled"),
        NodePoolSpec(name="cpu", kind="cpu"),
    ],
    ids=["whole", "time-sliced", "all-disabled", "cpu"],
)
def test_only_mig_pools_get_the_startup_taint(spec):
    assert pool_startup_taints(spec) == []
    assert "startupTaints" not in template_spec(spec)
    # Nothing would start their device plugin: no remover runs there.
    if spec.kind != "cpu":
        assert "nvidia.com/gpu.deploy.device-plugin" not in template_labels(spec)


def test_node_daemonsets_tolerate_the_startup_taint_of_mig_pools():
    # The MIG manager, device plugin and GFD must run on the tainted node, or it stays tainted.
    whole = NodePoolSpec(name="whole", gpus=("a100",))
    assert taint_tolerations([whole, MIG]) == [STARTUP_TOLERATION]
    assert gpu_node_tolerations([whole, MIG]) == [STARTUP_TOLERATION]
    assert taint_tolerations([whole]) == []


@pytest.mark.parametrize(
    ("strategy", "advertised"),
    [
        ("single", {"nvidia.com/gpu": 56}),
        ("mixed", {"nvidia.com/gpu": 0, "nvidia.com/mig-1g.5gb": 56}),
    ],
)
def test_the_remover_expects_what_the_overlays_say(strategy, advertised):
    pools = [MIG, NodePoolSpec(name="whole", gpus=("a100",))]
    spec = GpuOperatorSpec(mig_strategy=strategy)
    assert mig_ready_pools(pools, spec) == {"mig": {"p4d.24xlarge": advertised}}


def test_remover_rbac_is_get_and_patch_on_nodes_and_delete_on_nodeclaims():
    assert mig_ready_rbac() == [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": "eks-gpu-platform-mig-ready",
                "namespace": "gpu-operator",
                "labels": {
                    "app.kubernetes.io/name": "mig-ready",
                    "app.kubernetes.io/part-of": "eks-gpu-platform",
                },
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "name": "eks-gpu-platform-mig-ready",
                "labels": {
                    "app.kubernetes.io/name": "mig-ready",
                    "app.kubernetes.io/part-of": "eks-gpu-platform",
                },
            },
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
                # Issue 30.2: a stuck node's NodeClaim; narrowed by mig_replace_admission.
                {"apiGroups": ["karpenter.sh"], "resources": ["nodeclaims"], "verbs": ["delete"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "name": "eks-gpu-platform-mig-ready",
                "labels": {
                    "app.kubernetes.io/name": "mig-ready",
                    "app.kubernetes.io/part-of": "eks-gpu-platform",
                },
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "eks-gpu-platform-mig-ready",
            },
            "subjects": [
                {
                    "kind": "ServiceAccount",
                    "name": "eks-gpu-platform-mig-ready",
                    "namespace": "gpu-operator",
                }
            ],
        },
    ]


def test_remover_daemonset_exactly():
    labels = {
        "app.kubernetes.io/name": "mig-ready",
        "app.kubernetes.io/part-of": "eks-gpu-platform",
    }
    manifest = mig_ready_daemonset(
        pool_label_key="example.com/pool",
        expected={"mig": {"p4d.24xlarge": {"nvidia.com/gpu": 56}}},
        tolerations=[
            STARTUP_TOLERATION,
            {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
        ],
    )
    assert manifest == {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "eks-gpu-platform-mig-ready",
            "namespace": "gpu-operator",
            "labels": labels,
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    # Every node of the MIG pools from the moment it joins (issue 30.1), not
                    # only those with mig.config.state=success.
                    "serviceAccountName": "eks-gpu-platform-mig-ready",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": "example.com/pool",
                                                "operator": "In",
                                                "values": ["mig"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                    "tolerations": [
                        STARTUP_TOLERATION,
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
                    ],
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "runAsGroup": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "terminationGracePeriodSeconds": 5,
                    "containers": [
                        {
                            "name": "remove-startup-taint",
                            # Pinned by digest (review M4).
                            "image": "docker.io/library/python:3.13.9-alpine3.22@sha256:"
                            "e5fa639e49b85986c4481e28faa2564b45aa8021413f31026c3856e5911618b1",
                            "command": ["python", "-c", MIG_READY_SCRIPT],
                            "env": [
                                {
                                    "name": "NODE_NAME",
                                    "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                                },
                                {"name": "TAINT_KEY", "value": "nvidia.com/mig.config.state"},
                                {"name": "TAINT_EFFECT", "value": "NoSchedule"},
                                {
                                    "name": "EXPECTED",
                                    "value": '{"p4d.24xlarge": {"nvidia.com/gpu": 56}}',
                                },
                                {"name": "DEADLINE_SECONDS", "value": "2700"},
                                {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
                            ],
                            "resources": {
                                "requests": {"cpu": "10m", "memory": "32Mi"},
                                "limits": {"memory": "64Mi"},
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": True,
                            },
                        }
                    ],
                },
            },
        },
    }


# --- the program in the pod ----------------------------------------------------------------------

EXPECTED = {"p4d.24xlarge": {"nvidia.com/gpu": 56}}


def node(state: str | None, gpus: str, taints: list[dict]) -> dict:
    labels = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    if state is not None:
        labels["nvidia.com/mig.config.state"] = state
    return {
        "metadata": {"name": "ip-10-0-0-1", "resourceVersion": "42", "labels": labels},
        "spec": {"taints": taints},
        "status": {"capacity": {"cpu": "96", "nvidia.com/gpu": gpus}},
    }


GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("state", "gpus", "reason"),
    [
        (None, "8", "nvidia.com/mig.config.state is None, not 'success'"),
        ("pending", "8", "nvidia.com/mig.config.state is 'pending', not 'success'"),
        ("rebooting", "8", "nvidia.com/mig.config.state is 'rebooting', not 'success'"),
        # The MIG manager reports success before the device plugin has registered again.
        ("success", "8", "nvidia.com/gpu is 8, not 56 (instance type p4d.24xlarge)"),
        ("success", "56", None),
    ],
)
def test_the_remover_waits_for_the_layout_and_the_advertised_capacity(state, gpus, reason):
    assert script.waiting_for(node(state, gpus, []), EXPECTED) == reason


def labelled(state: str | None, plugin: str | None) -> dict:
    out = node(state, "0", [GPU_TAINT, STARTUP_TAINT])
    if plugin is not None:
        out["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] = plugin
    return out


@pytest.mark.parametrize(
    ("state", "plugin", "held"),
    [
        # The MIG manager keeps "false" while it pauses and restores the GPU clients
        # (reconfigure.go L581-593); the remover starts the plugin only once the layout is in.
        ("pending", "false", False),
        ("rebooting", "false", False),
        ("success", "false", True),
        ("success", "true", False),
        # A node labelled before this label existed, or by someone else: left as it is.
        ("success", None, False),
        ("success", "paused-for-mig-change", False),
    ],
)
def test_the_remover_starts_the_device_plugin_once_the_layout_is_applied(state, plugin, held):
    assert script.device_plugin_held(labelled(state, plugin)) is held


def test_the_release_patch_sets_only_the_device_plugin_label_of_the_version_read():
    pointer = "/metadata/labels/nvidia.com~1gpu.deploy.device-plugin"  # RFC 6901: "/" is "~1"
    assert script.release_patch(labelled("success", "false")) == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
        {"op": "test", "path": pointer, "value": "false"},
        {"op": "replace", "path": pointer, "value": "true"},
    ]


def test_the_program_and_the_nodepool_name_the_same_label():
    assert script.DEVICE_PLUGIN_LABEL == "nvidia.com/gpu.deploy.device-plugin"
    assert (script.HELD, script.RELEASED) == ("false", "true")
    assert template_labels(MIG)[script.DEVICE_PLUGIN_LABEL] == script.HELD


def test_the_remover_patch_removes_only_the_startup_taint_of_the_version_read():
    tainted = node("success", "56", [GPU_TAINT, STARTUP_TAINT])
    indices = script.taint_indices(tainted, "nvidia.com/mig.config.state", "NoSchedule")
    assert indices == [1]
    assert script.removal_patch(tainted, indices) == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
        {"op": "remove", "path": "/spec/taints/1"},
    ]
    assert (
        script.taint_indices(node("success", "56", [GPU_TAINT]), STARTUP_TAINT["key"], "NoSchedule")
        == []
    )


def test_the_pod_runs_this_module():
    assert Path(script.__file__).read_text() == MIG_READY_SCRIPT
    compile(MIG_READY_SCRIPT, "mig_ready_script.py", "exec")


# --- the platform ---------------------------------------------------------------------------------


def test_the_platform_registers_the_remover_for_a_mig_pool(run_program):
    config = PlatformConfig.load(
        {
            "cluster": {"name": "gpu-test", "addonVersions": ADDON_VERSIONS},
            "nodePools": [
                {
                    "name": "mig",
                    "instanceTypes": ["p4d.24xlarge"],
                    "migProfile": "all-1g.5gb",
                    "limits": {"gpus": 8},
                }
            ],
            "scheduler": {"enabled": False},
        },
        "us-west-2",
    )
    rec = run_program(lambda: GpuPlatform("platform", config))
    operator = one(rec, "eks-gpu-platform:index:GpuOperator", "platform-gpu-operator")
    for typ, name in [
        ("kubernetes:core/v1:ServiceAccount", "platform-gpu-operator-mig-ready-sa"),
        (
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
            "platform-gpu-operator-mig-ready-role",
        ),
        (
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
            "platform-gpu-operator-mig-ready-binding",
        ),
        (
            "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
            "platform-gpu-operator-mig-ready-policy",
        ),
        (
            "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
            "platform-gpu-operator-mig-ready-policy-binding",
        ),
        (
            "kubernetes:rbac.authorization.k8s.io/v1:Role",
            "platform-gpu-operator-mig-ready-events-role",
        ),
        (
            "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
            "platform-gpu-operator-mig-ready-events-binding",
        ),
        (
            "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
            "platform-gpu-operator-mig-replace-policy",
        ),
        (
            "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
            "platform-gpu-operator-mig-replace-policy-binding",
        ),
        ("kubernetes:apps/v1:DaemonSet", "platform-gpu-operator-mig-ready"),
    ]:
        assert one(rec, typ, name).parent == operator.urn
    (daemonset,) = kubernetes_objects(rec, "DaemonSet")
    env = {
        e["name"]: e.get("value")
        for e in daemonset["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert json.loads(env["EXPECTED"]) == {"p4d.24xlarge": {"nvidia.com/gpu": 56}}
    assert env["DEADLINE_SECONDS"] == "2700"  # the default gpuOperator.migReadyDeadline, 45m
    (pool,) = [p for p in kubernetes_objects(rec, "NodePool") if p["metadata"]["name"] == "mig"]
    assert pool["spec"]["template"]["spec"]["startupTaints"] == [STARTUP_TAINT]
    labels = pool["spec"]["template"]["metadata"]["labels"]
    assert labels["nvidia.com/gpu.deploy.device-plugin"] == "false"


def test_the_shipped_stacks_have_no_remover(render_stack):
    for stack in ("dev", "prod"):
        assert kubernetes_objects(render_stack(stack), "DaemonSet") == []


# --- the admission policy: its own node, only the startup taint --------------------------------


def admitted(request_node: str | None, old: dict, new: dict) -> list[str]:
    """The messages of the policy's failing validations (celpy, like test_manifests.py)."""
    (policy, _) = mig_ready_admission(pool_label_key=POOL, pools=["mig-h100", "mig"])
    user: dict = {"username": "system:serviceaccount:gpu-operator:eks-gpu-platform-mig-ready"}
    if request_node is not None:
        user["extra"] = {"authentication.kubernetes.io/node-name": [request_node]}
    activation = {
        "request": celpy.json_to_cel({"userInfo": user}),
        "object": celpy.json_to_cel(new),
        "oldObject": celpy.json_to_cel(old),
    }
    (condition,) = policy["spec"]["matchConditions"]
    match = cel_program(condition["expression"]).evaluate(activation)
    assert bool(match)
    failed = []
    for validation in policy["spec"]["validations"]:
        program = cel_program(validation["expression"])
        if not bool(program.evaluate(activation)):
            failed.append(validation["message"])
    return failed


POOL = "example.com/pool"


def k8s_node(
    name: str,
    taints: list[dict],
    labels: dict | None = None,
    annotations: dict | None = None,
    pool: str | None = "mig",
) -> dict:
    own = {} if pool is None else {POOL: pool}
    return {
        "metadata": {
            "name": name,
            "labels": {**own, **({"a": "b"} if labels is None else labels)},
            "annotations": annotations or {"x": "y"},
        },
        "spec": {"taints": taints},
    }


OWN = "ip-10-0-0-1"
PLUGIN = "nvidia.com/gpu.deploy.device-plugin"
HELD = {"a": "b", PLUGIN: "false"}
RELEASED = {"a": "b", PLUGIN: "true"}
TAINTED = k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=HELD)
OWN_NODE = "the MIG startup remover may update only the node its pod runs on"
ONLY_TAINT = (
    "the MIG startup remover may only remove the nvidia.com/mig.config.state:NoSchedule taint"
)
ONLY_LABEL = (
    "the MIG startup remover may change no node label but nvidia.com/gpu.deploy.device-plugin, "
    "and that only from 'false' to 'true', or to 'false' from 'true' or unset while "
    "nvidia.com/mig.config.state is not 'success'"
)
APPLIED = {"nvidia.com/mig.config.state": "success"}
NO_ANNOTATIONS = "the MIG startup remover may not change node annotations"
MIG_ONLY = "the MIG startup remover may update only nodes of the MIG pools (mig, mig-h100)"


@pytest.mark.parametrize(
    ("request_node", "old", "new", "failed"),
    [
        (OWN, TAINTED, k8s_node(OWN, [GPU_TAINT], labels=HELD), []),
        (OWN, TAINTED, k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=RELEASED), []),
        (OWN, TAINTED, k8s_node(OWN, [GPU_TAINT], labels=RELEASED), []),
        ("ip-10-0-0-2", TAINTED, k8s_node(OWN, [GPU_TAINT], labels=HELD), [OWN_NODE]),
        (None, TAINTED, k8s_node(OWN, [GPU_TAINT], labels=HELD), [OWN_NODE]),
        (OWN, TAINTED, k8s_node(OWN, [STARTUP_TAINT], labels=HELD), [ONLY_TAINT]),
        (OWN, TAINTED, k8s_node(OWN, [], labels=HELD), [ONLY_TAINT]),
        (
            OWN,
            TAINTED,
            k8s_node(
                OWN, [GPU_TAINT, STARTUP_TAINT, {"key": "k", "effect": "NoSchedule"}], labels=HELD
            ),
            [ONLY_TAINT],
        ),
        (
            OWN,
            TAINTED,
            k8s_node(OWN, [GPU_TAINT], labels={"a": "c", PLUGIN: "false"}),
            [ONLY_LABEL],
        ),
        (OWN, TAINTED, k8s_node(OWN, [GPU_TAINT], labels={PLUGIN: "true"}), [ONLY_LABEL]),
        (OWN, TAINTED, k8s_node(OWN, [GPU_TAINT], labels={**RELEASED, "c": "d"}), [ONLY_LABEL]),
        (OWN, TAINTED, k8s_node(OWN, [GPU_TAINT], labels={"a": "b"}), [ONLY_LABEL]),
        (OWN, TAINTED, k8s_node(OWN, [GPU_TAINT], labels={"a": "b", PLUGIN: "x"}), [ONLY_LABEL]),
        (
            OWN,
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={**RELEASED, **APPLIED}),
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={**HELD, **APPLIED}),
            [ONLY_LABEL],
        ),
        # Issue 30.1: before the layout is applied, the hold may be put back where the GPU
        # Operator removed it (nodelabeling_controller.go L258-261) or set it "true"
        # (state_manager.go L476-484), and nowhere else.
        (
            OWN,
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={"a": "b"}),
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=HELD),
            [],
        ),
        (
            OWN,
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=RELEASED),
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=HELD),
            [],
        ),
        (
            OWN,
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={"a": "b", **APPLIED}),
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={**HELD, **APPLIED}),
            [ONLY_LABEL],
        ),
        (
            OWN,
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={"a": "b", PLUGIN: "paused"}),
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=HELD),
            [ONLY_LABEL],
        ),
        (
            "ip-10-0-0-2",
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={"a": "b"}),
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=HELD),
            [OWN_NODE],
        ),
        # The cluster is shared: a node of another pool, or of none (the system nodes), is never
        # the remover's, even its own (a pod placed there by mistake).
        (
            OWN,
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=HELD, pool="inference"),
            k8s_node(OWN, [GPU_TAINT], labels=HELD, pool="inference"),
            [MIG_ONLY],
        ),
        (
            OWN,
            k8s_node(OWN, [STARTUP_TAINT], labels={"a": "b"}, pool=None),
            k8s_node(OWN, [], labels={"a": "b"}, pool=None),
            [MIG_ONLY],
        ),
        (
            OWN,
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels={"a": "b"}),
            k8s_node(OWN, [GPU_TAINT, STARTUP_TAINT], labels=RELEASED),
            [ONLY_LABEL],
        ),
        (
            OWN,
            TAINTED,
            k8s_node(OWN, [GPU_TAINT], labels=HELD, annotations={"x": "z"}),
            [NO_ANNOTATIONS],
        ),
    ],
    ids=[
        "removes-the-taint",
        "starts-the-device-plugin",
        "both",
        "other-node",
        "no-node-claim",
        "other-taint",
        "every-taint",
        "adds-taint",
        "other-label",
        "drops-a-label",
        "adds-a-label",
        "drops-the-device-plugin-label",
        "other-device-plugin-value",
        "stops-the-device-plugin",
        "holds-an-unset-label",
        "holds-a-true-label",
        "holds-after-the-layout",
        "holds-the-mig-managers-pause",
        "holds-another-node",
        "another-pools-node",
        "a-node-of-no-pool",
        "adds-the-device-plugin-label",
        "annotations",
    ],
)
def test_the_admission_policy_limits_the_remover(request_node, old, new, failed):
    assert admitted(request_node, old, new) == failed


def test_the_admission_policy_binding_denies():
    (_, binding) = mig_ready_admission(pool_label_key=POOL, pools=["mig"])
    assert binding == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {
            "name": "eks-gpu-platform-mig-ready",
            "labels": {
                "app.kubernetes.io/name": "mig-ready",
                "app.kubernetes.io/part-of": "eks-gpu-platform",
            },
        },
        "spec": {"policyName": "eks-gpu-platform-mig-ready", "validationActions": ["Deny"]},
    }
