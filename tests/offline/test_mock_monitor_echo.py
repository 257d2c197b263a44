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


# -- invokes ------------------------------------------------------------------------------------


def invoking(seen: dict):
    """A program that invokes the partition, the zones (with an argument) and the identity."""

    def run():
        import pulumi_aws as aws

        seen["partition"] = aws.get_partition()
        seen["zones"] = aws.get_availability_zones(state="available")
        seen["identity"] = aws.get_caller_identity()

    return run


def invoked(run_program) -> tuple[dict, list]:
    seen: dict = {}
    recording = run_program(invoking(seen))
    answers = {
        "partition": (seen["partition"].partition, seen["partition"].dns_suffix),
        "zones": (seen["zones"].names, seen["zones"].zone_ids, seen["zones"].state),
        "identity": (seen["identity"].account_id, seen["identity"].arn),
    }
    return answers, recording.calls


def test_an_invoke_of_plain_json_gets_the_stock_monitors_answer_on_the_programs_thread(
    run_program, monkeypatch
):
    calls = []
    original = RecordingMonitor.Invoke

    def recording(self, request):
        calls.append((request.tok, threading.current_thread().name))
        return original(self, request)

    monkeypatch.setattr(RecordingMonitor, "Invoke", recording)
    fast = invoked(run_program)
    main = threading.main_thread().name
    assert sorted(calls) == [
        ("aws:index/getAvailabilityZones:getAvailabilityZones", main),
        ("aws:index/getCallerIdentity:getCallerIdentity", main),
        ("aws:index/getPartition:getPartition", main),
    ]
    # The stock monitor answers the same invokes (on its thread, pulumi/runtime/mocks.py
    # MockMonitor.Invoke L240-274, 3.272.0) with the same values, asking the mocks the same.
    stock_threads = calls_on_invoke(monkeypatch)
    monkeypatch.setattr(RecordingMonitor, "_invoke_in_place", lambda self, request: None)
    stock = invoked(run_program)
    assert fast == stock
    assert fast[0] == {
        "partition": ("aws", "amazonaws.com"),
        "zones": (
            ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"],
            ["usw2-az1", "usw2-az2", "usw2-az3", "usw2-az4"],
            "available",
        ),
        "identity": ("123456789012", "arn:aws:iam::123456789012:user/offline-render"),
    }
    assert sorted(stock_threads) == [
        "offline-monitor_0",
        "offline-monitor_0",
        "offline-monitor_0",
    ]


def calls_on_invoke(monkeypatch) -> list[str]:
    """The thread of each call of the stock monitor's ``Invoke``."""
    threads: list[str] = []
    original = sdk_mocks.MockMonitor.Invoke

    def recording(self, request):
        threads.append(threading.current_thread().name)
        return original(self, request)

    monkeypatch.setattr(sdk_mocks.MockMonitor, "Invoke", recording)
    return threads


def failures_in_place_and_stock(run_program, monkeypatch, call) -> tuple:
    """What the invoking program raises with the mocks' ``call`` replaced by ``call``: invokes
    answered in place, then by the stock monitor."""
    from eks_gpu_platform.offline.mocks import RecordingMocks

    monkeypatch.setattr(RecordingMocks, "call", call)
    with pytest.raises(Exception) as fast:
        run_program(invoking({}))
    monkeypatch.setattr(RecordingMonitor, "_invoke_in_place", lambda self, request: None)
    with pytest.raises(Exception) as stock:
        run_program(invoking({}))
    return fast.value, stock.value


def test_an_invoke_the_mocks_refuse_fails_the_run_as_before(run_program, monkeypatch):
    def refuse(self, args):
        raise RuntimeError(f"refused {args.token}")

    fast, stock = failures_in_place_and_stock(run_program, monkeypatch, refuse)
    assert type(fast) is type(stock) is RuntimeError
    assert str(fast) == str(stock) == "refused aws:index/getPartition:getPartition"


def test_check_failures_of_the_mocks_reach_the_program_as_from_the_stock_monitor(
    run_program, monkeypatch
):
    def failing(self, args):
        return ({}, [("name", "no such region")])

    fast, stock = failures_in_place_and_stock(run_program, monkeypatch, failing)
    assert type(fast) is type(stock)
    assert str(fast) == str(stock)
    assert "no such region" in str(fast)


# -- the SDK's debug messages -------------------------------------------------------------------


