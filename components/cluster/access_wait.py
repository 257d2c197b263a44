"""In `pulumi up`, the Kubernetes provider is configured only once the deployer's new access
works (issue 28, point 4).

pulumi-kubernetes discovers the API server once, when the provider is configured: on any error
it marks the cluster unreachable for the whole run (``clusterUnreachable = true``) and every
later create fails "configured Kubernetes cluster is unreachable" (pulumi/pulumi-kubernetes
provider/pkg/provider/provider.go L986-1000 ``getResources`` in ``Configure``, and L1706-1707
in ``Create``; identical at v4.32.0, the newest tag in the mirror, and at HEAD 9497796, after
the pinned 4.34.2). On a new cluster the deployer's only way in is the access entry and policy
association this stack creates just before the provider (``EksCluster``), and EKS applies an
association asynchronously; others had to wait after one (aws-solutions-library-samples/
guidance-for-multi-provider-generative-ai-gateway-on-aws PR #112, "permissions are fully
propagated"). So the provider's kubeconfig is an ``apply`` over the associations' ids that,
outside preview, polls the API server as the provider will authenticate (the kubeconfig's own
``exec`` credential plugin: ``aws eks get-token``) with a ``SelfSubjectAccessReview`` for
everything (verb, group and resource ``*``: what cluster-admin allows) until it is allowed,
bounded by ``TIMEOUT_SECONDS``, and fails the run with what to do on timeout. The loop is pure
(``wait_until_allowed``: injectable probe, clock and sleep); ``TRANSPORT`` is swapped by the
offline mocks, which stand in for the API server.

A ``SelfSubjectAccessReview`` may be created by any authenticated user (the ``system:basic-user``
ClusterRole binds ``selfsubjectaccessreviews`` create to ``system:authenticated``:
https://kubernetes.io/docs/reference/access-authn-authz/rbac/#discovery-roles), so a 401 means
the entry is not yet in effect and ``allowed: false`` that the policy association is not.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import pulumi

TIMEOUT_SECONDS = 300
INTERVAL_SECONDS = 5
REVIEW_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
REVIEW = {
    "apiVersion": "authorization.k8s.io/v1",
    "kind": "SelfSubjectAccessReview",
    "spec": {"resourceAttributes": {"verb": "*", "group": "*", "resource": "*"}},
}


@dataclass(frozen=True)
class Answer:
    """One authenticated call: ``ok`` when the review is allowed; ``detail`` says what came
    back (``401 Unauthorized``, ``allowed: false``, a connection error)."""

    ok: bool
    detail: str


Probe = Callable[[], Answer]


@dataclass
class Transport:
    """How the wait reaches the API server: ``probe_for(kubeconfig_json)`` builds the call;
    ``clock`` and ``sleep`` pace it."""

    probe_for: Callable[[str], Probe]
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


class AccessTimeout(Exception):
    def __init__(self, attempts: int, last: Answer):
        super().__init__(last.detail)
        self.attempts, self.last = attempts, last


def wait_until_allowed(
    probe: Probe,
    *,
    timeout: float = TIMEOUT_SECONDS,
    interval: float = INTERVAL_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Call ``probe`` until it answers ok; the number of attempts. ``AccessTimeout`` when the
    next attempt would start after ``timeout`` seconds."""
    start, attempts = clock(), 0
    while True:
        attempts += 1
        answer = probe()
        if answer.ok:
            return attempts
        if clock() - start + interval > timeout:
            raise AccessTimeout(attempts, answer)
        sleep(interval)


def timeout_message(cluster: str, seconds: float, error: AccessTimeout) -> str:
    return (
        f"cluster {cluster}: the deploying identity's access entry and cluster-admin "
        f"association exist, but the API server still refused it after {seconds:g} s and "
        f"{error.attempts} attempts (last answer: {error.last.detail}); nothing is lost: run "
        "`pulumi up` again once `kubectl auth can-i '*' '*'` (with this stack's kubeconfig "
        "output) answers yes. Kubernetes steps were not started, so the provider did not cache "
        "an unreachable cluster"
    )


def _exec_token(user: dict, run: Callable[..., subprocess.CompletedProcess]) -> str:
    """The bearer token of a kubeconfig ``exec`` user (an ExecCredential's ``status.token``:
    https://kubernetes.io/docs/reference/access-authn-authz/authentication/
    #input-and-output-formats)."""
    spec = user["exec"]
    env = {**os.environ, **{e["name"]: e["value"] for e in spec.get("env") or ()}}
    done = run(
        [spec["command"], *spec.get("args", [])],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"{spec['command']} exited {done.returncode}")
    return json.loads(done.stdout)["status"]["token"]


def kubeconfig_probe(
    kubeconfig_json: str,
    run: Callable[..., subprocess.CompletedProcess] = subprocess.run,
    urlopen: Callable[..., object] = urllib.request.urlopen,
) -> Probe:
    """A probe that creates a SelfSubjectAccessReview as the kubeconfig's first user."""
    config = json.loads(kubeconfig_json)
    cluster = config["clusters"][0]["cluster"]
    user = config["users"][0]["user"]
    ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
    with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False) as f:
        f.write(ca)
    context = ssl.create_default_context(cafile=f.name)
    os.unlink(f.name)

    def probe() -> Answer:
        try:
            token = _exec_token(user, run)
        except Exception as error:  # the credential plugin failed: say so, retry
            return Answer(False, f"getting a token failed: {error}")
        request = urllib.request.Request(
            cluster["server"] + REVIEW_PATH,
            data=json.dumps(REVIEW).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urlopen(request, context=context, timeout=30) as response:  # type: ignore[attr-defined]
                body = json.loads(response.read())
        except urllib.error.HTTPError as error:
            return Answer(False, f"{error.code} {error.reason}")
        except OSError as error:
            return Answer(False, f"connection failed: {error}")
        allowed = bool((body.get("status") or {}).get("allowed"))
        return Answer(allowed, "allowed" if allowed else "allowed: false")

    return probe


TRANSPORT = Transport(kubeconfig_probe)


def access_checked(
    kubeconfig: pulumi.Output[str], after: Sequence[pulumi.Resource], cluster: str
) -> pulumi.Output[str]:
    """The kubeconfig, once (outside preview) the API server allows the deployer: it depends on
    ``after`` (the admins' policy associations), so the provider that takes it is configured
    after them and after the wait. In preview, or with nothing to wait for, the kubeconfig as
    it is (plus the dependency)."""
    ids = [r.id for r in after if isinstance(r, pulumi.CustomResource)]

    def blocking_wait(kubeconfig_json: str, transport: Transport) -> str:
        try:
            wait_until_allowed(
                transport.probe_for(kubeconfig_json),
                clock=transport.clock,
                sleep=transport.sleep,
            )
        except AccessTimeout as error:
            raise pulumi.RunError(timeout_message(cluster, TIMEOUT_SECONDS, error)) from None
        return kubeconfig_json

    def wait(values: list) -> str | Awaitable[str]:
        kubeconfig_json = values[0]
        if pulumi.runtime.is_dry_run() or not ids:
            return kubeconfig_json
        # In a worker thread, so the program's other registrations go on meanwhile; an apply
        # may answer an awaitable (pulumi/output.py L332-340, 3.272.0).
        return asyncio.get_running_loop().run_in_executor(
            None, blocking_wait, kubeconfig_json, TRANSPORT
        )

    return pulumi.Output.all(kubeconfig, *ids).apply(wait)
