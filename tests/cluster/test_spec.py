"""The cluster's specs (``eks_gpu_platform.cluster.spec``) built directly from Python."""

import pytest

from eks_gpu_platform.cluster.spec import ClusterSpec
from eks_gpu_platform.spec import SpecError


@pytest.mark.parametrize("domain", ["myk8s.io", "notkarpenter.sh"])
def test_label_domain_reserved_check_respects_dot_boundaries(domain):
    assert ClusterSpec(name="c", label_domain=domain).label_domain == domain


@pytest.mark.parametrize("domain", ["k8s.io", "node.kubernetes.io", "karpenter.sh", "k8s.aws"])
def test_label_domain_reserved(domain):
    with pytest.raises(SpecError) as err:
        ClusterSpec(name="c", label_domain=domain)
    assert err.value.lines == [
        f"ClusterSpec.label_domain: {domain!r} is reserved by Kubernetes or Karpenter; use a "
        "domain your organisation owns"
    ]
