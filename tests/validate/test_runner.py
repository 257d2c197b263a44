"""The runner with fake phase modules on FakeKube: order, the --checks filter, clean-up after a
failing phase, a raising phase and an interrupt (a real SIGINT and SIGTERM too), clean-up errors,
the pre-flight for older runs' leftovers."""

from __future__ import annotations

import os
import signal
import types
from pathlib import Path

import pytest

from eks_gpu_platform.validate import runner
from eks_gpu_platform.validate.core import (
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    RUN_LABEL,
    Context,
    Options,
    Render,
    Result,
)

from .fake_kube import FakeKube

RUN = "0a1b2c3d"
NS = "validate-0a1b2c3d"


def phase(name: str, body):
    """A phase module whose ``run`` is ``body(ctx)``."""
    module = types.ModuleType(f"eks_gpu_platform.validate.{name}")
    module.NAME = name
    module.run = body
    module.planned = lambda ctx: []
    return module


def creating(name: str, checks=("one", "two"), then=None):
    """A phase that creates a ConfigMap per check in the run namespace, then maybe raises."""

    def body(ctx: Context):
        out = []
        for check in checks:
            ctx.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"{name}-{check}", "namespace": ctx.namespace},
                }
            )
            out.append(Result(name, check, "pass", "ok"))
        if then is not None:
            raise then
        return out

    return phase(name, body)


def context(kube: FakeKube, checks=()) -> Context:
    return Context(
        kube=kube,
        render=Render(Path("build/dev"), (), {}, {}, {}),
        options=Options("dev", checks=tuple(checks)),
        run_id=RUN,
        namespace=NS,
    )


def summary(results):
    return [(r.phase, r.name, r.status, r.reason) for r in results]


def stored(kube: FakeKube):
    return sorted(key[3] for key in kube.objects)


def test_phases_run_in_order_between_the_preflight_and_the_cleanup() -> None:
    kube = FakeKube()
    results = runner.run(context(kube), [creating("deployment"), creating("scheduling")])
    assert summary(results) == [
        ("preflight", "leftovers", "pass", "no objects of older runs"),
        ("preflight", "run-namespace", "pass", f"created {NS}"),
        ("deployment", "one", "pass", "ok"),
        ("deployment", "two", "pass", "ok"),
        ("scheduling", "one", "pass", "ok"),
        ("scheduling", "two", "pass", "ok"),
        ("cleanup", "cleanup", "pass", "deleted 5 objects"),
    ]
    assert kube.objects == {}
    deletes = [c[3] for c in kube.calls if c[0] == "delete"]
    assert deletes == ["scheduling-two", "scheduling-one", "deployment-two", "deployment-one", NS]
    assert runner.exit_code(results) == 0


def test_every_created_object_carries_the_run_labels() -> None:
    kube = FakeKube()
    seen = []
    kube.on_create = lambda obj: seen.append(obj["metadata"]["labels"]) or obj
    runner.run(context(kube), [creating("deployment")])
    assert seen == [{MANAGED_BY_LABEL: MANAGED_BY_VALUE, RUN_LABEL: RUN}] * 3


def test_the_checks_filter_keeps_matching_results_by_name_or_phase_slash_name() -> None:
    kube = FakeKube()
    results = runner.run(
        context(kube, checks=["two", "scheduling/one"]),
        [creating("deployment"), creating("scheduling")],
    )
    assert [(r.phase, r.name) for r in results[2:-1]] == [
        ("deployment", "two"),
        ("scheduling", "one"),
        ("scheduling", "two"),
    ]


def test_a_phase_asks_wants_with_the_same_globs_before_it_creates() -> None:
    def asking(name):
        def body(ctx: Context):
            return [Result(name, c, "pass", "ok") for c in ("one", "two") if ctx.wants(c)]

        return phase(name, body)

    results = runner.run(
        context(FakeKube(), checks=["two", "scheduling/one"]),
        [asking("deployment"), asking("scheduling")],
    )
    assert [(r.phase, r.name) for r in results[2:-1]] == [
        ("deployment", "two"),
        ("scheduling", "one"),
        ("scheduling", "two"),
    ]


