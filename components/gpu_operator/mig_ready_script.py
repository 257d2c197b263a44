"""The program the MIG startup remover runs on each MIG node (``mig_ready.py`` ships this file's
source to the pod as ``python -c``): Python's standard library only, no Pulumi, no kubectl.

On its own node (``NODE_NAME``, from the downward API), from the moment the node joins, in
this order:

1. holds the device plugin off until the layout is applied (issue 30.1): while
   ``nvidia.com/mig.config.state`` is not ``success``, puts ``nvidia.com/gpu.deploy.device-plugin=
   false`` back whenever it is absent or ``true``. The GPU Operator v26.7.0 strips every
   ``gpu.deploy.*`` label from a node not yet labelled ``nvidia.com/gpu.present=true``
   (controllers/nodelabeling_controller.go L258-261, state_manager.go L428-453) on any reconcile,
   and its reconcile walks every node (L200-233); the reconcile that then sets ``gpu.present``
   (L239-251) sets an absent label to ``true`` (state_manager.go L476-484). From then on it keeps a
   non-empty value it finds (same lines), so once put back the hold stays; a device plugin pod
   started meanwhile is deleted by the DaemonSet controller once its nodeSelector no longer
   matches (kubernetes v1.36.3 pkg/controller/daemon/daemon_controller.go L1387-1389, L1407),
   and cannot have registered before its init container found the validator's ``toolkit-ready``
   (gpu-operator v26.7.0 assets/state-device-plugin/0500_daemonset.yaml L27-31). The MIG
   manager's own ``paused-for-mig-change`` is left alone (mig-parted v0.15.0 pkg/mig/reconfigure/
   reconfigure.go L581-593: it writes ``true`` back only after the reconfiguration);
2. once the layout is applied (label ``nvidia.com/mig.config.state=success``: mig-parted
   reconfigure.go L142-145, L233-239), sets the label from ``false`` to ``true``, so the GPU
   Operator's device plugin DaemonSet starts there (gpu-operator v26.7.0
   assets/state-device-plugin/0500_daemonset.yaml L19-20);
3. waits until the node advertises what the pool's NodeOverlay told Karpenter (``EXPECTED``: per
   instance type, each device-plugin resource and its count): the kubelet reports the device
   plugin's resources only once it has registered;
4. removes the NodePool startup taint ``MIG_PENDING_TAINT``, and idles.

It gives up (issue 30.2) when the MIG manager reports ``failed`` (mig-parted reconfigure.go
L133-160, L207-236; its loop then waits for the next change of ``nvidia.com/mig.config``:
cmd/nvidia-mig-manager/main.go L436-446) or when the node is
older than ``DEADLINE_SECONDS`` with the taint still on (a stuck ``pending``, reconfigure.go
L170-172, L230-232; a lost GPU; a count that never matches): it records a Warning Event
``MIGNodeStuck`` on the node and deletes the node's NodeClaim (its owner, karpenter v1.15.0
pkg/utils/nodeclaim/nodeclaim.go L305-319), with the NodeClaim's uid as a precondition. Karpenter
then counts the node as deleting (pkg/controllers/state/statenode.go L536-547), schedules pending
pods on active nodes only (pkg/controllers/provisioning/provisioner.go L378-381, L417), so it
launches a replacement, and its termination finalizer deletes the Node and the instance
(pkg/controllers/nodeclaim/lifecycle/controller.go L198-240). Without the remover the node would
stay tainted, uninitialized (initialization.go L81-84) and no candidate of emptiness, drift or
consolidation (statenode.go L301-308) until ``expireAfter``: only Repair ignores the node's
NodeUninitializedError (pkg/controllers/disruption/types.go L163-169), and it runs only under the
nodeRepair feature gate (off by default: karpenter/values.py), for a node condition matching a
repair policy (disruption/repair.go L78-92).

Until step 4 the node is uninitialized for Karpenter (kubernetes-sigs/karpenter v1.15.0
pkg/controllers/nodeclaim/lifecycle/initialization.go L81-84) and, its GPU resources being zero
until step 3, charged its NodeClaim's overlaid capacity (pkg/controllers/state/statenode.go
L458-467); from then on Karpenter charges the node's ``status.capacity``, now the MIG devices.

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
from datetime import UTC, datetime
from typing import Any

TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
STATE_LABEL = "nvidia.com/mig.config.state"
STATE_SUCCESS, STATE_FAILED = "success", "failed"
DEVICE_PLUGIN_LABEL = "nvidia.com/gpu.deploy.device-plugin"
HELD, RELEASED = "false", "true"
# A short poll: step 1 must put the hold back before the device plugin registers, which it can
# only do once its toolkit-validation init container has found the validator's toolkit-ready
# marker (gpu-operator v26.7.0 assets/state-device-plugin/0500_daemonset.yaml L27-31, a 5 s loop).
POLL_SECONDS = 2
NODECLAIM_API = "karpenter.sh/v1"
EVENT_REASON = "MIGNodeStuck"
HOLD_LOST_REASON = "MIGHoldLost"
EVENT_NAMESPACE = "default"  # where Events of cluster-scoped objects go (kubectl describe node)
COMPONENT = "eks-gpu-platform-mig-ready"


def taint_indices(node: Mapping[str, Any], key: str, effect: str) -> list[int]:
    """Where the taint ``key`` with ``effect`` sits in the node's ``spec.taints``."""
    taints = node.get("spec", {}).get("taints") or []
    return [i for i, t in enumerate(taints) if t.get("key") == key and t.get("effect") == effect]


