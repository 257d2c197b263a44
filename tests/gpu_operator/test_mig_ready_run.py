"""The MIG startup remover's program run end to end against a fake API server over TLS: the
exact requests it sends (bearer token, ``application/json-patch+json``), its waiting, the device
plugin it starts once the layout is applied, its retry after a concurrent change (a failed
``test`` op), and that it stops once the taint is gone.

The fake applies JSON patches the way the API server does for ``application/json-patch+json``
(RFC 6902 ``test``, ``replace`` and ``remove`` on RFC 6901 pointers; a failed ``test`` is a 422,
k8s.io/apiserver v0.36.3 ``pkg/endpoints/handlers/patch.go`` ``jsonPatcher``). It can play the
GPU Operator's device plugin: its DaemonSet runs only on nodes labelled
``nvidia.com/gpu.deploy.device-plugin=true`` (NVIDIA/gpu-operator v26.7.0
assets/state-device-plugin/0500_daemonset.yaml L19-20), and the kubelet reports its resources
only once it has registered, a poll or more later."""

import copy
import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from eks_gpu_platform.gpu_operator import mig_ready_script as script

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")

NODE = "ip-10-0-0-1"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
STARTUP = {"key": "nvidia.com/mig.config.state", "value": "pending", "effect": "NoSchedule"}
EXPECTED = {"p4d.24xlarge": {"nvidia.com/gpu": 56}}


PLUGIN = "nvidia.com/gpu.deploy.device-plugin"


NOW = 1_800_000_000  # the fake clock: 2027-01-15T08:00:00Z
CREATED = "2027-01-15T07:59:00Z"  # the node joined a minute ago
CLAIM = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodeClaim",
    "name": "mig-abcde",
    "uid": "c1a1m",
    "blockOwnerDeletion": True,
}


def node(version: int, state: str | None, gpus: str | None, plugin: str | None = "false") -> dict:
    """``gpus``: ``nvidia.com/gpu`` in ``status.capacity`` (``None``: no device plugin has
    registered the resource); ``plugin``: the device plugin's deploy label (``None``: absent)."""
    labels = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    if state:
        labels["nvidia.com/mig.config.state"] = state
    if plugin is not None:
        labels[PLUGIN] = plugin
    return {
        "metadata": {
            "name": NODE,
            "uid": "n0de",
            "resourceVersion": str(version),
            "creationTimestamp": CREATED,
            "labels": labels,
            "ownerReferences": [dict(CLAIM)],
        },
        "spec": {"taints": [dict(GPU_TAINT), dict(STARTUP)]},
        "status": {"capacity": {"cpu": "96"} if gpus is None else {"nvidia.com/gpu": gpus}},
    }


