"""``RecordingMonitor``: the SDK's mock monitor, plus a record of what the stock monitor drops
(parent, dependencies, protect, provider, aliases, timeouts and the outputs each component
registers), for the recording mocks (``mocks.run``).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from pulumi.runtime import mocks as _mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2, resource_pb2

from .mock_types import Registration

if TYPE_CHECKING:
    from .mocks import RecordingMocks

AWS_PROVIDER = "pulumi:providers:aws"
# What marks a value the SDK's serializer encodes specially, in a request's wire form: the key
# of a secret, asset, archive, resource reference or output value, and the unknown value
# (pulumi/runtime/rpc.py ``_special_sig_key`` and ``UNKNOWN``, 3.272.0). A request without
# either holds plain JSON only (``RecordingMonitor._echo``).
SPECIAL_MARKS = (rpc._special_sig_key.encode(), rpc.UNKNOWN.encode())
T = TypeVar("T")


def plain_json(properties: Any) -> bool:
    """Whether a request's ``Struct`` of properties holds plain JSON only (no
    ``SPECIAL_MARKS`` in its wire form)."""
    wire = properties.SerializeToString()
    return not any(mark in wire for mark in SPECIAL_MARKS)


# The thread that runs the stock monitor's steps that need an event loop of their own, when the
# monitor is called on the program's event-loop thread (``mocks.run`` runs the calls there).
_OFF_LOOP = ThreadPoolExecutor(max_workers=1, thread_name_prefix="offline-monitor")


def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, on a thread without a running event loop.

    The stock monitor serializes with ``_sync_await`` (pulumi/runtime/mocks.py L250, L271,
    L291, L330, 3.272.0), which, on a thread whose loop is running, pumps that loop from inside
    the call (pulumi/runtime/sync_await.py L36-63): on the program's own thread it would run the
    program's other steps in the middle of a registration. On the SDK's executor threads (its
    ``run_in_executor`` calls) nothing runs a loop, and ``fn`` runs here directly; on the
    program's thread it runs on ``_OFF_LOOP``, with the caller's context (the SDK's settings
    are context variables), while the caller waits, as the SDK waits for its executor.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args)
    return _OFF_LOOP.submit(contextvars.copy_context().run, fn, *args).result()


def _plain(value: Any) -> bool:
    """Whether ``value`` is JSON data only (what the serializer turns into a value without
    awaiting anything)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def serialized(state: dict[str, Any]) -> Any:
    """``rpc.serialize_properties(state, {})``, as the stock monitor makes it.

    For JSON data the coroutine awaits nothing but its own sub-coroutines
    (pulumi/runtime/rpc.py ``serialize_property``: only Outputs, resources, assets and
    awaitables await futures), so it completes in one step on this thread; anything else runs
    off the loop with ``_sync_await``, as the stock monitor runs it.
    """
    if _plain(state):
        step = rpc.serialize_properties(state, {})
        try:
            step.send(None)
        except StopIteration as done:
            return done.value
        step.close()
        raise RuntimeError("offline mocks: serializing JSON data awaited a future")
    return off_loop(lambda: _mocks._sync_await(rpc.serialize_properties(state, {})))


