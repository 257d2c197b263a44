"""A scripted FakeKube for the capacity and performance phases: it plays the cluster's part on a
fake clock (Karpenter launches a NodeClaim and its Node when the workload is created, the pods
run and finish with a given log, Karpenter marks the empty NodeClaim for deletion some seconds
after the pod is deleted). Every behaviour is a parameter, so a test can make any step go wrong.
"""

from __future__ import annotations

import copy
from pathlib import Path

from eks_gpu_platform.validate.core import Context, Options, Render

from .fake_kube import FakeKube

DATA = Path(__file__).resolve().parent / "data"
DOMAIN = "eks-gpu-platform.io"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def nodepool(name: str, pool: str, types: list[str], *, efa=False, consolidate_after="5m"):
    labels = {f"{DOMAIN}/pool": pool, f"{DOMAIN}/preemptible": "true"}
    taints = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    if efa:
        labels[f"{DOMAIN}/efa"] = "true"
        taints.append({"key": "vpc.amazonaws.com/efa", "value": "true", "effect": "NoSchedule"})
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "disruption": {
                "consolidateAfter": consolidate_after,
                "consolidationPolicy": "WhenEmpty",
            },
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "requirements": [
                        {
                            "key": "node.kubernetes.io/instance-type",
                            "operator": "In",
                            "values": types,
                        }
                    ],
                    "startupTaints": [
                        {
                            "key": "nvidia.com/mig.config.state",
                            "value": "pending",
                            "effect": "NoSchedule",
                        }
                    ],
                    "taints": taints,
                },
            },
        },
    }


def namespace(queue: str):
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": queue,
            "labels": {
                f"{DOMAIN}/queue": queue,
                "pod-security.kubernetes.io/enforce": "restricted",
            },
        },
    }


def render(pools: list[dict], queues: list[dict], manifests: list[dict], region="us-east-1"):
    return Render(
        dir=Path("/nonexistent"),
        manifests=tuple(manifests),
        capacity={"pools": pools, "queues": queues},
        helm={},
        outputs={
            "clusterEndpoint": f"https://24AF230B9E27903306F50542216701D3.gr7.{region}.eks.amazonaws.com"
        },
    )


def pool_entry(name: str, advertised: dict[str, dict[str, int]], node_pools=None):
    types = list(advertised)
    return {
        "name": name,
        "instanceTypes": types,
        "advertisedPerNode": advertised,
        "nodePools": node_pools or [{"name": name, "instanceTypes": types}],
    }


class GpuCluster(FakeKube):
    """Karpenter, the kubelet and the workload's pods, scripted on ``clock``.

    When a Job (or MPIJob) is created: after ``launch_s`` a NodeClaim ``<nodepool>-abcde`` of
    ``instance_type`` and its Node (``allocatable``) exist per node the workload needs, and after
    ``run_s`` more its pods have ``phase`` and ``logs``. When a finished pod is deleted, the
    NodeClaim gets a deletionTimestamp ``consolidate_s`` later (None: never).
    """

    def __init__(
        self,
        clock: Clock,
        *,
        nodepool_name: str,
        instance_type: str,
        allocatable: dict[str, str],
        logs: str,
        phase: str = "Succeeded",
        launch_s: float = 60.0,
        run_s: float = 20.0,
        consolidate_s: float | None = 325.0,
        objects: list[dict] = (),
        served=None,
    ):
        super().__init__(objects, served)
        self.clock = clock
        self.nodepool_name = nodepool_name
        self.instance_type = instance_type
        self.allocatable = allocatable
        self.log = logs
        self.phase = phase
        self.launch_s = launch_s
        self.run_s = run_s
        self.consolidate_s = consolidate_s
        self.workload: tuple[str, str, str, int] | None = None  # kind, namespace, name, pods
        self.created_at = 0.0
        self.pod_deleted_at: float | None = None
        self.launched = False
        self.finished = False
        self.created: dict[tuple[str, str], dict] = {}  # (kind, name) -> what was created

    def create(self, obj, *, dry_run=False):
        out = super().create(obj, dry_run=dry_run)
        if not dry_run:
            self.created[(obj["kind"], obj["metadata"]["name"])] = copy.deepcopy(obj)
        if not dry_run and obj["kind"] in ("Job", "MPIJob"):
            pods = (
                1
                if obj["kind"] == "Job"
                else 1 + obj["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]
            )
            meta = obj["metadata"]
            self.workload = (obj["kind"], meta["namespace"], meta["name"], pods)
            self.created_at = self.clock()
        return out

    def nodes(self) -> int:
        if self.workload is None:
            return 0
        return 1 if self.workload[0] == "Job" else self.workload[3] - 1

    def step(self) -> None:
        if self.workload is None:
            return
        now = self.clock()
        kind, ns, name, _ = self.workload
        if not self.launched and now - self.created_at >= self.launch_s:
            self.launched = True
            for i in range(self.nodes()):
                node = f"ip-10-0-1-{i + 1}.ec2.internal"
                self.put(
                    {
                        "apiVersion": "karpenter.sh/v1",
                        "kind": "NodeClaim",
                        "metadata": {
                            "name": f"{self.nodepool_name}-abcd{i}",
                            "labels": {
                                "karpenter.sh/nodepool": self.nodepool_name,
                                "node.kubernetes.io/instance-type": self.instance_type,
                            },
                        },
                        "status": {"nodeName": node},
                    }
                )
                self.put(
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {"name": node},
                        "status": {
                            "allocatable": {"cpu": "3920m", "pods": "58", **self.allocatable}
                        },
                    }
                )
        if (
            self.launched
            and not self.finished
            and now - self.created_at >= self.launch_s + self.run_s
        ):
            self.finished = True
            if kind == "Job":
                pods = [(f"{name}-x7k2p", {"batch.kubernetes.io/job-name": name}, 0)]
            else:
                pods = [
                    (f"{name}-launcher", {"training.kubeflow.org/job-role": "launcher"}, 0),
                    *(
                        (f"{name}-worker-{i}", {"training.kubeflow.org/job-role": "worker"}, i)
                        for i in range(self.nodes())
                    ),
                ]
            for pod, labels, node in pods:
                labels = (
                    {**labels, "training.kubeflow.org/job-name": name} if kind != "Job" else labels
                )
                self.put(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": pod, "namespace": ns, "labels": labels},
                        "spec": {"nodeName": f"ip-10-0-1-{node + 1}.ec2.internal"},
                        "status": {"phase": self.phase},
                    }
                )
                self.pod_logs[(ns, pod)] = self.log
        if (
            self.pod_deleted_at is not None
            and self.consolidate_s is not None
            and now - self.pod_deleted_at >= self.consolidate_s
        ):
            for key, obj in self.objects.items():
                if key[1] == "NodeClaim":
                    obj["metadata"]["deletionTimestamp"] = "2026-11-25T12:00:00Z"

    def list(self, api_version, kind, namespace=None, label_selector=None):
        self.step()
        return super().list(api_version, kind, namespace, label_selector)

    def get(self, api_version, kind, name, namespace=None):
        self.step()
        return super().get(api_version, kind, name, namespace)

    def delete(self, api_version, kind, name, namespace=None):
        if kind == "Pod" and self.pod_deleted_at is None:
            self.pod_deleted_at = self.clock()
        super().delete(api_version, kind, name, namespace)


def context(kube, render_, clock, **options) -> Context:
    return Context(
        kube=kube,
        render=render_,
        options=Options(stack="test", **options),
        run_id="r1",
        namespace="validate-r1",
        clock=clock,
        sleep=clock.sleep,
    )