def _pointer(doc: dict, path: str) -> tuple[dict | list, str]:
    """The container and the last key of an RFC 6901 pointer."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    for part in parts[:-1]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc, parts[-1]


class FakeAPI:
    """One node. ``steps``: what the node looks like on each GET (the last one repeats);
    ``race``: bump the node's resourceVersion right after the n-th GET, once (a concurrent
    writer);
    ``plugin_gpus``: play the device plugin, which advertises that many ``nvidia.com/gpu`` from
    the second GET after its label turns ``true`` (the pod starts, then registers)."""

    def __init__(self, steps: list[dict], race: int | None = None, plugin_gpus: str | None = None):
        self.steps, self.race, self.plugin_gpus = steps, race, plugin_gpus
        self.node = copy.deepcopy(steps[0])
        self.gets = 0
        self.log: list[tuple] = []

    def get(self) -> dict:
        if self.gets < len(self.steps):
            self.node = copy.deepcopy(self.steps[self.gets])
        self.gets += 1
        out = copy.deepcopy(self.node)
        if self.race == self.gets:
            version = int(self.node["metadata"]["resourceVersion"]) + 1
            self.node["metadata"]["resourceVersion"] = str(version)
            self.steps = [copy.deepcopy(self.node)]
            self.gets, self.race = 1, None
        return out

    def patch(self, ops: list[dict]) -> tuple[int, dict]:
        new = copy.deepcopy(self.node)
        for op in ops:
            parent, key = _pointer(new, op["path"])
            index = int(key) if isinstance(parent, list) else key
            if op["op"] == "test":
                if key not in parent or parent[index] != op["value"]:  # type: ignore[index]
                    return 422, {"kind": "Status", "code": 422, "reason": "Invalid"}
            elif op["op"] == "remove":
                del parent[index]  # type: ignore[arg-type]
            elif op["op"] == "replace":
                assert key in parent, op
                parent[index] = op["value"]  # type: ignore[index]
            elif op["op"] == "add":  # RFC 6902 4.1: an object member is added or replaced
                parent[index] = op["value"]  # type: ignore[index]
            else:
                raise AssertionError(op)
        new["metadata"]["resourceVersion"] = str(int(new["metadata"]["resourceVersion"]) + 1)
        self.node = new
        self.steps = [copy.deepcopy(new)]
        started = self.plugin_gpus is not None and new["metadata"]["labels"].get(PLUGIN) == "true"
        if started and new["status"]["capacity"].get("nvidia.com/gpu") != self.plugin_gpus:
            registered = copy.deepcopy(new)
            registered["status"]["capacity"]["nvidia.com/gpu"] = self.plugin_gpus
            registered["metadata"]["resourceVersion"] = str(
                int(new["metadata"]["resourceVersion"]) + 1
            )
            self.steps.append(registered)
        self.gets = 0
        return 200, new


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A self-signed certificate for localhost and a token, laid out as the kubelet mounts
    them: one for the module (each test only reads them; an RSA key costs an openssl run)."""
    tmp_path = tmp_path_factory.mktemp("tls")
    secrets = tmp_path / "sa"
    secrets.mkdir()
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
            "-keyout", str(tmp_path / "key.pem"), "-out", str(secrets / "ca.crt"),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (secrets / "token").write_text("sekret\n")
    return tmp_path


