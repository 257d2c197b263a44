"""The program the MIG startup remover runs on each MIG node (``mig_ready.py`` ships this file's
source to the pod as ``python -c``): Python's standard library only, no Pulumi, no kubectl.

On its own node (``NODE_NAME``, from the downward API), in this order:

1. waits until the MIG manager has applied the layout: label ``nvidia.com/mig.config.state=
   success`` (NVIDIA/mig-parted v0.15.0 pkg/mig/reconfigure/reconfigure.go L142-145, L233-239);
2. then sets ``nvidia.com/gpu.deploy.device-plugin`` from ``false`` (the NodePool's label, which
   held the device plugin off: ``nodepool.DEVICE_PLUGIN_HELD``) to ``true``, so the GPU
   Operator's device plugin DaemonSet starts there (NVIDIA/gpu-operator v26.7.0
   assets/state-device-plugin/0500_daemonset.yaml L19-20); a node without the label, or with
   another value, is left as it is;
3. waits until the node advertises what the pool's NodeOverlay told Karpenter (``EXPECTED``: per
   instance type, each device-plugin resource and its count): the kubelet reports the device
   plugin's resources only once it has registered;
4. removes the NodePool startup taint ``MIG_PENDING_TAINT``, and idles.

Until step 4 the node is uninitialized for Karpenter (kubernetes-sigs/karpenter v1.14.1
pkg/controllers/nodeclaim/lifecycle/initialization.go L74-77) and, its GPU resources being zero
until step 3, charged its NodeClaim's overlaid capacity (pkg/controllers/state/statenode.go
L359-368); from then on Karpenter charges the node's ``status.capacity``, now the MIG devices.

Not ``kubectl taint``: the ``registry.k8s.io/kubectl`` image is distroless (kubernetes v1.36.3
build/common.sh L113, L133: a statically linked binary on ``go-runner``), so it cannot run a
script; ``kubectl taint`` fails when the taint is already gone (kubectl v0.36.3
pkg/cmd/taint/utils.go L154-156), so a restarted container would crash-loop; and it sends the
whole taint list (``spec.taints`` is ``listType=atomic``, k8s.io/api v0.36.3 core/v1/types.go
L6568-6571), which can drop a taint another controller added meanwhile. Here one JSON patch
removes the taint (or sets the label) and tests the ``resourceVersion`` read, so a concurrent
change fails the patch (409/422) and the loop reads the node again.
"""

import json
import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
STATE_LABEL = "nvidia.com/mig.config.state"
STATE_SUCCESS = "success"
DEVICE_PLUGIN_LABEL = "nvidia.com/gpu.deploy.device-plugin"
HELD, RELEASED = "false", "true"
POLL_SECONDS = 10


def taint_indices(node: Mapping[str, Any], key: str, effect: str) -> list[int]:
    """Where the taint ``key`` with ``effect`` sits in the node's ``spec.taints``."""
    taints = node.get("spec", {}).get("taints") or []
    return [i for i, t in enumerate(taints) if t.get("key") == key and t.get("effect") == effect]


def waiting_for(node: Mapping[str, Any], expected: Mapping[str, Mapping[str, int]]) -> str | None:
    """What the node still lacks before its taint may go (``None``: nothing)."""
    labels = node.get("metadata", {}).get("labels") or {}
    state = labels.get(STATE_LABEL)
    if state != STATE_SUCCESS:
        return f"{STATE_LABEL} is {state!r}, not {STATE_SUCCESS!r}"
    itype = labels.get(INSTANCE_TYPE_LABEL, "")
    capacity = node.get("status", {}).get("capacity") or {}
    for resource, count in sorted(expected.get(itype, {}).items()):
        have = capacity.get(resource, "0")
        if str(have) != str(count):
            return f"{resource} is {have}, not {count} (instance type {itype})"
    return None


def device_plugin_held(node: Mapping[str, Any]) -> bool:
    """Whether the node's layout is applied and its device plugin still held off (step 2)."""
    labels = node.get("metadata", {}).get("labels") or {}
    return labels.get(STATE_LABEL) == STATE_SUCCESS and labels.get(DEVICE_PLUGIN_LABEL) == HELD


def release_patch(node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A JSON patch setting the device plugin's label from ``false`` to ``true``, valid only on
    the version read (``/`` in the key is ``~1``: RFC 6901)."""
    path = "/metadata/labels/" + DEVICE_PLUGIN_LABEL.replace("~", "~0").replace("/", "~1")
    return [
        {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": node["metadata"]["resourceVersion"],
        },
        {"op": "test", "path": path, "value": HELD},
        {"op": "replace", "path": path, "value": RELEASED},
    ]


def removal_patch(node: Mapping[str, Any], indices: list[int]) -> list[dict[str, Any]]:
    """A JSON patch removing the taints at ``indices``, valid only on the version read."""
    version = node["metadata"]["resourceVersion"]
    ops: list[dict[str, Any]] = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": version}
    ]
    ops += [{"op": "remove", "path": f"/spec/taints/{i}"} for i in sorted(indices, reverse=True)]
    return ops


def _request(method: str, path: str, body: Any = None) -> Any:
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ["KUBERNETES_SERVICE_PORT"]
    with open(f"{TOKEN_DIR}/token") as f:  # re-read: the kubelet rotates it
        token = f.read().strip()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json-patch+json"
    url = f"https://{host}:{port}{path}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    context = ssl.create_default_context(cafile=f"{TOKEN_DIR}/ca.crt")
    with urllib.request.urlopen(req, context=context, timeout=30) as resp:
        return json.load(resp)


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    name, key, effect = os.environ["NODE_NAME"], os.environ["TAINT_KEY"], os.environ["TAINT_EFFECT"]
    expected = json.loads(os.environ["EXPECTED"])
    path = f"/api/v1/nodes/{name}"
    last = None
    while True:
        try:
            node = _request("GET", path)
            indices = taint_indices(node, key, effect)
            if not indices:
                print(f"{name}: no {key}:{effect} taint; nothing to do", flush=True)
                break
            if device_plugin_held(node):
                _request("PATCH", path, release_patch(node))
                print(f"{name}: set {DEVICE_PLUGIN_LABEL}={RELEASED}", flush=True)
            elif (reason := waiting_for(node, expected)) is None:
                _request("PATCH", path, removal_patch(node, indices))
                print(f"{name}: removed {key}:{effect}", flush=True)
                break
            elif reason != last:
                print(f"{name}: waiting: {reason}", flush=True)
                last = reason
        except (OSError, urllib.error.URLError, ValueError) as err:  # 409/422 included: retry
            print(f"{name}: {err}; retrying", flush=True)
        time.sleep(POLL_SECONDS)
    while True:  # a DaemonSet pod must keep running; it does nothing more on this node
        time.sleep(3600)


if __name__ == "__main__":
    main()
