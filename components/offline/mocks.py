"""Recording Pulumi mocks: the engine stand-in behind the offline render and the test suite.

``RecordingMocks`` answers resource registrations and invokes with realistic values (ARNs built
from the partition, region and a placeholder account; ids shaped like AWS ids; a kubeconfig).

The region is the one the real engine would use: an explicit ``aws.Provider``'s ``region`` for
the resources and invokes it serves, else the stack's ``aws:region`` (the default provider's). No
region at all is a ``SpecError`` naming ``aws:region``.

Strict mocks (the default; the test suite's) raise on resource types and invokes they do not
model: a silent ``{}`` would turn into ``arn:None:...`` far away. The render runs non-strict: an
unmodelled type gets generic outputs (its inputs, an id, an ARN of the real shape where known)
and is recorded in ``Recording.unmodelled``, which the render prints one notice line per type.
``RecordingMonitor`` (mock_monitor.py) also records what the stock monitor drops: parent,
dependencies, protect, provider and the outputs each component registers. The invokes:
mock_invokes.py; the resource types' outputs: mock_outputs.py; the account: mock_account.py.

``run(program, ...)`` runs a Pulumi program under fresh mocks and returns a ``Recording``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi import log as _sdk_log
from pulumi.runtime import resource as _sdk_resource
from pulumi.runtime import settings
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.sync_await import _ensure_event_loop

from ..cluster import access_wait
from ..config import partition_for_region
from ..spec import SpecError
from .mock_account import MockAccount
from .mock_invokes import MockInvokes
from .mock_monitor import RecordingMonitor
from .mock_outputs import GLOBAL_SERVICES, KNOWN_ARNS, MockOutputs
from .mock_types import DIRECTIONS, Registration, Scope, _hex, region_short_code

__all__ = [
    "DIRECTIONS",
    "GLOBAL_SERVICES",
    "KNOWN_ARNS",
    "MISSING_REGION",
    "PLACEHOLDER_ACCOUNT_ID",
    "MockOutputs",
    "Recording",
    "RecordingMocks",
    "Registration",
    "Scope",
    "region_short_code",
    "run",
]


PLACEHOLDER_ACCOUNT_ID = "123456789012"
# The same line PlatformConfig.load gives when neither the stack nor the code names a region.
MISSING_REGION = "aws:region: is required; set it with `pulumi config set aws:region`"


class RecordingMocks(MockOutputs, MockAccount, MockInvokes, pulumi.runtime.Mocks):
    """Realistic answers for every resource type and invoke this project uses.

    ``region``/``partition``: the default provider's (the stack's ``aws:region``), or None when
    the stack sets none. ``strict``: raise on unmodelled types and invokes (the test suite), or
    answer them generically and record them in ``unmodelled`` (the render).
    """

    def __init__(
        self,
        *,
        region: str | None,
        partition: str | None = None,
        account_id: str = PLACEHOLDER_ACCOUNT_ID,
        strict: bool = True,
    ):
        self.region = region or None
        self.partition = partition or (partition_for_region(region) if region else None)
        self.account_id = account_id
        self.strict = strict
        self.calls: list[tuple[str, dict[str, Any]]] = []
        # Explicit AWS providers ("<urn>::<id>" -> their region input), filled by the monitor.
        self.provider_regions: dict[str, str | None] = {}
        # Unmodelled type or invoke token -> "resource" or "invoke", in first-seen order.
        self.unmodelled: dict[str, str] = {}
        # The children of remote components the mocks model (type, name, inputs after the
        # component's transforms ran on them, as the engine runs them): mock_outputs.py.
        self.remote_children: list[tuple[str, str, dict[str, Any]]] = []
        self._builder_cache: dict[Scope, dict[str, Callable]] = {}
        # The inputs the SDK's MockMonitor deserialized for the registration this thread is
        # answering (RecordingMonitor records them instead of deserializing them again).
        self.answering = threading.local()

    # -- regions ----------------------------------------------------------------------------

    def register_provider(self, ref: str, inputs: Mapping[str, Any]) -> None:
        """An explicit ``aws.Provider`` registered as ``ref``: remember its region."""
        region = inputs.get("region")
        self.provider_regions[ref] = region if isinstance(region, str) and region else None

    def scope(self, provider: str | None, region: Any = None) -> Scope:
        """The scope of a resource or invoke served by ``provider`` (a ``<urn>::<id>`` ref).

        As pulumi-aws resolves it: the resource's or invoke's own ``region`` argument (v7,
        "Defaults to the Region set in the provider configuration": pulumi_aws/get_region.py),
        else its explicit provider's ``region``, else the default provider's, which reads the
        stack's ``aws:region`` (pulumi_aws/config/vars.py ``region``). Explicit providers do not
        read stack configuration (pulumi_aws/provider.py builds their inputs from arguments).
        """
        if not (isinstance(region, str) and region):
            if provider and provider in self.provider_regions:
                region = self.provider_regions[provider]
                if region is None:
                    provider_name = provider.split("::")[3] if provider.count("::") >= 4 else ""
                    raise SpecError.from_lines(
                        [f"{provider_name}: this AWS provider has no region; pass region=..."]
                    )
            else:
                region = self.region
        if not region:
            raise SpecError.from_lines([MISSING_REGION])
        if region == self.region and self.partition:
            return Scope(region, self.partition, self.account_id)
        return Scope(region, partition_for_region(region), self.account_id)

    def _unmodelled(self, token: str, kind: str, message: str) -> None:
        if self.strict:
            raise NotImplementedError(message)
        self.unmodelled.setdefault(token, kind)

    # -- resources --------------------------------------------------------------------------

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.answering.inputs = args.inputs
        typ, name, inputs = args.typ, args.name, dict(args.inputs)
        if not args.custom:
            return self._component(typ, name, inputs, args.provider, args.transforms)
        if typ.startswith("kubernetes:") or typ.startswith("pulumi:providers:"):
            return f"{name}-id", inputs
        scope = self.scope(args.provider, inputs.get("region")) if typ.startswith("aws:") else None
        builder = self._builders(scope).get(typ) if scope else None
        if builder is not None:
            return builder(name, inputs)
        self._unmodelled(
            typ,
            "resource",
            f"offline mocks: resource type {typ!r} ({name!r}) is not modelled (strict mode); "
            "RecordingMocks(strict=False) renders it with generic outputs",
        )
        if scope is not None:
            rid, state = self._generic_aws(scope, typ, name, inputs)
            return args.resource_id or rid, state
        return args.resource_id or f"{name}-{_hex(name, 7)}", inputs


@dataclass
class Recording:
    """Everything a program registered, in registration order, plus its stack outputs."""

    resources: list[Registration]
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Resource types and invoke tokens the mocks answered generically (non-strict runs only).
    unmodelled: dict[str, str] = field(default_factory=dict)
    # Modelled children of remote components: (type, name, inputs after transforms).
    remote_children: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    # What the program logged as warnings (``pulumi.log.warn``), sorted, each once.
    warnings: list[str] = field(default_factory=list)
    # The server of each access review the program's access wait made (cluster/access_wait.py).
    api_probes: list[str] = field(default_factory=list)
    # Existing resources the program read (``Resource.get``): (type, name, id).
    reads: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def notices(self) -> list[str]:
        """One line per unmodelled resource type or invoke, sorted."""
        how = {"resource": "rendered with generic outputs", "invoke": "answered with its arguments"}
        return [
            f"notice: {token} is not modelled by the offline mocks; {how[kind]}"
            for token, kind in sorted(self.unmodelled.items())
        ]

    def of_type(self, typ: str) -> list[Registration]:
        return [r for r in self.resources if r.type == typ]

    def named(self, name: str) -> Registration:
        matches = [r for r in self.resources if r.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources named {name!r}")
        return matches[0]

    def children_of(self, urn: str) -> list[Registration]:
        return [r for r in self.resources if r.parent == urn]


def run(
    program: Callable[[], Any],
    *,
    project: str,
    stack: str,
    config: Mapping[str, Any],
    region: str | None,
    partition: str | None = None,
    account_id: str = PLACEHOLDER_ACCOUNT_ID,
    secret_keys: list[str] | None = None,
    strict: bool = True,
    preview: bool = False,
) -> Recording:
    """Run ``program`` under fresh recording mocks and return what it registered.

    ``config`` maps full keys (``"<project>:cluster"``, ``"aws:region"``) to values; structured
    values are passed as JSON, as the Pulumi CLI does. ``region``: the default AWS provider's
    (the stack's ``aws:region``; None when it has none). ``strict``: see ``RecordingMocks``.
    ``preview``: what ``pulumi.runtime.is_dry_run()`` answers (the render runs as a preview).
    """
    settings.reset_options()
    mocks = RecordingMocks(region=region, partition=partition, account_id=account_id, strict=strict)
    monitor = RecordingMonitor(mocks)
    # The mock engine hands every log request to a ``logging.Logger``, warnings as
    # ``logger.warning(message)`` (pulumi/runtime/mocks.py ``MockEngine.Log``, 3.272.0): this
    # one keeps them for the summary and passes them on to the root logger, as before.
    logger = logging.getLogger(f"{__name__}.program")
    kept = _KeptWarnings()
    logger.addHandler(kept)
    # The SDK logs a debug message at each step of every registration and invoke: ``log.debug``
    # builds an ``engine_pb2.LogRequest`` (for a resource, on a task awaiting its URN) and hands
    # it to the engine (pulumi/log.py ``debug`` L40-56 and ``_log``, 3.272.0), which for the
    # mocks is ``MockEngine.Log``: ``logger.debug(request.message)`` (pulumi/runtime/mocks.py
    # L398-400), on the logger given here. Where that logger drops debug records, the run
    # drops the messages before their requests are built, and for a resource the task that
    # awaits its URN (the SDK's modules call ``log.debug`` through the module: ``from .. import
    # log``), from ``set_mocks`` on (it registers the stack); a logger enabled for debug when
    # the run starts gets every one of them.
    with _run_scope(logger):
        pulumi.runtime.set_mocks(
            mocks, project=project, stack=stack, preview=preview, monitor=monitor, logger=logger
        )
        pulumi.runtime.set_all_config(
            {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()},
            secret_keys or [],
        )
        outputs: dict[str, Any] = {}
        secret: set[str] = set()

        @pulumi.runtime.test
        def execute() -> Any:
            program()
            root = settings.get_root_resource()
            exported = dict(getattr(root, "outputs", {}) or {})

            async def collect(name: str, value: Any) -> None:
                output = pulumi.Output.from_input(value)
                if await output.is_secret():
                    secret.add(name)
                outputs[name] = await output.future()

            return pulumi.Output.all(
                *[
                    pulumi.Output.from_input(asyncio.ensure_future(collect(n, v)))
                    for n, v in exported.items()
                ]
            )

        # The mocks stand in for the API server the access wait calls (cluster/access_wait.py).
        saved_transport, access_wait.TRANSPORT = access_wait.TRANSPORT, mocks.access_transport()
        try:
            execute()
        finally:
            access_wait.TRANSPORT = saved_transport
            logger.removeHandler(kept)
            # Leave no state for the next run in this process (tests run many programs).
            settings.reset_options()
        return Recording(
            resources=list(monitor.registrations.values()),
            outputs=outputs,
            secret_outputs=secret,
            calls=mocks.calls,
            unmodelled=dict(mocks.unmodelled),
            remote_children=list(mocks.remote_children),
            warnings=sorted(set(kept.messages)),
            api_probes=list(getattr(mocks, "api_probes", [])),
            reads=list(monitor.reads),
        )


class _KeptWarnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno == logging.WARNING:
            self.messages.append(record.getMessage())


def _run_in_place(
    loop: asyncio.AbstractEventLoop, executor: Any, func: Callable[..., Any], *args: Any
) -> asyncio.Future:
    """``loop.run_in_executor(executor, func, *args)``, run now on this thread: a future
    holding what ``func`` returned or raised, as the executor's would."""
    future = loop.create_future()
    try:
        future.set_result(func(*args))
    except Exception as err:  # handed to the awaiting task, as an executor does
        future.set_exception(err)
    return future


@contextlib.contextmanager
def _run_scope(logger: logging.Logger) -> Iterator[None]:
    """What a run changes on the SDK and the event loop, undone after it.

    - The SDK's ``log.debug``: dropped unless ``logger`` keeps debug records (the mock
      engine's logger).
    - The SDK's stack trace of a registration: empty. Every registration walks the whole
      Python stack for the request's source position and stack trace
      (pulumi/runtime/resource.py ``_get_stack_trace``, called from ``register_resource`` and
      ``read_resource``), which only the real engine reads: the mock monitor
      (pulumi/runtime/mocks.py ``MockMonitor.RegisterResource``) and the recording use
      neither. The SDK gets an empty trace, as it does itself when it finds no user frame;
      ``_get_source_position`` then answers None.
    - The loop's executor calls run in place. The SDK hands every call to the monitor to an
      executor thread (``run_in_executor`` on the running loop: pulumi/runtime/resource.py
      L1344-1346 registrations, L1458 their outputs, pulumi/runtime/invoke.py L346 invokes and
      L523 method calls, 3.272.0), because a real engine's answer is a gRPC round trip. The
      recording monitor answers in memory, and on the loop's own thread (the loop the SDK's
      ``_sync_await`` runs: sync_await.py ``_ensure_event_loop``) its answer is ready at once:
      the hand-over, a thread switch each way, is most of what a call costs. The executor
      calls of that loop run in place and return a finished future; the monitor's steps that
      need a loop of their own still run on a thread (mock_monitor.py ``off_loop``).
    - The loop's task factory records each task the run creates (the SDK's ``ensure_future``
      calls and the program's), and the run's tasks still pending after it are cancelled: none
      runs in the next run on this loop (tests run many programs in one process). A task of
      the default factory is ``asyncio.Task(coro, loop=loop, context=context)``
      (asyncio/base_events.py ``create_task``, 3.11). Asking the loop for its tasks instead
      (``asyncio.all_tasks``) walks every task the process has not freed: with the collector
      off, every task of every earlier run (95,000 late in a test worker, 33 ms a call).
    """
    saved_debug = _sdk_log.debug
    if not logger.isEnabledFor(logging.DEBUG):
        _sdk_log.debug = _dropped_debug
    saved_stack_trace = getattr(_sdk_resource, "_get_stack_trace", None)
    if saved_stack_trace is not None:
        _sdk_resource._get_stack_trace = _empty_stack_trace
    loop = _ensure_event_loop()
    loop.run_in_executor = functools.partial(_run_in_place, loop)  # type: ignore[method-assign]
    factory = loop.get_task_factory()
    tasks: list[asyncio.Task] = []
    loop.set_task_factory(functools.partial(_tracked_task, tasks, factory))
    try:
        yield
    finally:
        loop.set_task_factory(factory)
        del loop.run_in_executor
        if saved_stack_trace is not None:
            _sdk_resource._get_stack_trace = saved_stack_trace
        _sdk_log.debug = saved_debug
        if not loop.is_closed() and not loop.is_running():
            for task in tasks:
                if not task.done():
                    task.cancel()


def _tracked_task(
    tasks: list[asyncio.Task],
    factory: Callable[..., asyncio.Task] | None,
    loop: asyncio.AbstractEventLoop,
    coro: Any,
    context: Any = None,
) -> asyncio.Task:
    """``factory``'s task (the default one's for None), appended to ``tasks``."""
    if factory is None:
        task = asyncio.Task(coro, loop=loop, context=context)
    elif context is None:
        task = factory(loop, coro)
    else:
        task = factory(loop, coro, context=context)
    tasks.append(task)
    return task


def _dropped_debug(
    msg: str, resource: Any = None, stream_id: Any = None, ephemeral: Any = None
) -> None:
    """``pulumi.log.debug`` for a run whose logger drops debug records."""


def _empty_stack_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()