def serve(api: FakeAPI, tls):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            api.log.append(("GET", self.path, self.headers["Authorization"]))
            self.reply(200, api.get())

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            api.log.append(("POST", self.path, self.headers["Content-Type"], body))
            self.reply(201, body)

        def do_DELETE(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            api.log.append(("DELETE", self.path, self.headers["Content-Type"], body))
            self.reply(200, {"kind": "NodeClaim"})

        def do_PATCH(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            kind = self.headers["Content-Type"]
            api.log.append(("PATCH", self.path, self.headers["Authorization"], kind, body))
            if kind != "application/json-patch+json":
                self.reply(415, {})
                return
            self.reply(*api.patch(body))

    server = ThreadingHTTPServer(("localhost", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls / "sa" / "ca.crt", tls / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    # shutdown() waits for serve_forever to notice, which it checks every poll_interval
    # (default 0.5 s: half a second of every test).
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return server


class Idle(Exception):
    """Raised by the fake clock when the program reaches its idle loop."""


def run(api: FakeAPI, tls, monkeypatch, capsys, deadline: int = 2700) -> list[str]:
    server = serve(api, tls)
    try:
        monkeypatch.setattr(script, "TOKEN_DIR", str(tls / "sa"))
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "localhost")
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.server_address[1]))
        monkeypatch.setenv("NODE_NAME", NODE)
        monkeypatch.setenv("TAINT_KEY", STARTUP["key"])
        monkeypatch.setenv("TAINT_EFFECT", STARTUP["effect"])
        monkeypatch.setenv("EXPECTED", json.dumps(EXPECTED))
        monkeypatch.setenv("DEADLINE_SECONDS", str(deadline))
        monkeypatch.setattr(script.time, "time", lambda: NOW)
        monkeypatch.setattr(script.signal, "signal", lambda *_: None)
        sleeps: list[int] = []

        def sleep(seconds):
            sleeps.append(seconds)
            if seconds == 3600:
                raise Idle
            if len(sleeps) > 20:
                raise AssertionError("the program never finished")

        monkeypatch.setattr(script.time, "sleep", sleep)
        with pytest.raises(Idle):
            script.main()
    finally:
        server.shutdown()
        server.server_close()
    assert set(sleeps[:-1]) <= {script.POLL_SECONDS}
    return capsys.readouterr().out.splitlines()


PATH = f"/api/v1/nodes/{NODE}"
POINTER = "/metadata/labels/nvidia.com~1gpu.deploy.device-plugin"


def release(version: int) -> list[dict]:
    return [
        {"op": "test", "path": "/metadata/resourceVersion", "value": str(version)},
        {"op": "test", "path": POINTER, "value": "false"},
        {"op": "replace", "path": POINTER, "value": "true"},
    ]


def removal(version: int) -> list[dict]:
    return [
        {"op": "test", "path": "/metadata/resourceVersion", "value": str(version)},
        {"op": "remove", "path": "/spec/taints/1"},
    ]


def test_the_remover_starts_the_device_plugin_once_the_layout_is_applied(tls, monkeypatch, capsys):
    # The NodePool labels the node device-plugin=false; the MIG manager keeps it through its
    # reconfiguration and reboot (reconfigure.go L581-593), so the node advertises no GPU, and
    # Karpenter charges the uninitialized node its overlay, until the remover starts the plugin.
    api = FakeAPI(
        [node(1, "pending", None, "false"), node(2, "success", None, "false")], plugin_gpus="56"
    )
    out = run(api, tls, monkeypatch, capsys)
    patch = ("PATCH", PATH, "Bearer sekret", "application/json-patch+json")
    assert api.log == [
        ("GET", PATH, "Bearer sekret"),
        ("GET", PATH, "Bearer sekret"),
        (*patch, release(2)),
        ("GET", PATH, "Bearer sekret"),  # the plugin's pod is starting
        ("GET", PATH, "Bearer sekret"),  # it has registered: 56
        (*patch, removal(4)),
    ]
    assert api.node["metadata"]["labels"][PLUGIN] == "true"
    assert api.node["spec"]["taints"] == [GPU_TAINT]
    assert out == [
        f"{NODE}: waiting: nvidia.com/mig.config.state is 'pending', not 'success'",
        f"{NODE}: set nvidia.com/gpu.deploy.device-plugin=true",
        f"{NODE}: waiting: nvidia.com/gpu is 0, not 56 (instance type p4d.24xlarge)",
        f"{NODE}: removed nvidia.com/mig.config.state:NoSchedule",
    ]


def test_a_concurrent_change_fails_the_release_and_the_remover_reads_again(
    tls, monkeypatch, capsys
):
    api = FakeAPI([node(5, "success", None, "false")], race=1, plugin_gpus="56")
    out = run(api, tls, monkeypatch, capsys)
    assert [(e[0], e[-1] if e[0] == "PATCH" else None) for e in api.log] == [
        ("GET", None),
        ("PATCH", release(5)),
        ("GET", None),
        ("PATCH", release(6)),
        ("GET", None),
        ("GET", None),
        ("PATCH", removal(8)),
    ]
    assert out == [
        f"{NODE}: HTTP Error 422: Unprocessable Entity; retrying",
        f"{NODE}: set nvidia.com/gpu.deploy.device-plugin=true",
        f"{NODE}: waiting: nvidia.com/gpu is 0, not 56 (instance type p4d.24xlarge)",
        f"{NODE}: removed nvidia.com/mig.config.state:NoSchedule",
    ]


def test_the_remover_waits_then_removes_only_its_taint(tls, monkeypatch, capsys):
    # A node whose layout is applied and whose device plugin someone else started: the remover
    # leaves the label alone and waits for the capacity, as before.
    api = FakeAPI([node(2, "success", "8", None), node(3, "success", "56", None)])
    out = run(api, tls, monkeypatch, capsys)
    path = f"/api/v1/nodes/{NODE}"
    assert api.log == [
        ("GET", path, "Bearer sekret"),
        ("GET", path, "Bearer sekret"),
        (
            "PATCH",
            path,
            "Bearer sekret",
            "application/json-patch+json",
            [
                {"op": "test", "path": "/metadata/resourceVersion", "value": "3"},
                {"op": "remove", "path": "/spec/taints/1"},
            ],
        ),
    ]
    assert api.node["spec"]["taints"] == [GPU_TAINT]
    assert out == [
        f"{NODE}: waiting: nvidia.com/gpu is 8, not 56 (instance type p4d.24xlarge)",
        f"{NODE}: removed nvidia.com/mig.config.state:NoSchedule",
    ]


def test_a_concurrent_change_fails_the_patch_and_the_remover_reads_again(tls, monkeypatch, capsys):
    api = FakeAPI([node(7, "success", "56", None)], race=1)
    out = run(api, tls, monkeypatch, capsys)
    assert [(e[0], e[-1] if e[0] == "PATCH" else None) for e in api.log] == [
        ("GET", None),
        ("PATCH", [
            {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
            {"op": "remove", "path": "/spec/taints/1"},
        ]),
        ("GET", None),
        ("PATCH", [
            {"op": "test", "path": "/metadata/resourceVersion", "value": "8"},
            {"op": "remove", "path": "/spec/taints/1"},
        ]),
    ]  # fmt: skip
    assert api.node["spec"]["taints"] == [GPU_TAINT]
    assert out[0] == f"{NODE}: HTTP Error 422: Unprocessable Entity; retrying"
    assert out[1:] == [f"{NODE}: removed nvidia.com/mig.config.state:NoSchedule"]


def test_a_restarted_remover_finds_no_taint_and_idles(tls, monkeypatch, capsys):
    done = node(9, "success", "56", None)
    done["spec"]["taints"] = [dict(GPU_TAINT)]
    api = FakeAPI([done])
    out = run(api, tls, monkeypatch, capsys)
    assert [e[0] for e in api.log] == ["GET"]
    assert out == [f"{NODE}: no nvidia.com/mig.config.state:NoSchedule taint; nothing to do"]


# --- issue 30: the hold put back, and a stuck node replaced ---------------------------------------


def hold(version: int) -> list[dict]:
    return [
        {"op": "test", "path": "/metadata/resourceVersion", "value": str(version)},
        {"op": "add", "path": POINTER, "value": "false"},
    ]


class Operator(FakeAPI):
    """``FakeAPI`` plus other writers: ``edits[n]`` changes the node's labels just before the
    n-th GET (the GPU Operator, the MIG manager)."""

    def __init__(self, first: dict, edits: dict, **kwargs):
        super().__init__([first], **kwargs)
        self.edits, self.total = edits, 0

    def get(self) -> dict:
        self.total += 1
        if self.total in self.edits:
            self.node["metadata"]["labels"].update(self.edits[self.total])
            version = int(self.node["metadata"]["resourceVersion"]) + 1
            self.node["metadata"]["resourceVersion"] = str(version)
            self.steps, self.gets = [copy.deepcopy(self.node)], 0
        return super().get()


def test_the_remover_puts_back_the_hold_the_operator_removed(tls, monkeypatch, capsys):
    # The GPU Operator stripped the label of a node not yet gpu.present (nodelabeling_controller
    # .go L258-261), then set it "true" (state_manager.go L476-484): put back both times, and
    # released only once the MIG manager reports success.
    api = Operator(
        node(1, None, None, None),
        {2: {PLUGIN: "true"}, 4: {"nvidia.com/mig.config.state": "success"}},
        plugin_gpus="56",
    )
    out = run(api, tls, monkeypatch, capsys)
    patches = [e[-1] for e in api.log if e[0] == "PATCH"]
    assert patches == [hold(1), hold(3), release(5), removal(7)]
    assert out == [
        f"{NODE}: set nvidia.com/gpu.deploy.device-plugin=false (layout not applied yet)",
        f"{NODE}: set nvidia.com/gpu.deploy.device-plugin=false (layout not applied yet)",
        f"{NODE}: waiting: nvidia.com/mig.config.state is None, not 'success'",
        f"{NODE}: set nvidia.com/gpu.deploy.device-plugin=true",
        f"{NODE}: waiting: nvidia.com/gpu is 0, not 56 (instance type p4d.24xlarge)",
        f"{NODE}: removed nvidia.com/mig.config.state:NoSchedule",
    ]


def replaced(api: FakeAPI, message: str) -> None:
    (post,) = [e for e in api.log if e[0] == "POST"]
    assert post[:3] == ("POST", "/api/v1/namespaces/default/events", "application/json")
    assert post[3] == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{NODE}.mignodestuck.{NOW}", "namespace": "default"},
        "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": "n0de"},
        "type": "Warning",
        "reason": "MIGNodeStuck",
        "message": message,
        "source": {"component": "eks-gpu-platform-mig-ready", "host": NODE},
        "firstTimestamp": "2027-01-15T08:00:00Z",
        "lastTimestamp": "2027-01-15T08:00:00Z",
        "count": 1,
    }
    assert api.log[-1] == (
        "DELETE",
        "/apis/karpenter.sh/v1/nodeclaims/mig-abcde",
        "application/json",
        {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "c1a1m"}},
    )


