"""``kube.ClientKube``'s error mapping and kubeconfig handling without a cluster. Its API calls
against a real API server are exercised by the conformance suite (``make conformance``)."""

from __future__ import annotations

import json
import socket

import pytest

from eks_gpu_platform.validate import cli
from eks_gpu_platform.validate.core import KubeError


@pytest.fixture(scope="module")
def kube():
    """``eks_gpu_platform.validate.kube``, imported when a test of it runs: it imports the
    Kubernetes client (half a second), which no other test module needs, so a test worker that
    runs none of these tests never pays for it (not at collection)."""
    from eks_gpu_platform.validate import kube

    return kube


@pytest.fixture(scope="module")
def api_exception(kube):
    from kubernetes.client.rest import ApiException

    return ApiException


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kubeconfig(tmp_path, server: str, current: str = "c") -> str:
    path = tmp_path / "kubeconfig.json"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": current,
                "clusters": [{"name": "k", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    return str(path)


def test_the_status_message_carries_an_admission_denial(kube, api_exception) -> None:
    exc = api_exception(status=403, reason="Forbidden")
    exc.body = json.dumps(
        {
            "kind": "Status",
            "status": "Failure",
            "reason": "Forbidden",
            "message": 'pods "p" is forbidden: ValidatingAdmissionPolicy '
            "'platform-tenant-tolerations' denied request",
            "code": 403,
        }
    )
    assert kube._message(exc) == (
        403,
        "Forbidden",
        "pods \"p\" is forbidden: ValidatingAdmissionPolicy 'platform-tenant-tolerations' "
        "denied request",
    )


def test_a_body_that_is_not_a_status_is_the_message(kube, api_exception) -> None:
    exc = api_exception(status=502, reason="Bad Gateway")
    exc.body = b"upstream connect error"
    assert kube._message(exc) == (502, "Bad Gateway", "upstream connect error")


def test_an_unreachable_server_is_a_kubeconfig_error(kube, tmp_path) -> None:
    port = closed_port()
    path = kubeconfig(tmp_path, f"http://127.0.0.1:{port}")
    with pytest.raises(kube.KubeConfigError) as err:
        kube.ClientKube(path)
    assert str(err.value).startswith(
        f"--kubeconfig {path}: cannot reach the API server http://127.0.0.1:{port}: "
    )


def test_an_unknown_context_is_a_kubeconfig_error(kube, tmp_path) -> None:
    path = kubeconfig(tmp_path, "http://127.0.0.1:1")
    with pytest.raises(kube.KubeConfigError) as err:
        kube.ClientKube(path, context="nope")
    assert str(err.value) == (
        f"--kubeconfig {path}: Invalid kube-config file. Expected object with name nope in "
        f"{path}/contexts list"
    )


def test_the_cli_exits_2_when_the_cluster_cannot_be_reached(render_dir, tmp_path, capsys):
    port = closed_port()
    path = kubeconfig(tmp_path, f"http://127.0.0.1:{port}")
    code = cli.main(
        [
            "--stack",
            "dev",
            "--render",
            str(render_dir("dev")),
            "--phases",
            "deployment",
            "--kubeconfig",
            path,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        f"eks-gpu-platform-validate: --kubeconfig {path}: cannot reach the API server "
        f"http://127.0.0.1:{port}: "
    )


def test_kube_error_fields() -> None:
    err = KubeError(409, "AlreadyExists", 'namespaces "x" already exists')
    assert (err.status, err.reason, err.message, str(err)) == (
        409,
        "AlreadyExists",
        'namespaces "x" already exists',
        '409 AlreadyExists: namespaces "x" already exists',
    )
