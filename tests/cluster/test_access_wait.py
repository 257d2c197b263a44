"""The wait before the Kubernetes provider (issue 28, point 4): the pure retry loop, and the
real probe against a fake transport (no network, no AWS CLI)."""

import base64
import io
import json
import subprocess
import urllib.error

import pytest

from eks_gpu_platform.cluster.access_wait import (
    REVIEW,
    REVIEW_PATH,
    AccessTimeout,
    Answer,
    kubeconfig_probe,
    wait_until_allowed,
)


def clocked(answers):
    now, calls = [0.0], []

    def probe():
        calls.append(now[0])
        return answers.pop(0)

    def sleep(seconds):
        now[0] += seconds

    return probe, (lambda: now[0]), sleep, calls


def test_retries_until_allowed():
    probe, clock, sleep, calls = clocked(
        [Answer(False, "401 Unauthorized")] * 3 + [Answer(True, "")]
    )
    assert wait_until_allowed(probe, timeout=60, interval=5, clock=clock, sleep=sleep) == 4
    assert calls == [0, 5, 10, 15]


def test_stops_at_the_bound():
    probe, clock, sleep, calls = clocked([Answer(False, "allowed: false")] * 10)
    with pytest.raises(AccessTimeout) as err:
        wait_until_allowed(probe, timeout=12, interval=5, clock=clock, sleep=sleep)
    assert (err.value.attempts, err.value.last.detail, calls) == (3, "allowed: false", [0, 5, 10])


KUBECONFIG = json.dumps(
    {
        "clusters": [
            {
                "cluster": {
                    "server": "https://example.eks.amazonaws.com",
                    "certificate-authority-data": base64.b64encode(b"").decode(),
                }
            }
        ],
        "users": [
            {
                "user": {
                    "exec": {
                        "command": "aws",
                        "args": ["eks", "get-token", "--cluster-name", "c"],
                        "env": [{"name": "AWS_PROFILE", "value": "x"}],
                    }
                }
            }
        ],
    }
)


def test_the_probe_reviews_with_the_exec_token(monkeypatch):
    monkeypatch.setattr("ssl.create_default_context", lambda cafile=None: None)
    runs, requests = [], []

    def run(cmd, **kw):
        runs.append((cmd, kw["env"]["AWS_PROFILE"]))
        return subprocess.CompletedProcess(
            cmd, 0, json.dumps({"status": {"token": "k8s-aws-v1.t"}}), ""
        )

    def urlopen(request, context=None, timeout=None):
        requests.append(request)
        if len(requests) == 1:
            raise urllib.error.HTTPError(request.full_url, 401, "Unauthorized", {}, None)
        return io.BytesIO(json.dumps({"status": {"allowed": True}}).encode())

    probe = kubeconfig_probe(KUBECONFIG, run=run, urlopen=urlopen)
    assert probe() == Answer(False, "401 Unauthorized")
    assert probe() == Answer(True, "allowed")
    assert runs == [(["aws", "eks", "get-token", "--cluster-name", "c"], "x")] * 2
    request = requests[0]
    assert request.full_url == "https://example.eks.amazonaws.com" + REVIEW_PATH
    assert request.get_header("Authorization") == "Bearer k8s-aws-v1.t"
    assert json.loads(request.data) == REVIEW