def test_a_failed_layout_gets_the_node_replaced_at_once(tls, monkeypatch, capsys):
    # mig-parted sets "failed" (reconfigure.go L133-160, L207-236), then waits for the next
    # change of nvidia.com/mig.config (cmd/nvidia-mig-manager/main.go L436-446): no point
    # waiting for the deadline.
    api = FakeAPI([node(4, "failed", None)])
    out = run(api, tls, monkeypatch, capsys)
    message = (
        "MIG layout not applied: the MIG manager set nvidia.com/mig.config.state=failed; "
        "deleting NodeClaim mig-abcde"
    )
    replaced(api, message)
    assert [e[0] for e in api.log] == ["GET", "POST", "DELETE"]
    assert out == [f"{NODE}: MIGNodeStuck: {message}"]


def test_a_node_past_its_deadline_gets_replaced(tls, monkeypatch, capsys):
    # A stuck "pending" (reconfigure.go L170-172) or a count that never matches: after the
    # deadline, counted from the node's creation, so a restarted remover keeps the clock.
    api = FakeAPI([node(5, "success", "48", None)])
    out = run(api, tls, monkeypatch, capsys, deadline=60)
    message = (
        "MIG layout not applied: still waiting after 60s (deadline 60s): nvidia.com/gpu is 48, "
        "not 56 (instance type p4d.24xlarge); deleting NodeClaim mig-abcde"
    )
    replaced(api, message)
    assert out == [f"{NODE}: MIGNodeStuck: {message}"]