def _labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return node.get("metadata", {}).get("labels") or {}


def waiting_for(node: Mapping[str, Any], expected: Mapping[str, Mapping[str, int]]) -> str | None:
    """What the node still lacks before its taint may go (``None``: nothing)."""
    labels = _labels(node)
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


def hold_lost(node: Mapping[str, Any]) -> bool:
    """Whether the layout is not applied yet and the device plugin's label would run it: absent
    (the operator strips it, then sets it ``true``) or ``true`` (step 1)."""
    labels = _labels(node)
    return labels.get(STATE_LABEL) != STATE_SUCCESS and labels.get(DEVICE_PLUGIN_LABEL) in (
        None,
        RELEASED,
    )


def advertised_early(
    node: Mapping[str, Any], expected: Mapping[str, Mapping[str, int]]
) -> str | None:
    """What the node advertises of its pool's resources before the layout is applied (a device
    plugin that won the race of step 1), ``None`` when nothing."""
    capacity = node.get("status", {}).get("capacity") or {}
    itype = _labels(node).get(INSTANCE_TYPE_LABEL, "")
    early = {
        r: capacity[r] for r in sorted(expected.get(itype, {})) if str(capacity.get(r, "0")) != "0"
    }
    if not early:
        return None
    shown = ", ".join(f"{r}={n}" for r, n in early.items())
    return f"the device plugin advertised {shown} before the MIG layout was applied"


def device_plugin_held(node: Mapping[str, Any]) -> bool:
    """Whether the node's layout is applied and its device plugin still held off (step 2)."""
    labels = _labels(node)
    return labels.get(STATE_LABEL) == STATE_SUCCESS and labels.get(DEVICE_PLUGIN_LABEL) == HELD


def _label_path() -> str:
    return "/metadata/labels/" + DEVICE_PLUGIN_LABEL.replace("~", "~0").replace("/", "~1")


def _version_test(node: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "op": "test",
        "path": "/metadata/resourceVersion",
        "value": node["metadata"]["resourceVersion"],
    }


def hold_patch(node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A JSON patch setting the device plugin's label to ``false`` (``add`` replaces a present
    member, RFC 6902 4.1), valid only on the version read."""
    return [_version_test(node), {"op": "add", "path": _label_path(), "value": HELD}]


def release_patch(node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A JSON patch setting the device plugin's label from ``false`` to ``true``, valid only on
    the version read (``/`` in the key is ``~1``: RFC 6901)."""
    path = _label_path()
    return [
        _version_test(node),
        {"op": "test", "path": path, "value": HELD},
        {"op": "replace", "path": path, "value": RELEASED},
    ]


def removal_patch(node: Mapping[str, Any], indices: list[int]) -> list[dict[str, Any]]:
    """A JSON patch removing the taints at ``indices``, valid only on the version read."""
    ops: list[dict[str, Any]] = [_version_test(node)]
    ops += [{"op": "remove", "path": f"/spec/taints/{i}"} for i in sorted(indices, reverse=True)]
    return ops


