"""Component provider host: serves GpuPlatform to programs in any Pulumi language."""

from pulumi.provider.experimental import component_provider_host

from eks_gpu_platform import __version__
from eks_gpu_platform.platform import GpuPlatform

if __name__ == "__main__":
    component_provider_host(components=[GpuPlatform], name="eks-gpu-platform", version=__version__)