def test_a_failing_phase_fails_the_run_and_still_cleans_up() -> None:
    kube = FakeKube()
    failing = phase("capacity", lambda ctx: [Result("capacity", "gpu-spot", "fail", "no node")])
    results = runner.run(context(kube), [creating("deployment"), failing])
    assert summary(results)[-2:] == [
        ("capacity", "gpu-spot", "fail", "no node"),
        ("cleanup", "cleanup", "pass", "deleted 3 objects"),
    ]
    assert kube.objects == {}
    assert runner.exit_code(results) == 1


def test_a_raising_phase_is_a_failing_check_later_phases_run_and_all_is_cleaned() -> None:
    kube = FakeKube()
    results = runner.run(
        context(kube),
        [creating("deployment", then=RuntimeError("boom")), creating("security", ("x",))],
    )
    assert summary(results)[2:] == [
        ("deployment", "run", "fail", "raised RuntimeError: boom"),
        ("security", "x", "pass", "ok"),
        ("cleanup", "cleanup", "pass", "deleted 4 objects"),
    ]
    assert kube.objects == {}


def test_keyboard_interrupt_stops_the_run_reports_interrupted_and_cleans_up() -> None:
    kube = FakeKube()
    results = runner.run(
        context(kube),
        [creating("capacity", then=KeyboardInterrupt()), creating("security")],
    )
    assert summary(results)[2:] == [
        ("capacity", "run", "fail", "interrupted"),
        ("cleanup", "cleanup", "pass", "deleted 3 objects"),
    ]
    assert kube.objects == {}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_interrupts_the_run_and_cleanup_still_runs(signum) -> None:
    kube = FakeKube()

    def body(ctx):
        ctx.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS}})
        os.kill(os.getpid(), signum)
        return [Result("performance", "never", "pass", "not reached")]

    before = signal.getsignal(signum)
    results = runner.run(context(kube), [phase("performance", body)])
    assert summary(results)[2:] == [
        ("performance", "run", "fail", "interrupted"),
        ("cleanup", "cleanup", "pass", "deleted 2 objects"),
    ]
    assert kube.objects == {}
    assert signal.getsignal(signum) == before


def test_cleanup_errors_are_a_failing_cleanup_check() -> None:
    kube = FakeKube()
    real_delete = kube.delete

    def delete(api_version, kind, name, namespace=None):
        if kind == "ConfigMap" and name == "deployment-one":
            raise RuntimeError("503 ServiceUnavailable")
        real_delete(api_version, kind, name, namespace)

    kube.delete = delete
    results = runner.run(context(kube), [creating("deployment")])
    assert summary(results)[-1] == (
        "cleanup",
        "cleanup",
        "fail",
        f"1 of 3 objects not deleted: find them by the label {RUN_LABEL}={RUN}",
    )
    assert results[-1].details == (f"delete ConfigMap {NS}/deployment-one: 503 ServiceUnavailable",)
    assert runner.exit_code(results) == 1


def test_no_phase_runs_without_the_run_namespace() -> None:
    kube = FakeKube([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    results = runner.run(context(kube), [creating("deployment")])
    assert summary(results)[1:] == [
        (
            "preflight",
            "run-namespace",
            "fail",
            f"create {NS}: 409 AlreadyExists: Namespace already exists",
        ),
        ("cleanup", "cleanup", "pass", "deleted 0 objects"),
    ]


def leftover(kind: str, api_version: str, name: str, run_id: str) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": name,
            "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, RUN_LABEL: run_id},
        },
    }


def terminating(obj: dict) -> dict:
    obj["metadata"]["deletionTimestamp"] = "2026-11-25T20:00:00Z"
    return obj


