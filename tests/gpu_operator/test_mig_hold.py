"""Issue 30.1: the device-plugin hold of a MIG node survives the GPU Operator's node labelling.

``OperatorLabelling`` models exactly what gpu-operator v26.7.0 does to node labels in its
singleton reconcile (the module proxy lists no version of github.com/NVIDIA/gpu-operator, so it
cannot be called from Go here; FACTS §0). Each line of the model cites the code it follows:

- ``controllers/nodelabeling_controller.go`` L200-233 ``labelGPUNodes``: for every node, in turn,
  ``reconcileCommonGPULabel`` then ``updateGPUStateLabels``;
- L239-251 ``reconcileCommonGPULabel``: ``gpu.present=true`` when an NFD PCI label for vendor
  10de is there and ``gpu.present`` is not ``true``; ``false`` when it is ``true`` and none is;
- L258-261: no ``gpu.present=true``: ``removeAllGPUStateLabels``
  (``controllers/state_manager.go`` L428-453: every key of ``gpuStateLabels``, L98-109);
- otherwise (ClusterPolicy, no sandbox: ``getWorkloadConfig`` L389-392 returns ``container``)
  ``updateGPUStateLabels`` (L457-468) then ``addGPUStateLabels`` (L476-484): a key absent or
  ``""`` gets ``true``, a non-empty value is kept;
- ``gpuNodeLabels`` L170-174 (the NFD labels), ``hasCommonGPULabel`` L308-316.

Not modelled, because it never applies to a MIG pool's node: ``gpu.deploy.operands=false``
(L458-463; only Bottlerocket pools carry it, and they refuse ``migProfile``), sandbox workloads
and the DRA stack (off in the platform's ClusterPolicy).

The remover is the program that runs (``mig_ready_script``): its ``hold_lost``/``hold_patch``
decide and build the patch applied here."""

import copy

import pytest

from eks_gpu_platform.gpu_operator import mig_ready_script as script
from eks_gpu_platform.nodepool import DEVICE_PLUGIN_DEPLOY_LABEL

PRESENT = "nvidia.com/gpu.present"
NFD = "feature.node.kubernetes.io/pci-10de.present"
STATE = "nvidia.com/mig.config.state"
# state_manager.go L98-109: the container workload's deploy labels.
CONTAINER_STATE_LABELS = (
    "nvidia.com/gpu.deploy.driver",
    "nvidia.com/gpu.deploy.gpu-feature-discovery",
    "nvidia.com/gpu.deploy.container-toolkit",
    "nvidia.com/gpu.deploy.device-plugin",
    "nvidia.com/gpu.deploy.dcgm",
    "nvidia.com/gpu.deploy.dcgm-exporter",
    "nvidia.com/gpu.deploy.node-status-exporter",
    "nvidia.com/gpu.deploy.operator-validator",
    "nvidia.com/gpu.deploy.client",
)


def operator_reconcile(nodes: dict[str, dict[str, str]]) -> None:
    """One run of ``labelGPUNodes`` over every node's labels (see the module docstring)."""
    for labels in nodes.values():  # L207
        has_nfd = labels.get(NFD) == "true"  # hasGPULabels, L319-328 / L170-174
        if labels.get(PRESENT) != "true" and has_nfd:  # L241-244
            labels[PRESENT] = "true"
        elif labels.get(PRESENT) == "true" and not has_nfd:  # L246-249
            labels[PRESENT] = "false"
        if labels.get(PRESENT) != "true":  # L258-261
            # removeAllGPUStateLabels L428-453: the other workloads' and the DRA stack's keys are
            # never on these nodes; the container ones and the MIG manager's are.
            for key in CONTAINER_STATE_LABELS:
                labels.pop(key, None)
            labels.pop("nvidia.com/gpu.deploy.mig-manager", None)  # L448-451
            continue
        for key in CONTAINER_STATE_LABELS:  # addGPUStateLabels L476-484
            if not labels.get(key):
                labels[key] = "true"


def remover_step(labels: dict[str, str]) -> None:
    """What the remover does on one poll of its node (step 1 of ``mig_ready_script``)."""
    node = {"metadata": {"labels": labels, "resourceVersion": "1"}}
    if script.hold_lost(node):
        for op in script.hold_patch(node)[1:]:
            assert op["op"] == "add"
            labels[op["path"].split("/", 3)[3].replace("~1", "/")] = op["value"]


def joining() -> dict[str, str]:
    """A MIG node as it registers: the NodePool's labels (``--node-labels``), no NFD yet."""
    return {"example.com/pool": "mig", DEVICE_PLUGIN_DEPLOY_LABEL: "false"}


