"""The recording monitor answers a registration whose outputs are its inputs with the request's
own properties (``RecordingMonitor._echo``): the program sees the same outputs as from the
stock monitor's answer, which serializes them again, and only plain JSON takes the short cut.
"""

import threading

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi.runtime import mocks as sdk_mocks

from eks_gpu_platform.offline.mock_monitor import RecordingMonitor

PLAIN = {
    "name": "cm",
    "labels": {"a": "1", "b": ""},
    "nested": {"n": 3, "f": 2.5, "t": True, "none": None, "list": [1, None, "x", {"k": []}]},
}


def program(seen: dict, data: dict, secret: bool = False):
    def run():
        value = pulumi.Output.secret(data) if secret else data
        cm = k8s.apiextensions.CustomResource(
            "cm", api_version="test.example/v1", kind="Thing", metadata={"name": "cm"}, spec=value
        )
        component = pulumi.ComponentResource("test:index:Thing", "thing")
        cm.spec.apply(lambda d: seen.__setitem__("data", d))
        cm.metadata.apply(lambda m: seen.__setitem__("metadata", m))
        pulumi.Output.all(cm.id, component.urn).apply(lambda v: seen.__setitem__("ids", v))

    return run


def outputs(run_program, data, secret=False):
    seen: dict = {}
    recording = run_program(program(seen, data, secret))
    # Registration order varies from run to run (the engine is asynchronous): sorted.
    regs = sorted((r.name, r.type, r.outputs, r.inputs, r.id) for r in recording.resources)
    return seen, regs


@pytest.mark.parametrize("secret", [False, True], ids=["plain", "secret"])
def test_the_program_sees_the_stock_monitors_outputs(run_program, monkeypatch, secret):
    fast = outputs(run_program, PLAIN, secret)
    monkeypatch.setattr(RecordingMonitor, "_echo", lambda self, request: None)
    stock = outputs(run_program, PLAIN, secret)
    assert fast == stock
    nested = {"n": 3, "f": 2.5, "t": True, "list": [1, None, "x", {"k": []}]}
    assert fast[0]["data"]["nested"] == nested


def test_plain_json_is_answered_without_serializing_it_again(run_program, monkeypatch):
    # The stock monitor serializes the mocks' state with _sync_await on its worker thread
    # (pulumi/runtime/mocks.py MockMonitor.RegisterResource, 3.272.0); the echo does not.
    original = sdk_mocks._sync_await
    off_main: list[str] = []

    def recording(awaitable):
        if threading.current_thread() is not threading.main_thread():
            off_main.append(getattr(awaitable, "__qualname__", type(awaitable).__name__))
        return original(awaitable)

    monkeypatch.setattr(sdk_mocks, "_sync_await", recording)
    outputs(run_program, PLAIN)
    assert off_main == []


def test_a_secret_takes_the_stock_monitors_path(run_program, monkeypatch):
    stock_calls: list[str] = []
    original = sdk_mocks.MockMonitor.RegisterResource

    def recording(self, request):
        stock_calls.append(request.type)
        return original(self, request)

    monkeypatch.setattr(sdk_mocks.MockMonitor, "RegisterResource", recording)
    outputs(run_program, PLAIN, secret=True)
    assert stock_calls == ["pulumi:pulumi:Stack", "kubernetes:test.example/v1:Thing"]