def older_run_kube() -> FakeKube:
    return FakeKube(
        [
            terminating(leftover("Namespace", "v1", "validate-eeee0000", "eeee0000")),
            leftover("Namespace", "v1", "validate-ffff0000", "ffff0000"),
            leftover("Namespace", "v1", "validate-ffff0000-research", "ffff0000"),
            # A run never creates a Queue: not a leftover, even named and labelled like one.
            leftover("Queue", "scheduling.run.ai/v2", "validate-ffff0000-q", "ffff0000"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "research-batch"}},
        ]
    )


def test_the_preflight_reports_leftovers_of_older_runs() -> None:
    kube = older_run_kube()
    results = runner.run(context(kube), [])
    assert summary(results)[0] == (
        "preflight",
        "leftovers",
        "fail",
        "2 objects of older runs: delete them with --delete-leftovers",
    )
    assert results[0].details == (
        "Namespace validate-ffff0000 (run ffff0000)",
        "Namespace validate-ffff0000-research (run ffff0000)",
    )
    assert "validate-ffff0000" in stored(kube)


def test_delete_leftovers_deletes_them_and_nothing_else() -> None:
    kube = older_run_kube()
    results = runner.run(context(kube), [], delete_leftovers=True)
    assert summary(results)[0] == (
        "preflight",
        "leftovers",
        "pass",
        "deleted 2 objects of older runs",
    )
    assert stored(kube) == ["research-batch", "validate-eeee0000", "validate-ffff0000-q"]


def platform_object(api_version: str, kind: str, name: str, labels: dict) -> dict:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "labels": labels}}


MANAGED = {MANAGED_BY_LABEL: MANAGED_BY_VALUE}


def test_delete_leftovers_never_deletes_what_no_run_created() -> None:
    """Issue 29, point 8 (security review M1): objects with the validation's managed-by label
    but no run id, a malformed one, or a name no run gives are not leftovers; nor is any kind a
    run never creates, a run label notwithstanding."""
    platform = [
        platform_object("scheduling.run.ai/v2", "Queue", "research", MANAGED),
        platform_object("karpenter.sh/v1", "NodePool", "train-efa", MANAGED),
        platform_object("scheduling.k8s.io/v1", "PriorityClass", "train", MANAGED),
        platform_object("v1", "Namespace", "research", MANAGED),
        platform_object("v1", "Namespace", "validate-ffff0000", MANAGED),
        platform_object("v1", "Namespace", "llm", {**MANAGED, RUN_LABEL: "ffff0000"}),
        platform_object("v1", "Namespace", "validate-x", {**MANAGED, RUN_LABEL: "X Y"}),
        platform_object(
            "v1", "Namespace", "validate-ffff00001", {**MANAGED, RUN_LABEL: "ffff0000"}
        ),
        platform_object("v1", "Namespace", "validate-ab", {RUN_LABEL: "ab"}),
        platform_object("karpenter.sh/v1", "NodePool", "validate-ab", {**MANAGED, RUN_LABEL: "ab"}),
    ]
    kube = FakeKube(platform)
    results = runner.run(context(kube), [], delete_leftovers=True)
    assert summary(results)[0] == ("preflight", "leftovers", "pass", "no objects of older runs")
    assert [c for c in kube.calls if c[0] == "delete"] == [("delete", "v1", "Namespace", NS, None)]
    assert sorted(kube.objects) == sorted(FakeKube.key(o) for o in platform)


def test_load_phases_imports_by_name_in_phase_order() -> None:
    imported = []

    def importer(name):
        imported.append(name)
        return phase(name.rsplit(".", 1)[1], lambda ctx: [])

    modules = runner.load_phases(["security", "deployment"], importer)
    assert [m.NAME for m in modules] == ["deployment", "security"]
    assert imported == [
        "eks_gpu_platform.validate.deployment",
        "eks_gpu_platform.validate.security",
    ]