def test_the_operator_strips_the_hold_of_a_node_nfd_has_not_labelled_yet():
    # The review's H1, reproduced on the model: a reconcile for the first node (NFD done)
    # strips the second node's hold; NFD then labels it and the next reconcile says "true".
    nodes = {"a": {**joining(), NFD: "true"}, "b": joining()}
    operator_reconcile(nodes)
    assert nodes["a"][DEVICE_PLUGIN_DEPLOY_LABEL] == "false"  # kept: L476-484
    assert DEVICE_PLUGIN_DEPLOY_LABEL not in nodes["b"]  # stripped: L258-261
    nodes["b"][NFD] = "true"
    operator_reconcile(nodes)
    assert nodes["b"][DEVICE_PLUGIN_DEPLOY_LABEL] == "true"  # the device plugin would start


@pytest.mark.parametrize(
    "order",
    [
        # The remover's poll between every operator reconcile, in every interleaving of the
        # strip, the put-back, NFD's labelling and the reconcile that sets gpu.present.
        ("reconcile", "remover", "nfd", "reconcile", "remover", "reconcile"),
        ("remover", "reconcile", "remover", "nfd", "reconcile", "remover", "reconcile"),
        ("reconcile", "nfd", "remover", "reconcile", "remover", "reconcile"),
        ("reconcile", "nfd", "reconcile", "remover", "reconcile"),
    ],
    ids=["strip-fix-present", "fix-strip-fix-present", "nfd-first", "flip-then-fix"],
)
def test_the_remover_puts_the_hold_back_until_the_operator_keeps_it(order):
    nodes = {"a": {**joining(), NFD: "true"}, "b": joining()}
    seen = []
    for step in order:
        if step == "reconcile":
            operator_reconcile(nodes)
        elif step == "nfd":
            nodes["b"][NFD] = "true"
        else:
            remover_step(nodes["b"])
        seen.append(nodes["b"].get(DEVICE_PLUGIN_DEPLOY_LABEL))
    # Once gpu.present is set and the remover has put "false" back, the operator keeps it for
    # good: further reconciles change nothing (L476-484).
    assert nodes["b"][PRESENT] == "true"
    assert nodes["b"][DEVICE_PLUGIN_DEPLOY_LABEL] == "false"
    before = copy.deepcopy(nodes)
    operator_reconcile(nodes)
    assert nodes == before
    # "true" is seen at most once, in the reconcile that sets gpu.present, and the remover's
    # next poll (POLL_SECONDS) puts "false" back.
    assert seen.count("true") <= 1
    if "true" in seen:
        assert seen[seen.index("true") + 1] == "false"


@pytest.mark.parametrize(
    ("state", "plugin", "lost"),
    [
        (None, None, True),  # stripped by the operator before gpu.present
        (None, "true", True),  # set by the reconcile that saw gpu.present
        ("pending", "true", True),
        (None, "false", False),
        ("pending", "false", False),
        # The MIG manager's own pause: it writes the saved value back after the reconfiguration
        # (mig-parted v0.15.0 reconfigure.go L581-593); not the remover's to change.
        ("pending", "paused-for-mig-change", False),
        ("failed", None, True),
        # Layout applied: from here the remover releases the plugin (step 2).
        ("success", None, False),
        ("success", "true", False),
        ("success", "false", False),
    ],
)
def test_the_remover_holds_the_plugin_only_before_the_layout(state, plugin, lost):
    labels = {} if state is None else {STATE: state}
    if plugin is not None:
        labels[DEVICE_PLUGIN_DEPLOY_LABEL] = plugin
    assert script.hold_lost({"metadata": {"labels": labels}}) is lost


def test_the_hold_patch_sets_false_on_the_version_read():
    node = {"metadata": {"labels": {}, "resourceVersion": "7"}}
    assert script.hold_patch(node) == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
        {
            "op": "add",
            "path": "/metadata/labels/nvidia.com~1gpu.deploy.device-plugin",
            "value": "false",
        },
    ]


@pytest.mark.parametrize(
    ("capacity", "early"),
    [
        ({}, None),
        ({"nvidia.com/gpu": "0"}, None),
        (
            {"nvidia.com/gpu": "8"},
            "the device plugin advertised nvidia.com/gpu=8 before the MIG layout was applied",
        ),
    ],
)
def test_a_plugin_that_won_the_race_is_reported(capacity, early):
    node = {
        "metadata": {"labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge"}},
        "status": {"capacity": capacity},
    }
    assert script.advertised_early(node, {"p4d.24xlarge": {"nvidia.com/gpu": 56}}) == early