def _created(node: Mapping[str, Any]) -> float:
    stamp = node["metadata"]["creationTimestamp"]
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def give_up(
    node: Mapping[str, Any], expected: Mapping[str, Mapping[str, int]], now: float, deadline: int
) -> str | None:
    """Why the node is to be replaced (``None``: keep waiting): the MIG manager failed, or the
    node is ``deadline`` seconds old and still not ready for its taint to go."""
    if _labels(node).get(STATE_LABEL) == STATE_FAILED:
        return f"the MIG manager set {STATE_LABEL}={STATE_FAILED}"
    age = int(now - _created(node))
    if age >= deadline:
        return f"still waiting after {age}s (deadline {deadline}s): {waiting_for(node, expected)}"
    return None


def nodeclaim_of(node: Mapping[str, Any]) -> tuple[str, str] | None:
    """The name and uid of the NodeClaim that owns the node (Karpenter sets the reference at
    registration: karpenter v1.15.0 pkg/controllers/nodeclaim/lifecycle/registration.go L210)."""
    for ref in node.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("apiVersion") == NODECLAIM_API and ref.get("kind") == "NodeClaim":
            return ref["name"], ref["uid"]
    return None


def event(node: Mapping[str, Any], reason: str, message: str, now: float) -> dict[str, Any]:
    """A core/v1 Warning Event about the node (what ``kubectl describe node`` lists)."""
    name = node["metadata"]["name"]
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{reason.lower()}.{int(now)}",
            "namespace": EVENT_NAMESPACE,
        },
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Node",
            "name": name,
            "uid": node["metadata"].get("uid", ""),
        },
        "type": "Warning",
        "reason": reason,
        "message": message,
        "source": {"component": COMPONENT, "host": name},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def _request(method: str, path: str, body: Any = None, kind: str = "json-patch+json") -> Any:
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ["KUBERNETES_SERVICE_PORT"]
    with open(f"{TOKEN_DIR}/token") as f:  # re-read: the kubelet rotates it
        token = f.read().strip()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = f"application/{kind}"
    url = f"https://{host}:{port}{path}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    context = ssl.create_default_context(cafile=f"{TOKEN_DIR}/ca.crt")
    with urllib.request.urlopen(req, context=context, timeout=30) as resp:
        return json.load(resp)


def _record(node: Mapping[str, Any], reason: str, message: str, recorded: set[str]) -> None:
    """Posts the Event once per reason and pod (a retried step must not repeat it)."""
    if reason not in recorded:
        body = event(node, reason, message, time.time())
        _request("POST", f"/api/v1/namespaces/{EVENT_NAMESPACE}/events", body, "json")
        recorded.add(reason)
        print(f"{node['metadata']['name']}: {reason}: {message}", flush=True)


def replace(node: Mapping[str, Any], reason: str, recorded: set[str]) -> bool:
    """Records the Event and deletes the node's NodeClaim; ``False`` when the node has none."""
    claim = nodeclaim_of(node)
    action = f"deleting NodeClaim {claim[0]}" if claim else "no NodeClaim owns it; not replaced"
    _record(node, EVENT_REASON, f"MIG layout not applied: {reason}; {action}", recorded)
    if claim is None:
        return False
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": claim[1]}}
    try:
        _request("DELETE", f"/apis/{NODECLAIM_API}/nodeclaims/{claim[0]}", options, "json")
    except urllib.error.HTTPError as err:
        if err.code != 404:  # already gone: nothing left to do
            raise
    return True


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    name, key, effect = os.environ["NODE_NAME"], os.environ["TAINT_KEY"], os.environ["TAINT_EFFECT"]
    expected = json.loads(os.environ["EXPECTED"])
    deadline = int(os.environ["DEADLINE_SECONDS"])
    path = f"/api/v1/nodes/{name}"
    last, recorded = None, set()
    while True:
        try:
            node = _request("GET", path)
            indices = taint_indices(node, key, effect)
            if not indices:
                print(f"{name}: no {key}:{effect} taint; nothing to do", flush=True)
                break
            if (reason := give_up(node, expected, time.time(), deadline)) is not None:
                replace(node, reason, recorded)
                break
            if hold_lost(node):
                if (early := advertised_early(node, expected)) is not None:
                    _record(node, HOLD_LOST_REASON, early, recorded)
                _request("PATCH", path, hold_patch(node))
                print(
                    f"{name}: set {DEVICE_PLUGIN_LABEL}={HELD} (layout not applied yet)", flush=True
                )
            elif device_plugin_held(node):
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
