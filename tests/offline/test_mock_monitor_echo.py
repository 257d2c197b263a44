"""The recording monitor answers a registration whose outputs are its inputs with the request's
own properties (``RecordingMonitor._echo``): the program sees the same outputs as from the
stock monitor's answer, which serializes them again, and only plain JSON takes the short cut.
``mocks.run`` runs the monitor's calls on the program's thread, the stock monitor's steps that
need an event loop of their own on a thread of their own (``mock_monitor.off_loop``).
"""

import asyncio
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
    # The stock monitor serializes the mocks' state with _sync_await (pulumi/runtime/mocks.py
    # MockMonitor.RegisterResource L330, 3.272.0); the echo does not.
    original = sdk_mocks._sync_await
    serialized: list[str] = []

    def recording(awaitable):
        name = getattr(awaitable, "__qualname__", type(awaitable).__name__)
        if name == "serialize_properties":
            serialized.append(name)
        return original(awaitable)

    monkeypatch.setattr(sdk_mocks, "_sync_await", recording)
    outputs(run_program, PLAIN)
    assert serialized == []


def calls_on(monkeypatch, cls, method: str) -> list[tuple[str, str]]:
    """(request type, thread name) of each call of ``cls.method`` while a program runs."""
    calls: list[tuple[str, str]] = []
    original = getattr(cls, method)

    def recording(self, request):
        calls.append((request.type, threading.current_thread().name))
        return original(self, request)

    monkeypatch.setattr(cls, method, recording)
    return calls


def test_the_monitor_answers_on_the_programs_thread(run_program, monkeypatch):
    # The SDK hands each call to an executor thread (run_in_executor, pulumi/runtime/
    # resource.py L1344-1346); for the run, the loop's executor calls run in place.
    calls = calls_on(monkeypatch, RecordingMonitor, "RegisterResource")
    outputs(run_program, PLAIN)
    main = threading.main_thread().name
    assert sorted(calls) == [
        ("kubernetes:test.example/v1:Thing", main),
        ("pulumi:pulumi:Stack", main),
        ("test:index:Thing", main),
    ]
    # Nothing of the run is left on the loop.
    assert "run_in_executor" not in vars(asyncio.get_event_loop())


def test_the_stock_monitors_steps_run_off_the_programs_loop(run_program, monkeypatch):
    # A secret takes the stock path, whose _sync_await would pump the program's own loop
    # from inside the call (pulumi/runtime/sync_await.py L36-63) on the program's thread.
    calls = calls_on(monkeypatch, sdk_mocks.MockMonitor, "RegisterResource")
    seen, _ = outputs(run_program, PLAIN, secret=True)
    assert sorted(calls) == [
        ("kubernetes:test.example/v1:Thing", "offline-monitor_0"),
        ("pulumi:pulumi:Stack", "offline-monitor_0"),
    ]
    assert seen["data"]["name"] == "cm"


def test_an_error_of_the_mocks_fails_the_run_as_before(run_program):
    # Strict mocks refuse an unmodelled type (RecordingMocks.new_resource): the error reaches
    # the program's run, as from the SDK's executor.
    def program():
        pulumi.CustomResource("test:index:Unmodelled", "thing", {})

    with pytest.raises(NotImplementedError) as raised:
        run_program(program)
    assert str(raised.value) == (
        "offline mocks: resource type 'test:index:Unmodelled' ('thing') is not modelled "
        "(strict mode); RecordingMocks(strict=False) renders it with generic outputs"
    )


def test_a_secret_takes_the_stock_monitors_path(run_program, monkeypatch):
    stock_calls: list[str] = []
    original = sdk_mocks.MockMonitor.RegisterResource

    def recording(self, request):
        stock_calls.append(request.type)
        return original(self, request)

    monkeypatch.setattr(sdk_mocks.MockMonitor, "RegisterResource", recording)
    outputs(run_program, PLAIN, secret=True)
    assert stock_calls == ["pulumi:pulumi:Stack", "kubernetes:test.example/v1:Thing"]
