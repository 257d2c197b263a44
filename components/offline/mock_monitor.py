"""``RecordingMonitor``: the SDK's mock monitor, plus a record of what the stock monitor drops
(parent, dependencies, protect, provider, aliases, timeouts and the outputs each component
registers), for the recording mocks (``mocks.run``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pulumi.runtime import mocks as _mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2

from .mock_types import Registration

if TYPE_CHECKING:
    from .mocks import RecordingMocks

AWS_PROVIDER = "pulumi:providers:aws"


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
        return super().ReadResource(request)

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
        return super().Invoke(request)

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
        response = super().RegisterResource(answered)
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
