"""The ``DraDriver`` component: a privileged namespace and the NVIDIA DRA driver's Helm release
(``values.py``). ``GpuPlatform`` creates it when a pool sets ``dra``."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from .. import versions
from ..naming import TYPE_PREFIX
from .values import NAMESPACE, RELEASE_NAME, dra_driver_values

# The kubelet plugin runs privileged with hostPath mounts (NVIDIA/k8s-dra-driver-gpu v0.4.0
# deployments/helm/dra-driver-nvidia-gpu/values.yaml L269-283 ``privileged: true``): enforce
# "privileged", audit and warn at "restricted", as for the GPU Operator's namespace.
PRIVILEGED_NAMESPACE_LABELS = {
    "pod-security.kubernetes.io/enforce": "privileged",
    "pod-security.kubernetes.io/audit": "restricted",
    "pod-security.kubernetes.io/warn": "restricted",
}


@dataclass(frozen=True, kw_only=True)
class DraDriverArgs:
    """Inputs of ``DraDriver``: the DRA pools' node label key (``<domain>/dra``), the
    tolerations of their taints, the Kubernetes provider and what the release waits for."""

    dra_label: str
    tolerations: Sequence[Mapping[str, str]]
    k8s_provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = ()


class DraDriver(pulumi.ComponentResource):
    """The NVIDIA DRA driver for GPUs in its own privileged namespace."""

    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: DraDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{TYPE_PREFIX}DraDriver", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAMESPACE, labels=PRIVILEGED_NAMESPACE_LABELS),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
            ),
        )
        chart = versions.DRA_DRIVER
        self.release = k8s.helm.v3.Release(
            f"{name}-chart",
            name=RELEASE_NAME,
            chart=chart.reference,
            version=chart.version,
            namespace=namespace.metadata.name,
            values=dra_driver_values(dra_label=args.dra_label, tolerations=args.tolerations),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=[namespace, *args.depends_on]
            ),
        )
        self.namespace = namespace.metadata.name
        self.register_outputs({"namespace": self.namespace})