def test_the_sdks_debug_messages_reach_a_logger_enabled_for_them(run_program, caplog):
    # MockEngine.Log hands them to the run's logger (pulumi/runtime/mocks.py L398-400); the
    # messages are pulumi/runtime/resource.py's and stack.py's (3.272.0), from set_mocks's
    # stack registration on.
    with caplog.at_level("DEBUG", logger="eks_gpu_platform.offline.mocks.program"):
        outputs(run_program, PLAIN)
    debug = [r.getMessage() for r in caplog.records if r.levelname == "DEBUG"]
    stack = "urn:pulumi:test::eks-gpu-platform::pulumi:pulumi:Stack"
    assert sorted(set(debug)) == sorted(
        {
            "registering resource: ty=pulumi:pulumi:Stack, name=eks-gpu-platform-test, "
            "custom=False, remote=False",
            "registering resource: ty=kubernetes:test.example/v1:Thing, name=cm, custom=True, "
            "remote=False",
            "registering resource: ty=test:index:Thing, name=thing, custom=False, remote=False",
            "beginning rpc register resource",
            "beginning rpc register resource outputs",
            "resource registration prepared: ty=pulumi:pulumi:Stack, name=eks-gpu-platform-test",
            "resource registration prepared: ty=kubernetes:test.example/v1:Thing, name=cm",
            "resource registration prepared: ty=test:index:Thing, name=thing",
            f"resource registration successful: ty=pulumi:pulumi:Stack, urn={stack}::"
            "eks-gpu-platform-test",
            f"register resource outputs prepared: urn={stack}::eks-gpu-platform-test",
            f"resource registration successful: urn={stack}::eks-gpu-platform-test",
            "resource registration successful: ty=kubernetes:test.example/v1:Thing, "
            f"urn={stack}$kubernetes:test.example/v1:Thing::cm",
            f"resource registration successful: ty=test:index:Thing, urn={stack}$test:index:Thing"
            "::thing",
            "Waiting for outstanding RPCs to complete",
            "RPCs successfully completed",
            "All outstanding outputs completed.",
            "run_pulumi_func completed",
        }
    )


def test_without_a_debug_logger_no_debug_message_is_built(run_program, monkeypatch, caplog):
    from pulumi.runtime.proto import engine_pb2

    built: list[int] = []
    original = engine_pb2.LogRequest

    def counting(*args, **kwargs):
        built.append(kwargs.get("severity"))
        return original(*args, **kwargs)

    monkeypatch.setattr(engine_pb2, "LogRequest", counting)
    with caplog.at_level("INFO", logger="eks_gpu_platform.offline.mocks.program"):
        outputs(run_program, PLAIN)
    assert engine_pb2.DEBUG not in built
    # Restored after the run: the SDK's own debug is in place again.
    import pulumi.log

    assert pulumi.log.debug.__module__ == "pulumi.log"


# -- the run's tasks ----------------------------------------------------------------------------


def test_a_task_the_run_leaves_pending_is_cancelled_and_the_loop_is_left_as_it_was(
    run_program, monkeypatch
):
    # Without asking the loop for all its tasks (asyncio.all_tasks walks every task the
    # process has not freed).
    def refuse(loop=None):
        raise AssertionError("asyncio.all_tasks called")

    monkeypatch.setattr(asyncio, "all_tasks", refuse)
    left: list[asyncio.Task] = []

    def program():
        k8s.apiextensions.CustomResource(
            "cm", api_version="test.example/v1", kind="Thing", metadata={"name": "cm"}
        )
        left.append(asyncio.ensure_future(asyncio.sleep(3600)))

    run_program(program)
    loop = asyncio.get_event_loop()
    assert loop.get_task_factory() is None
    [task] = left
    assert task.get_loop() is loop
    # cancel() was called: the task ends cancelled at the loop's next step.
    loop.run_until_complete(asyncio.sleep(0))
    assert task.cancelled()


def test_a_failed_run_leaves_no_task_pending(run_program):
    left: list[asyncio.Task] = []

    def program():
        left.append(asyncio.ensure_future(asyncio.sleep(3600)))
        raise RuntimeError("the program failed")

    with pytest.raises(RuntimeError, match="the program failed"):
        run_program(program)
    loop = asyncio.get_event_loop()
    assert loop.get_task_factory() is None
    loop.run_until_complete(asyncio.sleep(0))
    assert left[0].cancelled()
