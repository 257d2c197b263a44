"""``core.Kube`` on the official Kubernetes Python client (``kubernetes`` on PyPI, pinned in
requirements.txt; kubernetes-client/python v36.0.3, the client of Kubernetes 1.36).

- Any kind through the dynamic client (``kubernetes/dynamic/client.py``): the resource is looked
  up in the server's discovery by apiVersion and kind, so a kind the server does not serve is
  ``served() == False`` and a ``KubeError(404, "NotFound", ...)`` from the other calls.
- ``create(obj, dry_run=True)`` is a server-side dry run (``?dryRun=All``: admission runs, nothing
  is stored; ``dynamic/client.py`` L242-243 passes ``dry_run`` as ``dryRun``).
- Every API error becomes ``KubeError(status, reason, message)``; ``message`` is the ``Status``
  object's message, which carries an admission policy's or webhook's denial.
- kubeconfig: ``--kubeconfig FILE`` (JSON or YAML: JSON is YAML) or ``$KUBECONFIG`` /
  ``~/.kube/config`` (``config/kube_config.py`` ``KUBE_CONFIG_DEFAULT_LOCATION``), ``--context``
  to pick a context. EKS's kubeconfig (the stack output ``kubeconfig``: ``pulumi stack output
  kubeconfig --show-secrets > kubeconfig.json``) authenticates with an ``exec`` plugin
  (``aws eks get-token``), which the client runs (``config/kube_config.py`` L441-445,
  ``ExecProvider``).
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from kubernetes.dynamic.exceptions import ResourceNotFoundError
from urllib3.exceptions import HTTPError

from .core import KubeError


class KubeConfigError(Exception):
    """The kubeconfig cannot be loaded; the message names the file and the reason."""


def _message(exc: Exception) -> tuple[int, str, str]:
    status = int(getattr(exc, "status", 0) or 0)
    reason = str(getattr(exc, "reason", "") or "")
    body = getattr(exc, "body", None)
    message = str(exc)
    if body:
        try:
            decoded = json.loads(body)
        except (TypeError, ValueError):
            message = body.decode() if isinstance(body, bytes) else str(body)
        else:
            message = decoded.get("message", message)
            reason = decoded.get("reason", reason) or reason
    return status, reason, message


def _short(exc: Exception) -> str:
    """The innermost reason of a connection error (urllib3 wraps it twice)."""
    reason = getattr(exc, "reason", None)
    return str(reason) if reason is not None else str(exc)


class ClientKube:
    """``core.Kube`` over one API server."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None) -> None:

        try:
            api_client = config.new_client_from_config(
                config_file=kubeconfig, context=context, persist_config=False
            )
        except (ConfigException, OSError, ValueError, TypeError) as exc:
            where = kubeconfig or "$KUBECONFIG or ~/.kube/config"
            raise KubeConfigError(f"--kubeconfig {where}: {exc}") from exc
        self._api_client = api_client
        # The dynamic client reads the server's version and discovery at once.
        try:
            self._dynamic = dynamic.DynamicClient(api_client)
        except (ApiException, HTTPError, OSError) as exc:
            where = kubeconfig or "$KUBECONFIG or ~/.kube/config"
            server = api_client.configuration.host
            raise KubeConfigError(
                f"--kubeconfig {where}: cannot reach the API server {server}: {_short(exc)}"
            ) from exc

    def _resource(self, api_version: str, kind: str) -> Any:

        try:
            return self._call(self._dynamic.resources.get, api_version=api_version, kind=kind)
        except ResourceNotFoundError as exc:
            raise KubeError(404, "NotFound", f"{api_version} {kind} is not served") from exc

    def _call(self, fn, *args, **kwargs) -> Any:

        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            raise KubeError(*_message(exc)) from exc
        except (HTTPError, OSError) as exc:  # the connection, not the API
            raise KubeError(0, "Unreachable", _short(exc)) from exc

    def served(self, api_version: str, kind: str) -> bool:
        try:
            self._resource(api_version, kind)
        except KubeError:
            return False
        return True

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict | None:
        resource = self._resource(api_version, kind)
        try:
            out = self._call(resource.get, name=name, namespace=namespace)
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise
        return out.to_dict()

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> list[dict]:
        resource = self._resource(api_version, kind)
        out = self._call(resource.get, namespace=namespace, label_selector=label_selector)
        items = out.to_dict().get("items", [])
        # A list's items carry neither apiVersion nor kind.
        return [{"apiVersion": api_version, "kind": kind, **item} for item in items]

    def create(self, obj: dict, *, dry_run: bool = False) -> dict:
        resource = self._resource(obj["apiVersion"], obj["kind"])
        namespace = obj.get("metadata", {}).get("namespace")
        kwargs: dict[str, Any] = {"body": obj, "namespace": namespace}
        if dry_run:
            kwargs["dry_run"] = "All"
        return self._call(resource.create, **kwargs).to_dict()

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        resource = self._resource(api_version, kind)
        try:
            # Background propagation: a Job's or namespace's pods go with it.
            self._call(
                resource.delete,
                name=name,
                namespace=namespace,
                body={"propagationPolicy": "Background"},
            )
        except KubeError as exc:
            if exc.status != 404:
                raise

    def logs(self, name: str, namespace: str, container: str | None = None) -> str:

        api = client.CoreV1Api(self._api_client)
        kwargs = {"container": container} if container else {}
        return self._call(api.read_namespaced_pod_log, name, namespace, **kwargs)