def test_a_node_before_its_deadline_is_not_replaced(tls, monkeypatch, capsys):
    api = FakeAPI([node(5, "success", "48", None), node(6, "success", "56", None)])
    out = run(api, tls, monkeypatch, capsys, deadline=61)
    assert [e[0] for e in api.log] == ["GET", "GET", "PATCH"]
    assert out[-1] == f"{NODE}: removed nvidia.com/mig.config.state:NoSchedule"


def test_a_node_no_nodeclaim_owns_is_reported_not_replaced(tls, monkeypatch, capsys):
    orphan = node(5, "failed", None)
    orphan["metadata"]["ownerReferences"] = []
    api = FakeAPI([orphan])
    out = run(api, tls, monkeypatch, capsys)
    assert [e[0] for e in api.log] == ["GET", "POST"]
    assert out == [
        f"{NODE}: MIGNodeStuck: MIG layout not applied: the MIG manager set "
        "nvidia.com/mig.config.state=failed; no NodeClaim owns it; not replaced"
    ]


def test_a_device_plugin_that_won_the_race_is_reported_once_and_held(tls, monkeypatch, capsys):
    # The operator set "true" and the plugin registered whole GPUs before the remover's poll:
    # the hold goes back (the DaemonSet controller then deletes the plugin's pod) and a Warning
    # Event says the node was charged whole GPUs meanwhile; the next poll reports nothing again.
    api = Operator(node(1, None, "8", "true"), {3: {"nvidia.com/mig.config.state": "failed"}})
    out = run(api, tls, monkeypatch, capsys)
    posts = [e[3] for e in api.log if e[0] == "POST"]
    assert [(p["reason"], p["metadata"]["name"], p["message"]) for p in posts] == [
        (
            "MIGHoldLost",
            f"{NODE}.migholdlost.{NOW}",
            "the device plugin advertised nvidia.com/gpu=8 before the MIG layout was applied",
        ),
        (
            "MIGNodeStuck",
            f"{NODE}.mignodestuck.{NOW}",
            "MIG layout not applied: the MIG manager set nvidia.com/mig.config.state=failed; "
            "deleting NodeClaim mig-abcde",
        ),
    ]
    assert [e[-1] for e in api.log if e[0] == "PATCH"] == [hold(1)]
    assert out[:2] == [
        f"{NODE}: MIGHoldLost: the device plugin advertised nvidia.com/gpu=8 before the MIG "
        "layout was applied",
        f"{NODE}: set nvidia.com/gpu.deploy.device-plugin=false (layout not applied yet)",
    ]