class RecordingMonitor(_mocks.MockMonitor):
    """The stock mock monitor, plus a record of resource options and registered outputs.

    It also leaves resource references out of the features it offers, so a remote component
    passed as an input serialises as its URN instead of being rehydrated on a worker thread
    (the flaky "attached to a different loop" hang; see FACTS §9.2).
    """

    def __init__(self, mocks: RecordingMocks):
        super().__init__(mocks)
        self.registrations: dict[str, Registration] = {}
        # Resources the program reads (``Resource.get``): (type, name, id), in order.
        self.reads: list[tuple[str, str, str]] = []

    def ReadResource(self, request):
        self.reads.append((request.type, request.name, request.id))
        return off_loop(super().ReadResource, request)

    def Invoke(self, request):
        """As the stock monitor, except that an identity lookup with no caller set is answered
        unknown, as the engine answers an invoke of a provider whose configuration is unknown
        (``resp.unknown``: pulumi/runtime/invoke.py L368-369, 3.272.0)."""
        if (
            request.tok == "aws:index/getCallerIdentity:getCallerIdentity"
            and getattr(self.mocks, "caller", "") is None
        ):
            self.mocks.calls.append((request.tok, {}))
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        return self._invoke_in_place(request) or off_loop(super().Invoke, request)

    def _invoke_in_place(self, request):
        """The stock monitor's answer to an invoke whose arguments are plain JSON, made on the
        calling thread; None for ``pulumi:pulumi:getResource`` and for arguments with
        ``SPECIAL_MARKS`` (the stock monitor answers them, off the loop).

        The stock monitor (pulumi/runtime/mocks.py ``MockMonitor.Invoke`` L240-274, 3.272.0)
        deserializes the arguments (an event loop is needed only to rehydrate resource
        references, L241-242, which plain JSON has none of), asks the mocks, and serializes
        their answer with ``_sync_await``, which is what needs a thread of its own here
        (``off_loop``). ``serialized`` makes the same value: in one step for JSON data, off the
        loop with ``_sync_await`` otherwise. The response is built as the stock monitor's.
        """
        if request.tok == "pulumi:pulumi:getResource":
            return None
        if not plain_json(request.args):
            return None
        args = rpc.deserialize_properties(request.args)
        answer = self.mocks.call(
            _mocks.MockCallArgs(token=request.tok, args=args, provider=request.provider)
        )
        if isinstance(answer, dict):
            ret, failures = answer, None
        else:
            ret = answer[0]
            failures = [
                provider_pb2.CheckFailure(property=failure[0], reason=failure[1])
                for failure in answer[1]
            ]
        return resource_pb2.ResourceInvokeResponse(failures=failures, **{"return": serialized(ret)})

    def GetDeploymentInfo(self, request):
        info = super().GetDeploymentInfo(request)
        features = [
            f
            for f in info.supportedFeatures
            if f != resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES
        ]
        return resource_pb2.DeploymentInfo(supportedFeatures=features)

    def SupportsFeature(self, request):
        if request.id == "resourceReferences":
            return type("SupportsFeatureResponse", (object,), {"hasSupport": False})
        return super().SupportsFeature(request)

    def RegisterResource(self, request):
        answered = request
        if not request.custom and request.providers.get("aws"):
            # A component's AWS provider travels in its providers map (the SDK sends it for
            # remote components, pulumi/runtime/resource.py): hand it to the mocks as the
            # provider, so a remote component such as eks:index:Cluster is answered in its
            # provider's region. The recording keeps the request as sent.
            answered = type(request)()
            answered.CopyFrom(request)
            answered.provider = request.providers["aws"]
        answering = getattr(self.mocks, "answering", None)
        if answering is not None:
            answering.inputs = None
        response = self._echo(answered) or off_loop(super().RegisterResource, answered)
        if request.type == "pulumi:pulumi:Stack":
            return response
        registered = self.resources[response.urn]
        # The SDK's MockMonitor deserialized request.object for the mocks (pulumi/runtime/
        # mocks.py ``RegisterResource``: ``rpc.deserialize_properties(request.object)`` into
        # ``MockResourceArgs.inputs``); the mocks copy it before building outputs.
        inputs = getattr(answering, "inputs", None)
        if inputs is None:
            inputs = rpc.deserialize_properties(request.object)
        if request.type == AWS_PROVIDER:
            self.mocks.register_provider(f"{response.urn}::{response.id}", inputs)
        self.registrations[response.urn] = Registration(
            type=request.type,
            name=request.name,
            urn=response.urn,
            parent=request.parent,
            custom=bool(request.custom),
            inputs=inputs,
            outputs=dict(registered.state),
            id=registered.id or "",
            dependencies=list(request.dependencies),
            property_dependencies={
                k: list(v.urns) for k, v in request.propertyDependencies.items()
            },
            provider=request.provider,
            protect=bool(request.protect),
            ignore_changes=list(request.ignoreChanges),
            replace_on_changes=list(request.replaceOnChanges),
            delete_before_replace=bool(request.deleteBeforeReplace),
            version=request.version,
            aliases=[_alias(a) for a in request.aliases],
            custom_timeouts={
                k: getattr(request.customTimeouts, k)
                for k in ("create", "update", "delete")
                if getattr(request.customTimeouts, k)
            }
            or None,
            retain_on_delete=bool(request.retainOnDelete),
        )
        return response

    def _echo(self, request):
        """The stock monitor's answer to a registration of plain JSON properties, made without
        serializing again what the mocks echo; None for the stack and for properties with
        ``SPECIAL_MARKS`` (the stock monitor answers them).

        The stock monitor (pulumi/runtime/mocks.py ``MockMonitor.RegisterResource`` L308-334,
        3.272.0) deserializes ``request.object``, asks the mocks, and serializes the state they
        return into the response. When that state is the deserialized inputs, unchanged, and
        the request holds plain JSON only (no ``SPECIAL_MARKS``), serializing it again gives
        the request's properties less its nested nulls, which deserializing drops either way
        (``deserialize_properties``: "values that deserialize to None as if they don't exist";
        the SDK's ``resolve_outputs`` deserializes the response): the request's own ``object``
        is then the same answer, and saves the serialization (one event-loop run per resource;
        the mocks echo the inputs of Kubernetes objects, providers and local components).
        Other states are serialized as the stock monitor does.
        """
        if request.type == "pulumi:pulumi:Stack":
            return None
        if not plain_json(request.object):
            return None
        urn = self.make_urn(request.parent, request.type, request.name)
        inputs = rpc.deserialize_properties(request.object)
        id_, state = self.mocks.new_resource(
            _mocks.MockResourceArgs(
                typ=request.type,
                name=request.name,
                inputs=inputs,
                provider=request.provider,
                resource_id=request.importId,
                custom=request.custom or False,
                transforms=_mocks._resolve_callbacks(request.transforms),
            )
        )
        if state.keys() != inputs.keys() or any(state[k] is not inputs[k] for k in state):
            # Outputs of their own (an AWS resource's ARN and id).
            obj = serialized(state)
        else:
            obj = request.object
        self.resources[urn] = _mocks.MockMonitor.ResourceRegistration(urn, id_, state)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=obj)

    def RegisterResourceOutputs(self, request):
        reg = self.registrations.get(request.urn)
        if reg is not None:
            reg.registered_outputs = rpc.deserialize_properties(request.outputs)
        return super().RegisterResourceOutputs(request)


def _alias(alias: Any) -> dict[str, Any]:
    """An alias as the SDK sent it: a full URN, or a spec of what changed (empty = unchanged)."""
    if alias.urn:
        return {"urn": alias.urn}
    spec = alias.spec
    out = {k: getattr(spec, k) for k in ("name", "type", "stack", "project") if getattr(spec, k)}
    if spec.parentUrn:
        out["parentUrn"] = spec.parentUrn
    if spec.noParent:
        out["noParent"] = True
    return out
